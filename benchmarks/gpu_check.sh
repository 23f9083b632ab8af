#!/usr/bin/env bash
# The one prepared check for a lent GPU machine (CuPy, JAX and torch there; gast, array-api-compat and
# array-api-strict travel as wheels): install the wheels, run tests/gpu, run benchmarks/gpu.py. At most about 8
# minutes: the tests are stopped after 240 s and the benchmark after 200 s. Outputs go to $OUT (the device tool's
# folder; /tmp/zygotepy-gpu-out elsewhere): env.txt, tests.log, tests.xml, bench.md, bench.json, bench_progress.txt,
# summary.txt. Exit status: non-zero when the tests or the benchmark failed.
#
# Prepare the wheels here, once, in the repository root (pure-Python wheels; .whl/ must stay out of git):
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl \
#       gast==0.7.0 array-api-compat==1.16.0 array-api-strict==2.6.1
# Then, with the device tool: run(command="bash benchmarks/gpu_check.sh", carry=[".whl"], timeout_s=540).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/zygotepy-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
PY=${PYTHON:-python3}
start=$SECONDS

for dir in .whl wheels; do
    if compgen -G "$dir/*.whl" > /dev/null; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/zygotepy-site "$dir"/*.whl || { echo "installing the wheels of $dir failed"; exit 2; }
        export PYTHONPATH=/tmp/zygotepy-site${PYTHONPATH:+:$PYTHONPATH}
        break
    fi
done

{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "no nvidia-smi"
    "$PY" - <<'EOF'
import importlib, platform
print("python", platform.python_version())
for name in ("numpy", "gast", "array_api_compat", "array_api_strict", "cupy", "torch", "jax", "pytest"):
    try:
        print(name, getattr(importlib.import_module(name), "__version__", "?"))
    except Exception as e:
        print(name, "MISSING:", type(e).__name__, e)
EOF
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

echo "== tests/gpu"
timeout 240 "$PY" -m pytest -p no:cacheprovider -W ignore -rsxX --durations=10 tests/gpu \
    --junitxml="$OUT/tests.xml" 2>&1 | tee "$OUT/tests.log"
tests_rc=${PIPESTATUS[0]}

echo "== benchmarks/gpu.py"
timeout 200 "$PY" benchmarks/gpu.py --json "$OUT/bench.json" 2> >(tee "$OUT/bench_progress.txt" >&2) \
    | tee "$OUT/bench.md"
bench_rc=${PIPESTATUS[0]}

echo "tests exit $tests_rc, benchmark exit $bench_rc (124: stopped at its time limit), $((SECONDS - start)) s in all" \
    | tee "$OUT/summary.txt"
[ "$tests_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]

"""Benchmark zygotepy against a hand-written gradient, tangent-ad, HIPS autograd, PyTorch eager and JAX (eager, jitted).

    python benchmarks/run.py [--quick] [--json out.json] [--only pow,mlp,overhead,transform]

For each workload (workloads*.py; those of issue 20 in workloads_untuned.py) every contender (contenders.py) is built fresh, called once (the "first call", which
includes zygotepy's or tangent's transform or jax.jit's compile), checked against the hand-written gradient, then
timed: median over repeated batches of `time.perf_counter`. Contenders that are not installed are skipped; a
contender that raises or returns a wrong gradient is reported as such and not timed. zygotepy runs twice more on JAX
arrays, eagerly and under `jax.jit`. Then come the per-call overhead of a few rules and of `zygotepy.gradient` against
bare NumPy (overhead.py), and zygotepy's transform cost on generated 10/100/1 000-line functions (transform_cost.py).
"""
import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
import tracemalloc
from dataclasses import asdict, dataclass, field, replace
from functools import partial

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
# The checkout's own zygotepy (not whichever one `pip install -e` points at), then the workload modules beside this file.
sys.path[:0] = [os.path.dirname(_HERE), _HERE]
import overhead
import transform_cost
from contenders import all_contenders, as_list
from report import fmt_ratio, fmt_time, summary, table
from workloads import (
    PHYSICS_ARGS,
    WORKLOADS,
    check_hand_grads,
    finite_difference,
    fresh_copy,
    physics_step,
)
from workloads_arrays import ARRAY_WORKLOADS
from workloads_loops import LOOP_WORKLOADS
from workloads_untuned import UNTUNED_WORKLOADS

ALL_WORKLOADS = [*WORKLOADS, *LOOP_WORKLOADS, *ARRAY_WORKLOADS, *UNTUNED_WORKLOADS]

RTOL, ATOL_REL = 1e-6, 1e-12  # gradient check: rtol, and atol relative to the largest hand-written entry


@dataclass(frozen=True)
class Mode:
    budget: float       # seconds of timed calls per (workload, contender), roughly
    min_batch: float    # seconds per timed batch (calls are batched so the clock resolution does not matter)
    min_repeats: int
    max_repeats: int
    fresh_copies: int   # fresh functions whose first call is timed for the 20-line-function summary
    quick: bool = False  # skip each workload's `quick_skip` contenders
    long_call: float | None = None  # a longer first call (seconds) of an eager contender is not repeated


QUICK = Mode(budget=0.3, min_batch=0.002, min_repeats=3, max_repeats=15, fresh_copies=5, quick=True, long_call=0.5)
DEFAULT = Mode(budget=3.0, min_batch=0.02, min_repeats=7, max_repeats=151, fresh_copies=21)


# ---------------------------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Result:
    status: str                     # "ok", "not installed", "skipped", "cannot run", "WRONG", "ERROR"
    detail: str = ""
    median: float | None = None     # seconds per call
    first_call: float | None = None  # seconds, the first call of a fresh build
    samples: list = field(default_factory=list)
    number: int = 0                 # calls per timed batch
    peak_bytes: int | None = None   # tracemalloc peak of one call
    traceback: str = ""             # for ERROR: the full traceback (JSON only)


def _call_time(thunk, number=1):
    t0 = time.perf_counter()
    for _ in range(number):
        thunk()
    return (time.perf_counter() - t0) / number


def plan(thunk, mode):
    """`(calls per batch, batches, samples so far)` for one thunk, from one timed call.

    A call longer than the budget is not repeated: that call is its only sample."""
    t = _call_time(thunk)
    if t >= mode.budget:
        return 1, 1, [t]
    number = max(1, math.ceil(mode.min_batch / t))
    return number, int(min(mode.max_repeats, max(mode.min_repeats, mode.budget / (t * number)))), []


def time_interleaved(thunks, mode):
    """Per-call times of repeated batches of each thunk, `{name: (number, samples or exception)}`.

    Round k runs one batch of every thunk that wants a k-th batch, so a change of machine load (this is meant to run
    on shared machines) hits the primal and the contenders alike and their ratios stay meaningful.
    """
    plans = {name: plan(thunk, mode) for name, thunk in thunks.items()}
    samples = {name: p[2] for name, p in plans.items()}
    for k in range(max((r for _, r, _ in plans.values()), default=0)):
        for name, thunk in thunks.items():
            number, repeats, _ = plans[name]
            done = samples[name]
            if not isinstance(done, Exception) and len(done) <= k < repeats:
                try:
                    samples[name].append(_call_time(thunk, number))
                except Exception as e:  # noqa: BLE001 - reported as ERROR
                    samples[name] = e
    return {name: (plans[name][0], samples[name]) for name in thunks}


def peak_memory(thunk):
    gc.collect()
    tracemalloc.start()
    try:
        thunk()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def short_error(e):
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text[:200]}"


def check(contender, w, result):
    """None if the gradient matches the hand-written one, else what is wrong."""
    got = contender.to_numpy(result)
    want = as_list(w.hand_grad(*w.args))
    if len(got) != len(want):
        return f"{len(got)} gradients, expected {len(want)}"
    for i, (g, h) in enumerate(zip(got, want)):
        if g.shape != h.shape:
            return f"gradient {i} has shape {g.shape}, expected {h.shape}"
        if not np.allclose(g, h, rtol=RTOL, atol=ATOL_REL * max(1e-300, float(np.max(np.abs(h))))):
            err = float(np.max(np.abs(g - h)))
            return f"gradient {i} off by up to {err:.3g} (largest entry {float(np.max(np.abs(h))):.3g})"
    return None


def prepare(contender, w, mode):
    """Build, call once (the first call) and check: `(Result, thunk)`, the thunk None if it is not to be timed.

    A failure the workload expects (`w.cannot`, e.g. item assignment in a framework with immutable arrays) is
    reported as "cannot run" with the reason and the framework's own error; any other failure as "ERROR".
    """
    if contender.version is None:
        return Result("not installed", contender.missing), None
    if contender.name in w.skip:
        return Result("skipped", w.skip[contender.name]), None
    if mode.quick and contender.name in w.quick_skip:
        return Result("skipped", f"in --quick ({w.quick_skip[contender.name]})"), None
    try:
        thunk = contender.build(w)
        t0 = time.perf_counter()
        value = thunk()
        first = time.perf_counter() - t0
        wrong = check(contender, w, value) if contender.is_gradient else None
    except Exception as e:  # noqa: BLE001 - any failure is reported, and the run goes on
        if contender.name in w.cannot:
            return Result("cannot run", f"{w.cannot[contender.name]}; {short_error(e)}",
                          traceback=traceback.format_exc()), None
        return Result("ERROR", short_error(e), traceback=traceback.format_exc()), None
    if wrong:
        return Result("WRONG", wrong, first_call=first), None
    if mode.long_call is not None and first > mode.long_call and not contender.transforms:
        return Result("ok", "first call only: not repeated in --quick", first_call=first), None
    return Result("ok", first_call=first), thunk


def run_workload(w, contenders, mode):
    """`{contender name: Result}` for one workload."""
    results, thunks = {}, {}
    for c in contenders:
        results[c.name], thunk = prepare(c, w, mode)
        if thunk is not None:
            thunks[c.name] = thunk
    for name, (number, samples) in time_interleaved(thunks, mode).items():
        r = results[name]
        if isinstance(samples, Exception):
            results[name] = Result("ERROR", short_error(samples), traceback="".join(
                traceback.format_exception(samples)))
            continue
        r.median, r.samples, r.number = statistics.median(samples), samples, number
    for c in contenders:
        if c.numpy_memory and c.name in thunks and results[c.name].status == "ok":
            results[c.name].peak_bytes = peak_memory(thunks[c.name])
    return results


def first_call_overhead(grad, fn, args, copies):
    """Median over fresh copies of `fn` of (first gradient call - steady call), and the steady call time."""
    extra, steady = [], []
    for _ in range(copies):
        f = fresh_copy(fn)
        first = _call_time(partial(grad, f, *args))
        s = min(_call_time(partial(grad, f, *args)) for _ in range(3))
        extra.append(first - s)
        steady.append(s)
    return statistics.median(extra), statistics.median(steady)


def physics_first_call(mode):
    """First call of the ~20-line function: checked against finite differences, then timed on fresh copies."""
    try:
        import zygotepy
    except ImportError:
        return {"status": "not installed"}
    try:
        got = zygotepy.gradient(fresh_copy(physics_step), *PHYSICS_ARGS)
        fd = [finite_difference(physics_step, PHYSICS_ARGS, i) for i in range(len(PHYSICS_ARGS))]
        if not np.allclose(np.asarray(got, dtype=float), fd, rtol=1e-5, atol=1e-7):
            return {"status": "WRONG", "detail": f"zygotepy {got} vs finite differences {fd}"}
        extra, steady = first_call_overhead(zygotepy.gradient, physics_step, PHYSICS_ARGS, mode.fresh_copies)
    except Exception as e:  # noqa: BLE001
        return {"status": "ERROR", "detail": short_error(e)}
    return {"status": "ok", "first_call_extra": extra, "steady": steady}


def transform_cost_section(mode):
    """Print zygotepy's first-call time on generated 10/100/1 000-line functions; return the rows (None on error)."""
    print("## Transform cost: first call of generated functions")
    print()
    print("First `zygotepy.gradient` call minus a steady call, on generated straight-line and looping functions "
          "(transform_cost.py). A flat time per line means linear growth.")
    print()
    try:
        rows = transform_cost.measure(quick=mode.quick)
    except Exception as e:  # noqa: BLE001 - reported, the run goes on
        print(f"ERROR: {short_error(e)}")
        return None
    print("\n".join(transform_cost.report(rows)))
    return [dict(zip(("shape", "lines", "first_call_extra", "steady"), row)) for row in rows]


def overhead_section(mode):
    """Print the per-call overhead tables (overhead.py); return their rows (None on error)."""
    print("## Per-call overhead against bare NumPy")
    print()
    print("A rule called directly (`y, back = find_rule(op)(x); back(dy)`) against the bare forward call and a "
          "hand-written vector-Jacobian product (forward + derivative × dy); then `zygotepy.gradient` of whole "
          "functions against a hand-written NumPy value and gradient (overhead.py). Medians of interleaved batches.")
    print()
    try:
        # batches of >= 20 ms and at least 9 of them, also in --quick: with --quick's 2 ms batches and 3 repeats, runs
        # on the loaded shared machine disagreed by 2-4x on single rows (~10 s in --quick)
        timing = replace(mode, min_batch=max(0.02, mode.min_batch), min_repeats=max(9, mode.min_repeats))
        rules, grads = overhead.measure(partial(time_interleaved, mode=timing))
    except Exception as e:  # noqa: BLE001 - reported, the run goes on
        print(f"ERROR: {short_error(e)}")
        return None
    print("\n".join(overhead.report(rules, grads, fmt_time, fmt_ratio)))
    return {"rules": rules, "gradients": grads}


def machine(contenders):
    info = {"platform": platform.platform(), "machine": platform.machine(), "processor": platform.processor(),
            "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "numpy": np.__version__}
    for c in contenders:
        if c.name not in ("primal", "hand-written"):
            info[c.name] = c.version if c.version is not None else "not installed"
    if "torch" in sys.modules:
        info["torch_threads"] = sys.modules["torch"].get_num_threads()
    return info


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run (< 60 s)")
    parser.add_argument("--json", metavar="PATH", help="write the raw numbers here")
    parser.add_argument("--only", metavar="NAMES",
                        help="comma-separated workload names, and/or the sections 'overhead' and 'transform'")
    opts = parser.parse_args(argv)
    mode = QUICK if opts.quick else DEFAULT
    only = opts.only.split(",") if opts.only else None
    workloads = [w for w in ALL_WORKLOADS if not only or w.name in only]

    start = time.perf_counter()
    check_hand_grads(workloads)
    contenders = all_contenders()
    info = machine(contenders)
    print("# zygotepy benchmarks" + (" (--quick)" if opts.quick else ""))
    print()
    print(", ".join(f"{k}: {v}" for k, v in info.items()))
    print("hand-written gradients verified against central finite differences")
    print()

    results = {}
    for w in workloads:
        t0 = time.perf_counter()
        results[w.name] = run_workload(w, contenders, mode)
        print(table(w, results[w.name]))
        print(flush=True)
        print(f"[{w.name}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)
    physics = physics_first_call(mode)
    lines, numbers = summary(results, physics)
    print("## Summary")
    print()
    for line in lines:
        print(f"- {line}")
    overheads = transform = None
    if not only or "overhead" in only:
        print()
        t0 = time.perf_counter()
        overheads = overhead_section(mode)
        print(f"[overhead: {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)
    if not only or "transform" in only:
        print()
        transform = transform_cost_section(mode)
    elapsed = time.perf_counter() - start
    print()
    print(f"total run time {elapsed:.1f} s")

    if opts.json:
        dump = {"machine": info, "mode": asdict(mode), "elapsed": elapsed, "summary": numbers,
                "physics_first_call": physics, "overhead": overheads, "transform_cost": transform,
                "workloads": {w: {c: asdict(r) for c, r in rs.items()} for w, rs in results.items()}}
        with open(opts.json, "w") as fh:
            json.dump(dump, fh, indent=1)


if __name__ == "__main__":
    main()

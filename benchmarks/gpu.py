"""GPU mode, float32: zygotepy on CuPy and on torch CUDA against torch autograd, `jax.grad` and `jax.jit(jax.grad)`.

    python benchmarks/gpu.py                     # the GPU sizes; a contender whose library or GPU is missing is skipped
    python benchmarks/gpu.py --quick             # tiny sizes: where there is no GPU, NumPy (for CuPy), torch on the
                                                 # CPU and JAX on the CPU stand in, each labelled "CPU"
    python benchmarks/gpu.py --json out.json --only mlp,rnn --budget 2

Workloads, each written once against an array namespace `xp` (a keyword argument, so a constant to zygotepy):
`mlp`, mean squared error of a 4096 -> 1024 -> 4096 -> 256 tanh network on a batch of 4096 (W1, b1, W2, b2, W3
differentiated); `chain`, an elementwise chain over 2^26 elements (x); `rnn`, a tanh RNN of 50 steps, batch 32, hidden
and input size 128, loss sum(h_T^2) (Wx, Wh, b). Every contender is built fresh and called once (the first call:
zygotepy's transform of a fresh copy of the function, JAX's compile); its gradients are checked against the reference
(float32: the largest difference at most 1e-3 of the largest entry), the first contender's that ran, torch autograd and
JAX running before zygotepy so that the reference is theirs where they run. Then it is timed: the median of single
calls, each ended by the device's synchronisation (CuPy's `Device().synchronize()`, `torch.cuda.synchronize()`, JAX's
`block_until_ready`), for about `--budget` seconds. Matrix products run in full float32 in every library (TF32 off;
JAX's `jax_default_matmul_precision` "highest"), so that the libraries do the same arithmetic.
benchmarks/gpu_check.sh runs this on the GPU machine.
"""
import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from functools import partial

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]  # the checkout's own zygotepy, then report.py beside this file
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with CuPy and torch here
import zygotepy

from report import fmt_ratio, fmt_time
from workloads import fresh_copy


# --- workloads: one source, any namespace -----------------------------------------------------------------------------
def mlp(W1, b1, W2, b2, W3, X, Y, xp=None):
    h1 = xp.tanh(X @ W1 + b1)
    h2 = xp.tanh(h1 @ W2 + b2)
    return xp.mean((h2 @ W3 - Y) ** 2)


def chain(x, xp=None):
    y = xp.sin(x) * xp.exp(-0.5 * x * x) + xp.tanh(x) * x
    y = xp.log1p(y * y) + xp.sqrt(x * x + 1.0)
    return xp.sum(y * xp.cos(y))


def rnn(Wx, Wh, b, xs, h0, xp=None):
    h = h0
    for t in range(xs.shape[0]):
        h = xp.tanh(xs[t] @ Wx + h @ Wh + b)
    return xp.sum(h * h)


@dataclass
class Workload:
    name: str
    title: str
    fn: object
    args: list          # float32 NumPy arrays: the first n_wrt are differentiated
    n_wrt: int


def workloads(quick, only):
    rng = np.random.default_rng(0)

    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    batch, n_in, hidden, n_out = (64, 64, 32, 16) if quick else (4096, 4096, 1024, 256)
    wide = 2 * hidden if quick else 4096
    out = []
    if "mlp" in only:
        out.append(Workload("mlp", f"MLP {n_in}x{hidden}x{wide}x{n_out}, batch {batch}", mlp,
                            [r(n_in, hidden, scale=n_in ** -0.5), r(hidden, scale=0.1),
                             r(hidden, wide, scale=hidden ** -0.5), r(wide, scale=0.1),
                             r(wide, n_out, scale=wide ** -0.5), r(batch, n_in), r(batch, n_out)], 5))
    if "chain" in only:
        n = 2 ** 12 if quick else 2 ** 26
        out.append(Workload("chain", f"elementwise chain over 2^{n.bit_length() - 1} elements", chain, [r(n)], 1))
    if "rnn" in only:
        steps, b, h = (10, 4, 8) if quick else (50, 32, 128)
        out.append(Workload("rnn", f"RNN, {steps} steps, batch {b}, hidden {h}", rnn,
                            [r(h, h, scale=h ** -0.5), r(h, h, scale=h ** -0.5), r(h, scale=0.1), r(steps, b, h),
                             np.zeros((b, h), np.float32)], 3))
    return out


# --- contenders -------------------------------------------------------------------------------------------------------
@dataclass
class Contender:
    name: str
    device: str = ""          # "GPU: ..." or "CPU stand-in"
    missing: str = ""         # why it is skipped
    build: object = None      # build(workload) -> a thunk computing the gradients (a list or tuple of arrays)
    sync: object = None       # sync(result): wait for the device
    to_numpy: object = None   # result -> list of float64 NumPy arrays


def _skipped(name, why):
    return Contender(name, missing=why)


def cupy_contenders(stand_in):
    name = "zygotepy on CuPy"
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        dev = f"GPU: {cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)['name'].decode()}"
    except Exception as e:  # noqa: BLE001 (not installed, or no driver or device)
        if not stand_in:
            return [_skipped(name, f"CuPy or its GPU is missing ({type(e).__name__}: {str(e).splitlines()[0]})")]

        def build_np(w):
            f = fresh_copy(w.fn)
            return lambda: zygotepy.gradient(f, *w.args, xp=np)[:w.n_wrt]
        return [Contender("zygotepy on NumPy (stand-in for CuPy)", "CPU stand-in", build=build_np,
                          sync=lambda res: None, to_numpy=lambda res: [np.asarray(g, np.float64) for g in res])]

    def build(w):
        f, args = fresh_copy(w.fn), [cupy.asarray(a) for a in w.args]
        return lambda: zygotepy.gradient(f, *args, xp=cupy)[:w.n_wrt]
    return [Contender(name, dev, build=build, sync=lambda res: cupy.cuda.Device().synchronize(),
                      to_numpy=lambda res: [cupy.asnumpy(g).astype(np.float64) for g in res])]


def torch_contenders(stand_in):
    names = ("zygotepy on torch", "torch autograd")
    try:
        import torch
    except ImportError as e:
        return [_skipped(n, f"torch is not installed ({e})") for n in names]
    if torch.cuda.is_available():
        device, label = torch.device("cuda"), f"GPU: {torch.cuda.get_device_name()}"
        torch.backends.cuda.matmul.allow_tf32 = False
        sync = lambda res: torch.cuda.synchronize()  # noqa: E731
    elif stand_in:
        # one thread: on a small shared machine torch's OpenMP threads can take 10 ms for 4 096 sines
        torch.set_num_threads(1)
        device, label, sync = torch.device("cpu"), "CPU stand-in, 1 thread", lambda res: None
    else:
        return [_skipped(n, f"torch {torch.__version__} sees no CUDA device") for n in names]
    suffix = " CUDA" if device.type == "cuda" else " (CPU)"

    def put(w):
        return [torch.as_tensor(a, device=device) for a in w.args]

    def build_zygotepy(w):
        f, args = fresh_copy(w.fn), put(w)
        return lambda: zygotepy.gradient(f, *args, xp=torch)[:w.n_wrt]

    def build_autograd(w):
        args = put(w)
        leaves, consts = [a.requires_grad_(True) for a in args[:w.n_wrt]], args[w.n_wrt:]
        return lambda: torch.autograd.grad(w.fn(*leaves, *consts, xp=torch), leaves)

    def to_numpy(res):
        return [g.detach().cpu().numpy().astype(np.float64) for g in res]
    return [Contender(names[0] + suffix, label, build=build_zygotepy, sync=sync, to_numpy=to_numpy),
            Contender(names[1] + suffix, label, build=build_autograd, sync=sync, to_numpy=to_numpy)]


def jax_contenders(stand_in):
    names = ("jax.grad", "jax.jit(jax.grad)")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        return [_skipped(n, f"JAX is not installed ({e})") for n in names]
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        device = jax.devices("gpu")[0]
        label, suffix = f"GPU: {device.device_kind}", " GPU"
    except RuntimeError as e:
        if not stand_in:
            return [_skipped(n, f"JAX has no GPU backend ({str(e).splitlines()[0]})") for n in names]
        device, label, suffix = jax.devices("cpu")[0], "CPU stand-in", " (CPU)"

    def build(w, jit):
        g = jax.grad(partial(w.fn, xp=jnp), argnums=tuple(range(w.n_wrt)))
        g = jax.jit(g) if jit else g
        args = [jax.device_put(a, device) for a in w.args]
        return lambda: g(*args)
    return [Contender(names[0] + suffix, label, build=partial(build, jit=False), sync=jax.block_until_ready,
                      to_numpy=lambda res: [np.asarray(g, np.float64) for g in res]),
            Contender(names[1] + suffix, label, build=partial(build, jit=True), sync=jax.block_until_ready,
                      to_numpy=lambda res: [np.asarray(g, np.float64) for g in res])]


# --- measuring --------------------------------------------------------------------------------------------------------
@dataclass
class Result:
    contender: str
    device: str
    status: str                  # "ok", "skipped", "WRONG", "ERROR"
    detail: str = ""
    median: float | None = None  # seconds per gradient
    first_call: float | None = None
    repeats: int = 0


def _release():
    """Give cached device memory back between contenders (each library keeps its own pool)."""
    gc.collect()
    for mod, free in (("torch", lambda m: m.cuda.is_available() and m.cuda.empty_cache()),
                      ("cupy", lambda m: m.get_default_memory_pool().free_all_blocks())):
        if mod in sys.modules:
            try:
                free(sys.modules[mod])
            except Exception:  # noqa: BLE001, S110 (no device: nothing cached)
                pass


def measure(c, w, reference, budget, min_repeats=5, max_repeats=200):
    if c.missing:
        return Result(c.name, "", "skipped", c.missing), None
    try:
        thunk = c.build(w)
        t0 = time.perf_counter()
        res = thunk()
        c.sync(res)
        first = time.perf_counter() - t0
        grads = c.to_numpy(res)
        if reference is not None:
            worst = max(float(np.max(np.abs(g - r))) / max(float(np.max(np.abs(r))), 1e-30)
                        for g, r in zip(grads, reference, strict=True))
            if not worst <= 1e-3:
                return Result(c.name, c.device, "WRONG", f"differs from the reference by {worst:.1e} of its largest "
                                                         f"entry", first_call=first), None
        c.sync(thunk())  # one warm call more (allocator pools, autotuning) before the timed ones
        times, start = [], time.perf_counter()
        while len(times) < max_repeats and (len(times) < min_repeats or time.perf_counter() - start < budget):
            t0 = time.perf_counter()
            c.sync(thunk())
            times.append(time.perf_counter() - t0)
        return Result(c.name, c.device, "ok", median=statistics.median(times), first_call=first,
                      repeats=len(times)), grads
    except Exception as e:  # noqa: BLE001 (reported, the other contenders still run)
        last = traceback.extract_tb(e.__traceback__)[-1]
        return Result(c.name, c.device, "ERROR", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} "
                                                 f"({os.path.basename(last.filename)}:{last.lineno})"), None
    finally:
        _release()


def table(w, results):
    fastest = min((r.median for r in results if r.status == "ok"), default=None)
    lines = [f"### {w.name}: {w.title} (float32)", "",
             "| contender | device | median | / fastest | first call | repeats |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in results:
        if r.status == "ok":
            cells = [fmt_time(r.median), fmt_ratio(r.median / fastest), fmt_time(r.first_call), str(r.repeats)]
        else:
            cells = [f"{r.status}: {r.detail}".replace("|", "\\|"), "", "", ""]
        lines.append(f"| {r.contender} | {r.device or '-'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def environment():
    lines = [f"Python {platform.python_version()}, NumPy {np.__version__}, zygotepy {zygotepy.__version__}"
             if hasattr(zygotepy, "__version__") else f"Python {platform.python_version()}, NumPy {np.__version__}"]
    for mod in ("cupy", "torch", "jax"):
        if mod in sys.modules:
            lines.append(f"{mod} {getattr(sys.modules[mod], '__version__', '?')}")
    return ", ".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes; CPU stand-ins where there is no GPU")
    parser.add_argument("--only", default="mlp,chain,rnn", help="comma-separated workloads: mlp, chain, rnn")
    parser.add_argument("--budget", type=float, default=None, help="seconds of timed calls per contender "
                                                                   "(default 2, --quick 0.2)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    budget = args.budget if args.budget is not None else (0.2 if args.quick else 2.0)
    contenders = [*cupy_contenders(args.quick), *torch_contenders(args.quick), *jax_contenders(args.quick)]
    print(f"# zygotepy GPU benchmark{' (--quick: tiny sizes)' if args.quick else ''}\n")
    print(environment() + "\n")
    if any(c.device.startswith("CPU stand-in") for c in contenders):
        print("Contenders marked CPU stand-in run on the CPU in place of a missing GPU: their times say nothing "
              "about a GPU.\n")
    out = {}
    if all(c.missing for c in contenders):
        print("Nothing to run here:\n" + "\n".join(f"- {c.name}: {c.missing}" for c in contenders)
              + "\n\n(--quick runs CPU stand-ins in their place)")
    for w in workloads(args.quick, set(args.only.split(",")) if not all(c.missing for c in contenders) else set()):
        results, reference = {}, None
        t0 = time.perf_counter()
        # torch autograd and JAX first: the first of them that runs is the reference zygotepy is checked against
        for c in sorted(contenders, key=lambda c: c.name.startswith("zygotepy")):
            r, grads = measure(c, w, reference, budget)
            if reference is None and grads is not None:
                reference = grads
            results[c.name] = r
            print(f"[{w.name}: {c.name}: {r.status}]", file=sys.stderr, flush=True)
        results = [results[c.name] for c in contenders]
        print(table(w, results) + "\n", flush=True)
        print(f"[{w.name}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)
        out[w.name] = [asdict(r) for r in results]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"quick": args.quick, "environment": environment(), "results": out}, f, indent=1)
    return 0 if all(r["status"] in ("ok", "skipped") for rs in out.values() for r in rs) else 1


if __name__ == "__main__":
    sys.exit(main())

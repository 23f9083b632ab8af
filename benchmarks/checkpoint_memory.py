"""Peak memory of a gradient with and without `checkpoint` (tracemalloc).

The first workload: 1 000 steps of `x = np.tanh(x * w)` on 10^5-element float64 arrays, loss `sum(x)`. Without
checkpointing the tape holds one array per step (the tanh output its rule keeps, also the next step's input), about
0.77 GB. With checkpointing, the
steps run in blocks of `--block` steps (default 25, about sqrt(1000)); the forward keeps only each block's input and
the backward recomputes one block at a time, so the peak is roughly (blocks + 2 * block) arrays. Checkpointing every
single step saves nothing on this step: each step's input must still be kept, and that is all the tape keeps anyway.
The second workload's step has intermediates (h, sin(h), s, s * s, exp(...)), which the tape keeps without
checkpointing and per-step checkpointing does not: there, checkpointing each step saves memory too.

    python benchmarks/checkpoint_memory.py            # ~1 min on 2 cores; the second workload needs ~7 GB
    python benchmarks/checkpoint_memory.py --steps 200 --size 10000   # a quick look
"""
import argparse
import gc
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from zygotepy import checkpoint, gradient  # noqa: E402


def steps(x, w, n):
    for _ in range(n):
        x = np.tanh(x * w)
    return x


def update(x, w, n):
    """A step with several intermediates (a small residual update), which the tape keeps without checkpointing."""
    for _ in range(n):
        h = np.tanh(x * w)
        s = np.sin(h) * h
        x = x + 0.01 * (s * s + np.exp(-h * h))
    return x


def plain(step, x, w, n, block):
    x = step(x, w, n)
    return np.sum(x)


def blocked(step, x, w, n, block):
    for _ in range(n // block):
        x = checkpoint(step, x, w, block)
    return np.sum(x)


def per_step(step, x, w, n, block):
    for _ in range(n):
        x = checkpoint(step, x, w, 1)  # keeps each step's input: one array per step, not the step's intermediates
    return np.sum(x)


def measure(loss, step, x, w, n, block):
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    g = gradient(loss, step, x, w, n, block)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, seconds, g


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--block", type=int, default=25)
    args = parser.parse_args()
    if args.steps % args.block:
        parser.error("--steps must be a multiple of --block")
    rng = np.random.default_rng(0)
    x, w = rng.uniform(-1, 1, args.size), rng.uniform(0.5, 1.5, args.size)
    mb = args.size * 8 / 2 ** 20
    for step, what in ((steps, "x = tanh(x * w)"),
                       (update, "h = tanh(x * w); s = sin(h) * h; x = x + 0.01 * (s * s + exp(-h * h))")):
        for loss in (plain, blocked, per_step):
            gradient(loss, step, x[:8], w[:8], 2, 1)  # transforms outside the measurement
        print(f"{args.steps} steps of {what} on {args.size} float64 elements ({mb:.2f} MiB per array)")
        base, t0, g0 = measure(plain, step, x, w, args.steps, args.block)
        print(f"  no checkpoint:               peak {base / 2 ** 20:9.1f} MiB  {t0:6.2f} s")
        for name, loss in ((f"checkpoint per {args.block}-step block", blocked), ("checkpoint per step", per_step)):
            peak, t, g = measure(loss, step, x, w, args.steps, args.block)
            for a, b in zip(g[1:3], g0[1:3], strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
            print(f"  {name + ':':<28} peak {peak / 2 ** 20:9.1f} MiB  {t:6.2f} s  "
                  f"ratio {base / peak:5.1f}x less memory")


if __name__ == "__main__":
    main()

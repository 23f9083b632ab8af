"""Checkpointing a long recurrence: the same gradient for a fraction of the memory.

A recurrent update h = tanh(W @ h + u) runs for 2 000 steps on a batch of sequences (h and u have one column per
sequence). Reverse mode keeps what each step's backward needs (the step's input h and its tanh output), so the tape
grows with the number of steps. `checkpoint(block, h, W, u, k)` runs
k steps and keeps only the block's input: the backward pass runs the block forward again, one block at a time. With
blocks of about sqrt(steps) steps the forward keeps ~sqrt(steps) states and the backward ~sqrt(steps) more, at the
price of one more forward pass.

The script checks that the gradients with and without checkpointing agree (to ~1e-12), and measures the peak memory
of one gradient computation with tracemalloc (NumPy reports its array buffers to tracemalloc, so the peak includes the
arrays on the tape). It prints what it measured, and the time of each run.

    python examples/checkpointing.py            # 2 000 steps, state of 128 x 32 floats (~0.2 GB without checkpoints)
    python examples/checkpointing.py --quick    # 200 steps, state of 32 x 8 floats
"""
import argparse
import gc
import math
import time
import tracemalloc

import numpy as np

from zygotepy import checkpoint, gradient


def run_steps(h, W, u, n_steps):
    """n_steps of the recurrence."""
    for _ in range(n_steps):
        h = np.tanh(W @ h + u)
    return h


def loss_plain(W, u, h0, n_steps, block):
    h = run_steps(h0, W, u, n_steps)
    return 0.5 * np.sum(h * h)


def loss_checkpointed(W, u, h0, n_steps, block):
    """The same loss, with the recurrence cut into checkpointed blocks of `block` steps."""
    h = h0
    for _ in range(n_steps // block):
        h = checkpoint(run_steps, h, W, u, block)
    h = run_steps(h, W, u, n_steps % block)  # the remainder, if block does not divide n_steps
    return 0.5 * np.sum(h * h)


def measure(loss, *args):
    """(gradients, peak MiB traced during the gradient, seconds)."""
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    grads = gradient(loss, *args)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return grads, peak / 2 ** 20, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 steps of a 32 x 8 state")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--size", type=int, default=None, help="state size per sequence")
    parser.add_argument("--batch", type=int, default=None, help="number of sequences")
    args = parser.parse_args()
    n_steps = args.steps or (200 if args.quick else 2000)
    n = args.size or (32 if args.quick else 128)
    batch = args.batch or (8 if args.quick else 32)
    block = max(1, round(math.sqrt(n_steps)))

    rng = np.random.default_rng(0)
    W = rng.standard_normal((n, n)) * (0.9 / math.sqrt(n))  # spectral radius below one: a stable recurrence
    u = 0.5 * rng.standard_normal((n, batch))  # a constant input per sequence
    h0 = rng.standard_normal((n, batch))
    state_kib = n * batch * 8 / 2 ** 10
    print(f"h = tanh(W @ h + u) for {n_steps} steps; h and u are {n} x {batch} float64 ({state_kib:.0f} KiB each), "
          f"W is {n} x {n} ({n * n * 8 / 2 ** 10:.0f} KiB)")

    # the first call of each transforms the functions: do it outside the measurement, on a tiny problem
    for loss in (loss_plain, loss_checkpointed):
        gradient(loss, W[:2, :2], u[:2, :2], h0[:2, :2], 3, 2)

    g_plain, peak_plain, t_plain = measure(loss_plain, W, u, h0, n_steps, block)
    g_ckpt, peak_ckpt, t_ckpt = measure(loss_checkpointed, W, u, h0, n_steps, block)
    g_each, peak_each, t_each = measure(loss_checkpointed, W, u, h0, n_steps, 1)

    print("gradients with and without checkpointing (largest entry, and largest difference relative to it):")
    for name, a, b, c in zip(("W", "u", "h0"), g_plain, g_ckpt, g_each):
        scale = np.max(np.abs(a))
        diff = max(np.max(np.abs(a - b)), np.max(np.abs(a - c)))
        print(f"  d loss / d {name:<2}  max |grad| = {scale:.3e}   max |difference| / max |grad| = {diff / scale:.1e}")
        assert diff <= 1e-12 * scale, (name, diff, scale)
    print("  (the recurrence forgets its initial state, so d loss / d h0 is tiny; it agrees all the same)")

    print("peak memory traced during one gradient (tracemalloc):")
    print(f"  no checkpointing:                  {peak_plain:8.2f} MiB  {t_plain:6.2f} s")
    for label, peak, t in ((f"checkpoint, blocks of {block} steps:", peak_ckpt, t_ckpt),
                           ("checkpoint, every single step:", peak_each, t_each)):
        print(f"  {label:<34} {peak:8.2f} MiB  {t:6.2f} s   {peak_plain / peak:5.1f}x less memory")
    print("(checkpointing every step still keeps each step's input h, which is most of what this step's tape holds;\n"
          " blocks keep one state per block, plus one block's tape while the backward pass recomputes it)")


if __name__ == "__main__":
    main()

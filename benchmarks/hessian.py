"""Hessian benchmark: forward-over-reverse `zygotepy.hessian` against n reverse-mode gradient calls.

    python benchmarks/hessian.py [--n 100] [--repeat 5]

f(x) = sum(sin(x) * x**2) + x @ A @ x with n inputs. The Hessian costs n reverse passes on dual numbers, so the
natural yardstick is n calls of `zygotepy.gradient` (what a Hessian by n Hessian-vector products through a
gradient-only tool would pay at best). Reports median wall times and their ratio; checks the Hessian against the
closed form first.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import zygotepy


def make(n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) / n

    def f(x):
        return np.sum(np.sin(x) * x ** 2) + x @ A @ x

    def closed_form(x):
        return np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x)) + A + A.T
    return f, closed_form, rng.standard_normal(n)


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    f, closed_form, x = make(args.n)
    err = np.abs(zygotepy.hessian(f, x) - closed_form(x)).max()
    if err > 1e-10:
        raise SystemExit(f"wrong Hessian: max error {err}")
    zygotepy.gradient(f, x)  # warm the transform cache for both
    t_hess = median_time(lambda: zygotepy.hessian(f, x), args.repeat)
    t_grads = median_time(lambda: [zygotepy.gradient(f, x) for _ in range(args.n)], args.repeat)
    t_grad = t_grads / args.n
    print(f"n = {args.n}, median of {args.repeat}; Hessian max error vs closed form {err:.1e}")
    print(f"  hessian (forward-over-reverse): {t_hess * 1e3:9.2f} ms")
    print(f"  {args.n} x gradient:               {t_grads * 1e3:9.2f} ms   ({t_grad * 1e6:.1f} us each)")
    print(f"  ratio hessian / (n gradients):  {t_hess / t_grads:9.2f}")


if __name__ == "__main__":
    main()

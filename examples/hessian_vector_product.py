"""Hessian-vector products without the Hessian.

Newton-CG, Lanczos estimates of curvature and influence functions need H v, the Hessian of f times a vector v,
not H itself. Two ways to get it from zygotepy at the cost of a few gradients:

* forward over reverse: push the tangent v through the gradient, `pushforward(grad_f, x)(v)`;
* reverse over reverse: the gradient of the scalar x -> <grad f(x), v>, `gradient(lambda x: np.dot(gradient(f, x)[0], v), x)`.

Both are checked against the full `hessian(f, x) @ v` (n forward-over-reverse passes) and against central finite
differences of the gradient, (grad f(x + eps v) - grad f(x - eps v)) / (2 eps), for two functions: the
vectorised Rosenbrock function and an energy written as a Python loop over a chain of particles. The times printed
are the best of three warm calls (the first call of each transforms the code and is not timed).

    python examples/hessian_vector_product.py            # n = 100
    python examples/hessian_vector_product.py --quick    # n = 10
"""
import argparse
import time

import numpy as np

from zygotepy import gradient, hessian, pushforward


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def chain_energy(x):
    """Neighbouring particles coupled by cosh springs, each in a quartic well; a plain Python loop."""
    energy = 0.0
    for i in range(len(x) - 1):
        stretch = x[i + 1] - x[i]
        energy = energy + np.cosh(stretch) + 0.1 * x[i] ** 4
    return energy


def grad(f):
    return lambda x: gradient(f, x)[0]


def hvp_forward_over_reverse(f, x, v):
    return pushforward(grad(f), x)(v)


def hvp_reverse_over_reverse(f, x, v):
    return gradient(lambda y: np.dot(gradient(f, y)[0], v), x)[0]


def hvp_finite_differences(f, x, v, eps=1e-5):
    g = grad(f)
    return (g(x + eps * v) - g(x - eps * v)) / (2 * eps)


def timed(fn, *args, repeat=3):
    """(result, best time of `repeat` calls); the first call transforms the code and is not timed."""
    result = fn(*args)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return result, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 10")
    args = parser.parse_args()
    n = 10 if args.quick else 100
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.5, n)
    v = rng.standard_normal(n)

    for f in (rosenbrock, chain_energy):
        print(f"{f.__name__}, n = {n}")
        Hv_full, t_full = timed(lambda: hessian(f, x) @ v, repeat=1)
        Hv_fd, t_fd = timed(hvp_finite_differences, f, x, v)
        scale = np.max(np.abs(Hv_full))
        print(f"  hessian(f, x) @ v                   {t_full * 1e3:8.2f} ms   |Hv|_max = {scale:.6g}")
        print(f"  finite differences of the gradient  {t_fd * 1e3:8.2f} ms   "
              f"relative difference from hessian @ v {np.max(np.abs(Hv_fd - Hv_full)) / scale:.1e}")
        for name, hvp in (("forward over reverse", hvp_forward_over_reverse),
                          ("reverse over reverse", hvp_reverse_over_reverse)):
            Hv, t = timed(hvp, f, x, v)
            err_full = np.max(np.abs(Hv - Hv_full)) / scale
            err_fd = np.max(np.abs(Hv - Hv_fd)) / scale
            print(f"  {name:<34}  {t * 1e3:8.2f} ms   relative difference from hessian @ v {err_full:.1e}, "
                  f"from finite differences {err_fd:.1e}")
            assert err_full < 1e-12 and err_fd < 1e-6
        print()


if __name__ == "__main__":
    main()

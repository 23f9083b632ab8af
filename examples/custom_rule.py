"""Custom rules with @adjoint: a stable softplus, an implicit derivative, and a C function with no Python source.

zygotepy derives gradients from your source code, but sometimes you know better than the chain rule:

1. softplus(x) = log(1 + exp(x)) overflows for large x, and so does the derivative derived from that formula. A rule
   computes the value as logaddexp(0, x) and the derivative as a stable sigmoid.
2. Kepler's equation E - e sin E = M is solved by Newton's method. zygotepy can differentiate through the iterations
   (and the script shows it agrees), but the implicit function theorem gives the derivative directly:
   dE/dM = 1 / (1 - e cos E) and dE/de = sin E / (1 - e cos E), with no tape of the iterations.
3. The Bessel function j0 from the C math library (through ctypes) has no Python source, so zygotepy raises
   MissingAdjoint with a rule skeleton; with j0' = -j1 the rule is one line.

Each gradient is checked against central finite differences. Run it with

    python examples/custom_rule.py            # 2 000 data points in the logistic regression
    python examples/custom_rule.py --quick    # 200 data points
"""
import argparse
import ctypes
import ctypes.util
import math

import numpy as np

from zygotepy import MissingAdjoint, adjoint, gradient, pullback


def central_differences(f, x, eps=1e-6):
    """The gradient of the scalar f at the float or 1-d array x, by central differences."""
    if np.isscalar(x):
        return (f(x + eps) - f(x - eps)) / (2 * eps)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def relative_error(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(b)), 1e-300))


# --- 1. softplus ----------------------------------------------------------------------------------------------------------

def softplus_naive(x):
    return np.log(1.0 + np.exp(x))


def softplus(x):
    """The same formula (say, from a library you cannot change). Called directly it still overflows; under
    differentiation the rule below replaces both its value and its derivative."""
    return np.log(1.0 + np.exp(x))


def sigmoid(x):
    """1 / (1 + exp(-x)) without overflow: exp is only ever taken of -|x|."""
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


@adjoint(softplus)
def _softplus_rule(x):
    y = np.logaddexp(0.0, x)  # log(exp(0) + exp(x)), computed stably

    def back(dy):
        return (dy * sigmoid(x),)  # one cotangent per positional argument
    return y, back


def logistic_loss(w, X, y):
    """Mean logistic loss for labels y in {-1, +1}: mean(log(1 + exp(-y * (X @ w))))."""
    return np.mean(softplus(-y * (X @ w)))


def demo_softplus(n_points):
    print("1. softplus with a stable rule")
    x = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    with np.errstate(over="ignore", invalid="ignore"):  # exp(800) overflows: that is the point
        naive_value, back = pullback(softplus_naive, x)
        naive = back(np.ones_like(x))[0]
    stable_value, back = pullback(softplus, x)
    stable = back(np.ones_like(x))[0]
    print("        x   log(1+exp(x))  with the rule   derivative derived   with the rule")
    for row in zip(x, naive_value, stable_value, naive, stable):
        print("   {:6.0f}  {:14.6g}  {:13.6g}  {:19.6g}  {:14.6g}".format(*row))
    assert np.array_equal(stable, sigmoid(x)) and np.array_equal(stable_value, np.logaddexp(0.0, x))

    # the rule inside a model: a logistic regression loss, against central differences
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n_points, 5))
    w_true = np.array([1.5, -2.0, 0.5, 0.0, 1.0])
    y = np.where(X @ w_true + 0.3 * rng.standard_normal(n_points) > 0, 1.0, -1.0)
    w = 0.1 * rng.standard_normal(5)
    g = gradient(logistic_loss, w, X, y)[0]
    fd = central_differences(lambda v: logistic_loss(v, X, y), w)
    print(f"   logistic loss on {n_points} points: gradient {np.round(g, 6)}")
    print(f"   relative error against central differences: {relative_error(g, fd):.1e}")
    assert relative_error(g, fd) < 1e-6
    print()


# --- 2. an implicit derivative -------------------------------------------------------------------------------------------

def kepler_newton(M, e):
    """The eccentric anomaly E solving E - e sin E = M (0 <= e < 1), by Newton's method."""
    E = M if e < 0.8 else math.pi
    for _ in range(50):
        step = (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
        E -= step
        if abs(step) < 1e-15:
            break
    return E


def kepler(M, e):
    return kepler_newton(M, e)  # the rule below gives kepler (not kepler_newton) its derivative


@adjoint(kepler)
def _kepler_rule(M, e):
    E = kepler_newton(M, e)

    def back(dE):
        if dE is None:  # zygotepy may pass None when no gradient reaches the result
            return None, None
        # differentiate E - e sin E = M: (1 - e cos E) dE = dM + sin E de
        scale = dE / (1.0 - e * math.cos(E))
        return scale, scale * math.sin(E)
    return E, back


def orbit_x(M, e, a):
    """The x coordinate of a body on an ellipse with semi-major axis a, at mean anomaly M."""
    return a * (math.cos(kepler(M, e)) - e)


def demo_kepler():
    print("2. Kepler's equation: the implicit-function rule instead of differentiating Newton's iterations")
    M, e, a = 1.2, 0.6, 2.0
    g = gradient(orbit_x, M, e, a)
    fd = [central_differences(lambda t: orbit_x(t, e, a), M),
          central_differences(lambda t: orbit_x(M, t, a), e),
          central_differences(lambda t: orbit_x(M, e, t), a)]
    print(f"   E = {kepler(M, e):.15f}; gradient of a (cos E - e) in (M, e, a): {g}")
    print(f"   relative error against central differences: {relative_error(g, fd):.1e}")
    assert relative_error(g, fd) < 1e-7
    through_newton = gradient(kepler_newton, M, e)
    print(f"   dE/d(M, e) by the rule {gradient(kepler, M, e)}, derived through Newton's iterations {through_newton}")
    print()


# --- 3. a C function with no Python source --------------------------------------------------------------------------------

def load_bessel():
    """j0 and j1 from the C math library, or None where it cannot be loaded (e.g. Windows)."""
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m"))
        j0, j1 = libm.j0, libm.j1
    except (OSError, AttributeError, TypeError):
        return None
    for fn in (j0, j1):
        fn.argtypes, fn.restype = [ctypes.c_double], ctypes.c_double
    return j0, j1


def demo_bessel():
    print("3. j0 from the C math library (ctypes): no source, so a rule is needed")
    bessel = load_bessel()
    if bessel is None:
        print("   (skipped: the C math library's j0 could not be loaded here)")
        return
    j0, j1 = bessel

    def drum(k):
        """A sum of squared Bessel modes at a few radii."""
        total = 0.0
        for r in (0.25, 0.5, 1.0, 2.0):
            total += r * j0(k * r) ** 2
        return total

    try:
        gradient(drum, 1.3)
    except MissingAdjoint as err:
        print("   without a rule zygotepy says:", str(err).splitlines()[0])

    @adjoint(j0)
    def _j0_rule(x):
        return j0(x), lambda dy: (-j1(x) * dy,)

    g = gradient(drum, 1.3)[0]
    fd = central_differences(drum, 1.3)
    print(f"   with the rule: d drum / dk at k = 1.3 is {g:.12f} (central differences {fd:.12f})")
    print(f"   relative error against central differences: {relative_error(g, fd):.1e}")
    assert relative_error(g, fd) < 1e-8


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller data set")
    args = parser.parse_args()
    demo_softplus(200 if args.quick else 2000)
    demo_kepler()
    demo_bessel()


if __name__ == "__main__":
    main()

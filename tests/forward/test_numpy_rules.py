"""Tangent rules of zygotepy/forward/numpy_rules.py (products and scans, differences, order statistics, nan-ignoring
and weighted reductions, integration, polynomials, interpolation, FFTs) and of rules.py's vdot, logaddexp and
math.gamma / lgamma: `derivative` along a path t -> x + t v against central differences in float64, `hessian`
(forward-over-reverse) against central differences of the gradient, and the forms that are refused."""
import math
import os
import sys

import numpy as np
import pytest

from zygotepy import ForwardModeError, derivative, hessian, jacobian, jvp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central_hessian  # noqa: E402

RNG = np.random.default_rng(5)
X = RNG.uniform(0.5, 1.5, (3, 4)) * np.array([1, -1, 1, -1])
V = RNG.uniform(-1, 1, (3, 4))
Z = np.array([[0.5, 0.0, 2.0, -1.5], [0.0, 0.0, 1.2, 0.7], [1.1, -0.4, 0.9, 0.3]])  # zeros, one and two in a column
W = np.array([0.5, 1.5, 2.0, 1.0])
P = np.array([0.3, -1.2, 0.8, 2.0])


def _parts(v):
    if isinstance(v, (tuple, list)):
        return [p for item in v for p in _parts(item)]
    return [np.asarray(v, dtype=complex)]


def _agree(f, t=0.3, h=1e-6):
    got = _parts(derivative(f, t))
    want = [(p - m) / (2 * h) for p, m in zip(_parts(f(t + h)), _parts(f(t - h)), strict=True)]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


CASES = {
    "prod": lambda t: np.prod(X + t * V),
    "prod-axis-keepdims": lambda t: np.prod(X + t * V, axis=1, keepdims=True),
    "prod-zeros": lambda t: np.prod(Z + t * (Z == 0) * 0 + t * V * (Z != 0)),
    "prod-zeros-perturbed": lambda t: np.prod(Z + t * V, axis=0),
    "prod-zeros-all-keepdims": lambda t: np.prod(Z + t * V, keepdims=True),
    "prod-axis-tuple": lambda t: np.prod(X + t * V, axis=(0, 1)),
    "cumprod": lambda t: np.cumprod(X + t * V),
    "cumprod-axis": lambda t: np.cumprod(X + t * V, axis=0),
    "cumprod-zeros": lambda t: np.cumprod(Z + t * V, axis=1),
    "diff": lambda t: np.diff(X + t * V),
    "diff-n2-axis0": lambda t: np.diff(X + t * V, n=2, axis=0),
    "diff-prepend": lambda t: np.diff(X[0] + t * V[0], prepend=5.0, append=np.array([1.0, 2.0])),
    "unwrap": lambda t: np.unwrap(4.0 * (X + t * V), axis=1),  # (steps past pi: multiples of 2 pi added)
    "pad-constant-values": lambda t: np.pad(X + t * V, 1, constant_values=0.3 + t * t),  # (a keyword with a tangent)
    "pad-constant-values-only": lambda t: np.pad(X, ((1, 0), (0, 2)), "constant", constant_values=2.0 * t),
    "ptp": lambda t: np.ptp(X + t * V, axis=1),
    "nansum": lambda t: np.nansum(np.where(Z == 0, np.nan, Z) + t * V, axis=0),
    "nanmean": lambda t: np.nanmean(np.where(Z == 0, np.nan, Z) + t * V, axis=1, keepdims=True),
    "average": lambda t: np.average(X + t * V, axis=1, weights=W),
    "average-weights": lambda t: np.average(X, 1, W + t * V[0], keepdims=True),  # (a tangent passed by position)
    "average-both": lambda t: np.average(X + t * V, None, np.abs(X) + t * V),
    "average-plain": lambda t: np.average(X + t * V, axis=0),
    "average-weights-keyword": lambda t: np.average(X + t * V, axis=1, weights=W + t * P),  # (weights= with a tangent)
    "median": lambda t: np.median(X + t * V),
    "median-axis": lambda t: np.median(X + t * V, axis=0, keepdims=True),
    "percentile": lambda t: np.percentile(X + t * V, 30, axis=1),
    "quantile-array": lambda t: np.quantile(X + t * V, [0.1, 0.5, 0.95], axis=0),
    "quantile-keepdims-all": lambda t: np.quantile(X + t * V, 0.4, keepdims=True),
    "trapezoid": lambda t: np.trapezoid(X + t * V, axis=0),
    "trapezoid-x": lambda t: np.trapezoid(X[0] * t, np.cumsum(W) + t * P),
    "polyval": lambda t: np.polyval(P + t * V[0], 0.7 + t),
    "polyval-array": lambda t: np.polyval(P, X[0] * t),
    "interp-fp": lambda t: np.interp(np.array([-0.5, 0.4, 1.7, 3.5]), np.arange(4.0), P + t * V[0]),
    "interp-x": lambda t: np.interp(np.array([0.4, 1.5, 2.1]) + t, np.arange(4.0), P),
    "interp-left": lambda t: np.interp(np.array([-1.0, 0.5]), np.arange(4.0), P * t, left=3.0),
    "fft": lambda t: np.fft.fft(X[0] * t + V[0]),
    "rfft-axis": lambda t: np.fft.rfft(X * t, axis=0),
    "irfft": lambda t: np.fft.irfft(np.fft.rfft(X[0]) * t),
    "fft2": lambda t: np.fft.fft2(X + t * V),
    "fftshift": lambda t: np.fft.fftshift(X * t),
    "take_along_axis": lambda t: np.take_along_axis(X * t, np.array([[2, 0, 1, 1]]), axis=0),
    "vdot": lambda t: np.vdot(X + t * V, X),
    "logaddexp": lambda t: np.logaddexp(X * t, V),
    "logaddexp2": lambda t: np.logaddexp2(V, X * t),
    "gamma": lambda t: math.gamma(1.7 + t),
    "lgamma": lambda t: math.lgamma(0.2 + t * t),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangent_rules(name):
    _agree(CASES[name])


def loss(x):
    return np.prod(x[:3]) + np.sum(np.cumprod(x)) + np.median(x) * np.ptp(x) + np.sum(np.diff(x) ** 2) \
        + np.average(x, weights=np.arange(1.0, 5.0)) * np.nansum(x * x)


@pytest.mark.parametrize("f", [loss, lambda x: np.quantile(x * x, 0.3) * np.polyval(x, 0.5)], ids=["mixed", "quantile"])
def test_hessians(f):
    x = np.array([0.7, -1.3, 0.4, 1.9])
    np.testing.assert_allclose(hessian(f, x), central_hessian(f, x), rtol=1e-5, atol=1e-6)


def test_forward_jacobian_of_a_product_with_a_zero():
    x = np.array([2.0, 0.0, 3.0])
    np.testing.assert_allclose(jacobian(np.prod, x, mode="forward")[0], [0.0, 6.0, 0.0])
    np.testing.assert_allclose(jacobian(np.cumprod, x, mode="forward")[0],
                               [[1, 0, 0], [0, 2, 0], [0, 6, 0]])


@pytest.mark.parametrize("f, match", [
    (lambda t: np.median(X * t, axis=(0, 1)), "one axis"),
    (lambda t: np.quantile(X * t, 0.3, method="nearest"), "method"),
    (lambda t: np.average(X * t, weights=W, axis=1, returned=True), "returned"),
    (lambda t: np.interp(0.5, np.arange(4.0) * t, P), "x and fp"),
    (lambda t: np.interp(0.5, np.arange(4.0), P * t, period=2.0), "period"),
    (lambda t: np.prod(Z * t, axis=(0, 1)), "tuple of axes"),
    (lambda t: np.cumprod(X * t, dtype=float), "axis="),
], ids=["median-axes", "quantile-method", "average-returned", "interp-xp", "interp-period", "prod-axes-zero",
        "cumprod-dtype"])
def test_refused(f, match):
    with pytest.raises(ForwardModeError, match=match):
        derivative(f, 0.3)


def test_second_derivative_of_gamma_is_refused():
    with pytest.raises(ForwardModeError, match="second derivative"):
        derivative(lambda s: derivative(math.gamma, s), 1.5)


def test_an_array_sorted_in_place_in_forward_mode():
    # (`y.sort()` on a dual array raised AttributeError): the tangent follows the primal's order
    def sorted_copy(x):
        y = x * 1.0
        y.sort()
        return y

    def weighted(x):
        y = x * x
        y.sort()
        return np.sum(y * np.array([1.0, 2.0, 3.0]))
    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(jacobian(sorted_copy, x, mode="forward")[0],
                                  jacobian(sorted_copy, x, mode="reverse")[0])
    np.testing.assert_allclose(hessian(weighted, x), central_hessian(weighted, x), rtol=1e-6, atol=1e-6)


def test_a_complex_base_left_of_the_imaginary_axis_to_a_power():
    """`z ** c` with c carrying the derivative: log(z) was kept only where `z > 0`, which NumPy decides by the real
    part, so a base with a negative real part gave 0 (and a Python complex a TypeError)."""
    z = np.array([-0.4 + 1.0j])
    for f in (lambda c: (z ** (c + 0.5j)).imag[0], lambda c: ((-0.4 + 1.0j) ** (c + 0.5j)).imag):
        want = (f(0.3 + 1e-6) - f(0.3 - 1e-6)) / 2e-6
        assert derivative(f, 0.3) == pytest.approx(want, rel=1e-6)


_CALLS = []


def _square_cached(v):
    _CALLS.append(v)
    return v * v


def test_a_cached_function_and_np_isscalar_in_forward_mode():
    """An lru_cache handed back a value computed for another call (derivative 1.0 for 4.0) and kept the dual number
    for later plain calls; `np.isscalar` of a dual number standing for a number was False (another branch than
    gradient's)."""
    import functools
    sq = functools.lru_cache(maxsize=None)(_square_cached)
    sq(1.5)
    assert derivative(lambda x: sq(x) + x, 1.5) == pytest.approx(4.0)
    assert type(sq(1.5)) is float
    assert derivative(lambda x: 2 * x if np.isscalar(x) else 3 * x, 1.5) == 2.0


_Z = np.array([[0.3, -1.2, 0.5], [0.7, 0.1, -0.4]])
_V = np.array([[1.0, 0.5, -0.3], [0.2, -0.7, 0.9]])


@pytest.mark.parametrize("f", [lambda z: np.sum(z.var(0) * np.arange(3.0)),
                               lambda z: np.sum(np.std(z, -1, keepdims=True) * z),
                               lambda z: np.sum(np.var(z, 1, None, None, 1)),
                               lambda z: np.sum(np.prod(z, 0) ** 2), lambda z: np.sum(np.nansum(z, 1) ** 3)],
                         ids=["var method", "std", "var ddof by position", "prod", "nansum"])
def test_a_reductions_axis_by_position(f):
    """`z.var(0)` (a batch norm's) was refused in forward mode ("by keyword"), and with it hessians and the
    forward-over-reverse route of a nested gradient."""
    _, got = jvp(f, (_Z,), (_V,))
    h = 1e-6
    assert got == pytest.approx((f(_Z + h * _V) - f(_Z - h * _V)) / (2 * h), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("f", [lambda k: np.float64(k) ** 2, lambda k: math.fsum([k, k * k, 0.5]),
                               lambda k: np.sum(np.full(3, k) ** 2), lambda k: np.angle(k * (1 + 2j) - 0.5),
                               lambda k: np.angle(k + 1j, deg=True), lambda k: np.add.reduce(np.array([k, 2 * k])) ** 2],
                         ids=["np.float64", "math.fsum", "np.full", "np.angle", "np.angle deg", "np.add.reduce"])
def test_constructors_and_reductions_with_tangent_rules(f):
    """Each was refused by forward mode (MissingTangentRule, or np.full's conversion of the fill value)."""
    assert derivative(f, 0.7) == pytest.approx((f(0.7 + 1e-6) - f(0.7 - 1e-6)) / 2e-6, rel=1e-6)

"""Tests of `zygotepy/adjoints/numpy/calculus.py` (trapezoid, gradient, ediff1d, polyfit, polyder, polyint, vander):
its rows of the rule table against finite differences (tests/adjoints/numpy/rows_calculus.py, `row_tests` of
tests/adjoints/test_rules.py), and gradients of small functions that use them as a user would, against finite
differences and, where there is one, a closed form."""
import sys
from pathlib import Path

import numpy as np
import pytest

import zygotepy
from zygotepy import ZygoteError
from zygotepy.testing import check_grads

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("calculus"))

RNG = np.random.default_rng(11)
T = np.sort(RNG.uniform(0.0, 2.0, 9))


def checked_gradient(f, *args):
    """The gradient of f at args, after `check_grads` has held f's pullback to central finite differences."""
    check_grads(f, *args)
    return zygotepy.gradient(f, *args)


def test_trapezoid_integral_loss():
    """L(y, t) = int y^2 dt by the trapezoidal rule: dL/dy_k = y_k (t_(k+1) - t_(k-1)), the ends one-sided."""
    y = np.sin(T) + 0.1 * RNG.normal(size=9)
    gy, gt = checked_gradient(lambda y, t: np.trapezoid(y ** 2, x=t), y, T)
    widths = np.diff(T)
    np.testing.assert_allclose(gy, y * (np.r_[widths, 0] + np.r_[0, widths]), rtol=1e-12)
    half = (y[1:] ** 2 + y[:-1] ** 2) / 2  # dL/dt_k = half_(k-1) - half_k
    np.testing.assert_allclose(gt, np.r_[0, half] - np.r_[half, 0], rtol=1e-12)


def test_trapezoid_of_a_linear_function_is_exact():
    """int_0^1 a t dt = a / 2 for any grid: d/da is 1/2."""
    (g,) = checked_gradient(lambda a: np.trapezoid(a * T, T) / (T[-1] ** 2 - T[0] ** 2), 3.0)
    assert g == pytest.approx(0.5, rel=1e-12)


def test_gradient_smoothness_penalty():
    """sum |np.gradient(f, t)|^2 on a non-uniform grid, with the grid itself differentiated too."""
    f = RNG.normal(size=9)
    check_grads(lambda f, t: np.sum(np.gradient(f, t) ** 2), f, T)
    check_grads(lambda f, t: np.sum(np.gradient(f, t, edge_order=2) ** 2), f, T)
    g2 = RNG.normal(size=(4, 5))
    check_grads(lambda g: sum(np.sum(d ** 2) for d in np.gradient(g, 0.5, 2.0)), g2)


def test_gradient_of_a_quadratic_is_exact_with_edge_order_2():
    """np.gradient(c t^2, t, edge_order=2) = 2 c t exactly (second-order formulas): d/dc sum(.) = 2 sum t."""
    (g,) = checked_gradient(lambda c: np.sum(np.gradient(c * T ** 2, T, edge_order=2)), 1.5)
    assert g == pytest.approx(2 * np.sum(T), rel=1e-10)


def test_ediff1d_total_variation():
    """sum of squares of [x_0, diff(x)]: 2 x_0 at the start, and diff's transpose of 2 diff(x)."""
    x = RNG.normal(size=6)
    (g,) = checked_gradient(lambda x: np.sum(np.ediff1d(x, to_begin=x[0]) ** 2), x)
    d = np.diff(x)
    np.testing.assert_allclose(g, 2 * (np.r_[0, d] - np.r_[d, 0]) + 2 * x[0] * (np.arange(6) == 0), rtol=1e-12)


def test_polyfit_residual():
    """The residual of a least-squares fit: dL/dy of ||y - V c(y)||^2 is 2 r (r is orthogonal to the columns)."""
    x = np.linspace(-1.0, 1.0, 8)
    y = np.cos(2 * x) + 0.05 * RNG.normal(size=8)

    def loss(x, y):
        return np.sum((np.polyval(np.polyfit(x, y, 2), x) - y) ** 2)
    gx, gy = checked_gradient(loss, x, y)
    r = y - np.polyval(np.polyfit(x, y, 2), x)
    np.testing.assert_allclose(gy, 2 * r, rtol=1e-9, atol=1e-12)
    # full=True's residuals are the same loss
    (gy2,) = checked_gradient(lambda y: np.polyfit(x, y, 2, full=True)[1][0], y)
    np.testing.assert_allclose(gy2, 2 * r, rtol=1e-9, atol=1e-12)


def test_polyfit_slope_of_a_line():
    """The slope of a degree-1 fit is sum (x - mean x) y / sum (x - mean x)^2: linear in y."""
    x = np.arange(6.0)
    y = RNG.normal(size=6)
    (g,) = checked_gradient(lambda y: np.polyfit(x, y, 1)[0], y)
    np.testing.assert_allclose(g, (x - x.mean()) / np.sum((x - x.mean()) ** 2), rtol=1e-12)


def test_polyfit_refusals():
    x, y = np.arange(4.0), RNG.normal(size=4)
    with pytest.raises(ZygoteError, match="cov="):
        zygotepy.gradient(lambda y: np.sum(np.polyfit(x, y, 1, cov=True)[0]), y)
    with pytest.raises(ZygoteError, match="rank-deficient"):
        zygotepy.gradient(lambda y: np.sum(np.polyfit(np.ones(4), y, 1)), y)
    with pytest.raises(ZygoteError, match="complex"):
        zygotepy.gradient(lambda y: np.abs(np.polyfit(x, y * 1j, 1)[0]), y)


def test_polynomial_calculus():
    """polyint then polyder is the identity; the integral over [0, 1] of p is sum p_j / (deg - j + 1)."""
    p = RNG.normal(size=4)
    (g,) = checked_gradient(lambda p: np.sum(np.polyder(np.polyint(p)) * np.arange(1.0, 5.0)), p)
    np.testing.assert_allclose(g, np.arange(1.0, 5.0))
    (g,) = checked_gradient(lambda p: np.polyval(np.polyint(p), 1.0) - np.polyval(np.polyint(p), 0.0), p)
    np.testing.assert_allclose(g, 1.0 / np.arange(4, 0, -1), rtol=1e-12)


def test_vander_least_squares():
    x = np.linspace(0.1, 1.0, 5)
    check_grads(lambda x: np.sum(np.linalg.solve(np.vander(x), np.ones(5))), x)

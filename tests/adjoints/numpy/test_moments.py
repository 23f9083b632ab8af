"""Tests of `zygotepy/adjoints/numpy/moments.py` (cov, corrcoef, quantile, percentile and their nan-variants): its
rows of the rule table against finite differences (tests/adjoints/numpy/rows_moments.py, `row_tests` of
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

sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # tests/plain_checks.py
from plain_checks import central  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("moments"))

RNG = np.random.default_rng(5)


def checked_gradient(f, *args):
    """The gradient of f at args, after `check_grads` has held f's pullback to central finite differences."""
    check_grads(f, *args)
    return zygotepy.gradient(f, *args)


def test_covariance_loss():
    """The squared Frobenius distance of cov(X) to a target: dL/dX = 4 (C - T) Xc / (N - 1)."""
    X = RNG.normal(size=(3, 8))
    target = np.eye(3)
    (g,) = checked_gradient(lambda X: np.sum((np.cov(X) - target) ** 2), X)
    Xc = X - X.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(g, 4 * (np.cov(X) - target) @ Xc / 7, rtol=1e-12)


def test_variance_agrees_with_np_var():
    x = RNG.normal(size=7)
    (g,) = checked_gradient(lambda x: np.cov(x), x)
    np.testing.assert_allclose(g, zygotepy.gradient(lambda x: np.var(x, ddof=1), x)[0], rtol=1e-12)


def test_weighted_covariance_of_two_series():
    x, y, w = RNG.normal(size=6), RNG.normal(size=6), RNG.uniform(0.5, 2.0, 6)
    check_grads(lambda x, y, w: np.cov(x, y=y, aweights=w)[0, 1], x, y, w)


def test_correlation_loss():
    """Decorrelate three features: the off-diagonal of corrcoef, squared; and the correlation of two series."""
    X = RNG.normal(size=(10, 3))
    check_grads(lambda X: np.sum(np.triu(np.corrcoef(X, rowvar=False), 1) ** 2), X)
    x, y = RNG.normal(size=9), RNG.normal(size=9)
    (gx, gy) = checked_gradient(lambda x, y: np.corrcoef(x, y)[0, 1], x, y)
    # d r / d y = (xc / |xc| - r yc / |yc|) / |yc| (r is the cosine of the centred series)
    xc, yc = x - x.mean(), y - y.mean()
    r = xc @ yc / np.linalg.norm(xc) / np.linalg.norm(yc)
    np.testing.assert_allclose(gy, (xc / np.linalg.norm(xc) - r * yc / np.linalg.norm(yc)) / np.linalg.norm(yc),
                               rtol=1e-10)


def pinball(y, pred, tau):
    """The quantile (pinball) loss of a prediction."""
    e = y - pred
    return np.mean(np.maximum(tau * e, (tau - 1) * e))


def test_pinball_loss_of_the_quantile():
    """A prediction of the empirical quantile: the loss and its gradient through np.quantile."""
    y = RNG.normal(size=11)
    base = RNG.normal(size=11) * 3
    check_grads(lambda s: pinball(y, np.quantile(s, 0.8) + 0.1 * s, 0.8), base)
    check_grads(lambda s: np.sum(np.percentile(s, [10.0, 50.0, 90.0]) ** 2), base)


def test_quantile_weights_are_the_interpolation_weights():
    """q (n - 1) = 2.4 on 6 distinct points: 0.6 on the third smallest, 0.4 on the fourth."""
    x = np.array([3.0, -1.0, 0.5, 2.0, 7.0, 1.0])
    (g,) = checked_gradient(lambda x: np.quantile(x, 0.48), x)
    expected = np.zeros(6)
    expected[[5, 3]] = [0.6, 0.4]  # sorted: -1, 0.5, 1 (index 5), 2 (index 3), 3, 7
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-15)


def test_median_and_quantile_agree():
    x = RNG.normal(size=(3, 7))
    gq = zygotepy.gradient(lambda x: np.sum(np.quantile(x, 0.5, axis=1) ** 2), x)[0]
    gm = zygotepy.gradient(lambda x: np.sum(np.median(x, axis=1) ** 2), x)[0]
    np.testing.assert_allclose(gq, gm, rtol=1e-12)


def test_nanquantile_skips_the_nans():
    x = np.array([[1.0, np.nan, 3.0, 0.0], [np.nan, np.nan, 2.0, 5.0]])
    (g,) = zygotepy.gradient(lambda x: np.sum(np.nanquantile(x, 0.5, axis=1)), x)
    np.testing.assert_allclose(g, [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]])  # medians of 3 and of 2
    (g,) = zygotepy.gradient(lambda x: np.nanpercentile(x, 100.0), x)
    np.testing.assert_allclose(g, [[0, 0, 0, 0], [0, 0, 0, 1.0]])


def test_ties_follow_the_stable_sort():
    """Tied entries: the cotangent goes where np.sort's rule sends it (the first of the ties is the smaller)."""
    x = np.array([2.0, 1.0, 2.0, 0.0])
    (g,) = zygotepy.gradient(lambda x: np.quantile(x, 2 / 3), x)  # the third smallest: x[0], by the stable sort
    (gs,) = zygotepy.gradient(lambda x: np.sort(x)[2], x)
    np.testing.assert_allclose(g, gs)


def test_refusals():
    x = RNG.normal(size=5)
    with pytest.raises(ZygoteError, match="inverted_cdf"):
        zygotepy.gradient(lambda x: np.quantile(x, 0.5, method="inverted_cdf"), x)
    with pytest.raises(ZygoteError, match="weights"):
        zygotepy.gradient(lambda x: np.quantile(x, 0.5, method="inverted_cdf", weights=np.ones(5)), x)


@pytest.mark.parametrize("optimized", [True, False])
def test_gradient_with_respect_to_q(optimized):
    """Between two order statistics the quantile is linear in q: d/dq = (x_hi - x_lo) dv/dq (v = (n - 1) q for the
    default method; /100 for a percentile); the piecewise-constant methods give 0; an int q is a constant."""
    x = np.array([0.0, 1.0, 3.0])
    rng = np.random.default_rng(6)
    X = rng.normal(size=(4, 7))
    Xn = X.copy()
    Xn[1, ::2] = np.nan
    with zygotepy.optimizations(optimized):
        assert zygotepy.gradient(lambda q: np.quantile(x, q), 0.25) == (pytest.approx(2.0),)
        assert zygotepy.gradient(lambda q: np.percentile(x, q), 60.0) == (pytest.approx(0.04),)
        (dq,) = zygotepy.gradient(lambda q: np.sum(np.nanquantile(np.array([np.nan, 1.0, 0.0, 3.0]), q)),
                                  np.array([0.25, 0.75]))
        np.testing.assert_allclose(dq, [2.0, 4.0])
        (dq,) = zygotepy.gradient(lambda q: np.quantile(x, q, method="lower"), 0.6)
        assert dq == 0.0
        assert zygotepy.gradient(lambda x: np.quantile(x, 1), x)[0].tolist() == [0.0, 0.0, 1.0]
        for fn, scale, data in ((np.quantile, 1, X), (np.percentile, 100, X), (np.nanquantile, 1, Xn),
                                (np.nanpercentile, 100, Xn)):
            check_grads(lambda x, q: fn(x, q, axis=1), data, np.array([0.13, 0.61, 0.87]) * scale)
            check_grads(lambda x, q: fn(x, q, method="hazen", keepdims=True), data, 0.37 * scale)
            check_grads(lambda x, q: fn(x, q=q, axis=0, method="nearest"), data, 0.42 * scale)


@pytest.mark.parametrize("optimized", [True, False])
def test_q_of_a_method_without_a_rule_is_refused_where_it_carries_a_gradient(monkeypatch, optimized):
    from zygotepy.adjoints.numpy import moments
    monkeypatch.delitem(moments.Q_SLOPES, "linear")  # as if the default method's dependence on q had no rule
    x = RNG.normal(size=5)
    with zygotepy.optimizations(optimized):
        with pytest.raises(ZygoteError, match="np.quantile.*linear.*with respect to q"):
            zygotepy.gradient(lambda q: np.quantile(x, q), 0.3)
        check_grads(lambda x: np.quantile(x, 0.3), x)  # a constant q
        check_grads(lambda x: np.quantile(x, 1, axis=0), x)  # an int q


@pytest.mark.parametrize("fn, q", [(np.quantile, 0.3), (np.percentile, 30.0), (np.quantile, np.array([0.2, 0.7])),
                                   (np.nanquantile, 0.6), (np.nanpercentile, 60.0)])
@pytest.mark.parametrize("axis", [None, 0])
def test_overwrite_input_is_computed_on_x_as_given(mode, fn, q, axis):
    """NumPy leaves a's contents undefined after overwrite_input=True (it partitions a in place); zygotepy computes as
    without it: a stays as given, so a function that reads a after the call has the value and gradient (central
    differences) of the same function without overwrite_input."""
    x = np.array([[0.3, -1.2, 2.1, 0.7], [1.5, 0.9, -0.4, 1.1], [2.6, -2.0, 0.2, 0.5]])
    w = np.arange(1.0, 13.0).reshape(3, 4)

    def f(x):
        return np.sum(fn(x, q, axis=axis, overwrite_input=True) ** 2) + np.sum(x * w)

    def plain(x):
        return np.sum(fn(x, q, axis=axis) ** 2) + np.sum(x * w)
    given = x.copy()
    value, (g,) = zygotepy.value_and_gradient(f, given)
    assert value == pytest.approx(plain(x), rel=1e-12)
    np.testing.assert_allclose(g, central(plain, [x], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(given, x)


@pytest.mark.parametrize("f", [
    lambda P: np.sum(np.cov(P.T) ** 2),
    lambda P: np.sum(np.cov(P, rowvar=False, ddof=0) * np.arange(4.0).reshape(2, 2)),
    lambda P: np.sum(np.cov(P[:, 0], P[:, 1]) ** 3),
    lambda P: np.sum(np.corrcoef(P.T) ** 2),
], ids=["cov", "cov_rowvar_ddof", "cov_two_series", "corrcoef"])
def test_hessian_through_covariance(mode, f):
    """cov's and corrcoef's backs run on hessian's dual numbers (they made plain arrays of them: refused)."""
    P = np.random.default_rng(13).normal(size=(5, 2))
    H = zygotepy.hessian(f, P)
    h = 1e-5
    for k in range(P.size):
        e = np.zeros(P.size)
        e[k] = h
        e = e.reshape(P.shape)
        want = (zygotepy.gradient(f, P + e)[0] - zygotepy.gradient(f, P - e)[0]) / (2 * h)
        assert np.allclose(H[..., k // 2, k % 2], want, atol=1e-5), k

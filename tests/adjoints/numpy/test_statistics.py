"""Tests of `zygotepy/adjoints/numpy/statistics.py` (ptp, median, nanmedian, average and the nan-ignoring reductions):
its rows of the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of
tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # tests/plain_checks.py
from plain_checks import central  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy import gradient  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("statistics"))


def test_ptp_and_median_ties_and_even_counts():
    _, back = registry.find_rule(np.ptp)(np.array([1.0, 3.0, 3.0, 0.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.5, 0.5, -1.0])
    _, back = registry.find_rule(np.median)(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.0, 0.5, 0.5])
    _, back = registry.find_rule(np.median)(np.array([[4.0, 1.0, 3.0], [0.0, 5.0, 6.0]]), axis=1)
    np.testing.assert_allclose(back(np.array([1.0, 2.0]))[0], [[0, 0, 1], [0, 2, 0]])


def test_nan_reductions_skip_nans():
    x = np.array([1.0, np.nan, 3.0])
    _, back = registry.find_rule(np.nanmean)(x)
    np.testing.assert_allclose(back(1.0)[0], [0.5, 0.0, 0.5])
    _, back = registry.find_rule(np.nansum)(x)
    np.testing.assert_allclose(back(2.0)[0], [2.0, 0.0, 2.0])
    _, back = registry.find_rule(np.nanmax)(x)
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.0, 1.0])


def test_nansum_with_a_positional_where_mask():
    x = np.array([[1.0, np.nan, 2.0], [0.5, 1.5, np.nan]])
    mask = np.array([[True, True, False], [True, False, True]])
    (g,) = gradient(lambda x: np.nansum(x, None, None, None, False, 0.0, mask) * 3.0, x)
    want = np.where(mask & ~np.isnan(x), 3.0, 0.0)  # entries masked out or NaN get nothing
    assert np.array_equal(g, want)


@pytest.mark.parametrize("optimized", [True, False])
def test_median_with_overwrite_input_follows_the_original_order(optimized):
    """NumPy may reorder x in place: the gradient goes to the entries of x as it was passed."""
    with zygotepy.optimizations(optimized):
        (g,) = gradient(lambda x: np.median(x, overwrite_input=True), np.array([3.0, 1.0, 2.0]))
        np.testing.assert_allclose(g, [0.0, 0.0, 1.0])
        x = np.random.default_rng(2).normal(size=(3, 5))
        check_grads(lambda x: np.median(x, axis=1, overwrite_input=True) * np.array([1.0, 2.0, 3.0]), x)
        check_grads(lambda x: np.median(x, 0, None, True), x)


@pytest.mark.parametrize("optimized", [True, False])
def test_average_with_weights_along_an_axis_tuple(optimized):
    """np.average(y, axis=(0, 2), weights=w), w shaped like y along those axes (in their order): y's and w's
    gradients."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=(2, 3, 4))
    with zygotepy.optimizations(optimized):
        check_grads(lambda y, w: np.average(y, axis=(0, 2), weights=w), y, rng.uniform(0.5, 2.0, (2, 4)))
        check_grads(lambda y, w: np.average(y, axis=(2, 0), weights=w), y, rng.uniform(0.5, 2.0, (4, 2)))
        check_grads(lambda y, w: np.average(y, (2, 0), w, True)[1] * 2.0, y, rng.uniform(0.5, 2.0, (4, 2)))


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": -1, "ddof": 1, "keepdims": True}, {"axis": (0, 1)}])
@pytest.mark.parametrize("op", [np.nanvar, np.nanstd])
def test_nanvar_and_nanstd_skip_nans(op, kwargs):
    """Against finite differences with NaNs in place (they get no cotangent), in the rule and in user code."""
    from test_rules import check_against_finite_differences
    x = np.random.default_rng(5).normal(size=(3, 4))
    x[0, 1] = x[2, 3] = x[1, 0] = np.nan
    check_against_finite_differences(op, [x], [True], kwargs=kwargs)
    _, back = registry.find_rule(op)(x, **kwargs)
    y = op(x, **kwargs)
    g = back(np.ones_like(y))[0]
    assert np.all(g[np.isnan(x)] == 0) and np.all(np.isfinite(g))
    for optimized in (True, False):
        with zygotepy.optimizations(optimized):
            check_grads(lambda x: np.sum(np.sin(op(x * 2.0, **kwargs))), np.nan_to_num(x, nan=0.3))


def test_nanvar_refuses_where_and_mean():
    with pytest.raises(zygotepy.ZygoteError, match="where="):
        registry.find_rule(np.nanvar)(np.ones(3), where=np.array([True, False, True]))


def test_ptp_of_a_list():
    # (crashed: the picks' cotangents were lists, `list - list`)
    got = gradient(lambda x: np.ptp([x[0], x[1], 0.5]) * x[2], np.array([0.3, -0.2, 1.5]))[0]
    np.testing.assert_allclose(got, [0.0, -1.5, 0.7])  # (max is the constant 0.5, min is x[1])


@pytest.mark.parametrize("fn, fill", [(np.nanprod, 1.0), (np.nancumsum, 0.0), (np.nancumprod, 1.0)])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_ignoring_products_and_scans_skip_the_nans(mode, fn, fill, axis):
    """They were differentiated through NumPy's source, which stopped at its `out=` handling with a message naming
    NumPy's lines. The NaN entries get no cotangent; the others, that of NumPy's definition (NaN read as `fill`)."""
    x = np.array([[0.5, np.nan, 2.0], [np.nan, -1.5, 0.8]])
    w = np.arange(1.0, 7.0)
    f = lambda v: np.sum(np.ravel(fn(v, axis=axis)) * w[:np.size(fn(x, axis=axis))])  # noqa: E731
    got = gradient(f, x)[0]
    assert np.all(got[np.isnan(x)] == 0.0)
    filled = np.where(np.isnan(x), fill, x)
    want = central(lambda v: f(np.where(np.isnan(x), np.nan, v)), [filled], 0)
    np.testing.assert_allclose(got[~np.isnan(x)], want[~np.isnan(x)], rtol=1e-6)


@pytest.mark.parametrize("positional", [False, True])
@pytest.mark.parametrize("axis", [None, 1])
def test_median_with_overwrite_input_is_the_median_of_x_as_given(mode, positional, axis):
    """NumPy leaves x's contents undefined after overwrite_input=True (it partitions x in place); zygotepy computes as
    without it: x stays as given, so a function that reads x after the call has the value and gradient (central
    differences) of the same function without overwrite_input."""
    x = np.array([[0.3, -1.2, 2.1, 0.7, 1.5], [0.9, -0.4, 1.1, 2.6, -2.0]])
    w = np.arange(1.0, 11.0).reshape(2, 5)

    def f(x):
        m = np.median(x, axis, None, True) if positional else np.median(x, axis=axis, overwrite_input=True)
        return np.sum(m * np.arange(1.0, 1.0 + np.size(m))) + np.sum(x * w)

    def plain(x):
        return np.sum(np.median(x, axis=axis) * np.arange(1.0, 1.0 + np.size(np.median(x, axis=axis)))) + np.sum(x * w)
    given = x.copy()
    value, (g,) = zygotepy.value_and_gradient(f, given)
    assert value == pytest.approx(plain(x), rel=1e-12)
    np.testing.assert_allclose(g, central(plain, [x], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(given, x)


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 1}, {"axis": -1, "keepdims": True}, {"axis": (0, 1)}])
def test_nanmedian_skips_the_nans(mode, kwargs):
    """np.nanmedian was derived through NumPy's source, which gives `out=` by position (MissingAdjoint). The median of
    the entries present: odd and even counts, a NaN entry gets no cotangent, and a slice of NaNs only (NaN) none."""
    x = np.array([[0.5, np.nan, 2.0, -1.0], [np.nan, -1.5, 0.8, 0.1], [1.2, 0.3, -0.7, 2.2],
                  [np.nan, np.nan, np.nan, np.nan]])
    w = np.arange(1.0, 5.0)

    def f(v):
        m = np.nanmedian(v, **kwargs)
        return np.nansum(np.ravel(m) * w[:np.size(m)])
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the slice of NaNs only)
        got = gradient(f, x)[0]
        want = central(lambda v: f(np.where(np.isnan(x), np.nan, v)), [np.nan_to_num(x)], 0)
    assert np.all(got[np.isnan(x)] == 0.0)
    np.testing.assert_allclose(got[~np.isnan(x)], want[~np.isnan(x)], rtol=1e-6, atol=1e-9)


def test_nanmedian_rule_picks_the_middle_of_the_present_entries():
    _, back = registry.find_rule(np.nanmedian)(np.array([4.0, np.nan, 1.0, 3.0, 2.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.0, 0.0, 0.5, 0.5])
    _, back = registry.find_rule(np.nanmedian)(np.array([[4.0, np.nan, 3.0], [np.nan, 5.0, np.nan]]), axis=1)
    np.testing.assert_allclose(back(np.array([1.0, 2.0]))[0], [[0.5, 0, 0.5], [0, 2, 0]])
    with pytest.raises(zygotepy.ZygoteError, match="out="):
        registry.find_rule(np.nanmedian)(np.ones(3), out=np.zeros(()))


def test_nanmedian_with_overwrite_input_leaves_x_as_given(mode):
    x = np.array([[0.3, np.nan, 2.1, 0.7, 1.5], [0.9, -0.4, 1.1, np.nan, -2.0]])
    given = x.copy()
    value, (g,) = zygotepy.value_and_gradient(lambda v: np.sum(np.nanmedian(v, 1, None, True) * np.array([1.0, 2.0])),
                                              given)
    assert value == pytest.approx((0.7 + 1.5) / 2 + 2 * (-0.4 + 0.9) / 2)
    np.testing.assert_allclose(g, [[0, 0, 0, 0.5, 0.5], [1.0, 1.0, 0, 0, 0]])
    np.testing.assert_array_equal(given, x)

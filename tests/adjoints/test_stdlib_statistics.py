"""The `statistics` module's means and spreads (zygotepy/adjoints/stdlib_statistics.py): CPython computes them in exact
fractions (through `itertools.groupby`, which has no rule), so they were refused with a MissingAdjoint; their rules
differentiate float twins. Values against the module's own, gradients against central differences in float64, with
every optimisation on and with every one off; by position and by keyword; on lists, tuples and generators."""
import statistics

import numpy as np
import pytest

import zygotepy
from zygotepy import value_and_gradient
from zygotepy.testing import check_grads

XS = [0.3, 1.1, -0.4, 2.0, 0.7]
WS = [1.0, 2.0, 0.5, 1.5, 0.25]


def mean_of_squares(xs):
    return statistics.mean(x * x for x in xs)


def fmean_weighted_by_keyword(xs, ws):
    return statistics.fmean(xs, weights=ws)


def fmean_weighted_by_position(xs, ws):
    return statistics.fmean(xs, ws) * xs[0]


def spreads(xs):
    return statistics.variance(xs) + statistics.pvariance(xs) * statistics.stdev(xs) - statistics.pstdev(tuple(xs))


def spreads_about_a_centre(xs, ws):
    c = ws[0]
    return statistics.variance(xs, xbar=c) + statistics.pstdev(xs, c) + statistics.stdev(xs, c) \
        + statistics.pvariance(xs, mu=c)


def standardised(xs):
    m, s = statistics.mean(xs), statistics.stdev(xs)
    return sum(((x - m) / s) ** 3 for x in xs)


def correlated(xs, ws):
    return statistics.correlation(xs, [w * x for w, x in zip(ws, xs)]) * statistics.covariance(xs, ws)


def regression_line(xs, ws):
    fit = statistics.linear_regression(xs, ws)
    slope, intercept = statistics.linear_regression(ws, xs)
    return fit.slope * fit.intercept + slope - intercept ** 2


def proportional_line(xs, ws):
    return statistics.linear_regression(xs, [w * w for w in ws], proportional=True).slope


CASES = [mean_of_squares, fmean_weighted_by_keyword, fmean_weighted_by_position, spreads, spreads_about_a_centre,
         standardised, correlated, regression_line, proportional_line]  # (the last three: `:=` in a generator, refused)


@pytest.mark.parametrize("optimized", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_against_finite_differences(f, optimized):
    args = (list(XS), list(WS))[:f.__code__.co_argcount]
    with zygotepy.optimizations(optimized):
        value, _ = value_and_gradient(f, *args)
        assert value == pytest.approx(f(*args), rel=1e-12)
        check_grads(f, *args)


def test_the_mean_and_variance_by_hand():
    (dmean,) = zygotepy.gradient(statistics.mean, XS)
    np.testing.assert_allclose(dmean, [1 / len(XS)] * len(XS))
    (dvar,) = zygotepy.gradient(statistics.variance, XS)
    m = sum(XS) / len(XS)
    np.testing.assert_allclose(dvar, [2 * (x - m) / (len(XS) - 1) for x in XS])


def test_too_few_points_raise_as_the_module_does():
    with pytest.raises(statistics.StatisticsError, match="at least two data points"):
        zygotepy.gradient(statistics.variance, [1.5])


def _branch_on_the_mean(a, b, c):
    m = statistics.mean([a, b, c])
    return m * a if m <= 0.2 else m * b


def _branch_on_the_fmean(a, b, c):
    m = statistics.fmean((a, b, c))
    return m * a if m <= 0.2 else m * b


@pytest.mark.parametrize("f", [_branch_on_the_mean, _branch_on_the_fmean])
def test_the_value_is_the_modules_own(mode, f):
    # the float twin's 0.1 + 0.2 + 0.3 rounds to 0.6000000000000001: the branch must be the one a plain call takes
    value, grads = value_and_gradient(f, 0.1, 0.2, 0.3)
    assert value == f(0.1, 0.2, 0.3)
    assert grads == pytest.approx((0.2 + 0.1 / 3, 0.1 / 3, 0.1 / 3), rel=1e-12)


def test_the_spread_of_large_numbers_does_not_overflow(mode):
    # the twin's squares overflow at 1e155; the module's value does not, and the gradient is (x - m) / ((n - 1) s)
    xs = [1e155, 3e155, 2e155]
    value, (grad,) = value_and_gradient(statistics.stdev, xs)
    assert value == statistics.stdev(xs)
    assert grad == pytest.approx([-0.5, 0.5, 0.0], abs=1e-12)


def test_the_spread_of_equal_numbers_is_nan_as_numpy_has_it(mode):
    (grad,) = zygotepy.gradient(statistics.pstdev, [1.5, 1.5, 1.5])
    assert all(np.isnan(g) for g in grad)

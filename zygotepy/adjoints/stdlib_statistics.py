"""The `statistics` module's means and spreads (mean, fmean, geometric_mean, harmonic_mean, variance, pvariance, stdev,
pstdev), differentiated as the Python they mean.

CPython computes them in exact fractions (`statistics._ss` groups the data by type with `itertools.groupby` and sums
`Fraction`s), which has no gradient to follow; the rules differentiate a twin in floats instead, as functional.py does
for functools and itertools. The value is the module's own wherever it can compute it (Python numbers in a list or
tuple): the twin's differs in the last bits, and overflows where the module's does not, and code that branches on
the value must take the branch a plain call takes. `median` and friends need no rule: they sort and index, which the
transform follows.
"""
import math
import statistics

from ..ast_adjoint.dispatch import J
from .registry import adjoint, keyword_cotangents, keyword_rule


def mean_twin(data):
    items = list(data)
    if not items:
        raise statistics.StatisticsError("mean requires at least one data point")
    return sum(items) / len(items)


def fmean_twin(data, weights):
    items = list(data)
    if weights is None:
        if not items:
            raise statistics.StatisticsError("fmean requires at least one data point")
        return sum(items) / len(items)
    weights = list(weights)
    if len(weights) != len(items):
        raise statistics.StatisticsError("data and weights must be the same length")
    return sum(x * w for x, w in zip(items, weights)) / sum(weights)


def squared_deviations_twin(data, centre, sample):
    """`statistics._ss` in floats, divided by n - 1 (`sample`) or n: about the data's own mean, or `centre`."""
    items = list(data)
    n = len(items)
    if n < (2 if sample else 1):
        raise statistics.StatisticsError(f"{'variance' if sample else 'pvariance'} requires at least "
                                         f"{'two data points' if sample else 'one data point'}")
    c = sum(items) / n if centre is None else centre
    return sum((x - c) * (x - c) for x in items) / (n - 1 if sample else n)


def geometric_mean_twin(data):
    items = list(data)
    if not items or any(x <= 0 for x in items):
        raise statistics.StatisticsError("geometric mean requires a non-empty dataset containing positive numbers")
    return math.exp(sum(math.log(x) for x in items) / len(items))


def harmonic_mean_twin(data, weights):
    items = list(data)
    if not items or any(x < 0 for x in items):
        raise statistics.StatisticsError("harmonic mean does not support negative values")
    weights = [1.0] * len(items) if weights is None else list(weights)
    if any(x == 0 for x in items):
        return 0.0  # (as the module: a zero makes the mean zero, a constant)
    return sum(weights) / sum(w / x for x, w in zip(items, weights))


def _through(twin, *args, exact=None):
    """The twin's pullback, with the value `exact()` (the module's function) where the arguments are `_numbers`."""
    y, pb = J(twin, *args)
    if exact is not None and all(_numbers(a) for a in args):
        y = exact()
    return y, lambda dy: pb(dy)[1:]


def _numbers(arg):
    """Does `arg` hold only what the module computes with exactly (None: an argument the call left out)?"""
    return arg is None or type(arg) in (float, int) or type(arg) in (list, tuple) and all(
        type(x) in (float, int) for x in arg)


@adjoint(statistics.mean)
def mean(data):
    y, back = _through(mean_twin, data, exact=lambda: statistics.mean(data))
    return y, back


def _weighted_rule(target, twin):
    """The rule of a mean taking `weights` by position or keyword (fmean, harmonic_mean), through its twin."""
    @keyword_rule
    @adjoint(target)
    def rule(data, *by_position, weights=None):
        weights = by_position[0] if by_position else weights
        y, back = _through(twin, data, weights, exact=lambda: target(data, weights=weights))

        def weighted_back(dy):
            ddata, dweights = back(dy)
            if by_position:
                return ddata, dweights
            return keyword_cotangents((ddata,), {} if weights is None else {"weights": weights}, weights=dweights)
        return y, weighted_back
    rule.__name__ = rule.__qualname__ = target.__name__
    return rule


fmean = _weighted_rule(statistics.fmean, fmean_twin)
harmonic_mean = _weighted_rule(statistics.harmonic_mean, harmonic_mean_twin)


@adjoint(statistics.geometric_mean)
def geometric_mean(data):
    y, back = _through(geometric_mean_twin, data, exact=lambda: statistics.geometric_mean(data))
    return y, back


def _spread(target, data, by_position, kwargs, name, sample, root):
    """variance / pvariance (`sample`: over n - 1), or their square roots, about the centre given by position or as
    keyword `name` (or the data's own mean): the value and the back."""
    centre = by_position[0] if by_position else kwargs.get(name)
    y, back = _through(squared_deviations_twin, data, centre, sample)
    if _numbers(data) and _numbers(centre):
        y = target(data, *by_position, **kwargs)
    elif root:
        y = math.sqrt(y)
    scale = (0.5 / y if y != 0 else math.inf) if root else 1.0  # d sqrt(v) = dv / (2 sqrt(v)): nan where all agree

    def spread_back(dy):
        ddata, dcentre, _ = back(None if dy is None else dy * scale)
        return keyword_cotangents((ddata, dcentre)[:1 + len(by_position)], kwargs, **{name: dcentre})
    return y, spread_back


def _spread_rule(target, name, sample, root):
    @keyword_rule
    @adjoint(target)
    def rule(data, *by_position, **kwargs):
        return _spread(target, data, by_position, kwargs, name, sample, root)
    rule.__name__ = rule.__qualname__ = target.__name__
    return rule


variance = _spread_rule(statistics.variance, "xbar", True, False)
pvariance = _spread_rule(statistics.pvariance, "mu", False, False)
stdev = _spread_rule(statistics.stdev, "xbar", True, True)
pstdev = _spread_rule(statistics.pstdev, "mu", False, True)


def _paired(x, y, at_least, what):
    """The two samples as lists, checked as the module checks them."""
    xs, ys = list(x), list(y)
    if len(xs) != len(ys):
        raise statistics.StatisticsError(f"{what} requires that both inputs have same number of data points")
    if len(xs) < at_least:
        raise statistics.StatisticsError(f"{what} requires at least two data points")
    return xs, ys


def correlation_twin(x, y):
    """Pearson's correlation coefficient, as `statistics.correlation(x, y)` computes it (in floats)."""
    xs, ys = _paired(x, y, 2, "correlation")
    n = len(xs)
    xbar, ybar = sum(xs) / n, sum(ys) / n
    sxy = sum((a - xbar) * (b - ybar) for a, b in zip(xs, ys))
    sxx = sum((a - xbar) * (a - xbar) for a in xs)
    syy = sum((b - ybar) * (b - ybar) for b in ys)
    if sxx == 0 or syy == 0:
        raise statistics.StatisticsError("at least one of the inputs is constant")
    return sxy / math.sqrt(sxx * syy)


def linear_regression_twin(x, y, proportional):
    """`statistics.linear_regression(x, y, proportional=...)`: (slope, intercept) of the least-squares line."""
    xs, ys = _paired(x, y, 2, "linear regression")
    if proportional:
        sxx = sum(a * a for a in xs)
        if sxx == 0:
            raise statistics.StatisticsError("x is constant")
        return sum(a * b for a, b in zip(xs, ys)) / sxx, 0.0
    n = len(xs)
    xbar, ybar = sum(xs) / n, sum(ys) / n
    sxx = sum((a - xbar) * (a - xbar) for a in xs)
    if sxx == 0:
        raise statistics.StatisticsError("x is constant")
    slope = sum((a - xbar) * (b - ybar) for a, b in zip(xs, ys)) / sxx
    return slope, ybar - slope * xbar


@keyword_rule
@adjoint(statistics.correlation)
def correlation(x, y, **kwargs):
    """`method="ranked"` (Spearman's, Python 3.12) correlates the ranks: piecewise constant, no gradient."""
    if kwargs.get("method", "linear") != "linear":
        return statistics.correlation(x, y, **kwargs), lambda dy: keyword_cotangents((None, None), kwargs)
    y_, back = _through(correlation_twin, x, y, exact=lambda: statistics.correlation(x, y))

    def correlation_back(dy):
        return keyword_cotangents(back(dy), kwargs)
    return y_, correlation_back


@keyword_rule
@adjoint(statistics.linear_regression)
def linear_regression(x, y, **kwargs):
    """The module's named tuple (`.slope`, `.intercept`), whose cotangent may come as a tuple or by field."""
    pair, back = _through(linear_regression_twin, x, y, kwargs.get("proportional", False))
    made = statistics.linear_regression(x, y, **kwargs) if _numbers(x) and _numbers(y) else None
    result = made if made is not None else _REGRESSION(*pair)

    def regression_back(dy):
        if dy is not None and not isinstance(dy, tuple):  # (a dict or StructGrad of the fields)
            fields = dy if isinstance(dy, dict) else vars(dy)
            dy = (fields.get("slope"), fields.get("intercept"))
        dx, dy_, _ = back(dy)
        return keyword_cotangents((dx, dy_), kwargs)
    return result, regression_back


_REGRESSION = type(statistics.linear_regression([0.0, 1.0], [0.0, 1.0]))

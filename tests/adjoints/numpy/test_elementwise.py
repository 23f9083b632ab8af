"""Tests of `zygotepy/adjoints/numpy/elementwise.py` (the elementwise functions of one and two arguments): its rows of
the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)
and what the random rows cannot reach."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import gradient  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("elementwise"))


def test_integer_and_boolean_arrays_get_none():
    x, n, m = np.array([1.0, 2.0]), np.array([1, 2]), np.array([True, False])
    gx, gn, gm = gradient(lambda x, n, m: np.sum(x * n * m), x, n, m)
    assert np.array_equal(gx, [1.0, 0.0]) and gn is None and gm is None
    assert gradient(lambda n: np.sum(n * 2.0), np.int64(3)) == (None,)


def test_fmax_and_fmin_give_the_gradient_to_the_operand_that_is_not_nan():
    # (a NaN made both comparisons false: the other operand's gradient was lost, 0 for 1)
    a = np.array([1.0, np.nan, 2.0, np.nan])
    b = np.array([0.5, 0.5, 3.0, 1.0])
    assert np.array_equal(gradient(lambda b: np.sum(np.fmax(a, b) ** 2), b)[0], [0.0, 1.0, 6.0, 2.0])
    assert np.array_equal(gradient(lambda b: np.sum(np.fmin(b, a) * 3.0), b)[0], [3.0, 3.0, 0.0, 3.0])
    assert np.array_equal(gradient(lambda a: np.sum(np.fmax(a, b) ** 2), np.array([1.0, np.nan, 4.0, 0.0]))[0],
                          [2.0, 0.0, 8.0, 0.0])
    assert gradient(lambda t: np.fmin(t, float("nan")) * 2.0, 1.5) == (2.0,)


def test_heaviside_gives_h_the_gradient_where_x_is_zero(mode):
    """np.heaviside was declared non-differentiable: h's gradient was silently None (0 where x != 0, 1 where x == 0)."""
    from zygotepy import derivative, hessian
    x = np.array([[0.0, 1.0, -2.0], [0.0, 0.0, 3.0]])
    w = np.array([1.0, 10.0, 100.0])
    f = lambda h: np.sum(np.heaviside(x, h) * w)  # noqa: E731
    np.testing.assert_array_equal(gradient(f, np.array([0.5, 0.25, 0.75]))[0], [2.0, 10.0, 0.0])
    assert gradient(lambda h: np.sum(np.heaviside(x, h)), 0.5) == (3.0,)
    assert gradient(lambda v: np.sum(np.heaviside(v, 0.5) * v), x[0])[0].tolist() == [0.5, 1.0, 0.0]
    assert derivative(lambda h: np.sum(np.heaviside(x, h) * h), 0.5) == pytest.approx(5.0)  # 3 h**2 + 2 h
    assert hessian(lambda h: np.sum(np.heaviside(x, h) * h), 0.5) == pytest.approx(6.0)


# --- far from 1: where the textbook formula of a derivative overflows or rounds -------------------------------------
# atan2's b / (a^2 + b^2) was 0 at a = b = 1e160 (the squares overflow) and a ZeroDivisionError at 1e-200 (they
# underflow); logaddexp's exp(a - y) was 1 for each of a = b = 1e16 (y rounds to a). Found by a probe of numeric types.

@pytest.mark.parametrize("scale", [1e160, 1e-200, 1.0], ids=["huge", "tiny", "one"])
@pytest.mark.parametrize("atan2", [math.atan2, np.arctan2], ids=["math", "numpy"])
def test_atan2_far_from_one(atan2, scale, mode):
    from zygotepy import gradient
    a, b = 0.6 * scale, -0.8 * scale
    da, db = gradient(atan2, a, b)
    # d/da atan2(a, b) = b / r^2, d/db = -a / r^2, r = scale here
    assert da == pytest.approx(-0.8 / scale, rel=1e-14) and db == pytest.approx(-0.6 / scale, rel=1e-14)


@pytest.mark.parametrize("at", [1e16, 1e300, -3.0], ids=["1e16", "1e300", "small"])
@pytest.mark.parametrize("fn", [np.logaddexp, np.logaddexp2], ids=["logaddexp", "logaddexp2"])
def test_logaddexp_shares_sum_to_one_at_equal_huge_arguments(fn, at, mode):
    from zygotepy import gradient, jvp
    da, db = gradient(lambda a, b: fn(a, b), np.float64(at), np.float64(at))
    assert (da, db) == (0.5, 0.5)
    assert jvp(lambda a, b: fn(a, b), (np.float64(at), np.float64(at)), (1.0, 0.0))[1] == 0.5


def test_logaddexp_shares_apart(mode):
    from zygotepy import gradient
    a, b = np.array([0.3, -40.0, 2.0]), np.array([1.1, 3.0, 2.0])
    da, db = gradient(lambda u, v: np.sum(np.logaddexp(u, v)), a, b)
    np.testing.assert_allclose(da, 1 / (1 + np.exp(b - a)), rtol=1e-14)
    np.testing.assert_allclose(db, 1 / (1 + np.exp(a - b)), rtol=1e-14)
    da2, _ = gradient(lambda u, v: np.sum(np.logaddexp2(u, v)), a, b)
    np.testing.assert_allclose(da2, 1 / (1 + 2.0 ** (b - a)), rtol=1e-14)

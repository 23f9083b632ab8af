"""Tests of `zygotepy/adjoints/numpy/elementwise.py` (the elementwise functions of one and two arguments): its rows of
the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)
and what the random rows cannot reach."""
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

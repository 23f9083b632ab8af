"""Tests of `zygotepy/adjoints/numpy/elementwise.py` (the elementwise functions of one and two arguments): its rows of
the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)
and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np

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

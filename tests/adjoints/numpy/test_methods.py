"""Tests of `zygotepy/adjoints/numpy/methods.py` (the ndarray methods whose rules are the functions', and the methods of
their own): its rows of the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of
tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import gradient  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("methods"))


def test_end_to_end_methods_and_conversions():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert gradient(lambda x: x.flatten()[3] * 2, x)[0].tolist() == [[0, 0], [0, 2]]
    assert gradient(lambda x: x.item(1) * 3 + np.float64(x[1, 1]), x)[0].tolist() == [[0, 3], [0, 1]]
    assert gradient(lambda x: x.tolist()[1][0] ** 2, x)[0].tolist() == [[0, 0], [6, 0]]
    assert gradient(lambda x: np.sort(x, axis=None)[-1] + x.cumsum().sum(), x)[0].tolist() == [[4, 3], [2, 2]]


def test_method_calls_reach_their_rules():
    x = np.array([[1.0, 3.0], [2.0, 5.0]])
    np.testing.assert_allclose(gradient(lambda x: x.prod(), x)[0], [[30, 10], [15, 6]])
    np.testing.assert_allclose(gradient(lambda x: x.var(ddof=1), x)[0], 2 * (x - x.mean()) / 3)
    np.testing.assert_allclose(gradient(lambda x: x.cumsum(axis=0)[1, 1], x)[0], [[0, 1], [0, 1]])
    np.testing.assert_allclose(gradient(lambda x: x.swapaxes(0, 1)[0, 1], x)[0], [[0, 0], [1, 0]])
    np.testing.assert_allclose(gradient(lambda x: np.einsum("ii", x), x)[0], np.eye(2))


def test_methods_of_a_numpy_scalar():
    """`np.sum(...)` gives a NumPy scalar, whose methods take the array methods' rules (`s.reshape(1)` had none)."""
    from zygotepy.testing import check_grads

    def f(x):
        s = np.sum(x ** 2)
        return np.sum(s.reshape(1) * 3.0) + s.astype(np.float64) * 2.0 + np.sum(s.repeat(2))
    check_grads(f, np.array([0.3, 0.7]))


def test_copy_with_an_order():
    """`x.copy("F")` / `x.copy(order="C")` (SciPy's own code calls the latter): the rule took no order (a TypeError)."""
    def f(x):
        return np.sum(x.copy(order="F") ** 2) + np.sum(x.copy("C") * x)
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(gradient(f, x)[0], 4 * x)

"""Tests of `zygotepy/adjoints/numpy/ufunc_methods.py` (the reduce and accumulate methods of add, multiply, maximum,
minimum, logaddexp and logaddexp2): its rows of the rule table against finite differences (tests/adjoints/numpy/
rows_reductions.py, `row_tests` of tests/adjoints/test_rules.py), and what the random rows cannot reach: ties, the
log domain's range, calls in user code, the refusals."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy import gradient  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("ufunc_methods"))

X = np.random.default_rng(7).normal(size=(3, 4, 2))


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.logaddexp.reduce(x * 2.0, axis=0) ** 2),
    lambda x: np.sum(np.logaddexp2.reduce(x, -1, keepdims=True) ** 2),
    lambda x: np.sum(np.add.reduce(np.sin(x), axis=(0, 2)) ** 2),
    lambda x: np.sum(np.multiply.reduce(x, 1) ** 2),
    lambda x: np.sum(np.maximum.reduce(x, axis=None) ** 2),
    lambda x: np.sum(np.minimum.reduce(x * x) ** 2),
    lambda x: np.sum(np.add.accumulate(x, axis=-1) ** 2),
    lambda x: np.sum(np.multiply.accumulate(x, 1) ** 2),
    lambda x: np.sum(np.maximum.accumulate(x, axis=1) ** 2),
    lambda x: np.sum(np.minimum.accumulate(x) ** 2),
    lambda x: np.sum(np.logaddexp.accumulate(x, axis=1) ** 2),
    lambda x: np.sum(np.cos(np.logaddexp2.accumulate(x, axis=-1))),
    lambda x: (lambda r: np.sum(r(x, 2) ** 2))(np.add.reduce),  # the bound method kept in a name
], ids=["logaddexp.reduce", "logaddexp2.reduce", "add.reduce", "multiply.reduce", "maximum.reduce", "minimum.reduce",
        "add.accumulate", "multiply.accumulate", "maximum.accumulate", "minimum.accumulate", "logaddexp.accumulate",
        "logaddexp2.accumulate", "bound method"])
@pytest.mark.parametrize("optimized", [True, False])
def test_in_user_code(f, optimized):
    with zygotepy.optimizations(optimized):
        check_grads(f, X)


def test_initial_gets_its_cotangent_in_user_code():
    (dx, dc) = gradient(lambda x, c: np.sum(np.add.reduce(x, 1, None, None, False, c) ** 2), np.ones((2, 3)), 2.0)
    np.testing.assert_allclose(dx, np.full((2, 3), 10.0))
    assert dc == pytest.approx(20.0)
    check_grads(lambda x, c: np.sum(np.maximum.reduce(x, axis=0, initial=c) ** 2), X[0], 0.5)


def test_ties_share_the_cotangent():
    x = np.array([[1.0, 3.0, 3.0], [0.0, 0.0, 1.0]])
    (g,) = gradient(lambda x: np.sum(np.maximum.reduce(x, axis=1)), x)
    np.testing.assert_allclose(g, [[0, 0.5, 0.5], [0, 0, 1]])
    _, back = registry.find_rule(np.maximum.accumulate)(np.array([3.0, 1.0, 3.0, 5.0, 5.0, 2.0]))
    # outputs 3, 3, 3 (ties at 0 and 2 for the third), then 5, 5, 5 (ties at 3 and 4 for the last two)
    np.testing.assert_allclose(back(np.ones(6))[0], [2.5, 0.0, 0.5, 2.0, 1.0, 0.0])


def test_logaddexp_accumulate_stays_finite_across_any_range():
    _, back = registry.find_rule(np.logaddexp.accumulate)(np.array([-1000.0, 0.0, 800.0, -5.0]))
    np.testing.assert_allclose(back(np.array([1.0, -2.0, 3.0, 1.0]))[0], [1.0, -2.0, 4.0, 0.0], atol=1e-300)
    _, back = registry.find_rule(np.logaddexp.reduce)(np.array([[-np.inf, -np.inf], [0.0, 0.0]]), axis=1)
    np.testing.assert_array_equal(back(np.ones(2))[0], [[0.0, 0.0], [0.5, 0.5]])


def test_dtype_passes_through_and_the_cotangent_keeps_the_input_type():
    (g,) = gradient(lambda x: np.sum(np.add.reduce(x, axis=0, dtype=np.float64)), np.ones(3, np.float32))
    assert g.dtype == np.float32
    y, _ = registry.find_rule(np.maximum.accumulate)(np.arange(3.0), dtype=np.float32)
    assert y.dtype == np.float32


def test_refusals():
    with pytest.raises(zygotepy.ZygoteError, match="where="):
        gradient(lambda x: np.sum(np.logaddexp.reduce(x, where=np.array([True, False, True]))), np.ones(3))
    with pytest.raises(zygotepy.ZygoteError, match="out="):
        registry.find_rule(np.add.accumulate)(np.ones(3), out=np.empty(3))
    with pytest.raises(zygotepy.MissingAdjoint):  # a ufunc without rules keeps its clear error
        gradient(lambda x: np.sum(np.subtract.reduce(x)), np.ones(3))


def test_outer_in_user_code_and_its_hessian():
    def f(x):
        return np.sum(np.multiply.outer(x, x[:2] * 2.0) ** 2) + np.sum(np.subtract.outer(x, 1.5) ** 3)
    check_grads(f, np.array([0.3, -0.7, 1.1]))
    x = np.array([0.5, 1.0])
    H = zygotepy.hessian(lambda x: np.sum(np.multiply.outer(x, x) ** 2), x)  # (sum x^2)^2
    assert np.allclose(H, 8 * np.outer(x, x) + 4 * np.sum(x ** 2) * np.eye(2))

"""Tests of `zygotepy/adjoints/numpy/stacking.py` (concatenate, stack, the stackers and splitters, append, insert,
block): its rows of the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of
tests/adjoints/test_rules.py), and insert and block in user code."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy import gradient  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("stacking"))

RNG = np.random.default_rng(11)
A, V, W = RNG.normal(size=(2, 3)), RNG.normal(size=(2,)), RNG.normal(size=(1, 3))


@pytest.mark.parametrize("f", [
    lambda a, v: np.sum(np.insert(a * 2.0, 1, v, axis=1) ** 2),
    lambda a, v: np.sum(np.sin(np.insert(a, [0, 2], v * v, axis=1))),
    lambda a, v: np.sum(np.insert(a, 2, values=v, axis=None) ** 2),  # values by keyword
    lambda a, v: np.sum(np.block([[a, a[:, :1]], [np.ones((1, 3)) * v[0], v[:1, None]]]) ** 2),
    lambda a, v: np.sum(np.block([a, np.sin(a)]) ** 3) + np.sum(np.block([v, 2.0]) ** 2),
], ids=["insert axis", "insert indices", "insert values=", "block nested", "block flat"])
@pytest.mark.parametrize("optimized", [True, False])
def test_in_user_code(f, optimized):
    with zygotepy.optimizations(optimized):
        check_grads(f, A, V)


def test_insert_sums_the_cotangents_of_a_broadcast_value():
    (da, dv) = gradient(lambda a, v: np.sum(np.insert(a, slice(0, 2), v, axis=0)), A, 1.5)
    np.testing.assert_array_equal(da, np.ones_like(A))
    assert dv == pytest.approx(2 * A.shape[1])
    check_grads(lambda w: np.sum(np.block([[A], [w], [w * 2]]) ** 2), W)


def _cubes_of_a_padded_number(t):
    return np.sum(np.concatenate([np.zeros(2), [t]]) ** 3)


@pytest.mark.dual_route
def test_concatenate_of_a_list_holding_a_dual_number():
    """Hessian and a gradient of a gradient ran the rule on dual numbers: `[t]` is no array NumPy's dispatch sees."""
    import zygotepy
    assert zygotepy.hessian(_cubes_of_a_padded_number, 1.13) == pytest.approx(6 * 1.13)
    assert zygotepy.gradient(lambda s: zygotepy.gradient(_cubes_of_a_padded_number, s)[0], 1.13) == \
        pytest.approx((6 * 1.13,))

"""Tests of `zygotepy/adjoints/numpy/gathering.py` (tile, repeat, pad, roll, sort, take and the other functions that
move, copy or drop entries): its rows of the rule table against finite differences (tests/adjoints/numpy/rows_*.py,
`row_tests` of tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("gathering"))


def test_pad_with_a_computed_mode_raises():
    _, back = registry.find_rule(np.pad)(np.ones(3), 1, "mean")
    with pytest.raises(zygotepy.ZygoteError, match="mode='mean'"):
        back(np.ones(5))


def test_odd_reflection_past_one_reflection_raises():
    with pytest.raises(zygotepy.ZygoteError, match="reflects the padding again"):
        registry.find_rule(np.pad)(np.ones(3), 3, "reflect", reflect_type="odd")


def test_odd_reflection_of_one_entry_is_the_entry():
    _, back = registry.find_rule(np.pad)(np.ones(1), 3, "symmetric", reflect_type="odd")
    np.testing.assert_array_equal(back(np.arange(7.0))[0], [21.0])


def _interior_of_empty_padding(x):
    return np.sum(np.pad(x, (2, 1), mode="empty")[2:-1] ** 2)


def _interior_of_empty_padding_by_position(x):
    return np.sum(np.pad(x, (1, 2), "empty")[1:-2] ** 2)


def _constant_padding(x):
    return np.sum(np.pad(x, 1, "constant", constant_values=7.0) ** 2) - 98.0


@pytest.mark.parametrize("f", [_interior_of_empty_padding, _interior_of_empty_padding_by_position, _constant_padding],
                         ids=lambda f: f.__name__)
def test_padding_that_is_not_from_x_gets_no_gradient(f, mode):
    """`mode="empty"`'s padding is whatever the memory held: the back's run of np.pad on x's indices read that garbage
    as indices (a scatter to indices in the trillions: MemoryError)."""
    x = np.array([0.5, -1.2, 0.8, 2.0])
    np.testing.assert_allclose(zygotepy.gradient(f, x)[0], 2 * x)


def test_repeated_indices_accumulate():
    x = np.arange(4.0)
    _, back = registry.find_rule(np.take)(x, [1, 1, 3, 1])
    np.testing.assert_array_equal(back(np.ones(4))[0], [0, 3, 0, 1])
    import operator
    _, back = registry.find_rule(operator.getitem)(x, np.array([2, 2]))
    np.testing.assert_array_equal(back(np.array([1.0, 5.0]))[0], [0, 0, 6, 0])


@pytest.mark.parametrize("optimized", [True, False])
def test_partition_in_user_code(optimized):
    """np.partition's arrangement away from kth is NumPy's own: the cotangent follows the result it returned."""
    from zygotepy.testing import check_grads
    x = np.random.default_rng(2).normal(size=(4, 6))
    with zygotepy.optimizations(optimized):
        check_grads(lambda x: np.sum(np.partition(x * 2.0, 2) * np.arange(6.0)), x)
        check_grads(lambda x: np.sum(np.partition(x, (0, 3), axis=0)[1:] ** 3), x)
        check_grads(lambda x: np.sum(np.partition(np.sin(x), -2, axis=None) * np.linspace(0, 1, 24)), x)

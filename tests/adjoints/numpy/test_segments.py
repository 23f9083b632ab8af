"""Tests of `zygotepy/adjoints/numpy/segments.py` (the reduceat methods of add, multiply, maximum and minimum): its rows
of the rule table against finite differences (tests/adjoints/numpy/rows_reductions.py, `row_tests` of
tests/adjoints/test_rules.py), and what the random rows cannot reach: calls in user code, ties, zeros, an output that is
a single entry (indices[i] >= indices[i+1]), float32, the refusal of out=."""
import sys
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
from zygotepy.adjoints.numpy.segments import run_products, segment_bounds  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("segments"))

W = np.random.default_rng(11).normal(size=(4, 6))


def _add_rows(x):
    return np.sum(np.add.reduceat(x, [0, 3, 1, 5]) * W[:, :x.shape[1]])


def _multiply_rows(x):
    return np.sum(np.multiply.reduceat(x, np.array([0, 2, 2, 4]), axis=0) * W[:, :x.shape[1]])


def _max_columns(x):
    return np.sum(np.maximum.reduceat(x * 2.0, [0, 4, 1], axis=1) * W[:x.shape[0], :3])


def _min_columns(x):
    return np.sum(np.minimum.reduceat(x, [3, 0, 2, 2], 1) ** 2 * W[:x.shape[0], :4])


def _segment_max_pool(x):
    """Graph pooling: the edges' messages sorted by target node, each node's maximum (a node per segment)."""
    messages = np.tanh(x)
    pooled = np.maximum.reduceat(messages, [0, 2, 5], axis=0)
    return np.sum(pooled ** 2)


def _segment_sum_pool_negative_axis(x):
    return np.sum(np.sin(np.add.reduceat(x, [0, 1, 4], axis=-1)))


CASES = {  # (f, the shape of x)
    "add, indices not increasing": (_add_rows, (7, 3)),
    "multiply, an empty step": (_multiply_rows, (6, 2)),
    "maximum, axis=1": (_max_columns, (3, 6)),
    "minimum, a positional axis": (_min_columns, (2, 5)),
    "segment max pooling": (_segment_max_pool, (7, 3)),
    "add, axis=-1": (_segment_sum_pool_negative_axis, (2, 6)),
}


@pytest.mark.parametrize("case", CASES)
def test_reduceat_in_user_code_against_central_differences(mode, case):
    f, shape = CASES[case]
    x = np.random.default_rng(len(case)).normal(size=shape)
    np.testing.assert_allclose(gradient(f, x)[0], central(f, [x], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
def test_an_index_not_below_the_next_gives_one_entry(ufunc):
    """NumPy: where indices[i] >= indices[i+1], output i is x[indices[i]] alone (no reduction); its cotangent goes to
    that entry only. indices [4, 1, 6]: output 0 is x[4], output 1 reduces x[1:6], output 2 x[6:]."""
    x = np.array([0.5, 2.0, -1.0, 3.0, 1.5, 0.25, -2.0, 4.0])
    y, back = registry.find_rule(ufunc.reduceat)(x, [4, 1, 6])
    np.testing.assert_array_equal(y, ufunc.reduceat(x, [4, 1, 6]))
    g = back(np.array([1.0, 0.0, 0.0]))[0]
    np.testing.assert_array_equal(g, np.eye(8)[4])


def test_ties_share_and_zeros_give_the_others_product():
    x = np.array([1.0, 3.0, 3.0, 2.0, 0.0, 5.0, 0.0, 4.0])
    _, back = registry.find_rule(np.maximum.reduceat)(x, [0, 3, 5])
    np.testing.assert_allclose(back(np.array([1.0, 2.0, 3.0]))[0], [0, 0.5, 0.5, 2, 0, 3, 0, 0])
    _, back = registry.find_rule(np.minimum.reduceat)(x, [0, 3, 5])
    np.testing.assert_allclose(back(np.array([1.0, 2.0, 3.0]))[0], [1, 0, 0, 0, 2, 0, 3, 0])
    _, back = registry.find_rule(np.multiply.reduceat)(x, [0, 3, 5])
    # segment [2, 0]: d/dx = [0, 2]; segment [5, 0, 4]: one zero, d/dx = [0, 20, 0]
    np.testing.assert_allclose(back(np.array([1.0, 1.0, 1.0]))[0], [9, 3, 3, 0, 2, 0, 20, 0])


def test_float32_list_and_dtype():
    x = np.arange(1.0, 7.0, dtype=np.float32)
    y, back = registry.find_rule(np.multiply.reduceat)(x, [0, 3], 0, np.float64)
    assert y.dtype == np.float64
    g = back(np.ones(2))[0]
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [6, 3, 2, 30, 24, 20])
    _, back = registry.find_rule(np.maximum.reduceat)(x, [0, 3])
    assert back(np.ones(2, np.float32))[0].dtype == np.float32
    _, back = registry.find_rule(np.add.reduceat)([1.0, 2.0, 3.0], [0, 2])
    assert back(np.array([1.0, 2.0]))[0] == [1.0, 1.0, 2.0]


def test_out_is_refused():
    with pytest.raises(zygotepy.ZygoteError, match=r"np\.add\.reduceat: out="):
        registry.find_rule(np.add.reduceat)(np.ones(4), [0, 2], out=np.zeros(2))


def test_no_indices_gives_an_empty_result():
    y, back = registry.find_rule(np.add.reduceat)(np.ones((3, 2)), np.array([], dtype=int))
    assert y.shape == (0, 2)
    np.testing.assert_array_equal(back(np.zeros((0, 2)))[0], np.zeros((3, 2)))


def test_segment_bounds_and_run_products():
    starts, stops = segment_bounds([0, 4, 1, 5, 5], 7)
    assert starts.tolist() == [0, 4, 1, 5, 5] and stops.tolist() == [4, 5, 5, 6, 7]
    values = np.array([2.0, 0.0, 3.0, 5.0, 0.0, 0.0, 7.0, 1.5])
    runs = np.array([0, 0, 0, 1, 2, 2, 2, 3])
    others, prefix = run_products(values, runs)
    np.testing.assert_array_equal(others, [0.0, 6.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(prefix, [2.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 1.5])
    long = np.random.default_rng(0).uniform(0.5, 1.5, 37)  # (more doubling steps than one)
    others, _ = run_products(long, np.zeros(37, int))
    np.testing.assert_allclose(others, np.prod(long) / long, rtol=1e-12)

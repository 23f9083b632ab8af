"""`unbroadcast` for NumPy arrays (`_unbroadcast_ndarray`, which works out the axes to sum once per pair of shapes):
against the sum a person would write, for every way an operand is broadcast, and the same result the second time
(from the table) as the first."""
import numpy as np
import pytest

from zygotepy.backends import _unbroadcast_ndarray, unbroadcast

PAIRS = [  # (the cotangent's shape, the operand's shape)
    ((32, 10), (32, 10)), ((32, 10), (32, 1)), ((32, 10), (1, 10)), ((32, 10), (10,)), ((32, 10), (1, 1)),
    ((32, 10), ()), ((4, 32, 10), (32, 1)), ((4, 32, 10), (1, 1)), ((4, 32, 10), (10,)), ((4, 3, 2), (4, 1, 2)),
    ((4, 3, 2), (1, 3, 1)), ((2, 1, 5), (1, 5)), ((7,), (1,)), ((3, 0), (1, 0)), ((3, 0), (3, 1)),
]


def _reference(g, shape):
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=axes).reshape(shape)


@pytest.mark.parametrize("gshape, shape", PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_over_the_broadcast_axes(gshape, shape, dtype):
    g = np.random.default_rng(3).standard_normal(gshape).astype(dtype)
    like = np.zeros(shape, dtype)
    want = _reference(g, shape)
    for _ in range(2):  # the first call works out the axes, the second reads them from the table
        got = _unbroadcast_ndarray(g, like)
        assert got.shape == shape and got.dtype == dtype and np.array_equal(got, want)
        assert np.array_equal(unbroadcast(g, like), want)


def test_a_shape_that_does_not_broadcast_fails_as_numpy_does():
    with pytest.raises(ValueError):
        _unbroadcast_ndarray(np.ones(5), np.zeros((1, 5)))
    with pytest.raises(ValueError):
        _unbroadcast_ndarray(np.ones((4, 1, 10)), np.zeros((3, 1)))


@pytest.mark.parametrize("gshape, shape", [((4, 1), (4, 5)), ((1, 5), (4, 5)), ((1, 1), (3, 2)), ((2, 1, 3), (2, 4, 3))])
def test_a_kept_reduction_cotangent_is_spread(gshape, shape):
    """A reduction's cotangent with its axes kept (array_inline `_kept`), reaching the operand of an operation whose
    derivative does not broadcast it (`0.5 * x`, `x - 1.0`): spread over the operand, a fresh writable array."""
    g = np.random.default_rng(4).standard_normal(gshape)
    for _ in range(2):
        got = _unbroadcast_ndarray(g, np.zeros(shape))
        assert got.shape == shape and got.flags.writeable and got.base is None
        assert np.array_equal(got, np.broadcast_to(g, shape))

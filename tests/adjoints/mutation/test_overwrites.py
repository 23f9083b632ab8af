"""NumPy's functions that overwrite entries of an array with values from another (zygotepy/adjoints/mutation/
overwrites.py): `np.put`, `np.place`, `np.putmask`, `np.put_along_axis`, `np.fill_diagonal`, `np.copyto(where=)`.
Each program against central differences in float64 in every argument, on a copy and on the argument itself (which
must end as one plain call leaves it); they were refused ("updates its argument in place")."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from plain_checks import central  # noqa: E402

RNG = np.random.default_rng(21)
_X, _M = RNG.uniform(-1, 1, 5), RNG.uniform(-1, 1, (2, 3))


def put_repeated(x, v):
    y = x * 1.0
    np.put(y, [0, 3, 3, -1], v)  # (position 3 twice: the last value wins)
    return np.sum(y ** 2 * np.arange(1.0, 6.0))


def put_wrapping(x, v):
    y = np.sin(x)
    np.put(y, [1, 7], v, mode="wrap")
    return np.sum(y * x)


def place_cycling(x, v):
    y = x * 2.0
    np.place(y, x > -0.2, v)  # (fewer values than places: used cyclically)
    return np.sum(np.sin(y) * x)


def putmask_of_a_number(x, v):
    y = x + 0.0
    np.putmask(y, x < 0.2, v[0] * 3)
    return np.sum(y ** 3)


def put_along_rows(M, v):
    Y = M * 1.0
    np.put_along_axis(Y, np.array([[1], [0]]), v, axis=1)
    return np.sum(Y ** 2 * M)


def put_along_broadcast(M, v):
    Y = np.tanh(M)
    np.put_along_axis(Y, np.array([[1, 0, 1]]), v, 0)  # (one value for the three)
    return np.sum(Y @ Y.T)


def fill_diagonal_wrapping(M, v):
    Y = np.vstack([M, M, M]) * 1.0
    np.fill_diagonal(Y, v[1], wrap=True)
    return np.sum(Y ** 2 * np.arange(18.0).reshape(6, 3))


def copyto_where(M, v):
    Y = M * 1.0
    np.copyto(Y, v[:3], where=M > 0)
    return np.sum(np.exp(Y) * M)


def updates_its_argument(M, v):
    np.put_along_axis(M, np.array([[0], [2]]), v, axis=1)
    np.copyto(M, v * 2, where=M < 0)
    return np.sum(M ** 2)


def in_a_loop(x, v):
    y = x * 1.0
    for k in range(3):
        np.put(y, [k], y[k + 1] * v[k])
    return np.sum(y ** 2)


CASES = [(put_repeated, _X, RNG.uniform(-1, 1, 4)), (put_wrapping, _X, RNG.uniform(-1, 1, 2)),
         (place_cycling, _X, RNG.uniform(-1, 1, 2)), (putmask_of_a_number, _X, RNG.uniform(-1, 1, 2)),
         (put_along_rows, _M, RNG.uniform(-1, 1, (2, 1))), (put_along_broadcast, _M, RNG.uniform(-1, 1, (1, 1))),
         (fill_diagonal_wrapping, _M, RNG.uniform(-1, 1, 2)), (copyto_where, _M, RNG.uniform(-1, 1, 3)),
         (updates_its_argument, _M, RNG.uniform(-1, 1, (2, 1))), (in_a_loop, _X, RNG.uniform(-1, 1, 3))]


@pytest.mark.parametrize("f, x, v", CASES, ids=[c[0].__name__ for c in CASES])
def test_against_central_differences(f, x, v):
    plain = x.copy()
    want = f(plain, v.copy())
    arg = x.copy()
    value, (gx, gv) = value_and_gradient(f, arg, v.copy())
    assert np.isclose(value, want, rtol=1e-12)
    np.testing.assert_array_equal(arg, plain)  # (as one plain call leaves it)
    np.testing.assert_allclose(gx, central(f, (x, v), 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gv, central(f, (x, v), 1), rtol=1e-6, atol=1e-6)


def test_integer_targets_and_complex_values():
    """An integer array overwritten with floats holds truncated data (no gradient reaches the values); complex values
    stored into a real array lose their imaginary part, which zygotepy refuses to differentiate."""
    def into_ints(v):
        y = np.zeros(3, dtype=np.int64)
        np.put(y, [0, 1], v)
        return np.sum(y) * 1.0 + v[0]

    assert gradient(into_ints, np.array([1.5, 2.5]))[0].tolist() == [1.0, 0.0]

    def complex_into_real(x, v):
        y = x * 1.0
        np.put(y, [0], v * 1j)
        return np.sum(y)

    with pytest.raises(ZygoteError, match="storing complex values into a real array"):
        gradient(complex_into_real, np.ones(2), np.ones(1))


def test_values_sharing_memory_with_the_target_are_refused():
    def from_itself(x):
        y = x * 1.0
        np.putmask(y, y > 0.5, y[1:3])
        return np.sum(y ** 2)

    with pytest.raises(ZygoteError, match="share memory with the array"):
        gradient(from_itself, np.array([0.2, 0.9, 0.7, 0.1]))


def test_the_put_method():
    def f(x, v):
        y = np.cos(x)
        y.put([1, 3, 1], v * x[0], mode="clip")
        return np.sum(y ** 2 * x)

    x, v = _X.copy(), RNG.uniform(-1, 1, 3)
    gx, gv = gradient(f, x, v)
    np.testing.assert_allclose(gx, central(f, (x, v), 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gv, central(f, (x, v), 1), rtol=1e-6, atol=1e-6)


def _copyto_shifted(x):
    y = x.copy()
    np.copyto(y[1:], y[:-1])
    return np.sum(y * np.array([1.0, 10.0, 100.0, 1000.0]))


def _copyto_reversed(x):
    y = x.copy()
    np.copyto(y, y[::-1])
    return np.sum(y * np.array([1.0, 10.0, 100.0, 1000.0]))


@pytest.mark.parametrize("f", [_copyto_shifted, _copyto_reversed], ids=["shifted", "reversed"])
def test_copyto_from_a_source_sharing_the_target_memory_is_refused(f):
    # (its gradient was wrong: [1, 10, 1100, 0] for [11, 100, 1000, 0]); `y[1:] = y[:-1]` is followed
    with pytest.raises(ZygoteError, match="np.copyto: .* shares memory"):
        gradient(f, np.array([1.0, 2.0, 3.0, 4.0]))


def test_copyto_from_a_copy_and_the_store_it_suggests_match_finite_differences():
    def by_copy(x):
        y = x.copy()
        np.copyto(y[1:], y[:-1].copy())
        return np.sum(y * np.array([1.0, 10.0, 100.0, 1000.0]))

    def by_store(x):
        y = x.copy()
        y[1:] = y[:-1]
        return np.sum(y * np.array([1.0, 10.0, 100.0, 1000.0]))
    for f in (by_copy, by_store):
        np.testing.assert_allclose(gradient(f, np.array([1.0, 2.0, 3.0, 4.0]))[0], [11.0, 100.0, 1000.0, 0.0])


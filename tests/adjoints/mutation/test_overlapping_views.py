"""Views whose own positions share memory (zygotepy/adjoints/mutation/overlap.py `overlaps_itself`): overlapping
`as_strided` windows (`w[i, j]` is `y[i + j]`), zero strides, `np.broadcast_arrays`' and `meshgrid(copy=False)`'s
views. A write through one was followed as if each position were an element of its own: the written value got the
cotangent of the position written only, the base element kept the rest, and reading the view afterwards was wrong
too. Such writes are refused, whatever makes them (a store, `+=`, `out=`, np.copyto, np.put, `fill`, a loop's item
stores: the store rules and the links after an update, stores.py and overlap.py); reads of such views, writes into
their base and writes through views whose positions do not share memory (a column of a broadcast view too) are
followed, and checked against central differences."""
import os
import sys
import warnings

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient
from zygotepy.adjoints.mutation.overlap import overlaps_itself

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central, line_of  # noqa: E402

AS = np.lib.stride_tricks.as_strided
C = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
RAMP = np.arange(4.0)
THIS_FILE = os.path.abspath(__file__)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (NumPy's, on writing a broadcast view)


def windows(y):
    return AS(y, shape=(3, 2), strides=(8, 8))  # w[i, j] is y[i + j]


# --- writes through a view whose positions share memory: refused --------------------------------------------------------

def store_then_base_read(x, s):
    y = x.copy()
    w = windows(y)
    w[1, 0] = s  # refused
    return np.sum(y * RAMP)


def store_then_view_read(x, s):
    y = x.copy()
    w = windows(y)
    w[0, 1] = s  # refused
    return np.sum(w * C)


def store_whole(x, s):
    y = x.copy()
    w = windows(y)
    w[...] = s * C  # refused
    return np.sum(y * RAMP)


def item_scaled(x, s):
    y = x.copy()
    w = windows(y)
    w[0, 1] *= s  # refused
    return np.sum(w * C)


def added_in_place(x, s):
    y = x.copy()
    w = windows(y)
    w += s * C  # refused
    return np.sum(y * RAMP)


def copied_into(x, s):
    y = x.copy()
    w = windows(y)
    np.copyto(w, s * C)  # refused
    return np.sum(y * RAMP)


def ufunc_out(x, s):
    y = x.copy()
    w = windows(y)
    np.multiply(w, s * C, out=w)  # refused
    return np.sum(y * RAMP)


def filled(x, s):
    y = x.copy()
    w = windows(y)
    w.fill(s)  # refused
    return np.sum(y * RAMP)


def put_into(x, s):
    y = x.copy()
    w = windows(y)
    np.put(w, [1], s)  # refused
    return np.sum(y * RAMP)


def zero_stride_loop(x, s):
    y = x.copy()
    w = AS(y, shape=(4,), strides=(0,))
    for i in range(3):
        w[i] = s * i  # refused
    return np.sum(y * RAMP)


def view_of_windows(x, s):
    y = x.copy()
    v = windows(y)[:2]
    v[1, 0] = s  # refused
    return np.sum(y * RAMP)


def no_named_base(x, s):
    w = windows(x.copy())
    w *= s * C  # refused
    return np.sum(w * C)


def broadcast_arrays_store(x, s):
    y = x[:3].copy()
    a, _ = np.broadcast_arrays(y[:, None], np.ones((1, 2)))  # a[i, j] is y[i]
    a[0, 0] = s  # refused
    return np.sum(a * C)


def broadcast_arrays_added(x, s):
    y = x[:3].copy()
    a, _ = np.broadcast_arrays(y[:, None], np.ones((1, 2)))
    a += s  # refused
    return np.sum(y ** 2)


def meshgrid_view_store(x, s):
    y = x.copy()
    g, _ = np.meshgrid(y, y[:2], copy=False)
    g[0, 0] = s  # refused
    return np.sum(y * RAMP)


REFUSED = [store_then_base_read, store_then_view_read, store_whole, item_scaled, added_in_place, copied_into,
           ufunc_out, filled, put_into, zero_stride_loop, view_of_windows, no_named_base, broadcast_arrays_store,
           broadcast_arrays_added, meshgrid_view_store]
X, S = np.array([0.3, -1.2, 0.8, 0.5]), 0.7


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_write_through_self_overlapping_view_refused(f, mode):
    with pytest.raises(ZygoteError, match="writes through a view whose elements share memory") as info:
        value_and_gradient(f, X.copy(), S)
    assert f"{THIS_FILE}:{line_of(f, '# refused')}:" in str(info.value)
    assert "copy it first, or write into the base array" in str(info.value)


# --- reads of such views, and writes that do not go through one: followed -----------------------------------------------

def windows_read(x, s):
    return np.sum(windows(x) * C) * s


def broadcast_to_read(x, s):
    return np.sum(np.broadcast_to(x[:, None], (4, 3)) ** 2) * s


def base_written_then_windows_read(x, s):
    y = x.copy()
    w = windows(y)
    y[1] = s
    return np.sum(w * C)


def base_written_in_loop_then_windows_read(x, s):
    y = x.copy()
    w = windows(y)
    for i in range(4):
        y[i] = y[i] * s
    return np.sum(w * C)


def base_slice_scaled_then_read(x, s):
    y = x.copy()
    w = windows(y)
    t = y[1:3]
    t *= s
    return np.sum(np.sin(w) * C)


def base_written_then_broadcast_read(x, s):
    y = x[:3].copy()
    a, _ = np.broadcast_arrays(y[:, None], np.ones((1, 2)))
    y[0] = s
    return np.sum(a * C)


def base_scaled_then_meshgrid_read(x, s):
    y = x.copy()
    g, h = np.meshgrid(y, y[:2], copy=False)
    y[1] *= s
    return np.sum(g * h)


def column_of_broadcast_written(x, s):
    y = x[:3].copy()
    a, _ = np.broadcast_arrays(y[:, None], np.ones((1, 2)))
    v = a[:, 0]  # (positions of their own: y itself)
    v[1] = s
    return np.sum(a * C)


def column_of_windows_added_to(x, s):
    y = x.copy()
    w = windows(y)
    v = w[:, 1]
    v += s * np.array([1.0, 2.0, 3.0])
    return np.sum(w * C) + np.sum(y ** 2)


def disjoint_strided_written(x, s):
    y = x.copy()
    w = AS(y, shape=(2, 2), strides=(16, 8))
    w[1, 0] = s
    return np.sum(w ** 2) + np.sum(y * RAMP)


def disjoint_strided_added(x, s):
    y = x.copy()
    w = AS(y, shape=(2, 2), strides=(8, 16))
    w += s * C[:2]
    return np.sum(y * RAMP * y)


def windows_read_in_loop_as_base_changes(x, s):
    y = x * s
    total = 0.0
    for k in range(2):
        w = windows(y)
        total = total + np.sum(w * C) * (k + 1)
        y[k] = 0.5 * y[k]
    return total


def zero_stride_read_in_loop_as_base_changes(x, s):
    y = x.copy()
    w = AS(y[1:], shape=(4,), strides=(0,))  # (written through nowhere: only read)
    total = 0.0
    for i in range(4):
        y[i] = y[i] * s
        total = total + w[i] * i
    return total + np.sum(w)


def data_written_through_broadcast_view(x, s):
    m = np.broadcast_arrays(np.array([1, 0, 1])[:, None], np.ones((1, 2), dtype=int))[0]
    m[1, 0] = 1  # (ints: data, no gradient, written as NumPy does)
    return np.sum(np.where(m[:, 1] > 0, x[:3], 0.0)) * s


FOLLOWED = [zero_stride_read_in_loop_as_base_changes, data_written_through_broadcast_view, windows_read, broadcast_to_read, base_written_then_windows_read, base_written_in_loop_then_windows_read,
            base_slice_scaled_then_read, base_written_then_broadcast_read, base_scaled_then_meshgrid_read,
            column_of_broadcast_written, column_of_windows_added_to, disjoint_strided_written,
            disjoint_strided_added, windows_read_in_loop_as_base_changes]


@pytest.mark.parametrize("f", FOLLOWED, ids=lambda f: f.__name__)
def test_reads_and_other_writes_followed(f, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, grads = value_and_gradient(f, X.copy(), S)
        want = f(X.copy(), S)
        np.testing.assert_allclose(value, want, rtol=1e-12)
        for k, g in enumerate(grads):
            np.testing.assert_allclose(0.0 if g is None else g, central(f, (X, S), k), rtol=1e-6, atol=1e-8,
                                       err_msg=f"argument {k}")


def test_followed_after_a_refusal(mode):
    """A refused call leaves nothing behind that refuses the next (the log of the update refused is not read again)."""
    with pytest.raises(ZygoteError):
        value_and_gradient(added_in_place, X.copy(), S)
    for f in (base_written_in_loop_then_windows_read, base_written_then_windows_read):
        value_and_gradient(f, X.copy(), S)


# --- the test itself ---------------------------------------------------------------------------------------------------

def test_overlaps_itself():
    y = np.arange(12.0)
    assert overlaps_itself(windows(y))
    assert overlaps_itself(AS(y, shape=(4,), strides=(0,)))
    assert overlaps_itself(np.broadcast_arrays(y[:3, None], np.ones((1, 2)))[0])
    assert overlaps_itself(AS(y, shape=(2, 2, 2), strides=(16, 8, 24)))  # (strides that do not nest, and collide)
    assert not overlaps_itself(AS(y, shape=(2, 3), strides=(24, 16)))  # (do not nest, yet distinct: compared)
    assert not overlaps_itself(y.reshape(3, 4)[:, ::2].T)
    assert not overlaps_itself(y[::-3])
    assert not overlaps_itself(np.broadcast_to(y[:1], (1, 1)))  # (one position)
    assert not overlaps_itself(np.broadcast_to(y[:3, None], (3, 1)))  # (a zero stride on a length-1 axis)
    big = np.zeros(1 << 21)
    assert not overlaps_itself(big[::2].reshape(-1, 2)[:, ::-1])  # (big, and nested: told at once)
    assert overlaps_itself(AS(big, shape=(big.size // 3 - 1, 3), strides=(24, 16)))  # (big, not nested: taken to)

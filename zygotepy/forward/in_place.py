"""NumPy's functions that update an array in place (`np.copyto`, `np.putmask`, `np.place`, `np.put`,
`np.fill_diagonal`, `np.put_along_axis`), on dual numbers.

A tangent rule returns a new value and its tangent; these return nothing and change their first argument. Each is
written here as the stores `a[index] = value` it makes, which a dual number of an array takes in place, primal and
tangent alike (`Dual.__setitem__`). Into a plain array, a value that carries a derivative is refused there, as any
store into one is. The indices are NumPy's own: cycled values, `put`'s modes, `fill_diagonal`'s step and wrap.
"""
import numpy as np

from ..errors import STORE_INTO_PLAIN_ARRAY, ForwardModeError
from .dual import UFUNC_AT, Dual, dispatch, has_dual, strip


def _store(a, index, value, name):
    """`a[index] = value`; into a plain array, a value carrying a derivative is refused, naming the function."""
    if type(a) is not Dual and has_dual((value,), {}):
        raise ForwardModeError(f"{STORE_INTO_PLAIN_ARRAY} (the array np.{name} updates)")
    a[index] = value


def _cycled(values, count):
    """`values` flattened and repeated to `count` entries, as these functions repeat a shorter sequence of values."""
    flat = dispatch(np.ravel, (values,), {})
    size = np.size(strip(flat))
    if size == 0:
        raise ValueError("cannot fill an array from an empty sequence of values")
    return flat[np.arange(count) % size]


def _store_flat(a, positions, values, name):
    """`a.flat[positions] = values`, the values cycled to the positions' count (later positions win on repeats)."""
    positions = np.asarray(positions, dtype=np.intp).reshape(-1)
    if positions.size:
        _store(a, np.unravel_index(positions, np.shape(strip(a))), _cycled(values, positions.size), name)


def copyto(dst, src, casting="same_kind", where=True):
    source = np.asarray(strip(src))
    if not np.can_cast(source.dtype, np.asarray(strip(dst)).dtype, casting):
        np.copyto(np.empty_like(strip(dst)), source, casting=casting)  # (NumPy's own TypeError)
    _store(dst, ..., src if where is True else dispatch(np.where, (where, src, dst), {}), "copyto")


def putmask(a, mask, values):
    """`a.flat[n] = values[n]` where `mask.flat[n]`: the values indexed by position in `a` (cycled), not in turn."""
    shape = np.shape(strip(a))
    positions = np.flatnonzero(np.broadcast_to(np.asarray(mask, dtype=bool), shape))
    if positions.size:
        _store(a, np.unravel_index(positions, shape), _cycled(values, int(np.prod(shape)))[positions], "putmask")


def place(arr, mask, vals):
    """The values in turn (cycled) into the positions where `mask` is true."""
    _store_flat(arr, np.flatnonzero(np.asarray(mask, dtype=bool)), vals, "place")


def put(a, ind, v, mode="raise"):
    size = np.size(strip(a))
    ind = np.asarray(ind, dtype=np.intp).reshape(-1)
    if mode == "wrap":
        ind = ind % size
    elif mode == "clip":
        ind = np.clip(ind, 0, size - 1)
    elif ind.size and (ind.max() >= size or ind.min() < -size):
        raise IndexError(f"index {int(ind.max() if ind.max() >= size else ind.min())} is out of bounds for axis 0 "
                         f"with size {size}")
    _store_flat(a, ind % size if size else ind, v, "put")


def fill_diagonal(a, val, wrap=False):
    shape = np.shape(strip(a))
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) == 2:
        step, end = shape[1] + 1, None if wrap else shape[1] * shape[1]
    else:
        if any(n != shape[0] for n in shape):
            raise ValueError("All dimensions of input must be of equal length")
        step, end = 1 + int(np.cumprod(shape[:-1]).sum()), None
    _store_flat(a, np.arange(int(np.prod(shape)))[:end:step], val, "fill_diagonal")


def put_along_axis(arr, indices, values, axis):
    shape = np.shape(strip(arr))
    indices = np.asarray(indices)
    if axis is None:
        _store_flat(arr, indices.reshape(-1), values, "put_along_axis")
        return
    axis %= len(shape)
    index = tuple(indices if d == axis else
                  np.arange(n).reshape((1,) * d + (-1,) + (1,) * (len(shape) - d - 1)) for d, n in enumerate(shape))
    target = np.broadcast_shapes(*(np.shape(i) for i in index))
    _store(arr, index, dispatch(np.broadcast_to, (values, target), {}) if np.shape(strip(values)) != target else values,
           "put_along_axis")


def ufunc_at(ufunc, target, index, value=None):
    """`ufunc.at(target, index, value)` of a binary ufunc on a dual number of an array: unbuffered, as NumPy's, so a
    position named twice takes the ufunc twice, in the order given."""
    shape = np.shape(strip(target))
    positions = np.arange(int(np.prod(shape))).reshape(shape)[index]
    values = dispatch(np.broadcast_to, (value, np.shape(positions)), {})
    flat_values = dispatch(np.ravel, (values,), {})
    for k, p in enumerate(np.ravel(positions)):
        at = np.unravel_index(p, shape)
        target[at] = ufunc(target[at], flat_values[k])


IN_PLACE = {np.copyto: copyto, np.putmask: putmask, np.place: place, np.put: put, np.fill_diagonal: fill_diagonal,
            np.put_along_axis: put_along_axis}


def fill(self, value):
    """`x.fill(v)` of a dual number of an array."""
    self[...] = value


def put_method(self, indices, values, mode="raise"):
    """`x.put(indices, values)` of a dual number of an array: `np.put`."""
    put(self, indices, values, mode)


Dual.fill, Dual.put = fill, put_method
for _ufunc in (np.subtract, np.multiply, np.maximum, np.minimum):
    UFUNC_AT[_ufunc] = ufunc_at

"""NumPy functions that only move, copy or drop entries: tile, repeat, pad, delete, compress, extract, resize,
rot90, roll, sort, partition, take and take_along_axis (and the ndarray methods repeat, compress, take).

Most share one rule, `_gather`: the function is run once more on the flat indices of its input, and the cotangent is
scattered back through those indices with accumulation, so repeated entries sum their cotangents.
"""
import math

import numpy as np

from ...ast_adjoint.call_checks import call_site
from ...backends import is_foreign, namespace, on, scatter_add, unbroadcast
from ...errors import ZygoteError
from ...forward.dual import has_dual, strip
from ..registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic
from .common import _float_dtype, _nones, _restore, arrayed, is_float


# --- moving, copying and dropping entries: scatter back through the indices ----------------------------------------------
def _scatter(dy, index, x):
    """The cotangent of `x` from `dy = x.flat[index]` (entries with a negative index came from elsewhere: a padding)."""
    if has_dual((dy,)):  # (hessian's dual cotangent, which bincount cannot take: a product with the one-hot matrix)
        flat = np.asarray(index).reshape(-1)
        taken = np.nonzero(flat >= 0)[0]
        onehot = np.zeros((flat.size, x.size))
        onehot[taken, flat[taken]] = 1.0
        return np.reshape(np.reshape(dy, (-1,)) @ onehot, x.shape)
    dy = arrayed(dy)
    index = np.asarray(index)
    keep = index >= 0
    size = max(x.size, 1)
    if dy.dtype.kind == "c":
        g = np.zeros(size, dtype=dy.dtype)
        np.add.at(g, index[keep], dy[keep])
    else:
        g = np.bincount(index[keep], weights=dy[keep], minlength=size).astype(_float_dtype(dy.dtype), copy=False)
    return g[:x.size].reshape(x.shape)


def _gather(fn, index_arguments=lambda args, kwargs: (args, kwargs)):
    """Rule for `fn(x, *args)` that builds its output from x's entries; `index_arguments` adapts the arguments for the
    run on x's flat indices (np.pad's constant fill becomes -1, "not from x")."""
    def rule(x, *args, **kwargs):
        if type(x) is not np.ndarray and is_foreign(x):
            return _foreign_gather(fn, x, args, kwargs)
        x_arr = np.asarray(strip(x))  # (its shape: hessian's dual numbers are no NumPy array)
        y = fn(x, *args, **kwargs)

        def back(dy):
            if dy is None:
                return (None, *_nones(args))
            index_args, index_kwargs = index_arguments(args, kwargs)
            index = fn(np.arange(x_arr.size).reshape(x_arr.shape), *index_args, **index_kwargs)
            g = _scatter(dy, index, x_arr)
            return (_restore(g, x) if isinstance(x, (list, tuple)) else unbroadcast(g, x), *_nones(args))
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _foreign_gather(fn, x, args, kwargs):
    """Another library's x: fn run by NumPy on x's flat indices plus one (they depend on shapes only; a fill of zeros
    reads -1, "not from x"), a take of x through them, and the cotangent scattered back with accumulation."""
    xp = namespace(x)
    shape = tuple(x.shape)
    index = np.asarray(fn(np.arange(1, math.prod(shape) + 1).reshape(shape), *args, **kwargs)) - 1
    flat = index.reshape(-1)
    present = flat >= 0
    source = xp.asarray(np.where(present, flat, 0), **on(x))  # (made where x lives: issue case 11)
    mask = None if present.all() else xp.asarray(present, **on(x))
    y = xp.take(xp.reshape(x, (-1,)), source, axis=0)
    if mask is not None:
        y = xp.where(mask, y, xp.zeros_like(y))

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        d = xp.reshape(dy, (-1,))
        if mask is not None:
            d = xp.where(mask, d, xp.zeros_like(d))
        return (_scatter_into(x, source, d), *_nones(args))
    return xp.reshape(y, index.shape), back


_COPYING_MODES = {"constant", "edge", "reflect", "symmetric", "wrap", "empty"}


def _pad_index_arguments(args, kwargs):
    """np.pad's arguments for its run on x's indices: the padding of "constant" (and of "empty", whose entries are
    whatever memory held, not x's) reads -1."""
    mode = args[1] if len(args) > 1 else kwargs.get("mode", "constant")
    if not isinstance(mode, str) or mode not in _COPYING_MODES:
        raise ZygoteError(f"np.pad: no gradient rule for mode={mode!r} (supported: {sorted(_COPYING_MODES)})")
    if mode not in ("constant", "empty"):
        return args, kwargs
    return args[:1], {"mode": "constant", "constant_values": -1}


GATHERED = {np.tile: _gather(np.tile), np.repeat: _gather(np.repeat), np.ndarray.repeat: _gather(np.repeat),
            np.pad: _gather(np.pad, _pad_index_arguments), np.delete: _gather(np.delete), np.resize: _gather(np.resize),
            np.roll: _gather(np.roll), np.rot90: _gather(np.rot90),
            np.compress: None, np.extract: None}


def _gather_second(fn):
    """`np.compress(condition, a, ...)` and `np.extract(condition, a)`: the array is the second argument."""
    def rule(condition, a, *args, **kwargs):
        if type(condition) is not np.ndarray and is_foreign(condition):  # it sets the output's shape: a constant
            try:
                condition = np.asarray(condition)
            except (TypeError, ValueError, RuntimeError) as e:  # a traced condition (under jax.jit)
                raise ZygoteError(f"np.{fn.__name__}: the condition must be a concrete array (its entries set the "
                                  f"output's shape), not a {type(condition).__name__}: {e}") from None
        y, back = _gather(lambda x, *rest, **kw: fn(condition, x, *rest, **kw))(a, *args, **kwargs)
        return y, lambda dy: (None, *back(dy))
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


GATHERED[np.compress], GATHERED[np.extract] = _gather_second(np.compress), _gather_second(np.extract)


def compress_method(a, condition, *args, **kwargs):
    """`a.compress(condition, axis)`: np.compress with the first two arguments swapped."""
    y, back = GATHERED[np.compress](condition, a, *args, **kwargs)

    def back_swapped(dy):
        grads = back(dy)
        return (grads[1], None, *grads[2:])
    return y, back_swapped


GATHERED[np.ndarray.compress] = compress_method


for _fn, _rule in GATHERED.items():
    adjoint(_fn)(_rule)


@keyword_rule
@adjoint(np.pad)
def pad(x, pad_width, *args, **kwargs):
    """NumPy arrays: the gathered rule; the fill `constant_values=` receives the cotangents of the entries it filled.
    Another library's: every copying mode as a gather through the indices NumPy's pad gives x's flat indices (they
    depend on shapes only), the constant mode's fill from a NumPy pad of zeros (whose values state no cotangent)."""
    xp = namespace(x)
    mode = args[0] if args else kwargs.get("mode", "constant")
    if xp is np and kwargs.get("reflect_type") == "odd" and mode in ("reflect", "symmetric"):
        return np.pad(x, pad_width, *args, **kwargs), _odd_back(x, pad_width, mode, args, kwargs)
    if xp is np:
        y, back = GATHERED[np.pad](x, pad_width, *args, **kwargs)
        return y, _with_fill(back, np.shape(x), pad_width, mode, kwargs)
    y, back = _foreign_pad(xp, x, pad_width, mode, args, kwargs)
    return y, lambda dy: keyword_cotangents(back(dy), kwargs)


def _odd_back(x, pad_width, mode, args, kwargs):
    """The back of `reflect_type="odd"`: NumPy pads one axis after another, each axis's new entries two times the
    edge minus the even reflection, so each axis's padding is `2 * pad(edge) - pad(mode)` (the old entries too:
    2x - x), and the back is theirs, axis by axis in reverse. A width past what one reflection reaches (NumPy then
    reflects its own padding again) is refused."""
    shape = np.shape(strip(x))
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(shape), 2))
    steps = []
    for axis, (before, after) in enumerate(widths):
        if max(before, after) > shape[axis] - (mode == "reflect") and shape[axis] > 1:  # (one entry: all the edge)
            raise ZygoteError(f"np.pad(mode={mode!r}, reflect_type='odd'): a width of {max(before, after)} on an "
                              f"axis of length {shape[axis]} reflects the padding again, which has no gradient rule")
        one = [(0, 0)] * len(shape)
        one[axis] = (before, after)
        flat = np.arange(math.prod(shape)).reshape(shape)
        steps.append((np.pad(flat, one, "edge"), np.pad(flat, one, mode), np.empty(shape)))
        shape = steps[-1][0].shape

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, None, *_nones(args)), kwargs)
        g = dy
        for edge, mirrored, before in reversed(steps):
            g = 2 * _scatter(g, edge, before) - _scatter(g, mirrored, before)
        return keyword_cotangents((_restore(g, x) if isinstance(x, (list, tuple)) else g, None, *_nones(args)),
                                  kwargs)
    return back


def _with_fill(back, shape, pad_width, mode, kwargs):
    """np.pad's back with the cotangent of `constant_values`: each of its (before, after) pairs per axis gets the sum
    of the cotangents of the entries it filled (found by padding with labels, as NumPy fills them)."""
    fill = kwargs.get("constant_values")

    def back_(dy):
        grads = back(dy)
        if dy is None or fill is None or mode != "constant":
            return keyword_cotangents(grads, kwargs)
        ndim = len(shape)
        labels = np.pad(np.full(shape, -1), pad_width, "constant",
                        constant_values=np.arange(2 * ndim).reshape(ndim, 2))
        sums = _scatter(dy, labels, np.zeros((ndim, 2)))  # (the label of each filled entry: its pair's flat index)
        return keyword_cotangents(grads, kwargs, constant_values=_like_fill(sums, fill))
    return back_


def _like_fill(g, fill):
    """The (ndim, 2) cotangent `g` of a fill NumPy broadcast to that shape, with the fill's own shape and structure."""
    if isinstance(fill, (list, tuple)):
        g = unbroadcast(g, np.asarray(fill))
        return type(fill)(_like_fill(g[k], item) for k, item in enumerate(fill))
    return unbroadcast(g, fill)


def _foreign_pad(xp, x, pad_width, mode, args, kwargs):
    """np.pad of another library's x: a gather through the indices NumPy's pad gives x's flat indices."""
    if not isinstance(mode, str) or mode not in _COPYING_MODES:
        raise ZygoteError(f"np.pad: no gradient rule for mode={mode!r} (supported: {sorted(_COPYING_MODES)})")
    rest = {k: v for k, v in kwargs.items() if k != "mode"}
    if mode in ("constant", "empty"):
        filled = np.pad(np.zeros(tuple(x.shape)), pad_width, "constant", **rest)
        index = np.pad(np.arange(math.prod(x.shape)).reshape(tuple(x.shape)), pad_width, "constant",
                       constant_values=-1)
    else:
        if rest:
            raise ZygoteError(f"np.pad of another library's arrays: {sorted(rest)} is not supported")
        filled, index = None, np.pad(np.arange(math.prod(x.shape)).reshape(tuple(x.shape)), pad_width, mode)
    source = xp.asarray(index.reshape(-1), **on(x))
    present = source >= 0
    source = xp.where(present, source, xp.zeros_like(source))
    y = xp.take(xp.reshape(x, (-1,)), source, axis=0)
    if filled is not None:
        y = xp.where(present, y, xp.asarray(filled.reshape(-1), dtype=x.dtype, **on(x)))

    def back(dy):
        if dy is None:
            return (None, None, *_nones(args))
        d = xp.reshape(dy, (-1,))
        return (_scatter_into(x, source, xp.where(present, d, xp.zeros_like(d))), None, *_nones(args))
    return xp.reshape(y, index.shape), back


@adjoint(np.roll)
def roll(x, shift, *args, **kwargs):
    """NumPy arrays: the gathered rule; another library's: rolled back by -shift."""
    xp = namespace(x)
    if xp is np and not getattr(type(x), "__zygote_number__", False):  # (dual numbers: rolled back, as below)
        return GATHERED[np.roll](x, shift, *args, **kwargs)
    axis = args[0] if args else kwargs.get("axis")
    back_shift = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return xp.roll(x, shift, axis=axis), lambda dy: (None if dy is None else xp.roll(dy, back_shift, axis=axis),
                                                     None, *_nones(args))


# --- sorting and taking ----------------------------------------------------------------------------------------------------
@adjoint(np.sort)
def sort(x, *args, **kwargs):
    """y = take_along_axis(x, argsort(x)): the cotangent goes back through the inverse permutation."""
    if type(x) in (list, tuple):  # (a list of numbers: the array NumPy sorts; its cotangent an array, as for others)
        x = np.asarray(x)
    axis = args[0] if args else kwargs.get("axis", -1)
    xp = namespace(x)
    if xp is np:
        x_arr = x if axis is not None else np.ravel(x)
        order = np.argsort(np.asarray(strip(x_arr)), axis=-1 if axis is None else axis, kind="stable")
    else:  # the array API's argsort (JAX's and torch's too) takes descending=
        kw = {**dict(zip(("axis", "kind", "order"), args)), **kwargs}
        unknown = sorted(k for k, v in kw.items() if k not in ("axis", "kind", "stable", "descending") and v is not None)
        if unknown:
            raise ZygoteError(f"np.sort of another library's arrays: {', '.join(unknown)} is not supported")
        x_arr = x if axis is not None else xp.reshape(x, (-1,))
        order = xp.argsort(x_arr, axis=-1 if axis is None else axis, descending=kw.get("descending", False),
                           stable=True)
    along = -1 if axis is None else axis

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        g = xp.take_along_axis(dy, xp.argsort(order, axis=along), axis=along)
        return (_restore(xp.reshape(g, tuple(np.shape(x))), x), *_nones(args))
    return xp.take_along_axis(x_arr, order, axis=along), back


@adjoint(np.partition)
def partition(x, kth, *args, **kwargs):
    """A permutation of x along the axis, as sort: the cotangent goes back through it. NumPy's arrangement of the
    entries away from kth is its own, so the permutation is read off the result (matching the sorted orders of x and
    of y), not recomputed by argpartition, which may arrange them otherwise."""
    axis = args[0] if args else kwargs.get("axis", -1)
    y = np.partition(x, kth, *args, **kwargs)
    x_arr = np.asarray(x) if axis is not None else np.ravel(x)
    along = -1 if axis is None else axis

    def back(dy):
        if dy is None:
            return (None, None, *_nones(args))
        from_x, from_y = np.argsort(x_arr, axis=along, kind="stable"), np.argsort(y, axis=along, kind="stable")
        source = np.take_along_axis(from_x, np.argsort(from_y, axis=along, kind="stable"), axis=along)  # y = x[source]
        g = np.zeros(x_arr.shape, np.result_type(arrayed(dy).dtype, _float_dtype(x_arr.dtype)))
        np.put_along_axis(g, source, dy, axis=along)
        return (_restore(g.reshape(np.shape(x)), x), None, *_nones(args))
    return y, back


def _scatter_into(x, source, dy):
    """The cotangent of x from dy = x.flat[source] (source: x's flat indices, an array of x's namespace)."""
    xp = namespace(x)
    if not hasattr(dy, "shape"):
        dy = xp.asarray(dy, dtype=x.dtype if is_float(x) else None, **on(x))
    size = math.prod(x.shape)
    return xp.reshape(scatter_add(xp, size, xp.reshape(source, (-1,)), xp.reshape(dy, (-1,))), tuple(x.shape))


def _flat_indices(xp, x):
    return xp.reshape(xp.arange(math.prod(x.shape), **on(x)), tuple(x.shape))


def _in_bounds(xp, index, n, mode, name):
    """NumPy's index modes on an index array of another library: negative indices count from the end; 'wrap' and
    'clip' map every index into range, and any other mode raises where one is out of bounds (as NumPy's 'raise')."""
    if mode == "wrap":
        return index % n
    if mode == "clip":
        return xp.clip(index, 0, n - 1)
    if mode not in (None, "raise", "fill", "promise_in_bounds"):
        raise ZygoteError(f"np.{name}: no namespace-generic rule for mode={mode!r}")
    index = xp.where(index < 0, index + n, index)
    try:
        outside = bool(xp.any(xp.logical_or(index < 0, index >= n)))
    except TypeError:  # a traced index (under jax.jit) has no value to test, and JAX leaves its bounds unchecked too
        return index
    if outside:
        raise ZygoteError(f"np.{name}: an index is out of bounds for an axis of size {n} (NumPy's mode='raise'; "
                          f"use mode='wrap' or 'clip')")
    return index


@adjoint(np.take)
def take(x, indices, *args, **kwargs):
    """Another library's arrays: its take (of a 1-d index: the array API's), the cotangent scattered back with
    accumulation (`scatter_add`)."""
    axis = args[0] if args else kwargs.get("axis")
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "raise")
    xp = namespace(x)
    if xp is not np:
        kw = {**dict(zip(("axis", "out", "mode"), args)), **kwargs}
        unknown = sorted(k for k, v in kw.items() if k not in ("axis", "mode") and v is not None)
        if unknown:
            raise ZygoteError(f"np.take of another library's arrays: {', '.join(unknown)} is not supported")
        x_arr = xp.reshape(x, (-1,)) if axis is None else x
        along = 0 if axis is None else axis % x.ndim
        index = xp.asarray(indices, **on(x))
        index = _in_bounds(xp, index, x_arr.shape[along], kw.get("mode"), "take")
        shape = (*x_arr.shape[:along], *index.shape, *x_arr.shape[along + 1:])
        flat = xp.reshape(index, (-1,))
        source = xp.take(xp.reshape(_flat_indices(xp, x), tuple(x_arr.shape)), flat, axis=along)
        return xp.reshape(xp.take(x_arr, flat, axis=along), shape), lambda dy: (
            None if dy is None else _scatter_into(x, source, xp.reshape(dy, tuple(source.shape))), None,
            *_nones(args))

    def back(dy):
        if dy is None:
            return (None, None, *_nones(args))
        x_arr = np.asarray(strip(x))
        source = np.arange(x_arr.size).reshape(x_arr.shape)
        index = np.take(source, indices, axis=axis, mode=mode)
        return (_restore(_scatter(dy, index, x_arr), x) if isinstance(x, (list, tuple)) else
                unbroadcast(_scatter(dy, index, x_arr), x), None, *_nones(args))
    return np.take(x, indices, *args, **kwargs), back


adjoint(np.ndarray.take)(take)


@adjoint(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(x, window_shape, *args, **kwargs):
    """A read-only view of every window of `x` (convolutions and pooling written with it): each entry of `x` gets the
    cotangents of every window position it appears at. A writeable one (`writeable=True`) is refused: a write through
    it changes `x`, which its rule cannot see."""
    if kwargs.get("writeable"):
        raise ZygoteError(f"{call_site() or 'sliding_window_view'}: zygotepy cannot differentiate a writeable "
                          f"sliding_window_view (a write through it changes the array it views); make it read-only "
                          f"and write into the array itself")

    def back(dy):
        if dy is None:
            return (None, None, *_nones(args))
        x_arr = np.asarray(x)
        source = np.arange(x_arr.size).reshape(x_arr.shape)
        index = np.lib.stride_tricks.sliding_window_view(source, window_shape, *args[:1],
                                                         **{k: v for k, v in kwargs.items() if k == "axis"})
        return (_restore(_scatter(dy, index, x_arr), x) if isinstance(x, (list, tuple)) else _scatter(dy, index, x_arr),
                None, *_nones(args))
    return np.lib.stride_tricks.sliding_window_view(x, window_shape, *args, **kwargs), back


@adjoint(np.lib.stride_tricks.as_strided)
def as_strided(x, *args, **kwargs):
    """A view of a C-contiguous `x` with the strides given: each entry of `x` gets the cotangents of every position
    that reads it (the positions found from the strides, never from memory outside `x`, which NumPy would read)."""
    y = np.lib.stride_tricks.as_strided(x, *args, **kwargs)
    if not isinstance(x, np.ndarray) or not x.flags.c_contiguous or any(s % x.itemsize for s in y.strides):
        raise ZygoteError("np.lib.stride_tricks.as_strided: zygotepy differentiates views of a C-contiguous array "
                          "whose strides are whole elements; copy the array first (np.ascontiguousarray)")
    index = sum(np.arange(n).reshape((-1,) + (1,) * (y.ndim - 1 - k)) * (s // x.itemsize)
                for k, (n, s) in enumerate(zip(y.shape, y.strides))) + np.zeros(y.shape, dtype=np.intp)
    if index.size and (index.min() < 0 or index.max() >= x.size):
        raise ZygoteError("np.lib.stride_tricks.as_strided: the view reads memory outside its array")

    def back(dy):
        return (None if dy is None else _scatter(dy, index, x), *_nones(args))
    return y, back


@adjoint(np.take_along_axis)
def take_along_axis(x, indices, *args, **kwargs):
    axis = args[0] if args else kwargs.get("axis", -1)
    xp = namespace(x)
    if xp is not np:
        unknown = sorted(k for k, v in kwargs.items() if k != "axis" and v is not None)
        if unknown or len(args) > 1:
            raise ZygoteError(f"np.take_along_axis of another library's arrays: {', '.join(unknown) or 'mode'} is "
                              f"not supported")
        x_arr = xp.reshape(x, (-1,)) if axis is None else x
        along = 0 if axis is None else axis % x.ndim
        index = _in_bounds(xp, xp.asarray(indices, **on(x)), x_arr.shape[along], None, "take_along_axis")
        source = xp.take_along_axis(xp.reshape(_flat_indices(xp, x), tuple(x_arr.shape)), index, axis=along)
        return xp.take_along_axis(x_arr, index, axis=along), lambda dy: (
            None if dy is None else _scatter_into(x, source, dy), None, *_nones(args))

    def back(dy):
        if dy is None:
            return (None, None, *_nones(args))
        source = np.arange(x.size).reshape(x.shape)
        return (_scatter(dy, np.take_along_axis(source, indices, axis), x), None, *_nones(args))
    return np.take_along_axis(x, indices, *args, **kwargs), back


# computed with the namespace of their input: the array API (or JAX and torch under the same names) has them
namespace_generic(np.roll, np.sort, np.take, np.take_along_axis, np.pad,
                  # gathered through NumPy's run on x's flat indices
                  np.tile, np.repeat, np.rot90, np.delete, np.resize,
                  # a NumPy condition picks the flat indices
                  np.compress, np.extract)

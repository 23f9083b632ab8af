"""NumPy shape functions and array assembly beyond numpy.py's starter set: axis moves, flips and rolls, stacking and
splitting, tiling and padding, triangles and diagonals, sorting and taking, conversions (`np.float64(x)`, `np.copy`),
and the ndarray methods of the same names.

Functions that only move, copy or drop entries (tile, repeat, pad, delete, compress, resize, ...) share one rule,
`_gather`: the function is run once more on the flat indices of its input, and the cotangent is scattered back through
those indices with accumulation, so repeated entries sum their cotangents.
"""
import itertools
import math

import numpy as np

from ..backends import (
    function,
    is_foreign,
    namespace,
    namespace_of,
    on,
    on_any,
    scatter_add,
    unbroadcast,
)
from ..errors import ZygoteError
from .numpy import _permute, _restore, is_float
from .registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic


def _nones(args):
    return tuple(None for _ in args)


def _float_dtype(dtype):
    return dtype if dtype.kind in "fc" else np.float64


# --- moving, copying and dropping entries: scatter back through the indices ----------------------------------------------
def _scatter(dy, index, x):
    """The cotangent of `x` from `dy = x.flat[index]` (entries with a negative index came from elsewhere: a padding)."""
    dy = np.asarray(dy)
    index = np.asarray(index)
    keep = index >= 0
    size = max(x.size, 1)
    if dy.dtype.kind == "c":
        g = np.zeros(size, dtype=dy.dtype)
        np.add.at(g, index[keep], dy[keep])
    else:
        g = np.bincount(index[keep], weights=dy[keep], minlength=size).astype(_float_dtype(dy.dtype), copy=False)
    return g[:x.size].reshape(x.shape)


def _gather(fn, index_kwargs=lambda args, kwargs: kwargs):
    """Rule for `fn(x, *args)` that builds its output from x's entries; `index_kwargs` adapts the keywords for the run
    on x's flat indices (np.pad's constant fill becomes -1, "not from x")."""
    def rule(x, *args, **kwargs):
        if type(x) is not np.ndarray and is_foreign(x):
            return _foreign_gather(fn, x, args, kwargs)
        x_arr = np.asarray(x)
        y = fn(x, *args, **kwargs)

        def back(dy):
            if dy is None:
                return (None, *_nones(args))
            index = fn(np.arange(x_arr.size).reshape(x_arr.shape), *args, **index_kwargs(args, kwargs))
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


def _pad_index_kwargs(args, kwargs):
    mode = args[1] if len(args) > 1 else kwargs.get("mode", "constant")
    if not isinstance(mode, str) or mode not in _COPYING_MODES:
        raise ZygoteError(f"np.pad: no gradient rule for mode={mode!r} (supported: {sorted(_COPYING_MODES)})")
    return {**kwargs, "constant_values": -1} if mode == "constant" else kwargs


GATHERED = {np.tile: _gather(np.tile), np.repeat: _gather(np.repeat), np.ndarray.repeat: _gather(np.repeat),
            np.pad: _gather(np.pad, _pad_index_kwargs), np.delete: _gather(np.delete), np.resize: _gather(np.resize),
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
    if xp is np:
        y, back = GATHERED[np.pad](x, pad_width, *args, **kwargs)
        return y, _with_fill(back, np.shape(x), pad_width, mode, kwargs)
    y, back = _foreign_pad(xp, x, pad_width, mode, args, kwargs)
    return y, lambda dy: keyword_cotangents(back(dy), kwargs)


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
        sums = np.bincount(labels[labels >= 0], weights=np.asarray(dy)[labels >= 0].real, minlength=2 * ndim)
        if np.iscomplexobj(dy):
            sums = sums + 1j * np.bincount(labels[labels >= 0], weights=np.asarray(dy)[labels >= 0].imag,
                                           minlength=2 * ndim)
        return keyword_cotangents(grads, kwargs, constant_values=_like_fill(sums.reshape(ndim, 2), fill))
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
    if xp is np:
        return GATHERED[np.roll](x, shift, *args, **kwargs)
    axis = args[0] if args else kwargs.get("axis")
    back_shift = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return xp.roll(x, shift, axis=axis), lambda dy: (None if dy is None else xp.roll(dy, back_shift, axis=axis),
                                                     None, *_nones(args))


# --- permutations whose inverse is one call ------------------------------------------------------------------------------
@adjoint(np.moveaxis)
def moveaxis(x, source, destination):
    xp = namespace(x)
    return xp.moveaxis(x, source, destination), lambda dy: (
        None if dy is None else namespace(dy).moveaxis(dy, destination, source), None, None)


def _swap(ndim, a, b):
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


@adjoint(np.swapaxes)
def swapaxes(x, axis1, axis2):
    if namespace(x) is not np:  # the array API has no swapaxes: a permutation (its own inverse)
        perm = _swap(x.ndim, axis1, axis2)
        return _permute(x, perm), lambda dy: (None if dy is None else _permute(dy, perm), None, None)
    return np.swapaxes(x, axis1, axis2), lambda dy: (
        None if dy is None else namespace(dy).swapaxes(dy, axis1, axis2), None, None)


adjoint(np.ndarray.swapaxes)(swapaxes)


@adjoint(np.matrix_transpose)
def matrix_transpose(x):
    xp = namespace(x)
    if xp is not np:
        return xp.matrix_transpose(x), lambda dy: (None if dy is None else xp.matrix_transpose(dy),)
    return np.matrix_transpose(x), lambda dy: (None if dy is None else namespace(dy).swapaxes(dy, -1, -2),)


@adjoint(np.flip)
def flip(x, *args, **kwargs):
    xp = namespace(x)
    if xp is not np:  # the array API's flip takes axis as a keyword
        kwargs = {**dict(zip(("axis",), args)), **kwargs}
        return xp.flip(x, **kwargs), lambda dy: (None if dy is None else xp.flip(dy, **kwargs), *_nones(args))
    return np.flip(x, *args, **kwargs), lambda dy: (None if dy is None else np.flip(dy, *args, **kwargs),
                                                     *_nones(args))


def _flip_along(fn, axis):
    """fliplr and flipud are flips of one axis (NumPy's own flip gives the same view; the array API has only flip)."""
    def rule(x):
        xp = namespace(x)
        return xp.flip(x, axis=axis), lambda dy: (None if dy is None else xp.flip(dy, axis=axis),)
    rule.__qualname__ = f"{fn.__name__}_rule"
    return adjoint(fn)(rule)


fliplr = _flip_along(np.fliplr, 1)
flipud = _flip_along(np.flipud, 0)


def _triangle(fn):
    """np.tril / np.triu: the cotangent keeps the same triangle (the array API takes k as a keyword)."""
    def rule(x, *k, **kwargs):
        xp = namespace(x)
        if xp is not np:
            kw = {**dict(zip(("k",), k)), **kwargs}
            f = getattr(xp, fn.__name__)
            return f(x, **kw), lambda dy: (None if dy is None else f(dy, **kw), *_nones(k))
        return fn(x, *k, **kwargs), lambda dy: (None if dy is None else fn(dy, *k, **kwargs), *_nones(k))
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


tril = adjoint(np.tril)(_triangle(np.tril))
triu = adjoint(np.triu)(_triangle(np.triu))


@adjoint(np.broadcast_to)
def broadcast_to(x, shape):
    xp = namespace(x)
    if xp is not np:
        return xp.broadcast_to(x, tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)), \
            lambda dy: (unbroadcast(dy, x), None)
    return np.broadcast_to(x, shape), lambda dy: (unbroadcast(dy, x), None)


@adjoint(np.broadcast_arrays)
def broadcast_arrays(*arrays):
    def back(dy):
        if dy is None:
            return _nones(arrays)
        return tuple(unbroadcast(d, a) for d, a in zip(dy, arrays, strict=True))
    xp = namespace_of(*arrays)
    if xp is not np:
        where = on_any(*arrays)
        return xp.broadcast_arrays(*(xp.asarray(a, **where) for a in arrays)), back
    return np.broadcast_arrays(*arrays), back


@adjoint(np.meshgrid)
def meshgrid(*xi, **kwargs):
    """Output k repeats xi[k] along every other axis: its cotangent sums over them (with indexing="xy" the first two
    axes are swapped)."""
    n = len(xi)
    xp = namespace_of(*xi)
    if xp is not np:
        return _meshgrid_foreign(xp, xi, kwargs)
    ys = np.meshgrid(*xi, **kwargs)

    def back(dy):
        if dy is None:
            return _nones(xi)
        grads = []
        for k, (d, x) in enumerate(zip(dy, xi, strict=True)):
            axis = {0: 1, 1: 0}.get(k, k) if kwargs.get("indexing", "xy") == "xy" and n > 1 else k
            grads.append(None if d is None else np.reshape(
                np.sum(d, axis=tuple(a for a in range(n) if a != axis)), np.shape(x)))
        return tuple(grads)
    return ys, back


def _meshgrid_foreign(xp, xi, kwargs):
    """np.meshgrid in another library's namespace: each flattened xi reshaped along its axis and broadcast to the grid
    (sparse=True keeps the reshaped arrays); the cotangent sums over the other axes."""
    indexing, sparse = kwargs.get("indexing", "xy"), kwargs.get("sparse", False)
    if set(kwargs) - {"indexing", "sparse", "copy"} or indexing not in ("xy", "ij"):
        raise ZygoteError(f"np.meshgrid of another library's arrays: unsupported arguments {kwargs}")
    where = next((on(x) for x in xi if on(x)), {})  # the device of the inputs that are arrays of xp
    flat = [xp.reshape(xp.asarray(x, **where), (-1,)) for x in xi]
    n = len(flat)
    axes = [({0: 1, 1: 0}.get(k, k) if indexing == "xy" and n > 1 else k) for k in range(n)]
    sizes = [0] * n
    for k, f in enumerate(flat):
        sizes[axes[k]] = f.shape[0]
    ys = []
    for k, f in enumerate(flat):
        y = xp.reshape(f, tuple(-1 if a == axes[k] else 1 for a in range(n)))
        ys.append(y if sparse else xp.broadcast_to(y, tuple(sizes)))

    def back(dy):
        if dy is None:
            return _nones(xi)
        return tuple(None if d is None else xp.reshape(xp.sum(d, axis=tuple(a for a in range(n) if a != axes[k])),
                                                          tuple(np.shape(x) if not hasattr(x, "shape") else x.shape))
                     for k, (d, x) in enumerate(zip(dy, xi, strict=True)))
    return tuple(ys), back


# --- sorting and taking ----------------------------------------------------------------------------------------------------
@adjoint(np.sort)
def sort(x, *args, **kwargs):
    """y = take_along_axis(x, argsort(x)): the cotangent goes back through the inverse permutation."""
    axis = args[0] if args else kwargs.get("axis", -1)
    xp = namespace(x)
    if xp is np:
        x_arr = np.asarray(x) if axis is not None else np.ravel(x)
        order = np.argsort(x_arr, axis=-1 if axis is None else axis, kind="stable")
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
        x_arr = np.asarray(x)
        source = np.arange(x_arr.size).reshape(x_arr.shape)
        index = np.take(source, indices, axis=axis, mode=mode)
        return (_restore(_scatter(dy, index, x_arr), x) if isinstance(x, (list, tuple)) else
                unbroadcast(_scatter(dy, index, x_arr), x), None, *_nones(args))
    return np.take(x, indices, *args, **kwargs), back


adjoint(np.ndarray.take)(take)


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


# --- diagonals -------------------------------------------------------------------------------------------------------------
@adjoint(np.diagonal)
def diagonal(x, *args, **kwargs):
    """The diagonal is the last axis of the output: scatter it back through x's flat indices."""
    if type(x) is not np.ndarray and is_foreign(x):
        return _foreign_gather(np.diagonal, x, args, kwargs)
    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        source = np.arange(x.size).reshape(x.shape)
        return (_scatter(dy, np.diagonal(source, *args, **kwargs), x), *_nones(args))
    return np.diagonal(x, *args, **kwargs), back


adjoint(np.ndarray.diagonal)(diagonal)


@adjoint(np.diag)
def diag(v, *k, **kwargs):
    """A 1-d v becomes a matrix (its cotangent is the diagonal of dy); a matrix gives its diagonal."""
    if type(v) is not np.ndarray and is_foreign(v):
        return _foreign_gather(np.diag, v, k, kwargs)
    v_arr = np.asarray(v)

    def back(dy):
        if dy is None:
            return (None, *_nones(k))
        if v_arr.ndim == 1:
            return (np.diag(dy, *k, **kwargs), *_nones(k))
        return (_scatter(dy, np.diag(np.arange(v_arr.size).reshape(v_arr.shape), *k, **kwargs), v_arr), *_nones(k))
    return np.diag(v, *k, **kwargs), back


@adjoint(np.diagflat)
def diagflat(v, *k, **kwargs):
    if type(v) is not np.ndarray and is_foreign(v):
        return _foreign_gather(np.diagflat, v, k, kwargs)
    return np.diagflat(v, *k, **kwargs), lambda dy: (
        None if dy is None else np.reshape(np.diag(dy, *k, **kwargs), np.shape(v)), *_nones(k))


# --- assembling and splitting --------------------------------------------------------------------------------------------
def _split_back(dy, lifted, originals, axis):
    """The cotangents of arrays concatenated along `axis` after lifting (atleast_nd, columns), in their own shapes."""
    xp = namespace(dy)
    sizes = [tuple(a.shape)[axis] if hasattr(a, "shape") else np.shape(a)[axis] for a in lifted]
    if xp is np:
        parts = np.split(dy, list(np.cumsum(sizes)[:-1]), axis=axis)
    else:
        parts = _slices(dy, sizes, axis)
    grads = [xp.reshape(p, tuple(a.shape) if hasattr(a, "shape") else np.shape(a))
             for p, a in zip(parts, originals, strict=True)]
    return type(originals)(grads) if isinstance(originals, (list, tuple)) else grads


def _slices(x, sizes, axis):
    """x cut along `axis` into consecutive pieces of the given sizes (the array API has no split: basic slices)."""
    lead = (slice(None),) * (axis % x.ndim)
    starts = np.cumsum([0, *sizes])
    return [x[(*lead, slice(int(a), int(b)), ...)] for a, b in itertools.pairwise(starts)]


def _atleast(x, n):
    """NumPy's atleast_1d/2d/3d of another library's array: (N,) -> (1, N) -> (1, N, 1); (M, N) -> (M, N, 1)."""
    shape = tuple(x.shape)
    if len(shape) >= n:
        return x
    new = {0: (1,) * n, 1: {1: shape, 2: (1, *shape), 3: (1, *shape, 1)}[n], 2: (*shape, 1)}[len(shape)]
    return namespace(x).reshape(x, new)


_LIFTS = {np.atleast_1d: 1, np.atleast_2d: 2, np.atleast_3d: 3}


def _stacker(fn, lift, axis_of):
    def rule(arrays, *args, **kwargs):
        xp = namespace_of(*arrays) if isinstance(arrays, (list, tuple)) else np
        if xp is not np:  # concatenated in x's namespace after lifting
            if args or any(v is not None for v in kwargs.values()):
                raise ZygoteError(f"np.{fn.__name__} of another library's arrays: dtype and casting are not supported")
            where = next((on(a) for a in arrays if on(a)), {})  # the device of the arrays of xp
            arrays_ = [xp.asarray(a, **where) for a in arrays]
            lifted = [xp.reshape(a, (-1, 1)) if lift is _column and a.ndim < 2 else a if lift is _column
                      else _atleast(a, _LIFTS[lift]) for a in arrays_]
            axis = axis_of(lifted)
            return function(np.concatenate, xp)(lifted, axis=axis), lambda dy: (
                None if dy is None else _split_back(dy, lifted, arrays, axis),)
        lifted = [lift(a) for a in arrays]
        axis = axis_of(lifted)

        def back(dy):
            if dy is None:
                return (None, *_nones(args))
            return (_split_back(dy, lifted, arrays, axis), *_nones(args))
        return fn(arrays, *args, **kwargs), back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _column(a):
    a = np.asarray(a)
    return a.reshape(-1, 1) if a.ndim < 2 else a


STACKERS = {
    np.hstack: _stacker(np.hstack, np.atleast_1d, lambda ls: 0 if ls[0].ndim == 1 else 1),
    np.vstack: _stacker(np.vstack, np.atleast_2d, lambda ls: 0),
    np.dstack: _stacker(np.dstack, np.atleast_3d, lambda ls: 2),
    np.column_stack: _stacker(np.column_stack, _column, lambda ls: 1),
}
for _fn, _rule in STACKERS.items():
    adjoint(_fn)(_rule)


@adjoint(np.append)
def append(arr, values, *args, **kwargs):
    """concatenate((arr, values), axis), both flattened when axis is None."""
    axis = args[0] if args else kwargs.get("axis")
    xp = namespace_of(arr, values)
    if xp is not np:
        where = on(arr) or on(values)
        originals = xp.asarray(arr, **where), xp.asarray(values, **where)
        parts = [xp.reshape(o, (-1,)) for o in originals] if axis is None else list(originals)
        along = 0 if axis is None else axis
        return function(np.concatenate, xp)(parts, axis=along), lambda dy: (
            (None, None) if dy is None else tuple(unbroadcast(xp.reshape(p, tuple(o.shape)), o) for p, o in zip(
                _slices(dy, [t.shape[along] for t in parts], along), originals, strict=True))) + _nones(args)

    def back(dy):
        if dy is None:
            return (None, None, *_nones(args))
        if axis is None:
            n = np.size(arr)
            return (np.reshape(dy[:n], np.shape(arr)), unbroadcast(np.reshape(dy[n:], np.shape(values)), values),
                    *_nones(args))
        return (*_split_back(dy, [np.asarray(arr), np.asarray(values)], (arr, values), axis), *_nones(args))
    return np.append(arr, values, *args, **kwargs), back


def _splitter(fn, axis_of):
    """split-like functions: the cotangent is the concatenation of the pieces' cotangents (zeros for unused pieces)."""
    def rule(x, *args, **kwargs):
        axis = axis_of(np.ndim(x), args, kwargs)
        if type(x) is not np.ndarray and is_foreign(x):  # the pieces' sizes from NumPy's split of a shape-only array
            xp = namespace(x)
            sizes = [p.shape[axis] for p in fn(np.broadcast_to(np.int8(0), tuple(x.shape)), *args, **kwargs)]
            pieces = _slices(x, sizes, axis)

            def back_foreign(dy):
                if dy is None or all(d is None for d in dy):
                    return (None, *_nones(args))
                parts = [xp.zeros_like(p) if d is None else d for d, p in zip(dy, pieces, strict=True)]
                return (function(np.concatenate, xp)(parts, axis=axis), *_nones(args))
            return pieces, back_foreign
        pieces = fn(x, *args, **kwargs)

        def back(dy):
            if dy is None or all(d is None for d in dy):
                return (None, *_nones(args))
            xp = namespace(x)
            parts = [xp.zeros_like(p, dtype=_float_dtype(p.dtype)) if d is None else d
                     for d, p in zip(dy, pieces, strict=True)]
            return (xp.concatenate(parts, axis=axis), *_nones(args))
        return pieces, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _split_axis(ndim, args, kwargs):
    return args[1] if len(args) > 1 else kwargs.get("axis", 0)


SPLITTERS = {np.split: _splitter(np.split, _split_axis), np.array_split: _splitter(np.array_split, _split_axis),
             np.hsplit: _splitter(np.hsplit, lambda ndim, a, k: 1 if ndim > 1 else 0),
             np.vsplit: _splitter(np.vsplit, lambda ndim, a, k: 0),
             np.dsplit: _splitter(np.dsplit, lambda ndim, a, k: 2)}
for _fn, _rule in SPLITTERS.items():
    adjoint(_fn)(_rule)

if hasattr(np, "unstack"):
    @adjoint(np.unstack)
    def unstack(x, **kwargs):
        xp = namespace(x)
        if xp is not np:
            pieces = xp.unstack(x, **kwargs)
            return pieces, lambda dy: ((None,) if dy is None or all(d is None for d in dy) else (xp.stack(
                [xp.zeros_like(p) if d is None else d for d, p in zip(dy, pieces, strict=True)],
                axis=kwargs.get("axis", 0)),))
        pieces = np.unstack(x, **kwargs)

        def back(dy):
            if dy is None or all(d is None for d in dy):
                return (None,)
            parts = [np.zeros_like(p, dtype=_float_dtype(p.dtype)) if d is None else d
                     for d, p in zip(dy, pieces, strict=True)]
            return (np.stack(parts, axis=kwargs.get("axis", 0)),)
        return pieces, back


# --- conversions and copies ------------------------------------------------------------------------------------------------
def _converter(fn):
    """`np.float64(x)`, `np.copy(x)`, `np.ascontiguousarray(x)`, ...: same values, maybe another dtype; the cotangent
    returns in the argument's own form (Python float, list, array dtype). A float32 cast of a float64 keeps the
    float32 rounding in the forward pass; the gradient is that of the identity."""
    def rule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)

        def back(dy):
            if dy is None:
                return (None, *_nones(args))
            if isinstance(x, (list, tuple)):
                return (_restore(np.asarray(dy), x), *_nones(args))
            g = unbroadcast(np.reshape(dy, np.shape(x)) if np.ndim(dy) else dy, x)
            dtype = getattr(x, "dtype", None)
            if dtype is not None and dtype.kind in "fc" and getattr(g, "dtype", dtype) != dtype:
                g = g.astype(dtype) if hasattr(g, "astype") else dtype.type(g)
            elif type(x) is float and type(g) is not float:
                g = float(np.real(g))
            return (g, *_nones(args))
        return y, back
    rule.__qualname__ = f"{getattr(fn, '__name__', 'convert')}_rule"
    return rule


for _fn in (np.float64, np.float32, np.complex128, np.copy, np.asanyarray,
            np.ascontiguousarray, np.asfortranarray, np.atleast_1d, np.atleast_2d, np.atleast_3d):
    adjoint(_fn)(_converter(_fn))


def _lift_rule(fn):
    """np.atleast_1d/2d/3d: NumPy's converter rule; another library's array is reshaped in its namespace."""
    numpy_rule, n = _converter(fn), _LIFTS[fn]

    def rule(*arys):
        if len(arys) == 1 and type(arys[0]) is not np.ndarray and is_foreign(arys[0]):
            x = arys[0]
            return _atleast(x, n), lambda dy: (None if dy is None else namespace(x).reshape(dy, tuple(x.shape)),)
        return numpy_rule(*arys)
    rule.__qualname__ = f"{fn.__name__}_rule"
    return adjoint(fn)(rule)


for _fn in _LIFTS:
    _lift_rule(_fn)


def item(x, *index):
    """`x.item()`, `x.item(k)`, `x.item(i, j)`, `x.item((i, j))`: a Python number; its cotangent is one entry of a zero
    array (found by asking the same question of an array of flat positions, so every form NumPy accepts means the same
    here), or a number for a NumPy scalar (`np.float64(2.0).item()`)."""
    def back(dy):
        if dy is None:
            return (None, *_nones(index))
        dtype = _float_dtype(x.dtype) if not isinstance(dy, complex) else np.complex128
        if isinstance(x, np.generic):
            return (np.dtype(dtype).type(dy), *_nones(index))
        g = np.zeros(x.shape, dtype=dtype)
        g.flat[np.arange(x.size).reshape(x.shape).item(*index)] = dy
        return (g, *_nones(index))
    return x.item(*index), back


adjoint(np.ndarray.item)(item)
adjoint(np.generic.item)(item)


@adjoint(np.ndarray.tolist)
def tolist(x):
    def back(dy):
        if dy is None:
            return (None,)
        return (np.asarray(_zero_nones(dy, x.shape), dtype=_float_dtype(x.dtype)),)
    return x.tolist(), back


def _zero_nones(dy, shape):
    if dy is None:
        return np.zeros(shape)
    if isinstance(dy, (list, tuple)):
        return [_zero_nones(d, shape[1:]) for d in dy]
    return dy



# computed with the namespace of their input: the array API (or JAX and torch under the same names) has them
namespace_generic(np.roll, np.moveaxis, np.swapaxes, np.matrix_transpose, np.flip, np.fliplr, np.flipud, np.tril,
                  np.triu, np.broadcast_to, np.broadcast_arrays, np.sort, np.take, np.take_along_axis, np.pad,
                  # gathered through NumPy's run on x's flat indices; assembled and cut with concat and slices
                  np.tile, np.repeat, np.rot90, np.delete, np.resize, np.diagonal, np.diag, np.diagflat, *STACKERS,
                  np.append, *SPLITTERS, *_LIFTS, *((np.unstack,) if hasattr(np, "unstack") else ()),
                  # a NumPy condition picks the flat indices; the grid's pieces reshaped and broadcast
                  np.compress, np.extract, np.meshgrid)

"""Assembling and splitting NumPy arrays: concatenate, stack, hstack/vstack/dstack/column_stack, append, insert,
block, split/array_split/hsplit/vsplit/dsplit and NumPy 2's unstack. An assembly's cotangent is cut back into the pieces'
shapes; a split's is the concatenation of the pieces' cotangents (zeros for pieces that have none).
"""
import itertools
import math

import numpy as np

from ...backends import function, is_foreign, namespace, namespace_of, on, unbroadcast
from ...errors import ZygoteError
from ...forward.dual import dispatch, has_dual
from ..registry import adjoint, namespace_generic
from .common import _float_dtype, _nones, _restore, _shape, arrayed
from .conversions import _LIFTS, _atleast


# --- concatenate and stack --------------------------------------------------------------------------------------------
@adjoint(np.concatenate)
def concatenate(arrays, *args, **kwargs):
    axis = args[0] if args else kwargs.get("axis", 0)
    pieces = arrays  # (`[t]` holding a dual number, which NumPy's dispatch does not look into: made its array first)
    if isinstance(arrays, (list, tuple)) and has_dual((arrays,)):
        pieces = [dispatch(np.array, (a,), {}) if isinstance(a, (list, tuple)) else a for a in arrays]
    shapes = [_shape(a) for a in pieces]
    xp = namespace_of(*pieces)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        if axis is None:  # the arrays were flattened first
            parts, start = [], 0
            for s in shapes:
                parts.append(xp.reshape(dy[start:start + math.prod(s)], s))
                start += math.prod(s)
        else:  # slices of dy along the axis, one per array
            ax, parts, start = axis % len(dy.shape), [], 0
            for s in shapes:
                parts.append(dy[(slice(None),) * ax + (slice(start, start + s[ax]), ...)])
                start += s[ax]
        return (type(arrays)(parts) if isinstance(arrays, (list, tuple)) else parts, *(None for _ in args))
    if xp is np:
        return np.concatenate(pieces, *args, **kwargs), back
    return function(np.concatenate, xp)(arrays, **{**dict(zip(("axis",), args)), **kwargs}), back


@adjoint(np.stack)
def stack(arrays, *args, **kwargs):
    axis = args[0] if args else kwargs.get("axis", 0)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        ax = axis % len(dy.shape)
        parts = [dy[(slice(None),) * ax + (k, ...)] for k in range(len(arrays))]
        return (type(arrays)(parts) if isinstance(arrays, (list, tuple)) else parts, *(None for _ in args))
    xp = namespace_of(*arrays)
    if xp is np:
        return np.stack(arrays, *args, **kwargs), back
    return xp.stack(arrays, **{**dict(zip(("axis",), args)), **kwargs}), back


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
    if not hasattr(a, "ndim"):  # (numbers and lists; an array, or `hessian`'s dual array, as it is)
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


def _labelled_back(dy, labels, sources):
    """The cotangents of the `sources` (arrays or numbers, in a flat list) of an assembly whose entries came from the
    flat positions `labels` of the sources laid end to end (the assembly run on their labels): dy scattered back."""
    dy = arrayed(dy)
    sizes = [int(np.size(s)) for s in sources]
    total = np.zeros(sum(sizes), np.result_type(dy.dtype, float))
    np.add.at(total, labels.reshape(-1), dy.reshape(-1))
    grads, start = [], 0
    for size, source in zip(sizes, sources, strict=True):
        g = total[start:start + size].reshape(np.shape(source))
        g = g if np.iscomplexobj(source) else g.real
        grads.append(_restore(g[()] if isinstance(source, (int, float)) else g, source))
        start += size
    return grads


def _labels_like(sources):
    """Each source's flat positions in the sources laid end to end, shaped like it (a number: a 0-d array)."""
    labels, start = [], 0
    for source in sources:
        size = int(np.size(source))
        labels.append(np.arange(start, start + size).reshape(np.shape(source)))
        start += size
    return labels


@adjoint(np.insert)
def insert(arr, obj, values, *args, **kwargs):
    """arr with values inserted before the indices obj: the entries of both are placed where NumPy's insert of their
    labels places them (values broadcast to the inserted block share their cotangent: its sum)."""
    y = np.insert(arr, obj, values, *args, **kwargs)

    def back(dy):
        if dy is None:
            return (None, None, None, *_nones(args))
        label_arr, label_values = _labels_like((arr, values))
        labels = np.insert(label_arr, obj, label_values, *args, **kwargs)
        darr, dvalues = _labelled_back(dy, labels, (arr, values))
        return (darr, None, dvalues, *_nones(args))
    return y, back


def _leaves(blocks):
    """The arrays and numbers of np.block's nested lists, in order."""
    if isinstance(blocks, list):
        return [leaf for item in blocks for leaf in _leaves(item)]
    return [blocks]


def _rebuild(blocks, leaves):
    """The nested lists of `blocks` with their leaves taken, in order, from the iterator `leaves`."""
    if isinstance(blocks, list):
        return [_rebuild(item, leaves) for item in blocks]
    return next(leaves)


@adjoint(np.block)
def block(arrays):
    """The assembly of nested lists of arrays: each piece's cotangent is read where NumPy's block of the pieces' labels
    places them, so its promotions (leading axes of 1) and concatenations need no copy here."""
    leaves = _leaves(arrays)
    y = np.block(arrays)

    def back(dy):
        if dy is None:
            return (None,)
        labels = np.block(_rebuild(arrays, iter(_labels_like(leaves))))
        return (_rebuild(arrays, iter(_labelled_back(dy, labels, leaves))),)
    return y, back


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


# computed with the namespace of their input: assembled and cut with concat and slices
namespace_generic(np.concatenate, np.stack, *STACKERS, np.append, *SPLITTERS,
                  *((np.unstack,) if hasattr(np, "unstack") else ()))

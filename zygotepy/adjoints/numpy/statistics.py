"""NumPy's order statistics and weighted or nan-ignoring reductions: ptp, median, average with weights, nansum,
nanprod, nanmean, nanvar, nanstd, nanmax and nanmin, with `axis` and `keepdims`. The cotangent goes to the entries that were
picked (ties share it) or weighted.
"""
import math

import numpy as np

from ...backends import asarray, conj, namespace, on, unbroadcast
from ...errors import ZygoteError
from ..registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic
from .common import (
    _axes,
    _axis_keepdims,
    _expand,
    _float,
    _foreign_keywords,
    _initial,
    _nones,
    _restore,
    nan_filled,
    _where,
    arrayed,
    as_axes,
    is_float,
)
from .elementwise import as_operand
from .reductions import _extremum, prod


# --- order statistics: the cotangent goes to the entries that were picked (ties share it) ------------------------------
@adjoint(np.ptp)
def ptp(x, *args, **kwargs):
    """max - min (of a list's array: the two picks' cotangents are subtracted)."""
    x = as_operand(x)
    axis, keepdims = _axis_keepdims(args, kwargs, 2)
    y_max, back_max = _extremum(np.max)(x, axis=axis, keepdims=keepdims)
    y_min, back_min = _extremum(np.min)(x, axis=axis, keepdims=keepdims)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        return (back_max(dy)[0] - back_min(dy)[0], *_nones(args))
    if namespace(x) is not np:  # the array API has no ptp: its max - min
        if len(args) > 2 or set(kwargs) - {"axis", "keepdims"}:
            raise ZygoteError("np.ptp of another library's arrays takes axis and keepdims only")
        return y_max - y_min, back
    return np.ptp(x, *args, **kwargs), back


def _sorted_slices(x_arr, axis):
    """x with the axes `axis` (all for None) moved last and flattened into one: (moved shape, flat slices)."""
    xp = namespace(x_arr)
    axes = _axes(axis, x_arr.ndim)
    last = tuple(range(x_arr.ndim - len(axes), x_arr.ndim))
    moved = xp.moveaxis(x_arr, axes, last)
    return axes, last, moved, xp.reshape(moved, (*moved.shape[:x_arr.ndim - len(axes)], -1))


def _middle(xp, n, dtype, like):
    """The weights of a median on a sorted slice of n entries: 1/2 on each of the (one or two) middle ones."""
    middle = (np.arange(n) == (n - 1) // 2) * 0.5 + (np.arange(n) == n // 2) * 0.5
    return xp.asarray(middle.astype(np.float32) if str(dtype).endswith("float32") else middle, dtype=dtype,
                      **on(like))


@adjoint(np.median)
def median(x, *args, **kwargs):
    """The middle entry of each sorted slice, or the mean of the two middle ones (another library's arrays: from its
    sort, so that every namespace computes NumPy's median)."""
    x_arr = _float(x)
    axis = args[0] if args else kwargs.get("axis")  # keepdims needs nothing: dy is reshaped to the kept axes
    xp = namespace(x_arr)
    dtype = x_arr.dtype if is_float(x_arr) else (np.float64 if xp is np else xp.float64)
    if xp is np:  # overwrite_input only lets NumPy reorder x in place: without it, the back sorts x as it was
        kept = {k: v for k, v in kwargs.items() if k != "overwrite_input"}
        y = np.median(x_arr, *(args[:2] + (False,) + args[3:] if len(args) > 2 else args), **kept)
    else:
        kw = _foreign_keywords("median", ("axis", "out", "overwrite_input", "keepdims"), args, kwargs,
                               ("axis", "overwrite_input", "keepdims"))
        axes, _, _, flat = _sorted_slices(x_arr, axis)
        y = xp.sum(xp.sort(xp.astype(flat, dtype), axis=-1) * _middle(xp, flat.shape[-1], dtype, flat), axis=-1)
        if kw.get("keepdims"):
            y = xp.reshape(y, tuple(1 if k in axes else n for k, n in enumerate(x_arr.shape)))

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        axes, last, moved, flat = _sorted_slices(x_arr, axis)
        order = xp.argsort(flat, axis=-1)
        d = xp.reshape(asarray(xp, dy, flat), flat.shape[:-1])
        g = xp.take_along_axis(d[..., None] * _middle(xp, flat.shape[-1], dtype, flat), xp.argsort(order, axis=-1), axis=-1)
        g = xp.moveaxis(xp.reshape(g, moved.shape), last, axes)
        return (_restore(g, x), *_nones(args))
    return y, back


@adjoint(np.nanmedian)
def nanmedian(x, *args, **kwargs):
    """The median of each slice's entries that are not NaN: their middle one, or the mean of the two middle ones (NaNs
    sort last, so those are at ranks (n - 1) // 2 and n // 2 of the n present); a slice of NaNs only gives NaN, and no
    cotangent. `out=` is refused; overwrite_input only lets NumPy reorder x in place: the rule computes without it."""
    if (args[1] if len(args) > 1 else kwargs.get("out")) is not None:
        raise ZygoteError("np.nanmedian: out= is not differentiable")
    x_arr = _float(x)
    axis = args[0] if args else kwargs.get("axis")
    kept = {k: v for k, v in kwargs.items() if k != "overwrite_input"}
    y = np.nanmedian(x_arr, *(args[:2] + (False,) + args[3:] if len(args) > 2 else args), **kept)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        axes, last, moved, flat = _sorted_slices(x_arr, axis)
        order = np.argsort(flat, axis=-1)  # (NaNs last)
        n = np.sum(~np.isnan(flat), axis=-1, keepdims=True)
        rank = np.arange(flat.shape[-1])
        middle = ((rank == (n - 1) // 2) * 0.5 + (rank == n // 2) * 0.5) * (n > 0)
        d = np.reshape(arrayed(dy), flat.shape[:-1])
        g = np.take_along_axis(d[..., None] * middle.astype(x_arr.dtype if x_arr.dtype.kind == "f" else np.float64),
                                np.argsort(order, axis=-1), axis=-1)
        return (_restore(np.moveaxis(g.reshape(moved.shape), last, axes), x), *_nones(args))
    return y, back


# --- weighted and nan-ignoring means and sums --------------------------------------------------------------------------
def _aligned(weights, x_arr, axis):
    """The weights as np.average lines them up with x (x's shape, or x's shape along `axis`, an int or a tuple in the
    order given, with ones elsewhere), and the map of a cotangent of that shape back to the weights' shape."""
    xp = namespace(x_arr)
    w = xp.asarray(weights, **on(x_arr))
    if tuple(w.shape) == tuple(x_arr.shape):
        return w, lambda g: g
    axes = tuple(a % x_arr.ndim for a in as_axes(axis))
    order = tuple(int(k) for k in np.argsort(axes))
    moved = tuple(w.shape[k] for k in order)
    kept = tuple(n if k in axes else 1 for k, n in enumerate(x_arr.shape))
    return (xp.reshape(xp.permute_dims(w, order), kept),
            lambda g: xp.permute_dims(xp.reshape(g, moved), tuple(int(k) for k in np.argsort(order))))


@keyword_rule
@adjoint(np.average)
def average(x, *args, **kwargs):
    """sum(w x) / sum(w): d/dx = w / sum(w), d/dw = (x - average) / sum(w); `returned=True` also returns sum(w)."""
    x_arr = _float(x)
    axis = args[0] if args else kwargs.get("axis")
    weights = args[1] if len(args) > 1 else kwargs.get("weights")
    returned = args[2] if len(args) > 2 else kwargs.get("returned", False)
    keepdims = kwargs.get("keepdims", False)
    if namespace(x_arr) is np:
        result = np.average(x, *args, **kwargs)
    else:  # the array API has no average: sum(w x) / sum(w), the weights along `axis` when not shaped like x
        xp = namespace(x_arr)
        w = xp.ones_like(x_arr) if weights is None else _aligned(weights, x_arr, axis)[0]
        sw = xp.sum(w * xp.ones_like(x_arr), axis=axis, keepdims=keepdims)
        result = xp.sum(w * x_arr, axis=axis, keepdims=keepdims) / sw
        if returned:
            result = (result, xp.broadcast_to(sw, tuple(result.shape)))

    def back(dy):
        dy, dsw = dy if returned and dy is not None else (dy, None)
        if dy is None and dsw is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        xp = namespace(x_arr)
        w, restore = (xp.ones_like(x_arr), None) if weights is None else _aligned(weights, x_arr, axis)
        sw = xp.sum(w * xp.ones_like(x_arr), axis=axis, keepdims=True)
        y = xp.sum(w * x_arr, axis=axis, keepdims=True) / sw
        d = _expand(dy, x_arr, axis, keepdims) / conj(sw) if dy is not None else 0  # (complex weights: 1/sum(w)'s)
        dx = unbroadcast(d * conj(w), x_arr) if dy is not None else None
        dw = None
        if weights is not None:
            dw = d * conj(x_arr - y)
            if dsw is not None:
                dw = dw + _expand(dsw, x_arr, axis, keepdims)
            dw = restore(unbroadcast(dw, w))
        return keyword_cotangents((_restore(dx, x), *((dw if k == 1 else None) for k in range(len(args)))), kwargs,
                                  weights=dw)
    return result, back


def _present(x_arr, where):
    """The entries a nan-reduction counts: not NaN, and selected by `where` (None: all)."""
    xp = namespace(x_arr)
    present = ~xp.isnan(x_arr)
    return present if where is None else present & (where if xp is np else xp.asarray(where, **on(present)))


def _nan_reduction(fn, mean):
    """nansum and nanmean: dy (over the count of entries, for the mean) reaches the entries present, nothing else;
    nansum's `initial=` is added once to each output entry (its cotangent: the sum of dy). Another library's arrays: a
    sum of x with its NaNs (and the entries `where=` leaves out) replaced by zeros."""
    def rule(x, *args, **kwargs):
        x_arr = _float(x)
        axis, keepdims = _axis_keepdims(args, kwargs, 3)
        initial = _initial(args, kwargs, 4) if not mean else np._NoValue
        xp = namespace(x_arr)
        if xp is np:
            y = fn(x, *args, **kwargs)
        else:
            kw = _foreign_keywords(fn.__name__, ("axis", "dtype", "out", "keepdims", "initial", "where"), args, kwargs,
                                   ("axis", "keepdims", "where"))
            present = _present(x_arr, kw.get("where"))
            y = xp.sum(xp.where(present, x_arr, xp.zeros_like(x_arr)), axis=axis, keepdims=keepdims)
            if mean:
                y = y / xp.sum(xp.astype(present, x_arr.dtype), axis=axis, keepdims=keepdims)

        def back(dy):
            if dy is None:
                return keyword_cotangents((None, *_nones(args)), kwargs)
            present = _present(x_arr, _where(args, kwargs, 5))  # nanmean's where= is keyword-only
            share = _expand(dy, x_arr, axis, keepdims)
            if mean:
                share = share / (xp.sum(present, axis=axis, keepdims=True, dtype=x_arr.dtype) if xp is np else
                                 xp.sum(xp.astype(present, x_arr.dtype), axis=axis, keepdims=True))
            dinitial = None if initial is np._NoValue else unbroadcast(xp.sum(dy), initial)
            return keyword_cotangents((_restore(xp.where(present, share, xp.zeros_like(share)), x),
                                       *(dinitial if k == 4 else None for k in range(len(args)))), kwargs,
                                      initial=dinitial)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return adjoint(fn)(keyword_rule(rule))


nansum = _nan_reduction(np.nansum, mean=False)
nanmean = _nan_reduction(np.nanmean, mean=True)


def _nan_moment(fn, root):
    """nanvar (root=False) and nanstd (root=True) of NumPy arrays: var's derivative over the entries present,
    d var = 2 (x - m) / (n - ddof) with m their mean and n their count, d std = d var / (2 std); a NaN entry gets none.
    `where=` and `mean=` are refused (the rows of the nan-reductions and of var/std have not been crossed)."""
    def rule(x, *args, **kwargs):
        unsupported = sorted(k for k in ("where", "mean", "correction") if k in kwargs)
        if unsupported:
            raise ZygoteError(f"np.{fn.__name__}: the gradient rule does not support {', '.join(unsupported)}=")
        x_arr = _float(x)
        y = fn(x, *args, **kwargs)
        axis, keepdims = _axis_keepdims(args, kwargs, 4)
        ddof = args[3] if len(args) > 3 else kwargs.get("ddof", 0)

        def back(dy):
            if dy is None:
                return (None, *_nones(args))
            present = ~np.isnan(x_arr)
            count = np.sum(present, axis=axis, keepdims=True)
            zeroed = np.where(present, x_arr, 0)
            centred = np.where(present, x_arr - np.sum(zeroed, axis=axis, keepdims=True) / np.maximum(count, 1), 0)
            d = arrayed(dy)
            if root:  # where std is 0 (equal entries), 0: the subgradient at the minimum, as np.std's rule gives
                d = np.where(y == 0, 0.0, d / np.where(y == 0, 1.0, y))
            scale = (1.0 if root else 2.0) / np.where(count - ddof > 0, count - ddof, np.nan)
            g = np.where(present, _expand(d, x_arr, axis, keepdims) * centred * scale, 0)
            return (_restore(g.astype(x_arr.dtype, copy=False) if x_arr.dtype.kind in "fc" else g, x), *_nones(args))
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


nanvar = adjoint(np.nanvar)(_nan_moment(np.nanvar, root=False))
nanstd = adjoint(np.nanstd)(_nan_moment(np.nanstd, root=True))


def _nan_extremum(fn, inner):
    """nanmax / nanmin: NumPy's own; another library's arrays: max / min of x with its NaNs replaced by -inf / +inf (a
    slice of NaNs only gives NaN, and no cotangent)."""
    numpy_rule, extremum = _extremum(fn), _extremum(inner)

    def rule(x, *args, **kwargs):
        x_arr = _float(x)
        xp = namespace(x_arr)
        if xp is np:
            return numpy_rule(x, *args, **kwargs)
        kw = _foreign_keywords(fn.__name__, ("axis", "out", "keepdims", "initial", "where"), args, kwargs,
                               ("axis", "keepdims"))
        nan = xp.isnan(x_arr)
        fill = xp.full_like(x_arr, -math.inf if inner is np.max else math.inf)
        y, back = extremum(xp.where(nan, fill, x_arr), **kw)
        y = xp.where(xp.all(nan, **kw), xp.full_like(y, math.nan), y)

        def back_(dy):
            g = back(dy)[0]
            return keyword_cotangents((None if g is None else _restore(xp.where(nan, xp.zeros_like(g), g), x),
                                       *_nones(args)), kwargs)
        return y, back_
    rule.__qualname__ = f"{fn.__name__}_rule"
    return keyword_rule(rule)  # (NumPy's arrays: the keyword-aware _extremum's)


for _fn, _rule in {np.nanmax: _nan_extremum(np.nanmax, np.max),
                   np.nanmin: _nan_extremum(np.nanmin, np.min)}.items():
    adjoint(_fn)(_rule)

# computed with the namespace of their input
adjoint(np.nanprod)(nan_filled(prod, 1.0))
namespace_generic(np.median, np.nansum, np.nanmean, np.nanmax, np.nanmin)
namespace_generic(np.ptp, np.average)  # from max - min and sums where the namespace has no function

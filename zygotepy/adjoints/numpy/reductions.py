"""NumPy reductions: sum, mean, max/min/amax/amin (ties share the gradient), prod (zeros included), var/std with
ddof and trace, with `axis`, `keepdims`, `initial` and `where`, and the ndarray methods of the same names. A
reduction's cotangent is spread back over the reduced axes by `_expand` (common.py). The full sum and mean of a float
array take a fast path (`_total_back`: a read-only broadcast view of one number for large arrays), which the array
fast path (array_inline.py) mirrors.
"""
import collections
import math

import numpy as np

from ...backends import asarray, conj, function, namespace, on, traced, truncated, unbroadcast
from ...errors import ZygoteError
from ..registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic
from .common import (
    _axes,
    _axis_keepdims,
    _concat,
    _expand,
    _float,
    _foreign_keywords,
    _initial,
    _nones,
    _restore,
    _scan,
    _where,
    is_float,
    kept_shape,
    spread,
)


# --- sum, mean, max and min -------------------------------------------------------------------------------------------
def _reduced(x):
    """A reduction's argument as an array: lists, tuples and Python numbers (`np.sum(2.0)`) converted."""
    if isinstance(x, (list, tuple, collections.deque, float, int, complex)) \
            or hasattr(x, "__array__") and not hasattr(x, "shape"):
        return np.asarray(x)  # (an object with __array__: its cotangent is refused where it reaches the object)
    return x


_REDUCTION_PARAMETERS = {np.sum: ("axis", "dtype", "out", "keepdims"), np.mean: ("axis", "dtype", "out", "keepdims"),
                         np.max: ("axis", "out", "keepdims"), np.min: ("axis", "out", "keepdims"),
                         np.amax: ("axis", "out", "keepdims"), np.amin: ("axis", "out", "keepdims")}


def _reduce(fn, x, args, kwargs):
    """A reduction in x's namespace; positional parameters become keywords there (the array API takes keywords)."""
    xp = namespace(x)
    if xp is np:
        return fn(x, *args, **kwargs)
    kwargs = {**dict(zip(_REDUCTION_PARAMETERS[fn], args)), **kwargs}
    return function(fn, xp)(x, **kwargs)


def _total_back(x, scale):
    """The pullback of a full reduction `x.sum() * scale` of a float array (the common `np.sum(x)`/`np.mean(x)`)."""
    shape, dtype, large = x.shape, x.dtype, x.size >= _LARGE

    def back(dy):
        if dy is None:
            return (None,)
        g = dy * scale if scale != 1 else dy
        if large and (type(g) is float or type(g) is np.float64):  # a read-only view of one number: no array
            return (np.broadcast_to(np.asarray(g, dtype), shape),)  # written (the API copies a gradient it returns)
        if getattr(type(g), "__zygote_number__", False):  # a dual number (hessian), which np.full cannot copy in
            return (g * np.ones(shape, dtype),)
        return (np.full(shape, g, dtype),)
    return back


_LARGE = 1 << 16  # entries from which a broadcast view (a few µs of Python) beats writing the array (np.full)


def _along_axis(kwargs):
    """Is a reduction of a real array called as `f(x, axis=a)` or `f(x, axis=a, keepdims=k)` with an axis (the common
    case, which takes the short way: no other parameter to read, the cotangent spread into a fresh array)?"""
    return kwargs.keys() <= _AXIS_KEYWORDS and kwargs.get("axis") is not None


_AXIS_KEYWORDS = frozenset(("axis", "keepdims"))


def _along_axis_back(x, axis, keepdims, count):
    """The back of `sum` (count None) or `mean` (count entries per result) of a real array along `axis`; its result
    is what the general back's gives: the cotangent spread over the reduced axes (and for sum, a keyword-aware rule,
    no keyword cotangents)."""
    if count is None:
        def back(dy):
            return (None, {}) if dy is None else (spread(dy, x, axis, keepdims), {})
    else:
        def back(dy):
            return (None,) if dy is None else (spread(dy / count, x, axis, keepdims),)
    return back


@keyword_rule
@adjoint(np.sum)
def sum_(x, *args, **kwargs):
    """`initial=` is added once to each output entry: its cotangent is the sum of dy."""
    if not args and type(x) is np.ndarray and x.dtype.kind == "f":
        if not kwargs:
            return x.sum(), _total_back(x, 1)
        if _along_axis(kwargs):
            axis, keepdims = kwargs["axis"], kwargs.get("keepdims", False)
            return x.sum(axis=axis, keepdims=keepdims), _along_axis_back(x, axis, keepdims, None)
    x_arr = _reduced(x)
    axis, keepdims = _axis_keepdims(args, kwargs, 3)
    where = _where(args, kwargs, 5)
    initial = _initial(args, kwargs, 4)
    y = _reduce(np.sum, x, args, kwargs)

    def back(dy):
        if dy is None or truncated(y, (x,)):  # (`np.sum(x, None, int)`: piecewise constant)
            return keyword_cotangents((None, *(None for _ in args)), kwargs)
        g = _expand(dy, x_arr, axis, keepdims)
        if where is not None:  # entries left out of the sum get no gradient
            g = namespace(x_arr).where(where, g, 0)
        dinitial = None if initial is np._NoValue else unbroadcast(namespace(x_arr).sum(dy), initial)
        return keyword_cotangents((_restore(g, x), *(dinitial if k == 4 else None for k in range(len(args)))),
                                  kwargs, initial=dinitial)
    return y, back


@adjoint(np.mean)
def mean(x, *args, **kwargs):
    if not args and not kwargs and type(x) is np.ndarray and x.dtype.kind == "f" and x.size and x.dtype.itemsize > 2:
        # what np.mean computes, without its Python wrapper (which sums float16 in float32)
        return x.sum() / x.size, _total_back(x, 1 / x.size)
    if not args and type(x) is np.ndarray and x.dtype.kind == "f" and _along_axis(kwargs) and x.size:
        axis, keepdims = kwargs["axis"], kwargs.get("keepdims", False)
        y = x.mean(axis=axis, keepdims=keepdims)
        return y, _along_axis_back(x, axis, keepdims, x.size // max(y.size, 1))
    x_arr = _reduced(x)
    y = _reduce(np.mean, x_arr, args, kwargs)
    axis, keepdims = _axis_keepdims(args, kwargs, 3)
    where = _where(args, kwargs, 5)

    def back(dy):
        if dy is None or truncated(y, (x,)):
            return (None, *(None for _ in args))
        if where is None:
            count = max(math.prod(x_arr.shape) // max(math.prod(getattr(y, "shape", ())), 1), 1)  # (1: x empty)
            return (_restore(_expand(dy / count, x_arr, axis, keepdims), x), *(None for _ in args))
        xp = namespace(x_arr)  # the mean of the selected entries: each gets dy / (how many were selected)
        mask = xp.broadcast_to(where, x_arr.shape)
        count = xp.sum(mask, axis=axis, keepdims=True)
        g = _expand(dy, x_arr, axis, keepdims) / xp.where(count == 0, 1, count)
        return (_restore(xp.where(mask, g, 0), x), *(None for _ in args))
    return y, back


_METHODS = {np.max: np.ndarray.max, np.amax: np.ndarray.max, np.min: np.ndarray.min, np.amin: np.ndarray.min}


def _extremum(fn):
    method = _METHODS.get(fn)  # (the NaN-ignoring ones of statistics.py call this factory too: they take the long way)

    def rule(x, *args, **kwargs):
        if method is not None and not args and type(x) is np.ndarray and x.dtype.kind == "f" and _along_axis(kwargs):
            axis, keepdims = kwargs["axis"], kwargs.get("keepdims", False)
            y = method(x, axis=axis, keepdims=keepdims)

            def along_axis_back(dy):
                return (None, {}) if dy is None else (extremum_share(dy, y, x, axis, keepdims), {})
            return y, along_axis_back
        x_arr = _reduced(x)
        y = _reduce(fn, x_arr, args, kwargs)
        axis, keepdims = _axis_keepdims(args, kwargs, 2)
        initial, where = _initial(args, kwargs, 3), _where(args, kwargs, 4)
        if initial is not np._NoValue or where is not None:
            return y, _extremum_with_initial(x, x_arr, y, axis, keepdims, initial, where, args, kwargs)

        def back(dy):
            if dy is None:
                return keyword_cotangents((None, *(None for _ in args)), kwargs)
            return keyword_cotangents((_restore(extremum_share(dy, y, x_arr, axis, keepdims), x),
                                       *(None for _ in args)), kwargs)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return keyword_rule(rule)


def extremum_share(dy, y, x, axis, keepdims):
    """The cotangent of `x` for `y = max(x, axis, keepdims)` (or min): dy to the entries equal to their result,
    shared evenly among ties, counted in x's float type so that float32 stays float32. (Also the array path's
    formula, array_inline.py: one computation for both.)"""
    if type(x) is np.ndarray and x.dtype.kind == "f":
        if axis is None and (type(dy) is float or type(dy) is np.float64 or np.ndim(dy) == 0):
            # the whole array: its maxima share dy evenly (none: initial= won, no gradient); astype, not dtype=, for
            # the nesting rules' numbers
            hit = x == y
            n = np.count_nonzero(hit)
            if (type(dy) is float or type(dy) is np.float64) and dy - dy == 0:  # a finite real dy: the maxima's
                out = np.zeros(x.shape, x.dtype)  # share written into zeros (cheaper than `hit * share`'s casts)
                if n:
                    out[hit] = dy / n
                return out
            return (hit * (dy / max(n, 1))).astype(x.dtype, copy=False)  # (0 * inf or NaN: NaN everywhere)
        if axis is not None and type(dy) is np.ndarray and type(y) is np.ndarray and dy.shape == y.shape:
            if not keepdims:  # y and dy with the reduced axes kept: they broadcast against x
                kept = kept_shape(x.shape, axis)
                y, dy = y.reshape(kept), dy.reshape(kept)
            hit = x == y
            if np.count_nonzero(hit) == y.size and dy.dtype == x.dtype and not math.isnan(_total(y, None)):
                return dy * hit  # no result is NaN, so each has a hit; as many hits as results: each count is 1
            return dy * hit / np.maximum(_total(hit, axis=axis, keepdims=True, dtype=x.dtype), 1)  # (0: a NaN row)
    xp = namespace(x)
    hit = x == _expand(y, x, axis, keepdims)
    if xp is np:
        counts = xp.sum(hit, axis=axis, keepdims=True, dtype=x.dtype if x.dtype.kind == "f" else None)
    else:
        hit = xp.astype(hit, x.dtype)
        counts = xp.sum(hit, axis=axis, keepdims=True)
    counts = xp.where(counts == 0, xp.ones_like(counts), counts)  # (a row where initial= won: no gradient)
    return _expand(dy, x, axis, keepdims) * hit / counts


_total = np.add.reduce  # (a NaN anywhere makes the total NaN; inf - inf too, which only takes the longer way)


def _extremum_with_initial(x, x_arr, y, axis, keepdims, initial, where, args, kwargs):
    """The back of max/min with `initial=` (a value that takes part in each output entry) or `where=` (entries left
    out): dy goes to whichever of the selected entries and `initial` equal the result, shared evenly among ties."""
    xp = namespace(x_arr)
    hit = x_arr == _expand(y, x_arr, axis, keepdims)
    if where is not None:
        hit = hit & xp.broadcast_to(xp.asarray(where, **on(x_arr)), tuple(x_arr.shape))
    hit = xp.astype(hit, x_arr.dtype) if xp is not np else hit.astype(x_arr.dtype if is_float(x_arr) else float)
    hit_initial = (y == initial) if initial is not np._NoValue else 0.0
    counts = xp.sum(hit, axis=axis, keepdims=keepdims) + hit_initial  # > 0: y is one of them

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *(None for _ in args)), kwargs)
        share = dy / counts
        dx = _restore(_expand(share, x_arr, axis, keepdims) * hit, x)
        dinitial = None if initial is np._NoValue else unbroadcast(xp.sum(share * hit_initial), initial)
        return keyword_cotangents((dx, *(dinitial if k == 3 else None for k in range(len(args)))), kwargs,
                                  initial=dinitial)
    return back


for _fn in (np.max, np.min, np.amax, np.amin):
    adjoint(_fn)(_extremum(_fn))


# --- products ----------------------------------------------------------------------------------------------------------
def _product_of_others(x, axis):
    """For each entry of x, the product of the other entries of its slice along `axis`: exclusive cumulative products
    from the left and from the right, so zeros need no division."""
    xp = namespace(x)
    axes = _axes(axis, x.ndim)
    if not axes or 0 in tuple(x.shape):  # (an empty array: nothing to multiply, and no -1 to reshape by)
        return xp.ones_like(x)
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = xp.moveaxis(x, axes, last)
    flat = xp.reshape(moved, (*moved.shape[:x.ndim - len(axes)], -1))
    one = xp.ones_like(flat[..., :1])
    left = _concat(xp, [one, _scan(xp, "prod", flat[..., :-1], -1)], -1)
    right = xp.flip(_concat(xp, [one, _scan(xp, "prod", xp.flip(flat[..., 1:], axis=-1), -1)], -1), axis=-1)
    return xp.moveaxis(xp.reshape(left * right, moved.shape), last, axes)


@keyword_rule
@adjoint(np.prod)
def prod(x, *args, **kwargs):
    """Entries left out by `where=` count as 1 and get no cotangent; `initial=` multiplies each output entry:
    y = initial * p, so dx = initial * (the product of the others), dinitial = sum(dy * p)."""
    x_arr = _float(x)
    axis, keepdims = _axis_keepdims(args, kwargs, 3)
    mask = kwargs.get("where")
    initial = _initial(args, kwargs, 4)
    xp = namespace(x_arr)
    if xp is np:
        y = np.prod(x, *args, **kwargs)
    else:  # the array API's prod has no where= (entries left out count as 1) and no initial=
        kw = _foreign_keywords("prod", ("axis", "dtype", "out", "keepdims", "initial", "where"), args, kwargs,
                               ("axis", "dtype", "keepdims", "where"))
        mask = kw.pop("where", None)
        if mask is not None:
            mask = xp.asarray(mask, **on(x_arr))
        y = xp.prod(x_arr if mask is None else xp.where(mask, x_arr, xp.ones_like(x_arr)), **kw)

    def back(dy):
        if dy is None or truncated(y, (x,)):
            return keyword_cotangents((None, *_nones(args)), kwargs)
        factors = x_arr if mask is None else xp.where(mask, x_arr, xp.ones_like(x_arr))
        scale = dy if initial is np._NoValue else dy * conj(initial)
        g = _expand(scale, x_arr, axis, keepdims) * conj(_product_of_others(factors, axis))
        if mask is not None:
            g = xp.where(mask, g, 0 if xp is np else xp.zeros_like(g))
        dinitial = None
        if initial is not np._NoValue:
            p = xp.prod(factors, axis=None if axis is None else _axes(axis, x_arr.ndim), keepdims=keepdims)
            dinitial = unbroadcast(xp.sum(dy * conj(p)), initial)
        dx = _restore(g, x) if hasattr(x_arr, "shape") and x_arr.ndim else unbroadcast(g, x)
        return keyword_cotangents((dx, *(dinitial if k == 4 else None for k in range(len(args)))), kwargs,
                                  initial=dinitial)
    return y, back


# --- moments -------------------------------------------------------------------------------------------------------------
def _moment(fn, root):
    """var (root=False) and std (root=True): d var = 2 (x - m) / (N - ddof), d std = d var / (2 std), with m the mean
    of x, or NumPy's `mean=` (m as given, broadcast against x), whose cotangent is minus the sum of x's over the
    reduced axes."""
    def rule(x, *args, **kwargs):
        if "where" in kwargs:
            raise ZygoteError(f"np.{fn.__name__}: the gradient rule does not support where=")
        x_arr = _float(x)
        xp = namespace(x_arr)
        if xp is np:
            y = fn(x_arr, *args, **kwargs)
        else:  # the array API's var/std call ddof `correction`
            kw = _foreign_keywords(fn.__name__, ("axis", "dtype", "out", "ddof", "keepdims"), args, kwargs,
                                   ("axis", "ddof", "keepdims", "correction"))
            kw["correction"] = kw.pop("correction", kw.pop("ddof", 0))
            y = getattr(xp, fn.__name__)(x_arr, **kw)
        axis, keepdims = _axis_keepdims(args, kwargs, 4)
        ddof = args[3] if len(args) > 3 else kwargs.get("ddof", kwargs.get("correction", 0))
        mean = kwargs.get("mean", np._NoValue)

        def back(dy):
            if dy is None:
                return keyword_cotangents((None, *_nones(args)), kwargs)
            centred = x_arr - (xp.mean(x_arr, axis=axis, keepdims=True) if mean is np._NoValue else mean)
            count = math.prod(tuple(x_arr.shape)[a] for a in _axes(axis, x_arr.ndim))
            # (no entries, or ddof as many: NumPy's value is nan or inf, and so is the gradient, not a ZeroDivisionError)
            scale = (1.0 if root else 2.0) / (count - ddof) if count != ddof else math.inf
            if root:  # where std is 0 (equal entries), 0: the subgradient of the norm at its minimum, as |x| at 0
                dy = xp.where(y == 0, 0.0, dy / xp.where(y == 0, 1.0, y)) if traced(y) or xp.any(y == 0) else dy / y
            g = _expand(dy, x_arr, axis, keepdims) * centred * scale
            dmean = None if mean is np._NoValue else unbroadcast(-xp.sum(g, axis=axis, keepdims=True), mean)
            return keyword_cotangents((_restore(g, x), *_nones(args)), kwargs, mean=dmean)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return keyword_rule(rule)


# --- trace ------------------------------------------------------------------------------------------------------------
def _diagonal_mask(xp, x, offset, axis1, axis2):
    """The matrix with ones on the diagonal `offset` of x's axes (axis1, axis2), of x's float dtype (or float64)."""
    n, m = x.shape[axis1], x.shape[axis2]
    if xp is np:
        return np.eye(n, m, k=offset, dtype=x.dtype if x.dtype.kind in "fc" else None)
    return xp.eye(n, m, k=offset, dtype=x.dtype if is_float(x) else xp.float64, **on(x))


@adjoint(np.trace)
def trace(x, *args, **kwargs):
    """sum_i x[..., i, i + offset] over axes (axis1, axis2): dy placed on that diagonal. Another library's arrays:
    the sum of x times that diagonal's mask (the array API's trace covers the last two axes only)."""
    names = ("offset", "axis1", "axis2")
    offset, axis1, axis2 = (args[k] if len(args) > k else kwargs.get(n, d) for k, (n, d) in enumerate(
        zip(names, (0, 0, 1), strict=True)))

    x = _float(x)
    xp = namespace(x)
    if xp is np:
        y = np.trace(x, *args, **kwargs)
    else:
        _foreign_keywords("trace", ("offset", "axis1", "axis2", "dtype", "out"), args, kwargs, names)
        moved = xp.moveaxis(x, (axis1 % x.ndim, axis2 % x.ndim), (-2, -1))
        y = xp.sum(moved * _diagonal_mask(xp, x, offset, axis1, axis2), axis=(-2, -1))

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        g = asarray(xp, dy, x)[..., None, None] * _diagonal_mask(xp, x, offset, axis1, axis2)
        return (xp.moveaxis(g, (-2, -1), (axis1 % x.ndim, axis2 % x.ndim)), *_nones(args))
    return y, back


# --- the ndarray methods of the same names -----------------------------------------------------------------------------
for _fn, _rule in {np.var: _moment(np.var, False), np.std: _moment(np.std, True), np.ndarray.prod: prod,
                   np.ndarray.trace: trace, np.ndarray.var: _moment(np.var, False),
                   np.ndarray.std: _moment(np.std, True)}.items():
    adjoint(_fn)(_rule)

# computed with the namespace of their input (the array API's sum, max, prod, var/std with `correction`)
namespace_generic(np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.var, np.std, np.trace)

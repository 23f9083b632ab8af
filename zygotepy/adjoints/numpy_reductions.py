"""NumPy reductions and scans beyond sum/mean/max/min: prod (zeros included), var/std with ddof, ptp, median, average
with weights, the nan-ignoring reductions, cumsum/cumprod, trace and diff, with `axis` and `keepdims`, and the ndarray
methods of the same names. A reduction's cotangent is spread back over the reduced axes by `_expand` (numpy.py).
"""
import math

import numpy as np

from ..backends import asarray, conj, namespace, on, unbroadcast
from ..errors import ZygoteError
from .numpy import _as_array, _axis_keepdims, _expand, _extremum, _initial, _restore, _where, is_float
from .registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic


def _axes(axis, ndim):
    """The reduced axes as a sorted tuple of non-negative ints (all of them for None)."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in ((axis,) if isinstance(axis, int) else axis)))


def _float(x):
    """An array argument as an array (lists and Python numbers too)."""
    x = _as_array(x)
    return np.asarray(x) if not hasattr(x, "shape") else x


def _nones(args):
    return tuple(None for _ in args)


# --- another library's arrays: NumPy's positional parameters as the array API's keywords ---------------------------------
def _foreign_keywords(name, names, args, kwargs, supported):
    """`f(x, *args, **kwargs)` of NumPy's signature (parameters `names` after x) as keywords; `out=` and parameters the
    array API lacks (all but `supported`) raise a ZygoteError naming them."""
    kw = {**dict(zip(names, args)), **kwargs}
    if kw.get("out") is not None:
        raise ZygoteError(f"np.{name}: out= is not differentiable")
    kw.pop("out", None)
    unknown = sorted(k for k, v in kw.items() if k not in supported and v is not None)
    if unknown:
        raise ZygoteError(f"np.{name} of another library's arrays: {', '.join(unknown)} has no array-API equivalent "
                          f"in the namespace-generic rule")
    return {k: v for k, v in kw.items() if k in supported}


def _scan(xp, kind, x, axis):
    """NumPy's cumsum / cumprod (kind "sum" / "prod") of a foreign array: the array API's cumulative_sum / _prod (a
    flattened input when axis is None)."""
    if xp is np:
        return (np.cumsum if kind == "sum" else np.cumprod)(x, axis=axis)
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    return getattr(xp, "cumulative_" + kind)(x, axis=axis)


def _concat(xp, arrays, axis):
    return np.concatenate(arrays, axis=axis) if xp is np else (getattr(xp, "concat", None) or xp.concatenate)(
        arrays, axis=axis)


# --- products ----------------------------------------------------------------------------------------------------------
def _product_of_others(x, axis):
    """For each entry of x, the product of the other entries of its slice along `axis`: exclusive cumulative products
    from the left and from the right, so zeros need no division."""
    xp = namespace(x)
    axes = _axes(axis, x.ndim)
    if not axes:
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
        if dy is None:
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
    """var (root=False) and std (root=True): d var = 2 (x - mean) / (N - ddof), d std = d var / (2 std)."""
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

        def back(dy):
            if dy is None:
                return (None, *_nones(args))
            centred = x_arr - xp.mean(x_arr, axis=axis, keepdims=True)
            count = math.prod(x_arr.shape) // max(math.prod(getattr(y, "shape", ())), 1)
            scale = 1 / (count - ddof) if root else 2 / (count - ddof)
            if root:  # where std is 0 (equal entries), 0: the subgradient of the norm at its minimum, as |x| at 0
                dy = xp.where(y == 0, 0.0, dy / xp.where(y == 0, 1.0, y)) if xp.any(y == 0) else dy / y
            g = _expand(dy, x_arr, axis, keepdims) * centred * scale
            return (_restore(g, x), *_nones(args))
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


# --- order statistics: the cotangent goes to the entries that were picked (ties share it) ------------------------------
@adjoint(np.ptp)
def ptp(x, *args, **kwargs):
    """max - min."""
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
    if xp is np:
        y = np.median(x_arr, *args, **kwargs)
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


# --- weighted and nan-ignoring means and sums --------------------------------------------------------------------------
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
    else:  # the array API has no average: sum(w x) / sum(w), the weights along `axis` when 1-d
        xp = namespace(x_arr)
        w = xp.ones_like(x_arr) if weights is None else xp.asarray(weights, **on(x_arr))
        if w.shape != x_arr.shape:
            w = xp.reshape(w, tuple(-1 if k == axis % x_arr.ndim else 1 for k in range(x_arr.ndim)))
        sw = xp.sum(w * xp.ones_like(x_arr), axis=axis, keepdims=keepdims)
        result = xp.sum(w * x_arr, axis=axis, keepdims=keepdims) / sw
        if returned:
            result = (result, xp.broadcast_to(sw, tuple(result.shape)))

    def back(dy):
        dy, dsw = dy if returned and dy is not None else (dy, None)
        if dy is None and dsw is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        xp = namespace(x_arr)
        if weights is None:
            w = xp.ones_like(x_arr)
        else:
            w = xp.asarray(weights, **on(x_arr))
            if w.shape != x_arr.shape:  # 1-d weights along `axis`
                w = xp.reshape(w, tuple(-1 if k == axis % x_arr.ndim else 1 for k in range(x_arr.ndim)))
        sw = xp.sum(w * xp.ones_like(x_arr), axis=axis, keepdims=True)
        y = xp.sum(w * x_arr, axis=axis, keepdims=True) / sw
        d = _expand(dy, x_arr, axis, keepdims) / sw if dy is not None else 0
        dx = unbroadcast(d * conj(w), x_arr) if dy is not None else None
        dw = None
        if weights is not None:
            dw = d * conj(x_arr - y)
            if dsw is not None:
                dw = dw + _expand(dsw, x_arr, axis, keepdims)
            dw = xp.reshape(unbroadcast(dw, w), tuple(np.shape(weights)))
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


# --- scans -----------------------------------------------------------------------------------------------------------------
def _reverse_cumsum(g, axis):
    xp = namespace(g)
    return xp.flip(_scan(xp, "sum", xp.flip(g, axis=axis), axis), axis=axis)


def _foreign_scan(kind, x, args, kwargs):
    """np.cumsum / np.cumprod of a foreign array (dtype= is passed on: the array API's scans take it)."""
    xp = namespace(x)
    kw = _foreign_keywords(f"cum{kind}", ("axis", "dtype", "out"), args, kwargs, ("axis", "dtype"))
    y = _scan(xp, kind, x, kw.get("axis"))
    return y if kw.get("dtype") is None else xp.astype(y, kw["dtype"])


@adjoint(np.cumsum)
def cumsum(x, *args, **kwargs):
    """y_j = sum_{i <= j} x_i: dx_i = sum_{j >= i} dy_j. With no axis the input is flattened first."""
    x_arr = _float(x)
    axis = args[0] if args else kwargs.get("axis")

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        g = _reverse_cumsum(dy, -1 if axis is None else axis)
        return (_restore(namespace(g).reshape(g, tuple(x_arr.shape)), x), *_nones(args))
    if namespace(x_arr) is not np:
        return _foreign_scan("sum", x_arr, args, kwargs), back
    return np.cumsum(x, *args, **kwargs), back


def _cumprod_back(x, y, dy):
    """dx_k = sum_{j >= k} dy_j prod_{i <= j, i != k} x_i along the last axis: by division when x has no zeros, else
    one cumulative product per position (quadratic, but exact at zeros)."""
    xp = namespace(x)
    if bool(xp.all(x != 0)):
        return _reverse_cumsum(dy * conj(y), -1) / conj(x)
    n = x.shape[-1]
    columns = []
    for k in range(n):
        others = _scan(xp, "prod", xp.where(xp.arange(n, **on(x)) == k, xp.ones_like(x), x), -1)[..., k:]
        columns.append(xp.sum(dy[..., k:] * conj(others), axis=-1))
    return xp.stack(columns, axis=-1)


@adjoint(np.cumprod)
def cumprod(x, *args, **kwargs):
    x_arr = _float(x)
    axis = args[0] if args else kwargs.get("axis")
    xp = namespace(x_arr)
    y = np.cumprod(x, *args, **kwargs) if xp is np else _foreign_scan("prod", x_arr, args, kwargs)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        if axis is None:
            g = _cumprod_back(xp.reshape(x_arr, (-1,)), y, dy)
        else:
            g = xp.moveaxis(_cumprod_back(*(xp.moveaxis(v, axis, -1) for v in (x_arr, y, dy))), -1, axis)
        return (_restore(xp.reshape(g, tuple(x_arr.shape)), x), *_nones(args))
    return y, back


def _cumulative(fn, plain):
    """np.cumulative_sum / np.cumulative_prod (keyword-only axis; `include_initial` prepends the identity, a constant)."""
    def rule(x, **kwargs):
        xp = namespace(x)
        y = fn(x, **kwargs) if xp is np else getattr(xp, fn.__name__)(x, **kwargs)
        axis = kwargs.get("axis")
        inner = {k: v for k, v in kwargs.items() if k != "include_initial"}
        _, inner_back = plain(x, **inner)

        def back(dy):
            if dy is None:
                return (None,)
            if kwargs.get("include_initial"):
                xp = namespace(dy)
                dy = xp.take(dy, xp.arange(1, dy.shape[axis or 0], **on(dy)), axis=axis or 0)
            return inner_back(dy)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


if hasattr(np, "cumulative_sum"):
    adjoint(np.cumulative_sum)(_cumulative(np.cumulative_sum, cumsum))
    adjoint(np.cumulative_prod)(_cumulative(np.cumulative_prod, cumprod))


# --- trace and differences ---------------------------------------------------------------------------------------------
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


def _along(axis, ndim, part):
    """The index selecting `part` (a slice) of axis `axis`."""
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


@keyword_rule
@adjoint(np.diff)
def diff(x, *args, **kwargs):
    """Repeated first differences y_k = x_{k+1} - x_k, whose transpose is dx = [0, dy] - [dy, 0]; `prepend` and `append`
    are concatenated to x first, and receive their share (passed positionally or by keyword). Another library's
    arrays: slices and concatenation in its namespace."""
    x_arr = _float(x)
    names = ("n", "axis", "prepend", "append")
    n, axis, pre, post = (args[k] if len(args) > k else kwargs.get(name, default) for k, (name, default) in enumerate(
        zip(names, (1, -1, np._NoValue, np._NoValue), strict=True)))
    axis = axis % max(x_arr.ndim, 1)
    xp = namespace(x_arr)
    if xp is not np:  # the array API's (and torch's) default for no prepend / append is None
        pre, post = (np._NoValue if v is None else v for v in (pre, post))
    extra = [np.shape(v)[axis] if np.ndim(v) else 1 if v is not np._NoValue else 0 for v in (pre, post)]
    if xp is np:
        y = np.diff(x, *args, **kwargs)
    else:
        _foreign_keywords("diff", names, args, kwargs, names)
        edge = tuple(1 if k == axis else size for k, size in enumerate(x_arr.shape))
        pieces = [xp.broadcast_to(xp.asarray(v, dtype=x_arr.dtype, **on(x_arr)), edge) if not np.ndim(v)
                  else xp.asarray(v, **on(x_arr))
                  for v in (pre, x_arr, post) if v is not np._NoValue]
        y = _concat(xp, pieces, axis) if len(pieces) > 1 else x_arr
        for _ in range(n):
            y = y[_along(axis, y.ndim, slice(1, None))] - y[_along(axis, y.ndim, slice(None, -1))]

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        g = dy
        for _ in range(n):
            zero = xp.zeros_like(g[_along(axis, g.ndim, slice(0, 1))])
            g = _concat(xp, [zero, g], axis) - _concat(xp, [g, zero], axis)
        total = g.shape[axis]
        part = [g[_along(axis, g.ndim, slice(a, b))] for a, b in
                ((0, extra[0]), (extra[0], total - extra[1]), (total - extra[1], total))]
        edges = [None if v is np._NoValue else unbroadcast(p, v) for v, p in zip((pre, post), (part[0], part[2]),
                                                                                 strict=True)]
        grads = {2: edges[0], 3: edges[1]}
        return keyword_cotangents((_restore(part[1], x), *(grads.get(k) for k in range(len(args)))), kwargs,
                                  prepend=edges[0], append=edges[1])
    return y, back


# --- the ndarray methods of the same names -----------------------------------------------------------------------------
for _fn, _rule in {np.var: _moment(np.var, False), np.std: _moment(np.std, True),
                   np.nanmax: _nan_extremum(np.nanmax, np.max), np.nanmin: _nan_extremum(np.nanmin, np.min),
                   np.ndarray.prod: prod, np.ndarray.cumsum: cumsum,
                   np.ndarray.cumprod: cumprod, np.ndarray.trace: trace, np.ndarray.var: _moment(np.var, False),
                   np.ndarray.std: _moment(np.std, True)}.items():
    adjoint(_fn)(_rule)

# computed with the namespace of their input (the array API's prod, var/std with `correction`, cumulative_sum/_prod)
namespace_generic(np.prod, np.var, np.std, np.cumsum, np.cumprod, np.median, np.nansum, np.nanmean, np.nanmax,
                  np.nanmin, np.trace, np.diff,
                  *((np.cumulative_sum, np.cumulative_prod) if hasattr(np, "cumulative_sum") else ()))
namespace_generic(np.ptp, np.average)  # from max - min and sums where the namespace has no function

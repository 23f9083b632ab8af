"""NumPy's scans and differences: cumsum, cumprod (zeros included), nancumsum, nancumprod, NumPy 2's
cumulative_sum/cumulative_prod and diff (with `prepend`/`append`), along an axis or the flattened array, and the
ndarray methods cumsum/cumprod.
"""
import numpy as np

from ...backends import conj, namespace, on, traced, truncated, unbroadcast
from ..registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic
from .common import _concat, _float, _foreign_keywords, _nones, _restore, _scan, nan_filled


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
    y = np.cumsum(x, *args, **kwargs) if namespace(x_arr) is np else _foreign_scan("sum", x_arr, args, kwargs)

    def back(dy):
        if dy is None or truncated(y, (x,)):  # (`np.cumsum(x, 0, int)`: piecewise constant)
            return (None, *_nones(args))
        g = _reverse_cumsum(dy, -1 if axis is None else axis)
        return (_restore(namespace(g).reshape(g, tuple(x_arr.shape)), x), *_nones(args))
    return y, back


def _cumprod_back(x, y, dy):
    """dx_k = sum_{j >= k} dy_j prod_{i <= j, i != k} x_i along the last axis: by division when x has no zeros, else
    one cumulative product per position (quadratic, but exact at zeros)."""
    xp = namespace(x)
    if not traced(x) and bool(xp.all(x != 0)):
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
        if dy is None or truncated(y, (x,)):
            return (None, *_nones(args))
        if axis is None or x_arr.ndim == 0:  # (a 0-d array's scan over axis 0 is of the flat array, as NumPy's)
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


# --- differences ------------------------------------------------------------------------------------------------------


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
        length = x_arr.shape[axis] + extra[0] + extra[1] if x_arr.ndim else 1
        if g.shape[axis] == 0:  # (n >= the length: no difference at all, each entry's cotangent 0)
            g = xp.zeros(tuple(length if k == axis else size for k, size in enumerate(g.shape)), dtype=g.dtype,
                         **on(g))
        for _ in range(n if g.shape[axis] < length else 0):
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


for _fn, _rule in {np.ndarray.cumsum: cumsum, np.ndarray.cumprod: cumprod, np.nancumsum: nan_filled(cumsum, 0.0),
                   np.nancumprod: nan_filled(cumprod, 1.0)}.items():
    adjoint(_fn)(_rule)

# computed with the namespace of their input (the array API's cumulative_sum/_prod)
namespace_generic(np.cumsum, np.cumprod, np.diff,
                  *((np.cumulative_sum, np.cumulative_prod) if hasattr(np, "cumulative_sum") else ()))

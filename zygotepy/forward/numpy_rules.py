"""Forward (tangent) rules for NumPy functions beyond the elementwise, linear and product ones of rules.py: products and
their scans, differences, order statistics, nan-ignoring and weighted reductions, integration, polynomials,
interpolation, the FFTs (linear: rules.py's `linear`), and clip (its bounds given by keyword moved to their positions).

Like every tangent rule they compute with NumPy's functions on the primals, which may be dual numbers of an outer
level; what only decides *which* entries count (an ordering, a nan mask, the interval a point falls in) is read from
the stripped values. Keyword arguments are constants (dual.apply refuses a keyword carrying a tangent).
"""
import numpy as np

from ..errors import ForwardModeError
from .dual import KEYWORDS_BY_POSITION, by_keyword, dispatch, has_dual, strip, tangent_rule
from .rules import _total, extremum, linear

_FFTS = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2,
         np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn, np.fft.hfft, np.fft.ihfft, np.fft.fftshift,
         np.fft.ifftshift)
tangent_rule(*_FFTS, np.take_along_axis)(linear)  # linear in their first argument (over the reals for rfft / irfft)


def _axis_last(x, axis):
    """`x` with `axis` moved last (flattened for axis None), and how to put a result of that layout back."""
    if axis is None:
        return np.ravel(x), lambda v: v
    return np.moveaxis(x, axis, -1), lambda v: np.moveaxis(v, -1, axis)


def _swapped(x, i, v):
    """`x` (axis last) with its entries at position i along the last axis replaced by `v`'s (a product's i-th term)."""
    n = np.shape(strip(x))[-1]
    return np.concatenate([x[..., :i], v[..., i:i + 1], x[..., i + 1:]], axis=-1) if n > 1 else v


@tangent_rule(np.prod)
def prod(fn, p, t, kw):
    """d prod = sum_i dx_i prod_{j != i} x_j; y * sum(dx / x) where no entry is 0, else the sum written out."""
    p, t, kw = by_keyword(p, t, kw, ("axis", "dtype", "out", "keepdims"))
    if set(kw) - {"axis", "keepdims"}:
        raise ForwardModeError("forward mode supports np.prod(x, axis, keepdims=) and no others")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    x, dx = p[0], t[0]
    axis, keepdims = kw.get("axis"), kw.get("keepdims", False)
    if not np.any(strip(x) == 0):
        return y, y * np.sum(dx / x, axis=axis, keepdims=keepdims)
    if isinstance(axis, tuple):
        raise ForwardModeError("forward mode supports np.prod over a tuple of axes only where no entry is 0")
    xs, _ = _axis_last(x, axis)
    ds, _ = _axis_last(dx, axis)
    terms = [np.prod(_swapped(xs, i, ds), axis=-1) for i in range(np.shape(strip(xs))[-1])]
    out = _total(terms) if terms else np.zeros_like(strip(y))
    return y, np.expand_dims(out, axis) if keepdims and axis is not None else \
        np.reshape(out, np.shape(strip(y))) if keepdims else out


@tangent_rule(np.cumprod)
def cumprod(fn, p, t, kw):
    """dy_k = sum_{i <= k} dx_i prod_{j <= k, j != i} x_j: y * cumsum(dx / x) where no entry is 0, else the sum of the
    cumulative products with entry i replaced by its tangent, masked to k >= i."""
    if len(p) > 1 or set(kw) - {"axis"}:
        raise ForwardModeError("forward mode supports np.cumprod(x, axis=) by keyword")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    x, dx, axis = p[0], t[0], kw.get("axis")
    if not np.any(strip(x) == 0):
        return y, y * np.cumsum(dx / x, axis=axis)
    xs, back = _axis_last(x, axis)
    ds, _ = _axis_last(dx, axis)
    n = np.shape(strip(xs))[-1]
    positions = np.arange(n)
    terms = [np.where(positions >= i, np.cumprod(_swapped(xs, i, ds), axis=-1), 0.0) for i in range(n)]
    return y, back(_total(terms)) if terms else np.zeros_like(strip(y))


@tangent_rule(np.diff)
def diff(fn, p, t, kw):
    """Linear in the array; `prepend` / `append` are constants: zeros in the tangent's difference."""
    y = dispatch(fn, p, kw)
    if any(ti is not None for ti in t[1:]):
        raise ForwardModeError("np.diff: only its first argument may carry a derivative")
    if t[0] is None:
        return y, None
    ends = {k: np.zeros_like(strip(v), dtype=float) for k, v in kw.items() if k in ("prepend", "append")}
    return y, np.diff(t[0], *strip(p[1:]), **{**kw, **ends})


@tangent_rule(np.unwrap)
def unwrap(fn, p, t, kw):
    """Multiples of the period added piecewise: the tangent passes through (the settings are constants)."""
    if any(ti is not None for ti in t[1:]):
        raise ForwardModeError("np.unwrap: only its first argument may carry a derivative")
    return dispatch(fn, p, kw), t[0]


@tangent_rule(np.ptp)
def ptp(fn, p, t, kw):
    """max - min along the axis: the tangents of the entries attaining each (ties share them, as extremum's)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    _, dmax = extremum(np.max, p, t, kw)
    _, dmin = extremum(np.min, p, t, kw)
    return y, dmax - dmin


@tangent_rule(np.nansum, np.nanmean)
def nan_reduction(fn, p, t, kw):
    """The sum (or mean) of the tangents where the value is not nan."""
    p, t, kw = by_keyword(p, t, kw, ("axis", "dtype", "out", "keepdims"))
    if set(kw) - {"axis", "keepdims"}:
        raise ForwardModeError(f"forward mode supports np.{fn.__name__}(x, axis, keepdims=) and no others")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    kept = ~np.isnan(strip(p[0]))
    total = np.sum(np.where(kept, t[0], 0.0), **kw)
    return y, total if fn is np.nansum else total / np.sum(kept, **kw)


@tangent_rule(np.average)
def average(fn, p, t, kw):
    """sum(w x) / sum(w) along the axis: (sum(w dx) + sum((x - y) dw)) / sum(w); weights of x's shape, or 1-D along
    an int axis."""
    names = ("a", "axis", "weights", "returned")
    given = {**dict(zip(names, p)), **kw}
    if set(given) - {*names, "keepdims"} or given.get("returned"):
        raise ForwardModeError("forward mode supports np.average(a, axis, weights, keepdims=) without returned=True")
    tangents = dict(zip(names, t))
    if tangents.get("axis") is not None:
        raise ForwardModeError("np.average: the axis carries no derivative")
    y = dispatch(fn, p, kw)
    dx, dw = tangents.get("a"), tangents.get("weights")
    if dx is None and dw is None:
        return y, None
    x, w, axis = given["a"], given.get("weights"), given.get("axis")
    keepdims = given.get("keepdims", False)
    if isinstance(axis, tuple):
        raise ForwardModeError("forward mode supports np.average over one axis or all of them")
    if w is None:
        return y, np.mean(dx, axis=axis, keepdims=keepdims)
    w, dw = (_along(v, x, axis) for v in (w, dw))
    s = np.sum(w * np.ones_like(strip(x)), axis=axis, keepdims=True)
    centred = x - np.sum(w * x, axis=axis, keepdims=True) / s
    top = _total([None if dx is None else np.sum(w * dx, axis=axis, keepdims=True),
                  None if dw is None else np.sum(centred * dw, axis=axis, keepdims=True)])
    out = top / s
    return y, out if keepdims else np.squeeze(out, axis=axis) if axis is not None else np.reshape(out, ())


KEYWORDS_BY_POSITION[np.average] = lambda args, kwargs: (
    (args[0], args[1] if len(args) > 1 else kwargs.get("axis"), kwargs["weights"]),
    {k: v for k, v in kwargs.items() if k not in ("axis", "weights")}) \
    if "weights" in kwargs and len(args) in (1, 2) and not (len(args) == 2 and "axis" in kwargs) else (args, kwargs)


def _along(w, x, axis):
    """Weights lined up with x: as they are, or a 1-D vector placed along the int `axis`."""
    if w is None or np.ndim(strip(w)) == np.ndim(strip(x)):
        return w
    shape = [1] * np.ndim(strip(x))
    shape[axis] = -1
    return np.reshape(w, shape)


_QUANTILES = {np.quantile: 1.0, np.percentile: 100.0, np.median: None}


@tangent_rule(*_QUANTILES)
def quantile(fn, p, t, kw):
    """NumPy's default ('linear') method picks two neighbours of the sorted values and weights them: the tangent
    takes the same neighbours and weights (the order read from the stripped values; ties: the stable sort's)."""
    names = ("a", "axis") if fn is np.median else ("a", "q", "axis")
    given = {**dict(zip(names, p)), **kw}
    if set(given) - {*names, "keepdims", "method", "interpolation"} or given.get("method", "linear") != "linear" \
            or given.get("interpolation", "linear") != "linear":
        raise ForwardModeError(f"forward mode supports np.{fn.__name__}({', '.join(names)}, keepdims=) with the "
                               f"default method='linear'")
    if any(ti is not None for ti in t[1:]):
        raise ForwardModeError(f"np.{fn.__name__}: only the array may carry a derivative")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    axis, keepdims = given.get("axis"), given.get("keepdims", False)
    if isinstance(axis, tuple):
        raise ForwardModeError(f"forward mode supports np.{fn.__name__} over one axis or all of them")
    x, back = _axis_last(strip(given["a"]), axis)
    dx, _ = _axis_last(t[0], axis)
    order = np.argsort(x, axis=-1, kind="stable")
    dsorted = np.take_along_axis(dx, order, axis=-1)
    n = x.shape[-1]
    q = np.asarray(0.5 if fn is np.median else strip(given["q"]), dtype=float) / (_QUANTILES[fn] or 1.0)
    position = q * (n - 1)
    lo = np.floor(position).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    weight = position - lo
    picks = [np.take(dsorted, lo_i, axis=-1) * (1 - w_i) + np.take(dsorted, hi_i, axis=-1) * w_i
             for lo_i, hi_i, w_i in zip(np.ravel(lo), np.ravel(hi), np.ravel(weight))]
    out = np.reshape(np.stack(picks), q.shape + np.shape(picks[0])) if q.ndim else picks[0]
    if keepdims:
        where = tuple(range(q.ndim, q.ndim + x.ndim)) if axis is None else (q.ndim + axis % x.ndim,)
        out = np.expand_dims(out, where) if axis is not None else np.reshape(out, q.shape + (1,) * np.ndim(given["a"]))
    return y, out


@tangent_rule(getattr(np, "trapezoid", None) or np.trapz)
def trapezoid(fn, p, t, kw):
    """sum((x_{i+1} - x_i) (y_i + y_{i+1}) / 2) along the axis: linear in y; in the sample points x, the same sum with
    the points' tangents."""
    names = ("y", "x", "dx", "axis")
    given = {**dict(zip(names, p)), **kw}
    tangents = dict(zip(names, t))
    if tangents.get("dx") is not None or tangents.get("axis") is not None:
        raise ForwardModeError(f"np.{fn.__name__}: only y and x may carry a derivative")
    out = dispatch(fn, p, kw)
    dy, dxs = tangents.get("y"), tangents.get("x")
    if dy is None and dxs is None:
        return out, None
    y, axis = given["y"], given.get("axis", -1)
    constants = {k: strip(v) for k, v in given.items() if k in ("x", "dx", "axis")}
    terms = [None if dy is None else fn(dy, **constants)]
    if dxs is not None:
        ys = np.moveaxis(y, axis, -1)
        steps = np.diff(dxs, axis=-1 if np.ndim(strip(dxs)) == 1 else axis)
        if np.ndim(strip(dxs)) > 1:
            steps = np.moveaxis(steps, axis, -1)
        terms.append(np.sum(steps * (ys[..., 1:] + ys[..., :-1]) / 2, axis=-1))
    return out, _total(terms)


@tangent_rule(np.polyval)
def polyval(fn, p, t, kw):
    """p(x) = sum_k p_k x^(n-k): dp(x) + p'(x) dx."""
    coefficients, x = p
    y = dispatch(fn, p, kw)
    n = np.shape(strip(coefficients))[0]
    slope = None
    if t[1] is not None:
        lowered = coefficients[:-1] * np.arange(n - 1, 0, -1) if n > 1 else np.zeros(1)
        slope = np.polyval(lowered, x) * t[1]
    return y, _total([None if t[0] is None else np.polyval(t[0], x), slope])


@tangent_rule(np.interp)
def interp(fn, p, t, kw):
    """Piecewise linear: in the values fp, the same interpolation of their tangents (0 outside the range where a
    `left` / `right` constant is given); in the points x, the slope of the piece x falls in (0 outside the range)."""
    if kw.get("period") is not None:
        raise ForwardModeError("forward mode supports np.interp without period=")
    if len(p) > 3 or t[1] is not None:
        raise ForwardModeError("np.interp: forward mode differentiates x and fp (pass left/right by keyword)")
    x, xp, fp = p
    y = dispatch(fn, p, kw)
    terms = []
    if t[2] is not None:
        ends = {k: 0.0 for k in ("left", "right") if kw.get(k) is not None}
        terms.append(np.interp(strip(x), strip(xp), t[2], **ends))
    if t[0] is not None:
        xs, points, fp = strip(x), np.asarray(strip(xp)), np.asarray(fp) if type(fp) in (list, tuple) else fp
        piece = np.clip(np.searchsorted(points, xs, side="right") - 1, 0, len(points) - 2)
        inside = (xs >= points[0]) & (xs <= points[-1])
        slope = (fp[piece + 1] - fp[piece]) / (points[piece + 1] - points[piece])
        terms.append(np.where(inside, slope, 0.0) * t[0])
    return y, _total(terms)


@tangent_rule(np.isscalar)
def isscalar(fn, p, t, kw):
    """A dual number standing for a number is a scalar, as the number is (`2 * x if np.isscalar(x) else 3 * x`)."""
    return np.isscalar(strip(p[0])), None


@tangent_rule(np.full)
def full(fn, p, t, kw):
    """`np.full(shape, v)`: v's tangent in every entry (the shape is data)."""
    if t[0] is not None or len(t) > 2 and t[2] is not None:
        raise ForwardModeError("np.full: only the fill value may carry a derivative")
    y = dispatch(fn, p, kw)
    return y, None if len(t) < 2 or t[1] is None else np.full(np.shape(y), t[1], dtype=np.result_type(y, t[1]))


@tangent_rule(np.angle)
def angle(fn, p, t, kw):
    """d angle(z) = Im(dz / z) (in degrees with deg=True); 0 for a real z away from 0."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    z = strip(p[0])
    d = np.imag(np.asarray(t[0]) / np.where(z == 0, 1.0, z)) * (180 / np.pi if (p[1:] or [kw.get("deg")])[0] else 1.0)
    return y, d


# --- clip ----------------------------------------------------------------------------------------------------------------
@tangent_rule(np.clip, np._core.umath.clip)  # (the ufunc: an array's own `x.clip(lo, hi)` given a dual bound calls it)
def clip(fn, p, t, kw):
    """NumPy computes clip(x, lo, hi) as minimum(maximum(x, lo), hi), so where the bounds cross (lo > hi) every entry
    is hi: the upper bound wins over the lower one. At a boundary (x == lo) the tangent is x's. Both as the reverse
    rule (adjoints/numpy/select.py) sends the cotangent."""
    if len(p) > 3:  # (`np.clip(z, a, b, z)`: its output array given by position)
        raise ForwardModeError("np.clip with an output array in forward mode: write `z = np.clip(z, a, b)`")
    y = dispatch(fn, p, kw)  # (np.clip(x, lo) without a_max= raises NumPy's own TypeError here)
    if all(ti is None for ti in t):
        return y, None
    x, lo, hi = p
    tx, tlo, thi = (0.0 if ti is None else ti for ti in t)
    xs = np.asarray(strip(x))
    raised = xs if lo is None else np.maximum(xs, strip(lo))
    above = raised > strip(hi) if hi is not None else False
    below = xs < strip(lo) if lo is not None else False
    return y, np.where(above, thi, np.where(below, tlo, tx))


def _clip_bounds_by_position(args, kwargs):
    """`np.clip(x, a_min=lo, max=hi)`: the bounds given by keyword (NumPy 2.1's `min=`/`max=` too) moved to their
    positions, where the rule takes their tangents (dual.apply refuses a keyword carrying one). A call naming a bound
    twice is left as it is, for NumPy to refuse."""
    names = (("a_min", "min"), ("a_max", "max"))
    given = [[n for n in pair if n in kwargs] for pair in names]
    if not args or not any(given) or any(len(g) > 1 for g in given) or any(given[:len(args) - 1]) or len(args) > 3:
        return args, kwargs
    rest = {k: v for k, v in kwargs.items() if k not in (*names[0], *names[1])}
    bounds = [*args[1:], *(kwargs[g[0]] if g else None for g in given[len(args) - 1:])]
    return (args[0], *bounds), rest


KEYWORDS_BY_POSITION[np.clip] = _clip_bounds_by_position


@tangent_rule(np.bincount)
def bincount(fn, p, t, kw):
    """Linear in the weights (the bins' indices are data): the weights' tangents binned the same way."""
    if t[0] is not None or any(d is not None for d in t[2:]):
        raise ForwardModeError("np.bincount: only its weights may carry a derivative")
    y = fn(*p, **kw)
    return y, None if len(t) < 2 or t[1] is None else fn(p[0], t[1], *p[2:], **kw)


KEYWORDS_BY_POSITION[np.bincount] = lambda args, kwargs: (
    (*args, kwargs["weights"]), {k: v for k, v in kwargs.items() if k != "weights"}) \
    if len(args) == 1 and "weights" in kwargs else (args, kwargs)


_LINEAR_PADS = ("constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "mean", "empty")


@tangent_rule(np.pad)
def pad(fn, p, t, kw):
    """Linear in the array for the modes that copy or average its entries (an end value: no tangent), and in the
    constant of mode "constant" (`constant_values=c` carrying one comes as a fourth argument: `_pad_value_by_position`)."""
    mode = p[2] if len(p) > 2 else kw.get("mode", "constant")
    if mode not in _LINEAR_PADS:
        raise ForwardModeError(f"forward mode supports np.pad with mode in {_LINEAR_PADS}, not {mode!r}")
    if len(p) > 3:  # (the padding constant, which carries a tangent)
        width, value = strip(p[1]), p[3]
        y = fn(p[0], width, mode, constant_values=strip(value), **kw)
        inner = t[0] if t[0] is not None else np.zeros(np.shape(strip(p[0])))
        return y, np.pad(inner, width, mode, constant_values=0.0 if t[3] is None else t[3], **kw)
    y = dispatch(fn, p, kw)
    keep = {k: v for k, v in kw.items() if k not in ("constant_values", "end_values")}
    return y, None if t[0] is None else np.pad(t[0], *strip(p[1:]), **keep)


def _pad_value_by_position(args, kwargs):
    """`np.pad(x, w, constant_values=c)` with `c` carrying a tangent: `c` as a fourth argument, the mode as the
    third, where the rule takes its tangent."""
    value = kwargs.get("constant_values")
    if not has_dual((value,), {}) or len(args) not in (2, 3) or "mode" in kwargs and len(args) == 3:
        return args, kwargs
    mode = args[2] if len(args) == 3 else kwargs.get("mode", "constant")
    return (*args[:2], mode, value), {k: v for k, v in kwargs.items() if k not in ("constant_values", "mode")}


KEYWORDS_BY_POSITION[np.pad] = _pad_value_by_position

"""Numerical calculus and polynomial fits: np.trapezoid, np.gradient, np.ediff1d, np.polyfit, np.polyder, np.polyint
and np.vander. NumPy arrays only (not namespace-generic).

Every output but polyfit's is linear in the values (the samples, the coefficients), so those backs are adjoints; the
spacings and coordinates enter through explicit formulas whose derivatives are written out:

- trapezoid: r = sum_k d_k (y_k + y_(k+1)) / 2 along `axis`, d = diff(x) (or dx): dy_k = dr (d_(k-1) + d_k) / 2,
  dd_k = dr (y_k + y_(k+1)) / 2, and x gets dd through diff's transpose, dx_k = dd_(k-1) - dd_k.
- gradient: each output entry is w_lo f_(s) + w_mid f_(s+1) + w_hi f_(s+2), whose three weights (NumPy's second-order
  formulas, interior and edges) are all of the form a/u + b/v + c/(u+v) in the two spacings u, v around the entry:
  df is the weights' transpose applied to the cotangent, du = -a/u^2 - c/(u+v)^2 (dv alike) times the cotangent of
  the weight. A coordinate array gets its spacings' cotangent through diff's transpose; a scalar spacing the sum.
- ediff1d: [to_begin, diff(ravel(ary)), to_end]: the slices of the cotangent, diff's transpose for ary.
- polyfit: c = argmin ||W (V(x) c - y)||^2 = pinv(A) b with A = W V, b = W y; for A of full column rank, z =
  (A^T A)^-1 dc gives db = A z, dA = r z^T - A z c^T (r = b - A c), and then dy = w db, dw = rows of (dA * V) + db y,
  dx_i = w_i sum_j dA_ij d(x_i^(deg-j))/dx_i. full=True's residuals ||r||^2 add dA = -2 r c^T, db = 2 r.
- polyder / polyint: the coefficients scaled by fixed factors (polyint's constants k too): dp = dy * factors.
- vander: V_ij = x_i^e_j: dx_i = sum_j dV_ij e_j x_i^(e_j - 1).
"""
import numpy as np

from ...backends import conj
from ...errors import ZygoteError
from ..registry import adjoint, keyword_cotangents, keyword_rule
from .common import _float, _nones, _restore, arrayed, as_axes


def _params(names, defaults, args, kwargs):
    """The call's parameters after the first argument(s), by name, with NumPy's defaults."""
    return {**dict(zip(names, defaults)), **dict(zip(names, args)), **kwargs}


def _real_for(g, like):
    """A cotangent in the field of its argument: a real argument gets the real part."""
    return g if g is None or np.iscomplexobj(like) else np.real(g)


def _carries(v):
    """Can the argument carry a gradient (a float or complex number or array)? Integer spacings, orders and the
    like are constants: they get None."""
    return v is not None and not isinstance(v, (bool, np.bool_)) and np.asarray(v).dtype.kind in "fc"


def _diff_transpose(dd, axis):
    """The adjoint of np.diff along `axis`: dx_k = dd_(k-1) - dd_k."""
    pad = [(0, 0)] * dd.ndim
    lead, trail = list(pad), list(pad)
    lead[axis], trail[axis] = (1, 0), (0, 1)
    return np.pad(dd, lead) - np.pad(dd, trail)


def _sum_to(g, shape):
    """g summed over the axes that broadcasting added or stretched to reach g's shape from `shape`."""
    g = np.sum(g, axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    stretched = tuple(k for k, n in enumerate(shape) if n == 1 and g.shape[k] != 1)
    return np.sum(g, axis=stretched, keepdims=True).reshape(shape) if stretched else g.reshape(shape)


# --- integration and differences ---------------------------------------------------------------------------------
@keyword_rule
@adjoint(np.trapezoid)
def trapezoid(y, *args, **kwargs):
    """The trapezoidal rule along `axis`, with sample points x= or spacing dx= (each may carry a gradient)."""
    p = _params(("x", "dx", "axis"), (None, 1.0, -1), args, kwargs)
    result = np.trapezoid(y, *args, **kwargs)
    y_arr = _float(y)

    def back(dr):
        if dr is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        axis = p["axis"] % y_arr.ndim
        x = p["x"]
        if x is None:
            d = np.asarray(p["dx"])
        else:
            x_arr = _float(x)
            d = np.diff(x_arr, axis=axis if x_arr.ndim > 1 else -1)
            if x_arr.ndim == 1:  # NumPy reshapes it along `axis`
                d = d.reshape(tuple(-1 if k == axis else 1 for k in range(y_arr.ndim)))
        g = np.expand_dims(np.asarray(dr), axis)
        n = y_arr.shape[axis]
        lo = tuple(slice(0, n - 1) if k == axis else slice(None) for k in range(y_arr.ndim))
        hi = tuple(slice(1, n) if k == axis else slice(None) for k in range(y_arr.ndim))
        half = np.broadcast_to(g * conj(d) / 2.0, y_arr[lo].shape)  # the cotangent of each of y_k and y_(k+1)
        dy = _real_for(np.pad(half, [(0, 1) if k == axis else (0, 0) for k in range(y_arr.ndim)])
                       + np.pad(half, [(1, 0) if k == axis else (0, 0) for k in range(y_arr.ndim)]), y_arr)
        dd = g * conj(y_arr[lo] + y_arr[hi]) / 2.0
        dx = ddx = None
        if x is not None and _carries(x):
            dd = _sum_to(dd, d.shape)
            dx = _real_for(_diff_transpose(dd.reshape(-1) if x_arr.ndim == 1 else dd,
                                           0 if x_arr.ndim == 1 else axis), x_arr)
            dx = _restore(dx.reshape(x_arr.shape), x)
        elif x is None and _carries(p["dx"]):
            ddx = _restore(_real_for(_sum_to(dd, d.shape), d), p["dx"])
        grads = {0: dx, 1: ddx}
        return keyword_cotangents((_restore(dy, y), *(grads.get(k) for k in range(len(args)))), kwargs,
                                  x=dx, dx=ddx)
    return result, back


# (a, b, c) of each weight a/u + b/v + c/(u+v) of np.gradient's formulas, for the taps (lo, mid, hi)
_INTERIOR = ((-1, 0, 1), (1, -1, 0), (0, 1, -1))
_FIRST = {1: ((-1, 0, 0), (1, 0, 0), (0, 0, 0)), 2: ((-1, 0, -1), (1, 1, 0), (0, -1, 1))}
_LAST = {1: ((0, 0, 0), (0, -1, 0), (0, 1, 0)), 2: ((1, 0, -1), (-1, -1, 0), (0, 1, 1))}


def _stencil(n, edge_order):
    """Per output entry i: the first tap s_i (f_(s_i), f_(s_i+1), f_(s_i+2); -1 and n are zero padding), the indices
    of its spacings u, v into diff(x), and the (a, b, c) table, shaped (3 taps, 3 coefficients, n)."""
    s = np.arange(n) - 1
    s[0], s[-1] = 0, n - 3
    ju, jv = np.arange(n) - 1, np.arange(n)
    ju[0], jv[0], ju[-1], jv[-1] = 0, min(1, n - 2), max(n - 3, 0), n - 2
    table = np.repeat(np.asarray(_INTERIOR, float)[..., None], n, axis=-1)
    table[..., 0], table[..., -1] = _FIRST[edge_order], _LAST[edge_order]
    return s, ju, jv, table


def _gradient_axis_back(f, g, h, axis, edge_order):
    """(df, dh) of one axis of np.gradient: f the samples, g the output's cotangent, h the n - 1 spacings."""
    fm, gm = np.moveaxis(f, axis, -1), np.moveaxis(g, axis, -1)
    n = fm.shape[-1]
    s, ju, jv, table = _stencil(n, edge_order)
    u, v = h[ju], h[jv]
    a, b, c = table[:, 0], table[:, 1], table[:, 2]  # each (3 taps, n)
    weights = a / u + b / v + c / (u + v)
    padded = np.pad(fm.reshape(-1, n), [(0, 0), (1, 1)])
    flat_g = gm.reshape(-1, n)
    dpadded = np.zeros((n + 2, flat_g.shape[0]), np.result_type(flat_g, weights))
    dweights = np.empty((3, n), np.result_type(flat_g, padded))
    for k in range(3):
        np.add.at(dpadded, s + 1 + k, (flat_g * conj(weights[k])).T)
        dweights[k] = np.sum(flat_g * conj(padded[:, s + 1 + k]), axis=0)
    dweights = np.real(dweights)  # the spacings are real
    du = np.sum(dweights * (-a / u ** 2 - c / (u + v) ** 2), axis=0)
    dv = np.sum(dweights * (-b / v ** 2 - c / (u + v) ** 2), axis=0)
    dh = np.zeros(n - 1)
    np.add.at(dh, ju, du)
    np.add.at(dh, jv, dv)
    df = np.moveaxis(dpadded[1:-1].T.reshape(fm.shape), -1, axis)
    return df, dh


@adjoint(np.gradient)
def gradient(f, *varargs, **kwargs):
    """Second-order central differences (one-sided at the edges) along each axis, with scalar spacings or coordinate
    arrays (`varargs`); the result is one array, or a tuple of them for several axes."""
    result = np.gradient(f, *varargs, **kwargs)
    f_arr = _float(f)
    axis, edge_order = kwargs.get("axis"), kwargs.get("edge_order", 1)
    axes = tuple(range(f_arr.ndim)) if axis is None else tuple(
        a % f_arr.ndim for a in as_axes(axis))
    shared = len(varargs) == 1 and np.ndim(varargs[0]) == 0  # one scalar spacing for every axis
    spacing = list(varargs) * len(axes) if shared else list(varargs) or [1.0] * len(axes)
    if any(np.iscomplexobj(v) for v in varargs):
        raise ZygoteError("np.gradient: complex spacings or coordinates are not supported")

    def back(dy):
        if dy is None:
            return (None, *_nones(varargs))
        dys = (dy,) if len(axes) == 1 else tuple(dy)
        df = None
        dspacing = [None] * len(axes)
        for k, (ax, g) in enumerate(zip(axes, dys, strict=True)):
            if g is None:
                continue
            n, s = f_arr.shape[ax], np.asarray(spacing[k], float)
            h = np.full(n - 1, float(s)) if s.ndim == 0 else np.diff(s)
            d, dh = _gradient_axis_back(f_arr, np.asarray(g), h, ax, edge_order)
            df = d if df is None else df + d
            dspacing[k] = np.sum(dh) if s.ndim == 0 else _diff_transpose(dh, 0)
        if shared:  # the one spacing gets the sum over the axes
            given = [d for d in dspacing if d is not None]
            dspacing = [sum(given) if given else None]
        dvar = tuple(_restore(np.reshape(d, np.shape(v)), v) if d is not None and _carries(v) else None
                     for d, v in zip(dspacing, varargs, strict=False))
        df = None if df is None else _restore(_real_for(df, f_arr).astype(np.result_type(f_arr.dtype, np.float32),
                                                                          copy=False), f)
        return (df, *dvar)
    return result, back


@keyword_rule
@adjoint(np.ediff1d)
def ediff1d(ary, *args, **kwargs):
    """[to_begin, diff(ravel(ary)), to_end]; each piece gets its slice of the cotangent."""
    p = _params(("to_end", "to_begin"), (None, None), args, kwargs)
    result = np.ediff1d(ary, *args, **kwargs)
    a = _float(ary)

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        dy = arrayed(dy)
        nb = 0 if p["to_begin"] is None else np.size(p["to_begin"])
        ne = 0 if p["to_end"] is None else np.size(p["to_end"])
        m = max(a.size - 1, 0)
        da = _diff_transpose(dy[nb:nb + m], 0) if a.size else np.zeros(0, dy.dtype)
        pieces = {}
        for name, part in (("to_begin", dy[:nb]), ("to_end", dy[nb + m:nb + m + ne])):
            value = p[name]
            pieces[name] = _restore(_real_for(part, value).reshape(np.shape(value)), value) if _carries(value) \
                else None
        grads = {0: pieces["to_end"], 1: pieces["to_begin"]}
        return keyword_cotangents((_restore(_real_for(da, a).reshape(a.shape), ary),
                                   *(grads.get(k) for k in range(len(args)))), kwargs, **pieces)
    return result, back


@adjoint(np.unwrap)
def unwrap(p, *args, **kwargs):
    """p plus multiples of the period, piecewise constant: the cotangent passes through (discont, axis and period are
    settings)."""
    def back(dy):
        g = None if dy is None else _restore(_real_for(dy, p).reshape(np.shape(p)), p)
        return keyword_cotangents((g, *_nones(args)), kwargs)
    return np.unwrap(p, *args, **kwargs), back


# --- polynomials -------------------------------------------------------------------------------------------------
def _polyfit_parts(x, y, deg, rcond, w):
    """NumPy's least-squares problem (polyfit's own steps): the weighted Vandermonde matrix A with its columns scaled
    to unit norm, the scale, the weighted data b, the scaled solution and the rank."""
    x, y = np.asarray(x) + 0.0, np.asarray(y) + 0.0
    order = int(deg) + 1
    V = np.vander(x, order)
    A, b = V, y
    if w is not None:
        w = np.asarray(w) + 0.0
        A, b = V * w[:, None], y * (w[:, None] if y.ndim == 2 else w)
    scale = np.sqrt(np.sum(A * A, axis=0))
    rcond = len(x) * np.finfo(x.dtype).eps if rcond is None else rcond
    cs, _, rank, _ = np.linalg.lstsq(A / scale, b, rcond)
    return x, y, w, V, A / scale, scale, b, cs, rank, order


@keyword_rule
@adjoint(np.polyfit)
def polyfit(x, y, deg, *args, **kwargs):
    """The least-squares polynomial fit; gradients for x, y and the weights w= (a fit of full rank; real data)."""
    p = _params(("rcond", "full", "w", "cov"), (None, False, None, False), args, kwargs)
    if p["cov"] is not False:
        raise ZygoteError("np.polyfit: cov= is not differentiable here (use full=True's residuals, or the fit)")
    if any(np.iscomplexobj(v) for v in (x, y, p["w"])):
        raise ZygoteError("np.polyfit: complex data is not supported")
    result = np.polyfit(x, y, deg, *args, **kwargs)

    def back(dy):
        dc, dres = (dy[0], dy[1]) if p["full"] and dy is not None else (dy, None)
        if p["full"] and dy is not None and dy[3] is not None:
            raise ZygoteError("np.polyfit: the singular values of full=True carry no gradient here")
        if dc is None and (dres is None or np.size(dres) == 0):
            return keyword_cotangents((None, None, None, *_nones(args)), kwargs)
        xa, ya, w, V, As, scale, b, cs, rank, order = _polyfit_parts(x, y, deg, p["rcond"], p["w"])
        if rank < order:
            raise ZygoteError(f"np.polyfit: the fit is rank-deficient (rank {rank} < deg + 1 = {order}): its "
                              f"coefficients are not differentiable")
        r = b - As @ cs
        dAs, db = np.zeros_like(As), np.zeros_like(r)
        if dc is not None:  # c = cs / scale: in the scaled problem the cotangent is dc / scale
            dcs = np.asarray(dc) / (scale if cs.ndim == 1 else scale[:, None])
            q, rr = np.linalg.qr(As)  # (As^T As)^-1 = rr^-1 rr^-T
            z = np.linalg.solve(rr, np.linalg.solve(rr.T, dcs))
            db = As @ z
            dAs = np.outer(r, z) - np.outer(db, cs) if cs.ndim == 1 else r @ z.T - db @ cs.T
        if dres is not None and np.size(dres):
            dres = np.asarray(dres)
            dAs = dAs - 2 * (np.outer(r, cs) * dres if cs.ndim == 1 else (r * dres) @ cs.T)
            db = db + 2 * r * dres
        dA = dAs / scale  # the solution does not depend on the (fixed) column scaling
        dV = dA if w is None else dA * w[:, None]
        e = np.arange(order - 1, -1, -1)
        dx = np.sum(dV * e * xa[:, None] ** np.maximum(e - 1, 0), axis=1)
        dyv = db if w is None else db * (w[:, None] if ya.ndim == 2 else w)
        dw = None
        if w is not None and _carries(p["w"]):
            dw = _restore((np.sum(dA * V, axis=1) + (np.sum(db * ya, axis=1) if ya.ndim == 2 else db * ya))
                          .reshape(np.shape(p["w"])), p["w"])
        dx = _restore(dx.reshape(np.shape(x)), x) if _carries(x) else None
        grads = {2: dw}
        return keyword_cotangents((dx, _restore(dyv.reshape(np.shape(y)), y), None,
                                   *(grads.get(k) for k in range(len(args)))), kwargs, w=dw)
    return result, back


@adjoint(np.polyder)
def polyder(p, *args, **kwargs):
    """The m-th derivative's coefficients p_j times fixed factors (the first len(p) - m): dp_j = dy_j factor_j."""
    if isinstance(p, np.poly1d) or np.ndim(p) != 1:
        raise ZygoteError("np.polyder: the coefficients must be a 1-d array or list (no poly1d)")
    result = np.polyder(p, *args, **kwargs)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        factor = np.polyder(np.ones(np.size(p)), *args, **kwargs)
        g = np.concatenate([arrayed(dy) * factor, np.zeros(np.size(p) - factor.size)])
        return (_restore(_real_for(g, p), p), *_nones(args))
    return result, back


@keyword_rule
@adjoint(np.polyint)
def polyint(p, *args, **kwargs):
    """The m-th antiderivative: p_j times fixed factors, then the m constants k_i, each divided by (m - 1 - i)!."""
    if isinstance(p, np.poly1d) or np.ndim(p) != 1:
        raise ZygoteError("np.polyint: the coefficients must be a 1-d array or list (no poly1d)")
    q = _params(("m", "k"), (1, None), args, kwargs)
    m, k = int(q["m"]), q["k"]
    result = np.polyint(p, *args, **kwargs)

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        dy, n = arrayed(dy), np.size(p)
        dp = dy[:n] * np.polyint(np.ones(n), m)[:n] if m else dy
        dk = None
        if m and _carries(k):
            dk_all = dy[n:] * np.polyint(np.zeros(n), m, k=np.ones(m))[n:]
            if np.size(k) == 1:  # one constant, repeated m times (NumPy's reading of a scalar k)
                dk = _restore(np.reshape(np.sum(dk_all), np.shape(k)), k)
            else:
                extra = np.zeros(np.size(k) - m, dk_all.dtype)  # NumPy ignores the constants beyond the m-th
                dk = _restore(_real_for(np.concatenate([dk_all, extra]), k).reshape(np.shape(k)), k)
        grads = {1: dk}
        return keyword_cotangents((_restore(_real_for(dp, p), p), *(grads.get(j) for j in range(len(args)))),
                                  kwargs, k=dk)
    return result, back


@adjoint(np.vander)
def vander(x, *args, **kwargs):
    """V_ij = x_i^e_j (decreasing powers, or increasing): dx_i = sum_j dV_ij e_j x_i^(e_j - 1)."""
    q = _params(("N", "increasing"), (None, False), args, kwargs)
    result = np.vander(x, *args, **kwargs)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        xa = _float(x)
        columns = result.shape[1]
        e = np.arange(columns) if q["increasing"] else np.arange(columns - 1, -1, -1)
        dx = np.sum(arrayed(dy) * conj(e * xa[:, None] ** np.maximum(e - 1, 0)), axis=1)
        return (_restore(_real_for(dx, xa), x), *_nones(args))
    return result, back

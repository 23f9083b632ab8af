"""Piecewise-linear interpolation: `np.interp(x, xp, fp)`, with `left`/`right` and `period`, in x, the abscissae
xp and the values fp (NumPy's arrays; another library's through its namespace's searchsorted and take).
"""
import numpy as np

from ...backends import conj, is_complex, namespace_of, scatter_add, unbroadcast
from ...errors import ZygoteError
from ..registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic
from .common import arrayed


# --- piecewise-linear interpolation ----------------------------------------------------------------------------------
@keyword_rule
@adjoint(np.interp)
def interp(x, xp, fp, *args, **kwargs):
    """Inside [xp_i, xp_(i+1)]: y = fp_i + s (x - xp_i), s = (fp_(i+1) - fp_i) / h, h = xp_(i+1) - xp_i, t = (x - xp_i) / h.
    dy/dx = s, dy/dfp = (1 - t, t), dy/dxp = (s (t - 1), -s t); outside the table y is an end value of fp, or `left` /
    `right` when given (which then receive those entries' cotangents)."""
    ns = namespace_of(x, xp, fp)
    if ns is not np:
        y, back = _interp_foreign(ns, x, xp, fp, *args, **kwargs)

        def foreign_back(dy):
            *grads, ends = back(dy)
            return keyword_cotangents((*grads, *(ends.get(name) for name in ("left", "right", "period")[:len(args)])),
                                      kwargs, **ends)
        return y, foreign_back
    y = np.interp(x, xp, fp, *args, **kwargs)
    named = dict(zip(("left", "right", "period"), args), **kwargs)
    if named.get("period") is not None:
        return y, _periodic_back(x, xp, fp, named["period"], args, kwargs)
    left, right = named.get("left"), named.get("right")

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, None, None, *(None for _ in args)), kwargs)
        x_, xp_, fp_ = np.asarray(x, dtype=float), np.asarray(xp, dtype=float), np.asarray(fp)
        if len(xp_) == 1:  # one point: its value everywhere, no interval, nothing depends on x or xp
            x_, xp_, fp_ = x_, np.concatenate([xp_, xp_]), np.concatenate([fp_, fp_])
        i = np.clip(np.searchsorted(xp_, x_, "right") - 1, 0, len(xp_) - 2)
        h = xp_[i + 1] - xp_[i]
        # (an interval of no width, a repeated end point: y is its last value there, at t = 1, with no slope; the
        # entries outside the table have no t, and no share in 0 * inf)
        width = np.where(h == 0, 1.0, h)
        t = np.where(h == 0, 1.0, (x_ - xp_[i]) / width)
        s = np.where(h == 0, 0.0, (fp_[i + 1] - fp_[i]) / width)
        below, above = x_ < xp_[0], x_ > xp_[-1]
        t = np.where(below | above, 0.0, t)
        inside = ~(below | above)
        d = arrayed(dy) * inside
        dfp = np.zeros(fp_.shape, dtype=np.result_type(fp_.dtype, d.dtype, np.float32))
        np.add.at(dfp, i, d * (1 - t))
        np.add.at(dfp, i + 1, d * t)
        if left is None:  # below the table y is fp[0], unless left= gives a constant
            dfp[0] += np.sum(arrayed(dy) * below)
        if right is None:
            dfp[-1] += np.sum(arrayed(dy) * above)
        ds = np.real(d * conj(s)) if np.iscomplexobj(s) or np.iscomplexobj(d) else d * s  # (x, xp real: Re(dy s*))
        dxp = np.zeros(xp_.shape)
        np.add.at(dxp, i, ds * (t - 1))
        np.add.at(dxp, i + 1, -ds * t)
        ends = {name: unbroadcast(np.sum(arrayed(dy) * outside), value) for name, value, outside in
                (("left", left, below), ("right", right, above)) if value is not None}
        if len(np.shape(xp)) and len(dxp) != len(xp):  # (the one-point table, doubled above)
            dfp, dxp = dfp[:1] + dfp[1:], dxp[:1] + dxp[1:]
        return keyword_cotangents((unbroadcast(ds, x), dxp.astype(xp_.dtype, copy=False), dfp,
                                   *(ends.get(name) for name in ("left", "right", "period")[:len(args)])), kwargs,
                                  **ends)
    return y, back


def _periodic_back(x, xp, fp, period, args, kwargs):
    """np.interp(x, xp, fp, period=p) is NumPy's interp on one period: x and xp taken modulo |p|, the table sorted and
    wrapped around by one point at each end. The cotangents go back through those steps: d(v mod p)/dv = 1, and
    d(v mod p)/dp = -floor(v / p); left/right are ignored (None)."""
    p = abs(period)
    x_, xp_, fp_ = np.asarray(x, dtype=float), np.asarray(xp, dtype=float), np.asarray(fp)
    order = np.argsort(xp_ % p)
    xs, fs = (xp_ % p)[order], fp_[order]
    _, inner = interp(x_ % p, np.concatenate([xs[-1:] - p, xs, xs[:1] + p]), np.concatenate([fs[-1:], fs, fs[:1]]))

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, None, None, *(None for _ in args)), kwargs)
        dx, dxe, dfe = inner(dy)
        dfp = np.zeros(fp_.shape, dtype=dfe.dtype)
        dxs = dxe[1:-1].copy()
        dxs[-1] += dxe[0]
        dxs[0] += dxe[-1]
        dfp[order] = dfe[1:-1]
        dfp[order[-1]] += dfe[0]
        dfp[order[0]] += dfe[-1]
        dxp = np.zeros(xp_.shape)
        dxp[order] = dxs
        dp = np.sum(np.asarray(dx) * -np.floor(x_ / p)) + np.sum(dxp * -np.floor(xp_ / p)) - dxe[0] + dxe[-1]
        dperiod = unbroadcast(np.sign(period) * dp, period)
        return keyword_cotangents((unbroadcast(np.asarray(dx), x), dxp.astype(xp_.dtype, copy=False), dfp,
                                   *(dperiod if k == 2 else None for k in range(len(args)))), kwargs, period=dperiod,
                                  left=None, right=None)
    return back


def _interp_foreign(ns, x, xp, fp, left=None, right=None, period=None):
    """np.interp in another library's namespace (the array API's searchsorted, take and a scatter for the
    cotangents of the table); left=/right= receive the cotangents of the entries outside the table."""
    if period is not None:
        raise ZygoteError("np.interp of another library's arrays: period= is not supported")
    fp_ = ns.asarray(fp) if hasattr(fp, "shape") else ns.asarray(fp, dtype=ns.float64)
    real = ns.float64 if not is_complex(fp_) else ns.complex128
    fp_ = ns.astype(fp_, real)
    x_ = ns.astype(ns.asarray(x), ns.float64) if hasattr(x, "shape") else ns.asarray(x, dtype=ns.float64)
    t_ = ns.astype(ns.asarray(xp), ns.float64) if hasattr(xp, "shape") else ns.asarray(xp, dtype=ns.float64)
    n = t_.shape[0]
    if n < 2 or fp_.shape != (n,):
        raise ZygoteError(f"np.interp of another library's arrays: the table needs two or more points and fp of its "
                          f"length (xp {tuple(t_.shape)}, fp {tuple(fp_.shape)})")
    shape = tuple(x_.shape)
    xf = ns.reshape(x_, (-1,))
    i = ns.clip(ns.searchsorted(t_, xf, side="right") - 1, 0, n - 2)
    i = ns.astype(i, ns.int64)
    x0, x1 = ns.take(t_, i, axis=0), ns.take(t_, i + 1, axis=0)
    f0, f1 = ns.take(fp_, i, axis=0), ns.take(fp_, i + 1, axis=0)
    h = x1 - x0
    s = (f1 - f0) / h
    t = (xf - x0) / h
    below, above = xf < t_[0], xf > t_[n - 1]
    inside = ns.logical_not(ns.logical_or(below, above))
    lo = fp_[0] if left is None else ns.asarray(left, dtype=real)
    hi = fp_[n - 1] if right is None else ns.asarray(right, dtype=real)
    y = ns.where(below, lo, ns.where(above, hi, s * (xf - x0) + f0))

    def back(dy):
        """(dx, dxp, dfp, {"left": ..., "right": ...}) for the end values given."""
        if dy is None:
            return (None, None, None, {})
        d_all = ns.reshape(ns.asarray(dy) if hasattr(dy, "shape") else ns.asarray(dy, dtype=real), (-1,))
        zero = ns.zeros_like(d_all)
        d = ns.where(inside, d_all, zero)
        dfp = scatter_add(ns, n, ns.concat([i, i + 1]), ns.concat([d * (1 - t), d * t]))
        ends = [scatter_add(ns, n, ns.zeros_like(i), ns.where(below, d_all, zero)) if left is None else None,
                scatter_add(ns, n, ns.full_like(i, n - 1), ns.where(above, d_all, zero)) if right is None else None]
        dfp = sum((e for e in ends if e is not None), dfp)
        ds = d * conj(s)
        if is_complex(ds):  # x and the table are real: the real part
            ds = ns.real(ds)
        dx = unbroadcast(ns.reshape(ds, shape), x)
        dxp = scatter_add(ns, n, ns.concat([i, i + 1]), ns.concat([ds * (t - 1), -ds * t])) \
            if hasattr(xp, "shape") else None  # a list table: a constant
        given = {name: unbroadcast(ns.sum(ns.where(outside, d_all, zero)), value) for name, value, outside in
                 (("left", left, below), ("right", right, above)) if value is not None}
        return (dx, dxp, dfp, given)
    return ns.reshape(y, shape), back


# computed with the namespace of their input: its searchsorted and take, and a scatter
namespace_generic(np.interp)

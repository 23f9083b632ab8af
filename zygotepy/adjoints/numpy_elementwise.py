"""NumPy elementwise functions beyond the starter set of numpy.py: the remaining differentiable ufuncs (inverse
hyperbolics, exp2/cbrt, angle conversions, logaddexp, float_power, fmax/fmin, copysign, fmod, ...), complex parts, and
the ndarray methods of the same names. Non-differentiable ufuncs (rounding, predicates, integer operations) and
random draws are declared here to run as constants.
"""
import math

import numpy as np

from ..backends import (
    conj,
    function,
    is_complex,
    namespace,
    namespace_of,
    on,
    scatter_add,
    unbroadcast,
)
from ..errors import ZygoteError
from .numpy import _binary, _call, _elementwise_rule, _ties, clip, is_float
from .registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic, nondifferentiable

LN2 = math.log(2)

# --- elementwise, one argument: derivative in terms of the input x and the output y -----------------------------------
ELEMENTWISE = {
    # exponentials, roots
    np.exp2: lambda x, y: y * LN2,
    np.cbrt: lambda x, y: 1 / (3 * y * y),
    # inverse hyperbolics
    np.arcsinh: lambda x, y: 1 / namespace(x).sqrt(x * x + 1),
    np.arccosh: lambda x, y: 1 / namespace(x).sqrt(x * x - 1),
    np.arctanh: lambda x, y: 1 / (1 - x * x),
    # angle conversions
    np.deg2rad: lambda x, y: math.pi / 180,
    np.radians: lambda x, y: math.pi / 180,
    np.rad2deg: lambda x, y: 180 / math.pi,
    np.degrees: lambda x, y: 180 / math.pi,
    # absolute value of reals
    np.fabs: lambda x, y: namespace(x).sign(x),
}
for _fn, _d in ELEMENTWISE.items():
    adjoint(_fn)(_elementwise_rule(_fn, _d))


@adjoint(np.sinc)
def sinc(x):
    """sinc(x) = sin(pi x) / (pi x); its derivative (cos(pi x) - sinc(x)) / x is 0 at x = 0."""
    y = _call(np.sinc, x)

    def back(dy):
        if dy is None:
            return (None,)
        xp = namespace(x)
        zero = xp.asarray(x) == 0
        safe = xp.where(zero, 1.0, x)
        d = xp.where(zero, 0.0, (xp.cos(math.pi * safe) - y) / safe)
        return (unbroadcast(dy * conj(d), x),)
    return y, back


@keyword_rule
@adjoint(np.nan_to_num)
def nan_to_num(x, *args, **kwargs):
    """Finite entries pass through; NaN and infinities are replaced by the values `nan`, `posinf`, `neginf` (by
    position after `copy`, or by keyword), which receive the cotangents of the entries they replaced."""
    names = ("copy", "nan", "posinf", "neginf")
    given = {**dict(zip(names, args)), **kwargs}
    if namespace(x) is np:
        y = np.nan_to_num(x, *args, **kwargs)
    else:  # by keyword: torch's has no `copy` before `nan`
        y = _call(np.nan_to_num, x, **{k: v for k, v in given.items() if k != "copy"})

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *(None for _ in args)), kwargs)
        xp = namespace(x)
        grads = {name: _replaced(xp, x, dy, test, given[name]) for name, test in
                 (("nan", xp.isnan), ("posinf", _isposinf), ("neginf", _isneginf)) if given.get(name) is not None}
        dx = unbroadcast(xp.where(xp.isfinite(x), dy, 0.0), x)
        return keyword_cotangents((dx, *(grads.get(name) for name in names[:len(args)])), kwargs, **grads)
    return y, back


def _isposinf(x):
    return namespace(x).isinf(x) & (x > 0)


def _isneginf(x):
    return namespace(x).isinf(x) & (x < 0)


def _replaced(xp, x, dy, test, value):
    """The cotangent of a value nan_to_num put in place of the entries `test` finds (in the real and imaginary parts
    separately for complex x): the sum of their cotangents."""
    if is_complex(x):
        total = xp.sum(xp.where(test(xp.real(x)), xp.real(dy), 0.0)) + xp.sum(xp.where(test(xp.imag(x)),
                                                                                     xp.imag(dy), 0.0))
    else:
        total = xp.sum(xp.where(test(x), dy, 0.0))
    return unbroadcast(total, value)


# --- complex parts: cotangents follow the convention gradient = dL/dRe + 1j dL/dIm --------------------------------------
@adjoint(np.conjugate)
def conjugate(x):
    return _call(np.conjugate, x), lambda dy: (None if dy is None else conj(dy) if is_complex(x) else unbroadcast(dy, x),)


@adjoint(np.real)
def real(x):
    def back(dy):
        if dy is None:
            return (None,)
        g = namespace(x).real(dy) if is_complex(dy) else dy
        if type(x) is not np.ndarray and is_complex(x) and hasattr(g, "shape") \
                and not getattr(type(x), "__zygote_number__", False):  # another library's (not a dual): x's dtype
            g = namespace(x).astype(g, x.dtype)
        return (g,)
    return _call(np.real, x), back


@adjoint(np.imag)
def imag(x):
    """Im z has gradient 1j dy; a real x has imaginary part 0, a constant."""
    def back(dy):
        if dy is None or not is_complex(x):
            return (None,)
        return (1j * namespace(x).real(dy) if is_complex(dy) else 1j * dy,)
    xp = namespace(x)
    if xp is not np and not is_complex(x):  # the array API's imag takes complex arrays only
        return xp.zeros_like(x), back
    return _call(np.imag, x), back


@adjoint(np.angle)
def angle(z, *args, **kwargs):
    """angle(a + ib) = atan2(b, a): gradient dy (-b + ia) / |z|^2 = dy * 1j z / |z|^2; a real z's angle is constant."""
    deg = args[0] if args else kwargs.get("deg", False)
    if namespace_of(z) is np:
        y = np.angle(z, *args, **kwargs)
    else:  # torch.angle takes no deg: radians, scaled here
        y = _call(np.angle, z)
        y = y * (180 / math.pi) if deg else y

    def back(dy):
        if dy is None or not is_complex(z):
            return (None, *(None for _ in args))
        xp = namespace(z)
        r2 = xp.abs(z) ** 2
        scale = 180 / math.pi if deg else 1.0
        return (xp.real(dy) * scale * 1j * z / xp.where(r2 == 0, 1, r2), *(None for _ in args))
    return y, back


for _method, _rule in {np.ndarray.conj: conjugate, np.ndarray.conjugate: conjugate, np.ndarray.clip: clip}.items():
    adjoint(_method)(_rule)


# --- elementwise, two arguments: partial derivatives in terms of a, b and the output y ----------------------------------
def _trunc(a, b):
    return namespace(a if hasattr(a, "shape") else b).trunc(a / b)


BINARY = {
    np.logaddexp: (lambda a, b, y: namespace(y).exp(a - y), lambda a, b, y: namespace(y).exp(b - y)),
    np.logaddexp2: (lambda a, b, y: 2.0 ** (a - y), lambda a, b, y: 2.0 ** (b - y)),
    np.fmax: (lambda a, b, y: _ties(a, b, y, a > b), lambda a, b, y: _ties(a, b, y, b > a)),
    np.fmin: (lambda a, b, y: _ties(a, b, y, a < b), lambda a, b, y: _ties(a, b, y, b < a)),
    np.fmod: (lambda a, b, y: 1, lambda a, b, y: -_trunc(a, b)),
    np.remainder: (lambda a, b, y: 1, lambda a, b, y: -namespace(y).floor(a / b)),
}
for _fn, (_da, _db) in BINARY.items():
    adjoint(_fn)(_binary(_fn, _da, _db))


@adjoint(np.float_power)
def float_power(a, b):
    """a ** b in float64 (or complex128); d/db is taken as 0 where a <= 0, as for np.power."""
    y = _call(np.float_power, a, b)

    def back(dy):
        if dy is None:
            return (None, None)
        xp = namespace(y)
        a_ = xp.asarray(a) if xp is np or hasattr(a, "shape") else xp.asarray(a, dtype=y.dtype, **on(y))
        positive = a_ > 0
        db = dy * conj(y * xp.log(xp.where(positive, a_, 1.0)) * (positive if xp is np else xp.astype(positive, y.dtype)))
        da = dy * conj(b * _call(np.float_power, a, (xp.asarray(b) if xp is np else b) - 1))
        return _cast(unbroadcast(da, a), a), _cast(unbroadcast(db, b), b)
    return y, back


def _cast(g, like):
    """A float32 argument of a float64 computation (float_power, ldexp) gets its cotangent back in float32."""
    dtype = getattr(like, "dtype", None)
    if dtype is not None and is_float(like) and getattr(g, "dtype", dtype) != dtype:
        return g.astype(dtype) if type(g) is np.ndarray else namespace(g).astype(g, dtype)
    return g


@adjoint(np.copysign)
def copysign(a, b):
    """|a| with b's sign: d/da = sign(a) sign(b); b contributes only a sign, a constant."""
    y = _call(np.copysign, a, b)

    def back(dy):
        if dy is None:
            return (None, None)
        xp = namespace_of(a, b)
        where = on(a) or on(b)
        same = xp.signbit(xp.asarray(a, **where)) == xp.signbit(xp.asarray(b, **where))
        return unbroadcast(xp.where(same, dy, -dy), a), None
    return y, back


@adjoint(np.ldexp)
def ldexp(x, i):
    """x * 2**i for an integer exponent i."""
    xp = namespace_of(x, i)
    if xp is not np:  # the namespace's ldexp (JAX's, torch's), else x * 2.0**i (backends/composed.py)
        f = function(np.ldexp, xp)
        i_ = i if hasattr(i, "shape") and type(i) is not np.ndarray else xp.asarray(i, **on(x))  # torch.ldexp: tensors
        return f(x, i_), lambda dy: (None, None) if dy is None else (_cast(unbroadcast(f(dy, i_), x), x), None)
    y = np.ldexp(x, i)

    def back(dy):
        if dy is None:
            return (None, None)
        return _cast(unbroadcast(namespace(y).ldexp(dy, i), x), x), None
    return y, back


@adjoint(np.nextafter)
def nextafter(x, toward):
    """The next float after x toward `toward`: x moved by one unit in the last place, so dx = dy (`toward` only
    chooses the direction). It was declared non-differentiable: x's gradient was silently None."""
    y = np.nextafter(x, toward)
    return y, lambda dy: (None, None) if dy is None else (unbroadcast(dy, x), None)


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
        i = np.clip(np.searchsorted(xp_, x_, "right") - 1, 0, len(xp_) - 2)
        h = xp_[i + 1] - xp_[i]
        t = (x_ - xp_[i]) / h
        s = (fp_[i + 1] - fp_[i]) / h
        below, above = x_ < xp_[0], x_ > xp_[-1]
        inside = ~(below | above)
        d = np.asarray(dy) * inside
        dfp = np.zeros(fp_.shape, dtype=np.result_type(fp_.dtype, d.dtype, np.float32))
        np.add.at(dfp, i, d * (1 - t))
        np.add.at(dfp, i + 1, d * t)
        if left is None:  # below the table y is fp[0], unless left= gives a constant
            dfp[0] += np.sum(np.asarray(dy) * below)
        if right is None:
            dfp[-1] += np.sum(np.asarray(dy) * above)
        dxp = np.zeros(xp_.shape)
        np.add.at(dxp, i, d * s * (t - 1))
        np.add.at(dxp, i + 1, -d * s * t)
        ends = {name: unbroadcast(np.sum(np.asarray(dy) * outside), value) for name, value, outside in
                (("left", left, below), ("right", right, above)) if value is not None}
        return keyword_cotangents((unbroadcast(d * s, x), dxp.astype(xp_.dtype, copy=False), dfp,
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


# --- no gradient: rounding, predicates, integer and bit operations, random draws --------------------------------------
nondifferentiable(
    np.trunc, np.fix, np.signbit, np.heaviside, np.isreal, np.iscomplex, np.isrealobj, np.iscomplexobj, np.isneginf,
    np.isposinf, np.isnat, np.isscalar, np.floor_divide, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
    np.left_shift, np.right_shift, np.gcd, np.lcm, np.logical_xor, np.spacing, np.array_equal,
    np.array_equiv, np.searchsorted, np.digitize, np.nonzero, np.flatnonzero,
    np.argwhere, np.nanargmax, np.nanargmin, np.argpartition, np.lexsort, np.result_type, np.can_cast, np.promote_types,
    np.broadcast_shapes, np.ndarray.round, np.ndarray.all, np.ndarray.any,
    np.tri, np.indices, np.random.rand, np.random.randn, np.random.randint, np.random.random,
    np.random.shuffle, np.random.seed, np.random.default_rng,
    np.random.Generator.random, np.random.Generator.integers, np.random.Generator.standard_normal)

CONSTANT_METHODS = (np.ndarray.argmax, np.ndarray.argmin, np.ndarray.argsort, np.ndarray.argpartition,
                    np.ndarray.nonzero, np.ndarray.round, np.ndarray.all, np.ndarray.any, np.ndarray.searchsorted) + (
                    # the array-API idiom `xp = x.__array_namespace__()` (NumPy 2): a module, no gradient
                    (np.ndarray.__array_namespace__,) if hasattr(np.ndarray, "__array_namespace__") else ())


def _constant_method(method):
    """`x.argmax()` and friends: a method call looks for a rule, not for the non-differentiable set (see
    ast_adjoint/dispatch.py `_method_kind`), so these carry a rule that returns no cotangents, and stay declared."""
    def rule(*args, **kwargs):
        def back(dy):
            return tuple(None for _ in args)
        return method(*args, **kwargs), back
    rule.__qualname__ = f"{method.__name__}_constant"
    return rule


# --- rules that compute with the namespace of their inputs (composed from array-API functions where it lacks one) -----
namespace_generic(*ELEMENTWISE, np.sinc, np.nan_to_num, np.conjugate, np.real, np.imag, np.angle, *BINARY,
                  np.float_power, np.copysign, np.ldexp, np.interp)

for _method in CONSTANT_METHODS:
    adjoint(_method)(_constant_method(_method))
nondifferentiable(*CONSTANT_METHODS)

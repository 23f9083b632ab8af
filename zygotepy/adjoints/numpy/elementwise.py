"""NumPy's elementwise functions of one and two arguments: exponentials and logarithms, roots, trigonometric and
hyperbolic functions and their inverses, angle conversions, abs/fabs, sinc, nan_to_num, the arithmetic ufuncs,
maximum/minimum/fmax/fmin (ties share the gradient), arctan2, hypot, logaddexp, fmod/remainder, power/float_power,
copysign, ldexp and nextafter. Rules compute with the array namespace of their inputs (`namespace(x)`), so they serve
other array libraries too; cotangents are reduced to their input's shape by `unbroadcast`.
"""
import math

import numpy as np

from ...backends import conj, function, is_complex, log_add_shares, namespace, namespace_of, on, power_slope, principal_log, \
    unbroadcast
from .. import derivatives
from ..registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic
from .common import _binary, _call, _elementwise_rule, _ties, is_float

# --- one argument: the derivatives, in terms of the input x and the output y, are rows of derivatives.py --------------
ELEMENTWISE = derivatives.forms("numpy")
_DIVISORS = derivatives.forms("divisor")
for _fn, _d in ELEMENTWISE.items():
    adjoint(_fn, accumulates=True)(_elementwise_rule(_fn, _d, _DIVISORS.get(_fn)))


@adjoint(np.abs)
def absolute(x):
    y = _call(np.abs, x)

    def back(dy):
        if dy is None:
            return (None,)
        xp = namespace(x)
        if getattr(getattr(x, "dtype", None), "kind", "") == "c" or isinstance(x, complex):
            if is_complex(dy):  # (the output is real, so is its cotangent: one a complex array beside it in a
                dy = xp.real(dy)  # concatenate or a dot product gave it, with an imaginary part that is not its)
            return (dy * x / xp.where(y == 0, 1, y),)
        return (unbroadcast(dy * xp.sign(x), x),)
    return y, back


adjoint(np.absolute)(absolute)


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


# --- elementwise, two arguments: partial derivatives in terms of a, b and the output y ----------------------------------
def _trunc(a, b):
    return namespace(a if hasattr(a, "shape") else b).trunc(a / b)


def as_operand(v):
    """A list or tuple of numbers as the array NumPy makes of it: the rules compute with arrays (`np.power(x, [1.0,
    2.0])` crashed in the backward, `list - int`); the list's cotangent is then an array, which its display takes."""
    if type(v) is list or type(v) is tuple:
        arr = np.asarray(v)
        return arr if arr.dtype.kind in "biufc" else v
    return v


def _radius(a, b):
    return namespace(a if hasattr(a, "shape") else b).hypot(a, b)


def _over_radius(t, y):
    """t / y, and 0 where y = hypot(a, b) is 0 (the origin, where t is 0 too): a subgradient there, as math.hypot's
    and norm's, where t / y was NaN (a particle's distance to itself, 0 for every position, made every gradient NaN)."""
    return t / namespace(y).where(y == 0, 1.0, y) if hasattr(y, "shape") else t / y if y else 0.0 * t


def _only_nan(nan, other):
    """Where `nan` is NaN and `other` is not."""
    return (nan != nan) & (other == other)


BINARY = {
    np.add: (lambda a, b, y: 1, lambda a, b, y: 1),
    np.subtract: (lambda a, b, y: 1, lambda a, b, y: -1),
    np.multiply: (lambda a, b, y: b, lambda a, b, y: a),
    np.divide: (lambda a, b, y: 1 / b, lambda a, b, y: -y / b),
    np.maximum: (lambda a, b, y: _ties(a, b, y, a > b), lambda a, b, y: _ties(a, b, y, b > a)),
    np.minimum: (lambda a, b, y: _ties(a, b, y, a < b), lambda a, b, y: _ties(a, b, y, b < a)),
    # (b / r / r with r = hypot(a, b): a * a + b * b overflows, and underflows, where atan2 is finite)
    np.arctan2: (lambda a, b, y: b / _radius(a, b) / _radius(a, b), lambda a, b, y: -a / _radius(a, b) / _radius(a, b)),
    np.hypot: (lambda a, b, y: _over_radius(a, y), lambda a, b, y: _over_radius(b, y)),
    np.logaddexp: (lambda a, b, y: log_add_shares(a, b, namespace(y).exp)[0],
                   lambda a, b, y: log_add_shares(a, b, namespace(y).exp)[1]),
    np.logaddexp2: (lambda a, b, y: log_add_shares(a, b, lambda t: 2.0 ** t)[0],
                    lambda a, b, y: log_add_shares(a, b, lambda t: 2.0 ** t)[1]),
    # (fmax and fmin ignore a NaN: the other operand is the result, and takes the gradient)
    np.fmax: (lambda a, b, y: _ties(a, b, y, (a > b) | _only_nan(b, a)),
              lambda a, b, y: _ties(a, b, y, (b > a) | _only_nan(a, b))),
    np.fmin: (lambda a, b, y: _ties(a, b, y, (a < b) | _only_nan(b, a)),
              lambda a, b, y: _ties(a, b, y, (b < a) | _only_nan(a, b))),
    np.fmod: (lambda a, b, y: 1, lambda a, b, y: -_trunc(a, b)),
    np.remainder: (lambda a, b, y: 1, lambda a, b, y: -namespace(y).floor(a / b)),
}
for _fn, (_da, _db) in BINARY.items():
    adjoint(_fn, need=True)(_binary(_fn, _da, _db))


@adjoint(np.power)
def power(a, b):
    a, b = as_operand(a), as_operand(b)
    y = _call(np.power, a, b)

    def back(dy):
        if dy is None:
            return (None, None)
        xp = namespace(y)
        if is_complex(y):  # (a complex base or exponent: the principal log of the base, taken as complex)
            db = dy * conj(y * principal_log(a, y))
        else:
            a_ = xp.asarray(a, **on(y))
            positive = a_ > 0
            db = xp.where(positive, dy * y * xp.log(xp.where(positive, a_, 1.0)), 0.0)  # a <= 0: log undefined, 0
        return unbroadcast(dy * conj(power_slope(a, b, lambda u, v: _call(np.power, u, v))), a), unbroadcast(db, b)
    return y, back


@adjoint(np.float_power)
def float_power(a, b):
    """a ** b in float64 (or complex128); d/db is taken as 0 where a <= 0, as for np.power."""
    a, b = as_operand(a), as_operand(b)
    y = _call(np.float_power, a, b)

    def back(dy):
        if dy is None:
            return (None, None)
        xp = namespace(y)
        a_ = xp.asarray(a) if xp is np or hasattr(a, "shape") else xp.asarray(a, dtype=y.dtype, **on(y))
        positive = a_ > 0
        db = dy * conj(y * principal_log(a, y)) if is_complex(y) else \
            dy * y * xp.log(xp.where(positive, a_, 1.0)) * (positive if xp is np else xp.astype(positive, y.dtype))
        da = dy * conj(power_slope(a, xp.asarray(b) if xp is np else b, lambda u, v: _call(np.float_power, u, v)))
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


@adjoint(np.heaviside)
def heaviside(x, h):
    """0 where x < 0, h where x == 0, 1 where x > 0: constant in x (almost everywhere), h where x is 0. It was declared
    non-differentiable: h's gradient was silently None."""
    xp = namespace_of(x, h)
    where = on(x) or on(h)
    x_, h_ = (v if hasattr(v, "dtype") and type(v) is not np.ndarray or xp is np else xp.asarray(v, **where)
              for v in (x, h))
    if xp is np:
        y = np.heaviside(x_, h_)
    else:  # (the array API has no heaviside, and torch's takes tensors of one dtype only)
        dtype = xp.result_type(x_, h_)
        x_, h_ = xp.astype(x_, dtype), xp.astype(h_, dtype)
        y = xp.where(x_ == 0, h_, xp.astype(x_ > 0, dtype))

    def back(dy):
        if dy is None:
            return (None, None)
        at_zero = xp.asarray(x_, **where) == 0
        return None, unbroadcast(xp.where(at_zero, dy, xp.zeros_like(dy)), h)
    return y, back


# --- rules that compute with the namespace of their inputs (composed from array-API functions where it lacks one) -----
namespace_generic(*ELEMENTWISE, np.abs, np.absolute, np.sinc, np.nan_to_num, *BINARY, np.power, np.float_power,
                  np.copysign, np.ldexp, np.heaviside)

"""NumPy functions composed from array-API functions, for a namespace that lacks them (`array_api_strict` has no cbrt,
exp2, fmax, sinc, ...). `function(np.cbrt, xp)` falls back here: each entry builds, from `xp`, a function with NumPy's
signature (the arguments the rules pass) that computes in `xp`. JAX and torch have most of these under NumPy's names
and never get here.
"""
import math

import numpy as np

LN2 = math.log(2)


def _pair(xp, a, b):
    """a and b as arrays of xp: a Python number takes the other argument's dtype (as NumPy's weak scalars do)."""
    if not hasattr(a, "shape"):
        a = xp.asarray(a, dtype=b.dtype)
    if not hasattr(b, "shape"):
        b = xp.asarray(b, dtype=a.dtype)
    return a, b


def _fmax(xp, pick):
    def f(a, b):
        a, b = _pair(xp, a, b)
        return xp.where(xp.isnan(b), a, xp.where(xp.isnan(a), b, pick(a, b)))
    return f


def _fmod(xp):
    def fmod(a, b):  # C's fmod: the remainder of |a| / |b| (exact), with a's sign
        a, b = _pair(xp, a, b)
        return xp.copysign(xp.remainder(xp.abs(a), xp.abs(b)), a)
    return fmod


def _sinc(xp):
    def sinc(x):
        zero = x == 0
        t = math.pi * xp.where(zero, xp.ones_like(x), x)
        return xp.where(zero, xp.ones_like(x), xp.sin(t) / t)
    return sinc


def _float_power(xp):
    def float_power(a, b):
        wide = xp.complex128 if any(_is_complex(v) for v in (a, b)) else xp.float64
        a = xp.astype(a, wide) if hasattr(a, "shape") else xp.asarray(a, dtype=wide)
        b = xp.astype(b, wide) if hasattr(b, "shape") else b
        return xp.pow(a, b)
    return float_power


def _is_complex(v):
    from . import is_complex
    return is_complex(v)


def _angle(xp):
    def angle(z, deg=False):
        if _is_complex(z):
            y = xp.atan2(xp.imag(z), xp.real(z))
        else:  # NumPy's angle of a real number: pi where it is negative
            y = xp.where(z < 0, xp.full_like(z, math.pi), xp.zeros_like(z))
        return y * (180 / math.pi) if deg else y
    return angle


def _nan_to_num(xp):
    def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
        if not hasattr(x, "shape") or not xp.isdtype(x.dtype, ("real floating", "complex floating")):
            return x
        if _is_complex(x):
            fix = _nan_to_num(xp)
            parts = (fix(xp.real(x), nan=nan, posinf=posinf, neginf=neginf),
                     fix(xp.imag(x), nan=nan, posinf=posinf, neginf=neginf))
            return xp.astype(parts[0], x.dtype) + 1j * xp.astype(parts[1], x.dtype)
        big = xp.finfo(x.dtype).max
        y = xp.where(xp.isnan(x), xp.full_like(x, nan), x)
        y = xp.where(xp.logical_and(xp.isinf(y), y > 0), xp.full_like(x, big if posinf is None else posinf), y)
        return xp.where(xp.logical_and(xp.isinf(y), y < 0), xp.full_like(x, -big if neginf is None else neginf), y)
    return nan_to_num


def _ldexp(xp):
    def ldexp(x, i):  # x * 2**i, the power exact in x's floating dtype for the exponents of its range
        if not hasattr(x, "shape"):
            x = xp.asarray(x, dtype=xp.float64)
        if hasattr(i, "shape"):
            return x * xp.pow(xp.asarray(2.0, dtype=x.dtype), xp.astype(i, x.dtype))
        return x * 2.0 ** int(i)
    return ldexp


COMPOSED = {
    np.cbrt: lambda xp: lambda x: xp.sign(x) * xp.abs(x) ** (1 / 3),
    np.exp2: lambda xp: lambda x: 2.0 ** x,
    np.deg2rad: lambda xp: lambda x: x * (math.pi / 180),
    np.radians: lambda xp: lambda x: x * (math.pi / 180),
    np.rad2deg: lambda xp: lambda x: x * (180 / math.pi),
    np.degrees: lambda xp: lambda x: x * (180 / math.pi),
    np.fabs: lambda xp: xp.abs,
    np.fmax: lambda xp: _fmax(xp, xp.maximum),
    np.fmin: lambda xp: _fmax(xp, xp.minimum),
    np.fmod: _fmod,
    np.logaddexp2: lambda xp: lambda a, b: xp.logaddexp(a * LN2, b * LN2) / LN2,
    np.float_power: _float_power,
    np.sinc: _sinc,
    np.angle: _angle,
    np.nan_to_num: _nan_to_num,
    np.ldexp: _ldexp,
}


def composed(np_fn, xp):
    """A function computing `np_fn` from xp's array-API functions, or None where there is no composition."""
    make = COMPOSED.get(np_fn)
    return None if make is None else make(xp)

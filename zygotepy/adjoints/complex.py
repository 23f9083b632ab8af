"""Rules for complex numbers: `np.sign` of a complex number, the numbers' `conjugate` method, their `.real` and
`.imag`, and the `cmath` functions (np.real, np.imag, np.conjugate and np.angle are numpy/complex_parts.py's).

The convention (docs/api.md, Zygote's and PyTorch's): a complex value z = x + iy is two real coordinates, and its
cotangent is the complex number `dL/dx + 1j * dL/dy`. So for a real loss `gradient` returns `df/dx + 1j*df/dy`, and a
holomorphic `w = f(z)` pulls `dw` back to `conj(f'(z)) * dw`. Under it:
- `real(z)` pulls `dy` back to `real(dy)`; `imag(z)` to `1j * real(dy)` (a real output's cotangent is real);
- `conj(z)` pulls back to `conj(dy)`;
- `angle(z) = atan2(y, x)` to `real(dy) * 1j * z / |z|^2`.
Real inputs get real cotangents (`imag` and `angle` of a real value are constants: None).
"""
import cmath

import numpy as np

from ..backends import SIGN_IS_UNIT, conj, is_complex, namespace, unbroadcast
from . import derivatives
from .registry import adjoint, namespace_generic
from .structures.attributes import ATTRIBUTES


def _real(dy):
    return dy.real if is_complex(dy) else dy


# --- parts and conjugation: np.real, np.imag, np.conjugate and np.angle are numpy/complex_parts.py's -------------------

@adjoint(np.sign)
def sign(z):
    """Real inputs: piecewise constant, no gradient. A complex z (NumPy 2): sign(z) = z/|z|, not constant; with
    r = |z|, dw = dz/r - z Re(conj(z) dz)/r^3, so the cotangent c gives c/r - z Re(conj(c) z)/r^3 (0 at z = 0)."""
    xp = namespace(z)
    y = xp.sign(z)

    def back(dy):
        if dy is None or not is_complex(z) or not SIGN_IS_UNIT:
            return (None,)
        r = xp.abs(z)
        safe = xp.where(r == 0, 1, r)
        g = xp.where(r == 0, 0, dy / safe - z * _real(conj(dy) * z) / safe ** 3)
        if type(g) is np.ndarray and g.ndim == 0 and not hasattr(z, "shape"):
            g = g[()]  # a complex scalar's cotangent is a scalar
        return (unbroadcast(g, z),)
    return y, back


namespace_generic(np.sign)  # (computes with namespace(z): `jnp.sign(x)`, `xp.sign(x)`)


def _method_conjugate(z):
    def back(dy):
        return (None if dy is None else conj(dy),)
    return z.conjugate(), back


for _cls in (complex, float, np.complex128, np.complex64, np.float64):  # (ndarray's: numpy/complex_parts.py)
    adjoint(_cls.conjugate)(_method_conjugate)

for _cls in (complex, np.complex128, np.complex64):
    ATTRIBUTES[_cls, "real"] = lambda z, dy: _real(dy) + 0j
    ATTRIBUTES[_cls, "imag"] = lambda z, dy: 1j * _real(dy)
for _cls in (float, np.float64, np.float32):
    ATTRIBUTES[_cls, "real"] = lambda x, dy: _real(dy)
    ATTRIBUTES[_cls, "imag"] = lambda x, dy: None


# --- cmath: holomorphic, so dz = conj(f'(z)) * dw; the derivatives f'(z, w) are rows of derivatives.py ---------------
HOLOMORPHIC = derivatives.forms("cmath")


_REALS = (float, int, bool, np.float64, np.float32)


def _onto(z, g):
    """The cotangent `g` of the argument `z`: its real part where z is a real number (`cmath.sqrt(abs(z))`: the
    imaginary part has no direction of a real input to go to, and passed back it was silently added to the gradient of
    whatever made z)."""
    return g.real if type(z) in _REALS and isinstance(g, (complex, np.complexfloating)) else g


def _holomorphic_rule(fn, derivative):
    def rule(z):
        w = fn(z)

        def back(dw):
            return (None if dw is None else _onto(z, dw * derivative(z, w).conjugate()),)
        return w, back
    rule.__qualname__ = f"cmath_{fn.__name__}_rule"
    return rule


for _fn, _d in HOLOMORPHIC.items():
    if _fn is not cmath.log:  # (below: it takes a base too)
        adjoint(_fn)(_holomorphic_rule(_fn, _d))


@adjoint(cmath.log)
def cmath_log(z, *base):
    """`cmath.log(z)` is a row of the table; `cmath.log(z, b)` is `log(z) / log(b)`, holomorphic in both."""
    if not base:
        return _holomorphic_rule(cmath.log, HOLOMORPHIC[cmath.log])(z)
    w = cmath.log(z, *base)

    def back(dw):
        if dw is None:
            return (None, None)
        lb = cmath.log(base[0])
        return _onto(z, dw * (1 / (z * lb)).conjugate()), _onto(base[0], dw * (-w / (base[0] * lb)).conjugate())
    return w, back


@adjoint(cmath.phase)
def phase(z):
    def back(dy):
        if dy is None or not isinstance(z, complex):
            return (None,)
        r2 = abs(z) ** 2
        return (_real(dy) * 1j * z / (r2 or 1.0),)
    return cmath.phase(z), back


@adjoint(cmath.rect)
def rect(r, phi):
    """`r * e^(i phi)` of real `r` and `phi`: each gets the real part of the complex cotangent times its derivative."""
    w = cmath.rect(r, phi)

    def back(dw):
        if dw is None:
            return (None, None)
        unit = w / r if r else cmath.rect(1.0, phi)
        return (dw * unit.conjugate()).real, (dw * (1j * w).conjugate()).real
    return w, back


@adjoint(cmath.polar)
def polar(z):
    """`(abs(z), phase(z))`: their cotangents joined as the complex cotangent of z (`df/dx + 1j df/dy`)."""
    r, phi = cmath.polar(z)

    def back(dy):
        if dy is None:
            return (None,)
        dr, dphi = dy
        g = 0j
        if dr is not None:
            g += dr * (z / r if r else 1.0)
        if dphi is not None and r:
            g += dphi * 1j * z / (r * r)
        return (g if isinstance(z, complex) else g.real,)
    return (r, phi), back

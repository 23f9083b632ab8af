"""The complex parts of NumPy arrays and numbers: `np.conjugate`, `np.real`, `np.imag`, `np.angle` and the ndarray
methods `conj`/`conjugate`. Cotangents follow the convention gradient = dL/dRe + 1j dL/dIm. (Python's own complex
numbers are complex.py's; where both register a rule, these win: adjoints/__init__.py imports complex.py first.)
"""
import math

import numpy as np

from ...backends import conj, is_complex, namespace, namespace_of, unbroadcast
from ..registry import adjoint, namespace_generic
from .common import _call


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


def conjugate_method(x):
    """`x.conj()`: NumPy's method gives a real array itself, not a copy (`psi.conj() is psi`), so an update in place
    of the result is one of x (`bra = psi.conj(); bra *= 2` doubles psi); the function `np.conjugate` copies."""
    base = x
    while getattr(type(base), "__zygote_number__", False):  # (hessian's dual arrays: the same object, as NumPy's)
        base = base.primal
    if type(base) is np.ndarray and not is_complex(x):
        return x, lambda dy: (dy,)
    return conjugate(x)


for _method in (np.ndarray.conj, np.ndarray.conjugate):
    adjoint(_method)(conjugate_method)

# computed with the namespace of their input (composed from array-API functions where it lacks one)
namespace_generic(np.conjugate, np.real, np.imag, np.angle)

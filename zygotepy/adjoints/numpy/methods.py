"""The ndarray methods whose rules are the functions' (`x.sum()` is `np.sum(x)`: the METHODS table), the methods
of their own (flatten, reshape, view, copy, `copy.copy`/`copy.deepcopy`, astype) and the differentiable array
attributes (`.T`, `.mT`, `.real`, `.imag`).
"""
import numpy as np

from ...backends import unbroadcast
from ...errors import ZygoteError
from ..registry import adjoint
from ..structures.attributes import ATTRIBUTES
from .products import dot
from .reductions import _extremum, mean, sum_
from .reshaping import _order, _unflatten, ravel, squeeze


# --- ndarray methods whose rules are the functions' -------------------------------------------------------------------
METHODS = {np.ndarray.sum: sum_, np.ndarray.mean: mean, np.ndarray.max: _extremum(np.max),
           np.ndarray.min: _extremum(np.min), np.ndarray.dot: dot, np.ndarray.ravel: ravel,
           np.ndarray.squeeze: squeeze}
for _method, _rule in METHODS.items():
    adjoint(_method)(_rule)


# --- ndarray methods of their own -------------------------------------------------------------------------------------
@adjoint(np.ndarray.flatten)
def flatten(x, *args, **kwargs):
    """`x.flatten(order)`: a copy of `x.ravel(order)`, so the same cotangent."""
    _, back = ravel(x, *args, **kwargs)
    return x.flatten(*args, **kwargs), back


@adjoint(np.ndarray.reshape)
def reshape_method(x, *shape, **kwargs):
    """`x.reshape(2, 3)`, `x.reshape((2, 3))`, with `order=` (keyword only, for the method)."""
    order = _order(x, kwargs.get("order", "C"))
    return x.reshape(*shape, **kwargs), lambda dy: (None if dy is None else _unflatten(dy, x, order),
                                                    *(None for _ in shape))


@adjoint(np.ndarray.view)
def view(x, *args, **kwargs):
    """`x.view()` (or `x.view(ndarray)`, `x.view(x.dtype)`): the same values, so the same cotangent. A view as another
    dtype reinterprets the bytes: no gradient can follow that."""
    y = x.view(*args, **kwargs)
    if y.dtype != x.dtype or type(y) is not type(x):
        raise ZygoteError(f"x.view({', '.join(map(repr, args))}) reinterprets the array's memory as {y.dtype}: no "
                          f"gradient follows it; use x.astype(...) to convert values")
    return y, lambda dy: (dy, *(None for _ in args))


@adjoint(np.ndarray.copy)
def copy(x, *args, **kwargs):
    """`x.copy()`, `x.copy("F")`, `x.copy(order="F")`: the same values (the memory layout carries no gradient)."""
    return x.copy(*args, **kwargs), lambda dy: (dy, *(None for _ in args))


@adjoint(np.ndarray.__copy__)
def dunder_copy(x):
    """`copy.copy(x)` of an array (the standard library's `copy` calls it): a new array of the same values."""
    return x.__copy__(), lambda dy: (dy,)


@adjoint(np.ndarray.__deepcopy__)
def dunder_deepcopy(x, memo):
    """`copy.deepcopy(x)`, also of a list or dict holding arrays: a new array of the same values."""
    return x.__deepcopy__(memo), lambda dy: (dy, None)


@adjoint(np.ndarray.astype)
def astype(x, dtype, **kwargs):
    y = x.astype(dtype, **kwargs)
    keeps = y.dtype.kind in "fc"  # float <-> float keeps the gradient; to an integer type drops it

    def back(dy):
        if dy is None or not keeps:
            return (None, None)
        g = unbroadcast(dy, x)  # the real part for a real x
        if x.dtype.kind not in "fc":
            return (g, None)
        return (g.astype(x.dtype) if hasattr(g, "astype") else x.dtype.type(g), None)  # (a float: of a NumPy scalar)
    return y, back


# --- array attributes -------------------------------------------------------------------------------------------------
ATTRIBUTES[np.ndarray, "T"] = lambda x, dy: dy.T
ATTRIBUTES[np.ndarray, "mT"] = lambda x, dy: np.swapaxes(dy, -1, -2)  # NumPy 2's stacked-matrix transpose
ATTRIBUTES[np.ndarray, "real"] = lambda x, dy: dy.real if np.iscomplexobj(x) else dy
ATTRIBUTES[np.ndarray, "imag"] = lambda x, dy: 1j * dy.real if np.iscomplexobj(x) else None

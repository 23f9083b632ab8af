"""`ndarray <op> obj` where `obj` is a user class's object with the reflected method (`__rmul__`, `__radd__`, ...).

Python calls the array's operator first, and NumPy's gives way to `obj`'s reflected method only as its
`binop_should_defer` says: where `obj`'s class sets `__array_ufunc__ = None`, or an `__array_priority__` above the
array's. Otherwise NumPy computes the ufunc itself on `obj` converted to an array: through the sequence protocol
(`__len__`/`__getitem__`) or `__array__` a numeric array, else an object array whose elements are `a[i] * obj` (for a
NumPy scalar or a 0-d array, that one product: `obj.__rmul__(a)`, as where it defers). Calling `obj.__rmul__(array)`
there gave another value and gradient, or crashed later (dispatch.py `_user_operator` asks `array_operand` first).
"""
import operator
import types

import numpy as np

from ..errors import ZygoteError
from .call_checks import call_site
from .guards_runtime import differentiable

_ABSENT = object()
_SCALAR_PRIORITY = -1000000.0  # NumPy's NPY_SCALAR_PRIORITY: the priority of an object that sets none
_ARRAY_LIKE = ("__array__", "__array_interface__", "__array_struct__")
_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
            operator.mod: "%", operator.pow: "**", pow: "**", operator.matmul: "@", operator.iadd: "+=",
            operator.isub: "-=", operator.imul: "*=", operator.itruediv: "/="}


def defers(a, b):
    """NumPy's `binop_should_defer(a, b)`: does the operator of `a` (an ndarray or a NumPy scalar) give way to `b`'s
    reflected method, its class setting no `__array_ufunc__` (see `array_operand`)?"""
    if isinstance(b, type(a)):
        return False
    try:
        theirs = float(getattr(b, "__array_priority__", _SCALAR_PRIORITY))
        ours = float(getattr(a, "__array_priority__", 0.0))
    except (TypeError, ValueError):
        return False
    return ours < theirs


def _array_like(b):
    """Does NumPy convert `b` to an array of its elements (`__array__`, the array interface, a sequence)?"""
    cls = type(b)
    return any(hasattr(cls, name) for name in _ARRAY_LIKE) or hasattr(cls, "__len__") and \
        hasattr(cls, "__getitem__") and not issubclass(cls, dict)  # (no sequence to NumPy: a dict, a StructGrad)


def array_operand(fn, a, b, reflected, dispatch):
    """`fn(a, b)` as NumPy computes it, for `a` an ndarray or a NumPy scalar and `b` another class's object: None where
    NumPy gives way to b's Python method `reflected` (the caller runs it, as before), or where b has none and is no
    array-like (as before); else the `(y, back)` of the ufunc on `b` converted (a constant: its cotangent None), or a
    ZygoteError where `b` carries a gradient that conversion would lose (or an object array would hold)."""
    if getattr(type(b), "__array_ufunc__", _ABSENT) is not _ABSENT:
        # None: NumPy gives way to b's method; a Python method: NumPy calls it with the ufunc, which such classes
        # reach from their reflected methods too (kept as it was)
        return None
    has_method = isinstance(getattr(type(b), reflected, None), types.FunctionType)
    if has_method and defers(a, b):
        return None
    if not _array_like(b):
        if not has_method or np.ndim(a) == 0:
            return None  # (NumPy's object loop computes `b.__rmul__(a)` itself: the same call)
        if differentiable(a) or differentiable(b):
            _refuse(fn, b, "an object array of the products of each element with it")
        return fn(a, b), _Constant()
    if differentiable(b):
        _refuse(fn, b, "an array of its elements (its __len__/__getitem__ or __array__)")
    y, pb = dispatch(fn, (a, np.asarray(b)), None)
    return y, _FirstOnly(pb)


def _refuse(fn, b, made):
    """NumPy's operator converts `b`, which carries a gradient (or makes an object array from an `a` that does)."""
    name = type(b).__name__
    symbol = _SYMBOLS.get(fn, getattr(fn, "__name__", "operator"))
    raise ZygoteError(f"{call_site() or 'an operator'}: zygotepy cannot differentiate `array {symbol} {name}`: NumPy's "
                      f"operator does not give way to {name} here (its class sets neither `__array_ufunc__ = None` nor "
                      f"an `__array_priority__`) but converts the {name} into {made}, which zygotepy does not follow; "
                      f"give {name} `__array_ufunc__ = None` (or an `__array_priority__`) so that its own operator "
                      f"method runs, or convert it explicitly (`np.array([obj.x, obj.y])`)")


class _FirstOnly:
    """The pullback of the ufunc on `b` converted: `(dfunc, da, db)` -> `(None, da, None)`, `b` being a constant."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy):
        return None, self.inner(dy)[1], None


class _Constant:
    """Nothing differentiable went in: `(None, None, None)`."""
    __slots__ = ()

    def __call__(self, dy):
        return None, None, None

"""The arithmetic operators of dual numbers (`x * y`, `x += y`, `-x`), installed on `Dual`: each runs its operator's
tangent rule (`apply`), except beside an object of a user's class with its own reflected operator, to which Python's
protocol hands the operation (`user_operand`). Imported by the package, so that every dual number has them.
"""
import operator

import numpy as np

from ..backends import is_array_type
from .dual import Dual, apply, strip


def user_operand(x):
    """Is `x` an object of a user's class (not a number, an array, a dual number or a builtin container)? Where it has
    its own reflected operator (`Param.__rmul__` for `x * p`), Python runs that code with the dual number, as it does
    with a float: the tangent rules, written for numbers and arrays, would take the object for a constant (a plain
    float and a leaked dual number came back)."""
    return not isinstance(x, (Dual, np.ndarray, np.generic, int, float, complex, str, bytes, list, tuple, dict)) \
        and not is_array_type(type(x))


_OPERANDS = frozenset((float, int, np.ndarray, np.float64, np.float32, bool, complex))  # (asked without a call)


def _binary(op, reflected_name):
    def forward(self, other):
        if type(other) not in _OPERANDS and hasattr(type(other), reflected_name) and user_operand(other):
            return NotImplemented
        return apply(op, (self, other), {})

    def reflected(self, other):
        return apply(op, (other, self), {})
    return forward, reflected


def _in_place(op, reflected_name):
    """`x op= y` on a Dual of an array updates it in place, as NumPy does, so that a list or an alias holding it sees
    the change (without this, `for v in vs: v *= c` left `vs` unchanged: forward mode differentiated another
    function); a Dual of a number rebinds, as Python numbers do."""
    def method(self, other):
        if type(other) not in _OPERANDS and hasattr(type(other), reflected_name) and user_operand(other):
            return NotImplemented
        result = apply(op, (self, other), {})
        if not isinstance(strip(self.primal), np.ndarray):
            return result
        self[...] = result
        return self
    return method


for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
                   ("pow", operator.pow), ("matmul", operator.matmul), ("mod", operator.mod),
                   ("floordiv", operator.floordiv)):
    _f, _r = _binary(_op, f"__r{_name}__")
    _i = _in_place(_op, f"__r{_name}__")
    _f.__name__, _r.__name__, _i.__name__ = f"__{_name}__", f"__r{_name}__", f"__i{_name}__"
    for _method in (_f, _r, _i):
        setattr(Dual, _method.__name__, _method)
for _name, _op in (("neg", operator.neg), ("pos", operator.pos), ("abs", operator.abs)):
    setattr(Dual, f"__{_name}__", lambda self, _op=_op: apply(_op, (self,), {}))

"""Piecewise-constant operations: floor division, rounding (`round`, `math.floor`, `math.ceil`, `math.trunc`), bit
shifts and inversion. On numbers and arrays their derivative is zero (no cotangent). They are rules, not constants
(`nondifferentiable`), because Python hands each to a method a user's class may define (`__floordiv__`, `__round__`,
`__floor__`, `__lshift__`, `__invert__`, ...) that computes from values carrying gradients and returns one: J's
operator protocol (dispatch's `_user_operator`) differentiates that method, and these rules serve everything else.
As constants, such a call's result carried no gradient at all, and the gradient through the user's method was lost."""
import math
import operator

from .registry import adjoint, namespace_generic

PIECEWISE = (operator.floordiv, operator.lshift, operator.rshift, operator.invert, round, math.floor, math.ceil,
             math.trunc)


def _constant_rule(fn):
    def rule(*args):
        return fn(*args), lambda dy: (None,) * len(args)
    rule.__qualname__ = f"{getattr(fn, '__name__', 'piecewise')}_rule"
    return rule


for _fn in PIECEWISE:
    adjoint(_fn)(_constant_rule(_fn))
namespace_generic(operator.floordiv, operator.lshift, operator.rshift, operator.invert)  # (arrays of any library)

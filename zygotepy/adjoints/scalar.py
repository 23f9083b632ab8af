"""Python operators and the `math` module: a table of derivatives (the `math` functions of one argument come from the
rows of derivatives.py).

Each entry is `target: lambda dy, y, *args: (one cotangent per argument)`, valid for Python int/float/bool arguments. The
compiler pastes these bodies into generated code behind a type guard (the scalar fast path), and the same table gives
every `math` function its ordinary rule. The operators' general rules (complex numbers, arrays with broadcasting,
sequences) are operators.py's.
"""
import cmath
import math
import operator
import types

from ..ast_adjoint import runtime as rt
from ..ast_adjoint.dispatch import J
from . import derivatives
from .registry import adjoint, find_rule, nondifferentiable, scalar_rule

INF = math.inf  # (a power's slope at 0 for an exponent in (0, 1): NumPy's, where Python's `0.0 ** -0.5` raises)

# --- operators on Python numbers (fast path) ---------------------------------------------------------------------------
OPERATORS = {
    operator.add: lambda dy, y, a, b: (dy, dy),
    operator.sub: lambda dy, y, a, b: (dy, -dy),
    operator.mul: lambda dy, y, a, b: (dy * b, dy * a),
    operator.truediv: lambda dy, y, a, b: (dy / b, -dy * y / b),
    # (a negative float to a fractional power is complex: its derivatives, conjugated, as the complex rules give them)
    operator.pow: lambda dy, y, a, b: (0.0 if b == 0 else dy * b * INF if a == 0 and type(b) is not complex and 0 < b < 1
                                       else dy * b * a ** (b - 1) if type(y) is not complex
                                       else dy * (b * a ** (b - 1)).conjugate(),
                                       dy * y * math.log(a) if a > 0 else 0.0 if type(y) is not complex
                                       else dy * (y * cmath.log(a)).conjugate()),
    operator.neg: lambda dy, y, a: (-dy,),
    operator.pos: lambda dy, y, a: (dy,),
    operator.abs: lambda dy, y, a: (dy if a > 0 else -dy if a < 0 else 0.0,),
    abs: lambda dy, y, a: (dy if a > 0 else -dy if a < 0 else 0.0,),
    operator.mod: lambda dy, y, a, b: (dy, -dy * math.floor(a / b)),
}
IN_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
            operator.itruediv: operator.truediv, operator.ipow: operator.pow, operator.imod: operator.mod}

# --- the math module: the functions of one argument are rows of derivatives.py; here those that branch or take two -----
def sign_bit(v):
    """Is `v`'s sign bit set (-0.0's too, which `v < 0` misses: copysign(x, -0.0) is -|x|)? A dual number's is its
    value's."""
    while getattr(type(v), "__zygote_number__", False):
        v = v.primal
    return math.copysign(1.0, v) < 0


MATH = {
    **derivatives.forms("scalar"),
    math.atan2: lambda dy, y, a, b: (dy * b / math.hypot(a, b) / math.hypot(a, b),  # (a * a + b * b overflows)
                                     -dy * a / math.hypot(a, b) / math.hypot(a, b)),
    math.pow: lambda dy, y, a, b: (dy * b * INF if a == 0 and 0 < b < 1 else dy * b * a ** (b - 1) if b != 0 else 0.0,
                                   dy * y * math.log(a) if a > 0 else 0.0),
    math.hypot: lambda dy, y, a, b: (dy * a / y if y else 0.0, dy * b / y if y else 0.0),
    math.fabs: lambda dy, y, x: (dy if x > 0 else -dy if x < 0 else 0.0,),
    math.copysign: lambda dy, y, a, b: (dy if sign_bit(a) == sign_bit(b) else -dy, None),
    math.fmod: lambda dy, y, a, b: (dy, -dy * math.trunc(a / b)),
    math.remainder: lambda dy, y, a, b: (dy, -dy * round(a / b)),  # (a - n b, n the nearest integer to a / b)
    math.ldexp: lambda dy, y, x, i: (dy * 2.0 ** i, None),
}  # gamma and lgamma need digamma, which math lacks: their rules are in math_gamma.py
if hasattr(math, "cbrt"):
    MATH[math.cbrt] = lambda dy, y, x: (dy / (3 * y * y) if y != 0 else math.inf,)

nondifferentiable(operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.not_,
                  operator.truth, operator.is_, operator.is_not, operator.contains, operator.ifloordiv,
                  math.isnan, math.isinf, math.isfinite,
                  math.factorial, math.comb, math.perm, math.gcd, math.isclose, math.ulp)
# (`//`, shifts, `~`, `round`, `math.floor`, ... are rules in piecewise.py: a user's class may define them; `|` has a
# rule in mutation/operators.py: a dict merge carries its entries' gradients; `&` and `^` in structures/sets.py: on
# sets they combine their elements; on numbers and masks all three are data)


foreign_rule = rt.foreign_rule  # (generated code's `number_value` asks the same question)


def _math_rule(fn, derivative):
    """A `math` function's rule, from its scalar derivative (math functions take Python numbers only)."""
    def rule(*args):
        hook = foreign_rule(args)
        if hook is not None:
            return hook(fn, *args)
        y = fn(*args)

        def back(dy):
            if dy is None:
                return (None,) * len(args)
            return derivative(dy, y, *args)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _user_numbers(fn, *args):
    """`fn(*args)` of a `math` function where an argument is a user's object with a Python `__float__`, which `math`
    calls: converted as `float(obj)` is (its `__float__` differentiated), then `fn`'s rule on the numbers."""
    converted = [as_float(a) if type(getattr(type(a), "__float__", None)) is types.FunctionType else (a, None)
                 for a in args]
    y, back = find_rule(fn)(*(v for v, _ in converted))

    def user_back(dy):
        grads = back(dy)
        return tuple(g if pb is None or g is None else pb(g)[1] for g, (_, pb) in zip(grads, converted, strict=True))
    return y, user_back


def as_float(obj):
    """`float(obj)` of a user's class: its `__float__` differentiated, `(value, pullback)`."""
    value, pb = J(type(obj).__float__, obj)
    return float(value), pb


rt.USER_NUMBER_HOOK[0] = _user_numbers


# Derivatives that reuse a value the forward computes anyway (sin's is the cos of the same argument), from the rows: a
# loop's fast copy (ast_adjoint/optimize/loop_copies.py) takes them when one iteration computes both, as hand-written
# code would: the backward then calls neither.
SHARED = derivatives.shared()

for _fn, _d in MATH.items():
    adjoint(_fn)(_math_rule(_fn, _d))
    scalar_rule(_fn, _d, shares=SHARED.get(_fn))


@adjoint(math.log)
def log(x, *base):
    hook = foreign_rule((x, *base))
    if hook is not None:
        return hook(math.log, x, *base)
    y = math.log(x, *base)

    def back(dy):
        if dy is None:
            return (None,) * (1 + len(base))
        if not base:
            return (dy / x,)
        lb = math.log(base[0])
        return (dy / (x * lb), -dy * y / (base[0] * lb))
    return y, back


@adjoint(math.hypot)
def hypot(*coords):
    """hypot takes any number of coordinates (the table's scalar form is the two-argument one); 0 at the origin."""
    hook = foreign_rule(coords)
    if hook is not None:
        return hook(math.hypot, *coords)
    y = math.hypot(*coords)

    def back(dy):
        if dy is None:
            return (None,) * len(coords)
        return tuple(dy * c / y if y else 0.0 for c in coords)
    return y, back


for _inplace, _plain in IN_PLACE.items():
    # augmented assignment on numbers: the plain operator's template (its rule, which updates arrays in place and
    # undoes that in the backward, is the mutation table's: adjoints/mutation/operators.py)
    scalar_rule(_inplace, OPERATORS[_plain])

for _op, _d in OPERATORS.items():
    scalar_rule(_op, _d)

"""`math.gamma` and `math.lgamma`: their derivatives need the digamma function, which the `math` module lacks.

    d/dx gamma(x) = gamma(x) * digamma(x)        d/dx lgamma(x) = digamma(x)

(lgamma is log|gamma|, so the second holds for negative non-integer x too.) Digamma comes from SciPy when it is
installed (`scipy.special.digamma`) and otherwise from `_digamma`, a pure-Python version accurate to a few ulps: SciPy
is an optional dependency, and the core install must still differentiate these two.

The rules are kept out of scalar.py's MATH table on purpose: that table's rules are those the rule table of
tests/adjoints checks row by row; these are checked by tests/adjoints/test_math_gamma.py, with and without SciPy.
"""
import math

from ..ast_adjoint import runtime as rt
from .registry import adjoint, scalar_rule

# Bernoulli terms of the asymptotic series psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k), k = 1..7
_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma(x):
    """digamma(x) = d/dx log gamma(x) for a real x, in pure Python (nan at the poles 0, -1, -2, ...).

    Why this way: for x >= 10 the asymptotic series above, cut after the x^-14 term, is exact to double precision; the
    recurrence psi(x) = psi(x + 1) - 1/x carries smaller x up there, and the reflection formula
    psi(x) = psi(1 - x) - pi / tan(pi x) takes x < 1/2 to 1 - x > 1/2."""
    x = float(x)
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    if x < 0.5:
        return _digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    shift = 0.0
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = 0.0
    for c in reversed(_SERIES):  # Horner in 1/x^2
        series = (series + c) * inv2
    return shift + math.log(x) - 0.5 / x - series


try:  # SciPy's, when installed (C, vectorised); the pure-Python one otherwise
    from scipy.special import digamma as _scipy_digamma
except ImportError:
    _scipy_digamma = None


def digamma(x):
    """digamma of a Python number, as a Python float."""
    return float(_scipy_digamma(x)) if _scipy_digamma is not None else _digamma(x)


# the derivatives, in scalar.py's table style: `lambda dy, y, *args: (one cotangent per argument)`. They are also
# registered as scalar derivatives, which the compiler inlines on Python numbers (`digamma` is read from this module)
GAMMA = {
    math.gamma: lambda dy, y, x: (dy * y * digamma(x),),
    math.lgamma: lambda dy, y, x: (dy * digamma(x),),
}


def _rule(fn, derivative):
    """The rule of one of these `math` functions (Python numbers only; forward mode's dual numbers go through their
    own hook, as for scalar.py's math rules)."""
    def rule(x):
        hook = rt.foreign_rule((x,))
        if hook is not None:
            return hook(fn, x)
        y = fn(x)

        def back(dy):
            return (None,) if dy is None else derivative(dy, y, x)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


for _fn, _d in GAMMA.items():
    adjoint(_fn)(_rule(_fn, _d))
    scalar_rule(_fn, _d)

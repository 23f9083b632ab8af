"""The scalar derivative table (zygotepy/adjoints/scalar.py), which the optimised code pastes behind a type guard and
which gives the `math` functions their rules, against central differences in float64, with every optimisation on and
off: the rows whose derivative branches (a negative base to a fractional power, whose result is complex) or calls a
builtin (math.remainder's `round`)."""
import math

import pytest

from zygotepy import gradient


def _central(f, args, k, h=1e-6):
    up, down = list(args), list(args)
    up[k] += h
    down[k] -= h
    return (f(*up) - f(*down)) / (2 * h)


CASES = [
    ("sqrt of a negative, imag", lambda a: (a ** 0.5).imag, (-0.3,)),
    ("abs of a fractional power", lambda a: abs(a ** 0.25), (-0.3,)),
    ("negative power, imag", lambda a: (a ** -0.5).imag, (-0.3,)),
    ("both operands, real", lambda a, b: (a ** b).real, (-0.3, 1.5)),
    ("both operands, imag", lambda a, b: (a ** b).imag * 2.0, (-0.3, 1.5)),
    ("constant negative base", lambda b: ((-2.0) ** b).real, (1.5,)),
    ("positive base", lambda a, b: a ** b, (0.3, 1.5)),
    ("remainder", lambda a, b: math.remainder(a, b), (5.3, 1.7)),
    ("fmod", lambda a, b: math.fmod(a, b) * a, (5.3, 1.7)),
]


@pytest.mark.parametrize("name, f, args", CASES, ids=[c[0] for c in CASES])
def test_against_central_differences(name, f, args, mode):
    """With optimisations on, a negative base's fractional power took its derivative unconjugated (the sign of an
    `.imag` read flipped) and the exponent's was 0.0 in both modes; math.remainder raised KeyError: 'round'."""
    grads = gradient(f, *args)
    for k, g in enumerate(grads):
        assert g == pytest.approx(_central(f, args, k), rel=1e-6, abs=1e-8)


def test_a_negative_base_to_an_integral_power_gives_the_exponent_none_in_both_modes(mode):
    """`(-0.3) ** 2.0` is real, and the power is real only on the integers: the exponent's derivative is taken as 0
    there (tests/adjoints/test_rules.py), the same with optimisations on and off (the complex formula gave a number
    with them on)."""
    assert gradient(lambda a, b: a ** b, -0.3, 2.0)[1] == 0.0


def test_copysign_by_a_negative_zero(mode):
    """`(b >= 0)` is True for -0.0, whose sign copysign copies: d/dx copysign(x, -0.0) is -1, not 1."""
    import math
    import zygotepy
    f = lambda x, y: math.copysign(x, y * 0.0)  # noqa: E731  (y < 0: -0.0)
    with zygotepy.optimizations(mode):
        assert zygotepy.gradient(f, 0.7, -1.5)[0] == -1.0
        assert zygotepy.gradient(f, -0.7, -1.5)[0] == 1.0
        assert zygotepy.derivative(lambda t: f(t, -1.5), 0.7) == -1.0


def newsvendor(q, d):
    left = max(q - d, 0.0)  # 0.0 here: the demand exceeds the order
    short = max(d - q, 0.0)
    return 2.0 * left ** 0.5 + 3.0 * short ** 1.5 + math.pow(left, 0.25)


def root_of_a_branch(w):
    s = w if w > 0 else 0.0
    return math.sqrt(s) + w


@pytest.mark.parametrize("f, args", [(newsvendor, (3.0, 5.0)), (root_of_a_branch, (-0.5,))],
                         ids=["max-then-power", "if-then-sqrt"])
def test_a_root_of_a_zero_that_carries_no_gradient(f, args, mode):
    """sqrt and fractional powers of a 0.0 that carries no gradient (a max's or an if's constant): their slope there
    is infinite, and dropped; Python's `0.5 / 0.0` and `0.0 ** -0.5` raised ZeroDivisionError."""
    got = gradient(f, *args)
    for k in range(len(args)):
        assert (got[k] or 0.0) == pytest.approx(_central(f, args, k), rel=1e-6, abs=1e-8), k


def test_the_root_of_a_zero_that_carries_one_is_infinite(mode):
    assert gradient(math.sqrt, 0.0) == (math.inf,) and gradient(lambda x: x ** 0.5, 0.0) == (math.inf,)

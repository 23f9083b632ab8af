"""Rules of Python's builtins and math functions (adjoints/builtins.py): `complex(x)` of one argument, `math.prod`
and `math.dist`, checked against one plain call and central finite differences (tests/plain_checks.py)."""
import math
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, hessian

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import agree_at  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


def test_complex_of_one_argument():
    """complex(x) of one differentiated float raised a ZygoteError about its own rule (two cotangents)."""
    agree(lambda x: complex(x[0]).real * 2 + abs(complex(x[1])) + (complex(x[2], x[3]) * 1j).real)


def test_math_prod_and_dist():
    """math.prod and math.dist raised MissingAdjoint; a zero among prod's items must not divide anything."""
    import math
    agree(lambda x: math.prod([x[0], x[1], x[2]]) + math.prod([x[0], x[1] * 0.0, x[2]], start=x[3])
          + math.dist([x[0], x[1]], [x[2], x[3]]) + math.dist([x[0]], [x[0]]))


def test_sum_joining_lists_and_tuples():
    """`sum(rows, [])` joins lists (and tuples): each joined sequence gets its part of the cotangent. It was a
    ValueError from the generated backward (the number rule's cotangent for the start)."""
    agree(lambda x: (lambda p: p[0] * p[1] + p[2] ** 2)(sum([[x[0] * x[3]], [x[1]], [x[2], x[0]]], [])))
    agree(lambda x: (lambda p: p[0] * p[1] - p[2] * p[3])(sum([(x[0],), (x[1], x[2])], (x[3] * 2.0,))))
    agree(lambda x: sum([[x[0]], [x[1] * x[2]]], start=[x[3]])[2] * 3.0)
    agree(lambda x: sum([x[:2], x[2:]], x[1:3] * 0.5)[1] + sum([x * x[0], x], np.zeros(4))[3])


class _Doubled:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        return self.v * 2.0


def test_float_of_a_user_class_differentiates_its_dunder():
    # (refused as a conversion zygotepy does not follow)
    def f(x):
        return float(_Doubled(x)) * x
    assert gradient(f, 1.5) == (pytest.approx(4 * 1.5),)
    assert hessian(f, 1.5) == pytest.approx(4.0)


class _Bag:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iter__(self):
        return iter([self.a, self.b * 2])


class _Tripled:
    def __init__(self, xs):
        self.xs = xs

    def __getitem__(self, i):
        return self.xs[i] * 3


@pytest.mark.parametrize("f, want, second", [
    (lambda x: sum(_Bag(x * x, x)) * x, lambda x: 3 * x * x + 4 * x, lambda x: 6 * x + 4),
    (lambda x: sum(_Tripled([x, x * x]), 1.0), lambda x: 3 + 6 * x, lambda x: 6.0)], ids=["__iter__", "__getitem__"])
def test_sum_over_a_user_class_differentiates_its_iteration(f, want, second):
    # (refused: `list(v)` was suggested)
    assert gradient(f, 1.5) == (pytest.approx(want(1.5)),)
    assert hessian(f, 1.5) == pytest.approx(second(1.5))


def _frexp_mix(x):
    m, e = math.frexp(x * x)
    return m * 3.0 + e


def _modf_mix(x):
    frac, whole = math.modf(x * 3.0)
    return frac * frac + whole


@pytest.mark.parametrize("f, want, second", [
    (_frexp_mix, lambda x: 6 * x / 2.0 ** math.frexp(x * x)[1], lambda x: 6 / 2.0 ** math.frexp(x * x)[1]),
    (_modf_mix, lambda x: 6 * math.modf(3 * x)[0], lambda x: 18.0)], ids=["frexp", "modf"])
def test_frexp_and_modf(f, want, second):
    # (refused: no rule)
    for x in (1.3, -2.7, 0.2):
        assert gradient(f, x) == (pytest.approx(want(x), rel=1e-12),)
        assert hessian(f, x) == pytest.approx(second(x), rel=1e-12)


def test_math_of_a_user_class_converts_it_as_float_does():
    # (math.sin(obj) calls obj.__float__: its gradient crashed beside float(obj)'s, `float + StructGrad`)
    def f(x):
        s = _Doubled(x)  # (float(s) is 2x)
        return float(s) + math.sin(s) + math.atan2(s, 2.0) + math.log(s, 2.0)
    for x in (0.7, 1.9):
        want = 2 + 2 * math.cos(2 * x) + 4 / (4 + 4 * x * x) + 1 / (x * math.log(2.0))
        assert gradient(f, x) == (pytest.approx(want, rel=1e-12),)
    assert gradient(lambda x: math.sin(_Doubled(0.5 * x)) * math.sin(x), 0.3) == (pytest.approx(math.sin(0.6), rel=1e-12),)


@pytest.mark.parametrize("f", [
    lambda x: pow(float(x[0]) + 1.0, float(x[3]), None) * x[1],
    lambda x: pow(x[3] + 1.0, x[2], mod=None),
    lambda x: round(float(x[2]), ndigits=2) * x[2] + x[1],
    lambda x: round(x[2] * x[3], 1) * x[0]],
    ids=["pow-with-mod-None", "pow-with-mod-by-keyword", "round-with-ndigits-by-keyword", "round-of-a-product"])
def test_builtins_with_their_optional_arguments(mode, f):
    # `pow(a, b, None)` is `a ** b` (its rule took the None for a modulus: no gradient), and a builtin's own keywords
    # (`ndigits=`, `mod=`) reach the rule that takes them by position
    agree(f)


def test_a_zero_base_to_the_power_zero(mode):
    # d/dx x ** 0.0 is 0 everywhere: the plain form's rule computed 0.0 * 0.0 ** -1.0 at 0 (ZeroDivisionError)
    assert gradient(lambda x: x ** 0.0, 0.0) == (0.0,)
    assert gradient(lambda x, y: x ** y, 0.0, 0.0) == (0.0, 0.0)


class _Belief:
    """A Gaussian belief: `+` fuses two (precision-weighted), which is not field-by-field addition."""

    def __init__(self, mu, prec):
        self.mu, self.prec = mu, prec

    def __add__(self, other):
        if not isinstance(other, _Belief):  # (sum's start 0)
            return self
        p = self.prec + other.prec
        return _Belief((self.mu * self.prec + other.mu * other.prec) / p, p)

    __radd__ = __add__

    def __mul__(self, other):
        if not isinstance(other, _Belief):
            return _Belief(self.mu * other, self.prec)
        return _Belief(self.mu * other.mu, self.prec * other.mu + other.prec * self.mu)

    __rmul__ = __mul__


def _fused_with_a_prior(v):
    m1, m2, p1, p2 = v
    return sum([_Belief(m1, p1), _Belief(m2, p2)], _Belief(0.3, 1.0)).mu


def _fused_by_radd(v):
    m1, m2, p1, p2 = v
    return sum(_Belief(m, p) for m, p in ((m1, p1), (m2, p2))).mu


def _float_start_with_objects(v):
    m1, m2, p1, p2 = v
    return sum([_Belief(m1, p1), _Belief(m2, p2)], start=m1 * p2).mu * p1


def _product_of_objects(v):
    m1, m2, p1, p2 = v
    return math.prod([_Belief(m1, p1), _Belief(m2, p2)], start=m2).prec


@pytest.mark.parametrize("f", [_fused_with_a_prior, _fused_by_radd, _float_start_with_objects, _product_of_objects],
                         ids=lambda f: f.__name__)
def test_sum_and_prod_of_objects_run_their_operators(f, mode):
    """`sum` handed dy to every item (1.0, 1.0, None, None for (0.33, 0.5, 0.11, -0.07)): right for numbers, not for a
    class whose `+` fuses; a float start beside objects got a StructGrad; `math.prod` of them raised TypeError."""
    agree_at(f, np.array([0.7, -0.4, 2.0, 3.0]))


def test_a_numpy_array_of_objects_is_refused(mode):
    def fused(m1, m2):
        return np.sum(np.array([_Belief(m1, 2.0), _Belief(m2, 3.0)], dtype=object)).mu

    with pytest.raises(ZygoteError, match=r"test_builtins.py:\d+: zygotepy cannot differentiate a NumPy array of "
                                          r"_Belief objects"):
        gradient(fused, 0.7, -0.4)


_KNOTS = [0.0, 0.5, 1.0, 1.5]


def _piecewise_by_bisect(x):
    import bisect
    k = bisect.bisect_left(_KNOTS, x)
    j = bisect.bisect(_KNOTS, x * 0.5)
    return 3.0 * x * k + j * x ** 2 + (x if (x * 2).is_integer() else 2 * x)


def test_positions_and_questions_of_a_value_are_data(mode):
    """`bisect.bisect_left`, `bisect.bisect` and `float.is_integer` give integers and bools: they raised MissingAdjoint."""
    assert gradient(_piecewise_by_bisect, 0.7) == (pytest.approx(9.4),)
    assert hessian(_piecewise_by_bisect, 0.7) == pytest.approx(2.0)


def test_a_numpy_ufunc_of_objects_is_refused(mode):
    """`np.add(b1, b2)` runs `_Belief.__add__`; the rule for numbers crashed in the backward (TypeError)."""
    def fused(m1, m2):
        return np.add(_Belief(m1, 2.0), _Belief(m2, 3.0)).mu

    with pytest.raises(ZygoteError, match=r"test_builtins.py:\d+: zygotepy cannot differentiate np.add of objects"):
        gradient(fused, 0.7, -0.4)


def test_a_log_line_inside_a_differentiated_function(caplog, mode):
    """`log.info("loss=%s", y)` with logging on at INFO: logging's own code was differentiated and refused."""
    import logging
    log = logging.getLogger("zygotepy-test-train")

    def f(x):
        y = np.sum(x ** 3)
        log.info("loss=%s", y)
        logging.debug("x=%s", x)
        return y
    with caplog.at_level(logging.DEBUG):
        agree_at(f, np.array([0.7, -0.2]))
    assert any(r.getMessage().startswith("loss=") for r in caplog.records)

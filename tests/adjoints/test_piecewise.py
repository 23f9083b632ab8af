"""Piecewise-constant operations (adjoints/piecewise.py): no gradient on numbers and arrays, and a user class's own
`__floordiv__`, `__round__`, `__floor__`, `__lshift__`, `__invert__`, ... differentiated like any method. Each row
against central differences in float64."""
import math

import numpy as np
import pytest

from zygotepy import gradient, hessian


class Scaled:
    """A number-like class whose piecewise operators compute smoothly from its value (a user's choice)."""

    def __init__(self, v):
        self.v = v

    def __floordiv__(self, k):
        return Scaled(self.v * k)

    def __rfloordiv__(self, k):
        return Scaled(k / self.v)

    def __lshift__(self, k):
        return Scaled(self.v * 2 ** k)

    def __rshift__(self, k):
        return Scaled(self.v / 2 ** k)

    def __invert__(self):
        return Scaled(-self.v * self.v)

    def __round__(self, ndigits=None):
        return Scaled(self.v * (3 if ndigits is None else ndigits))

    def __floor__(self):
        return Scaled(math.sin(self.v))

    def __ceil__(self):
        return Scaled(math.exp(self.v))

    def __trunc__(self):
        return Scaled(self.v ** 3)


USER_ROWS = {
    "floordiv": lambda x: (Scaled(x) // 3).v,
    "rfloordiv": lambda x: (2.0 // Scaled(x)).v,
    "lshift": lambda x: (Scaled(x) << 2).v,
    "rshift": lambda x: (Scaled(x) >> 1).v,
    "invert": lambda x: (~Scaled(x)).v,
    "round": lambda x: round(Scaled(x)).v,
    "round_ndigits": lambda x: round(Scaled(x), 2).v,
    "floor": lambda x: math.floor(Scaled(x)).v,
    "ceil": lambda x: math.ceil(Scaled(x)).v,
    "trunc": lambda x: math.trunc(Scaled(x)).v,
    "mixed": lambda x: round(Scaled(x)).v * x + math.floor(x * 2.0) + x // 0.5,
}


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("name", USER_ROWS)
def test_user_class_methods_are_differentiated(name):
    f = USER_ROWS[name]
    (g,) = gradient(f, 1.3)
    assert g is not None
    assert g == pytest.approx(central(f, 1.3), rel=1e-6)


@pytest.mark.parametrize("name", ["floordiv", "round", "floor", "trunc", "lshift"])
def test_user_class_methods_second_order(name):
    f = USER_ROWS[name]
    assert hessian(f, 1.3) == pytest.approx(central(lambda x: gradient(f, x)[0], 1.3), rel=1e-5, abs=1e-8)


NUMBER_ROWS = {
    "floordiv": lambda x: x // 0.5 + x,
    "round": lambda x: round(x) + round(x * 10, 1) + x,
    "floor_ceil_trunc": lambda x: math.floor(x * 3) + math.ceil(x) + math.trunc(x) + 2 * x,
    "int_shift": lambda x: float(int(x * 4) << 1) + x,
}


@pytest.mark.parametrize("name", NUMBER_ROWS)
def test_numbers_have_no_gradient_through_them(name):
    f = NUMBER_ROWS[name]
    (g,) = gradient(f, 1.37)
    assert g == pytest.approx(central(f, 1.37), rel=1e-9)


def test_arrays_floor_division():
    def f(x):
        return np.sum(x // 0.5 * x)
    x = np.array([0.3, 1.2, 2.7])
    (g,) = gradient(f, x)
    np.testing.assert_allclose(g, x // 0.5)

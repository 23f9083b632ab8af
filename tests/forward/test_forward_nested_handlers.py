"""Forward mode through a nested `def` whose transformed code uses names its text does not: an `except` handler
(transformed to start with `__zygote_call__.own_errors()`), `x.__class__` (`class_of`), a `match` on a class
pattern (`class_patterns`). The nested function's code comes from the transformed parent; it used to be read again
from the file, where `get_source` found its text "not the code that runs" and forward mode refused it as an edited
file (`jvp` and `derivative` failed where `gradient` worked)."""
import math

import numpy as np
import pytest

from plain_checks import central
from zygotepy import derivative, gradient, hessian, jvp


def nested_try(x):
    def inner(v):
        try:
            return math.log(v)
        except ValueError:
            return v
    return inner(x) * 2.0


def nested_try_named_error(x):
    def inner(v):
        try:
            if v > 10.0:
                raise ValueError("big")
            return math.sin(v) * v
        except ValueError as err:
            return len(str(err)) * v
    return inner(x) + inner(x * 20.0)


def nested_try_else(x):
    def inner(v):
        try:
            out = math.exp(v)
        except OverflowError:
            out = v
        else:
            out = out * v
        return out
    return inner(x) + inner(x)


def two_levels_deep(x):
    def outer(v):
        def innermost(w):
            try:
                return math.cos(w) * w
            except ZeroDivisionError:
                return w
        return innermost(v) ** 2
    return outer(x) + x


def lambda_beside_handler(x):
    def inner(v):
        scale = lambda w: w * math.tanh(w)  # noqa: E731
        try:
            return scale(v) / (v - 3.0)
        except ZeroDivisionError:
            return v
    return inner(x)


def nested_class_attribute(x):
    def inner(v):
        return v * 3.0 if v.__class__ is float else v
    return inner(x) ** 2


def nested_match_class(x):
    def inner(v, label):
        match label:
            case str():
                return v * v
            case _:
                return v
    return inner(x, "square") + 1.0


FUNCTIONS = [nested_try, nested_try_named_error, nested_try_else, two_levels_deep, lambda_beside_handler,
             nested_class_attribute]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0.7, 1.5])
def test_forward_mode_through_nested_transformed_code(mode, f, x):
    want = central(f, (x,), 0)
    value, tangent = jvp(f, (x,), (1.0,))
    assert value == pytest.approx(f(x), rel=1e-12)
    assert tangent == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert derivative(f, x) == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert gradient(f, x)[0] == pytest.approx(want, rel=1e-6, abs=1e-6)
    of_grad = lambda v: gradient(f, v)[0]  # noqa: E731
    assert hessian(f, x) == pytest.approx((of_grad(x + 1e-5) - of_grad(x - 1e-5)) / 2e-5, rel=1e-4, abs=1e-4)


@pytest.mark.parametrize("x", [0.7, 1.5])
def test_forward_mode_through_nested_match(mode, x):
    """(reverse mode refuses `match`: forward mode alone)"""
    want = central(nested_match_class, (x,), 0)
    assert jvp(nested_match_class, (x,), (1.0,))[1] == pytest.approx(want, rel=1e-6)
    assert derivative(nested_match_class, x) == pytest.approx(want, rel=1e-6)


def test_nested_function_keeps_the_users_qualified_name(mode):
    """The functions transformed code makes are named as plain Python names them, not after the factory."""
    def named(x):
        def inner(v):
            try:
                return v * 2.0
            except ValueError:
                return v
        assert inner.__qualname__.endswith("test_nested_function_keeps_the_users_qualified_name.<locals>.named."
                                           "<locals>.inner"), inner.__qualname__
        assert "__zygote" not in (lambda: 0).__qualname__
        return inner(x)
    assert jvp(named, (1.5,), (1.0,)) == (3.0, 2.0)


def test_array_argument(mode):
    x = np.array([0.3, 1.1, 2.0])
    value, tangent = jvp(lambda v: np.sum(np.array([nested_try(a) for a in v])), (x,), (np.ones(3),))
    assert tangent == pytest.approx(sum(central(nested_try, (a,), 0) for a in x), rel=1e-6)

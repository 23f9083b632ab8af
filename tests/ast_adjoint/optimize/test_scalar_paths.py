"""Scalar paths (ast_adjoint/optimize/scalar_paths.py): a derivative template's element that is the constant None
(`math.copysign`'s sign argument, `math.ldexp`'s exponent) gives no cotangent. It was pasted as one
(`dx = None if dx is None else dx + None`), a TypeError whenever that argument already had a cotangent; with every
optimisation off the plain pair was right. Checked against central differences, on and off."""
import math

import pytest

import zygotepy
from zygotepy.testing import check_grads


def sign_of_itself(x):
    return math.copysign(2.0, x) + x


def sign_in_a_loop(x):
    s = 0.0
    for _ in range(3):
        s = s + math.copysign(0.5, x * s + 1.0) * x
    return s


def magnitude_and_sign(x, b):
    return math.copysign(x, b) * b


def exponent_used_elsewhere(x, n):
    return math.ldexp(x, 3) + n * x


@pytest.mark.parametrize("optimized", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("f, args", [(sign_of_itself, (0.4,)), (sign_in_a_loop, (0.4,)),
                                     (magnitude_and_sign, (0.4, -1.3)), (exponent_used_elsewhere, (0.4, 1.3))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_an_argument_without_a_cotangent_that_has_one_elsewhere(f, args, optimized):
    with zygotepy.optimizations(optimized):
        check_grads(f, *args)


def test_the_sign_by_hand():
    assert zygotepy.gradient(sign_of_itself, 0.4) == (1.0,)


SCALE = 2.0


class Config:
    scale = 2.0
    count = 0


def times_global(x):
    return math.sin(x * SCALE) + x ** SCALE


def times_class_attribute(x):
    return x * Config.scale


def times_counter(x):
    Config.count += 1
    a = x * Config.count
    Config.count += 1
    b = x * Config.count
    return a * b


@pytest.mark.parametrize("on", [True, False])
def test_a_pasted_derivative_reads_the_global_the_forward_read(on):
    """The backward pasted `dt * SCALE`, `dt * Config.scale` and read them when `back` ran: a module global or a
    class attribute rebound between the forward and the backward (or a class counter the function itself counted up)
    gave the derivative at the new value, with the optimisations on."""
    global SCALE
    with zygotepy.optimizations(on):
        try:
            (y, back), (z, back_2) = zygotepy.pullback(times_global, 3.0), zygotepy.pullback(times_class_attribute, 3.0)
            SCALE, Config.scale = 5.0, 5.0
            assert back(1.0)[0] == pytest.approx(2.0 * math.cos(6.0) + 2.0 * 3.0)
            assert back_2(1.0) == (2.0,)
        finally:
            SCALE, Config.scale = 2.0, 2.0
        Config.count = 0
        value, (grad,) = zygotepy.value_and_gradient(times_counter, 0.7)
        assert (value, grad) == (pytest.approx(2 * 0.7 ** 2), pytest.approx(4 * 0.7))


def complex_power_in_a_loop(a, b):
    s = 0.0
    for _ in range(2):
        s = s + abs(b ** a)  # (-2.0) ** 0.5 is complex
    return s


def negative_int_base_in_a_loop(a):
    s = 0.0
    for _ in range(3):
        s = s + abs((-3) ** a) * 0.5
    return s


@pytest.mark.parametrize("on", [True, False])
def test_a_power_that_turns_complex_in_a_loop(on):
    """Inside a loop the scalar path kept the power's result as its pullback slot, and the backward told the paths
    apart by the slot's type: a complex result (a negative base, a fractional exponent) was called as a pullback
    ('complex' object is not callable), with the optimisations on."""
    with zygotepy.optimizations(on):
        check_grads(complex_power_in_a_loop, 0.5, -2.0)
        check_grads(negative_int_base_in_a_loop, 0.7)

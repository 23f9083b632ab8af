"""The fast copy of a scalar loop records only what its backward reads (optimize/loop_copies.py _lean_record): a record that is a
copy of another is dropped and renamed to it. A loop-carried value is pushed before the iteration's `a_2 = a_3`
gives it its next value, so that assignment must not make it look like a copy of `a_3` (tanh's derivative read the
iteration's input instead of its output: a silently wrong gradient, found by the fuzzer)."""
import math

import numpy as np
import pytest

from zygotepy import gradient


def tanh_loop_of_numpy_float(a):
    f0 = np.tanh(a)  # a NumPy float: the loop's guards differ, and no copy coalescing joins a_3 into a_2
    for i in range(2):
        a = math.tanh(a + f0)
    return a


def one_iteration(a):
    f0 = np.tanh(a)
    for i in range(1):
        a = math.tanh(a + f0)
    return a


def numpy_float_product(a):
    f0 = np.float64(a) * 1.0
    for i in range(3):
        a = math.tanh(a + f0) * 0.9
    return a


def then_used_after(a, b):
    f0 = np.tanh(a)
    for i in range(2):
        a = math.tanh(a + f0)
    return f0 + b * 0.5 / (1.5 + a)


@pytest.mark.parametrize("fn, args", [(tanh_loop_of_numpy_float, (-0.0894,)), (one_iteration, (-0.0894,)),
                                      (numpy_float_product, (0.31,)), (then_used_after, (-0.0894, 0.4464))])
def test_a_loop_carried_record_is_its_value_before_the_iteration(fn, args):
    h = 1e-6
    for k, g in enumerate(gradient(fn, *args)):
        up, down = list(args), list(args)
        up[k] += h
        down[k] -= h
        assert g == pytest.approx((fn(*up) - fn(*down)) / (2 * h), rel=1e-7, abs=1e-9)

"""An array combined, in a loop, with one of its own items (`v = v + v[0]`, `v *= v[0]`): the loop copies
(ast_adjoint/optimize/loop_copies.py) took the item read's test at entry (`v` is a float64 vector) for the test that
`v` is a Python number, so the fast copy ran `v + v[0]` on the scalar path: the scalar's cotangent was the array's
cotangent, not its sum, and the item read's backward failed with NumPy's "setting an array element with a sequence";
a scalar argument combined with such an array (`v = v + c`) got an array for its gradient, silently wrong.
With every optimisation off the plain pairs were right. A loop copy now takes only guards Python numbers pass
(`entry_tests`); each gradient is checked against central differences, on and off."""
import os
import sys

import numpy as np
import pytest

import zygotepy
from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def plus_first_item(x):
    v = x * 1.0
    for i in range(2):
        v = v + v[0]
    return float(v.sum())


def add_first_item_in_place(x):
    v = x.copy()
    for i in range(2):
        v += v[0]
    return float(v.sum())


def subtract_half_the_second(x):
    v = x.copy()
    for i in range(3):
        v -= 0.5 * v[1]
    return float(v.sum())


def times_first_item_in_place(x):
    v = x.copy()
    for i in range(2):
        v *= v[0]
    return float(v.sum())


def divide_by_last_item_in_place(x):
    v = x.copy()
    for i in range(2):
        v /= v[-1]
    return float((v * x).sum())


def times_last_item(x):
    v = x * 1.0
    for i in range(2):
        v = v * v[-1]
    return float(v.sum())


def item_of_the_loop_index(x):
    v = x * 1.0
    for i in range(len(v)):
        v = v + v[i] * 0.5
    return float(v.sum())


def two_items(x):
    v = x * 1.0
    for i in range(2):
        v = v - v[0] * v[1]
    return float(v.sum())


def two_items_in_place(x):
    v = x.copy()
    for i in range(2):
        v += v[0] - v[-1]
    return float(v.sum())


def while_over_the_items(x):
    v = x * 1.0
    i = 0
    while i < len(v):
        v = v / (v[i] + 2.0)
        i += 1
    return float(v.sum())


def while_in_place(x):
    v = x.copy()
    k = 0
    while k < 3:
        v *= v[k] * 0.5
        k += 1
    return float(v.sum())


def scalar_carried_beside(x):
    v = x * 1.0
    s = 0.0
    for i in range(3):
        s = s + v[i]
        v = v * s
    return float(v.sum()) + s


def with_a_scalar_argument(x, c):
    v = x * c
    for i in range(2):
        v = v + c * v[1]
    return float(v.sum())


def in_a_branch_of_the_loop(x):
    v = x * 1.0
    for i in range(3):
        if v[0] > 0:
            v = v + v[0]
        else:
            v = v - v[-1]
    return float(v.sum())


def nested_loops(x):
    v = x * 1.0
    for i in range(2):
        for j in range(2):
            v = v + 0.25 * v[j]
    return float((v * v).sum())


def item_then_array_update(x):
    v = x * 1.0
    out = 0.0
    for i in range(3):
        out = out + v[i] * v[0]
        v = np.sin(v) + v[i]
    return out + float(v.sum())


def scaled_by_an_argument(x, c):
    v = x * 1.0
    s = 0.0
    for i in range(3):
        s = s + v[i]
        v = v * c
    return s + float(v.sum())


def shifted_by_an_argument(x, c):
    v = x * 1.0
    s = 0.0
    for i in range(3):
        s = s + v[i] * c
        v = v + c
    return s + float(v[0])


X = np.array([1.04, 2.0, 3.0])
CASES = [(plus_first_item, (X,)), (add_first_item_in_place, (X,)), (subtract_half_the_second, (X,)),
         (times_first_item_in_place, (np.array([0.9, 1.1, 0.7]),)), (divide_by_last_item_in_place, (X,)),
         (times_last_item, (np.array([0.9, 1.1, 0.7]),)), (item_of_the_loop_index, (X,)), (two_items, (X * 0.3,)),
         (two_items_in_place, (X,)), (while_over_the_items, (X,)), (while_in_place, (np.array([1.1, 0.9, 1.3]),)),
         (scalar_carried_beside, (np.array([0.5, 0.4, 0.3]),)), (with_a_scalar_argument, (X, 0.7)),
         (in_a_branch_of_the_loop, (X,)), (in_a_branch_of_the_loop, (-X,)), (nested_loops, (X * 0.5,)),
         (item_then_array_update, (X,)), (scaled_by_an_argument, (X * 0.4, 0.7)),
         (shifted_by_an_argument, (X * 0.4, 0.7))]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_against_central_differences(f, args, mode):
    value, grads = value_and_gradient(f, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert value == pytest.approx(f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]), rel=1e-12)
    for k, g in enumerate(grads):
        assert np.shape(g) == np.shape(args[k]), f"argument {k}"
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-6, atol=1e-6, err_msg=f"argument {k}")


def summed_items(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i]
    return s


@pytest.mark.optimizations
def test_a_loop_on_numbers_keeps_its_copy():
    """Only the loops whose guards test an array at entry lost their fast copy: items summed into a Python float
    keep theirs."""
    assert "_fast" in zygotepy.show_adjoint(summed_items, optimized=True)
    assert "_fast" not in zygotepy.show_adjoint(plus_first_item, optimized=True)
    np.testing.assert_allclose(zygotepy.gradient(summed_items, X)[0], 2 * X)

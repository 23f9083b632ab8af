"""`np.atleast_1d/2d/3d` given several arrays (`a, b = np.atleast_1d(x, y)`), which NumPy answers with a tuple of
them (zygotepy/adjoints/numpy/conversions.py `_lifted_each`): the backward took the tuple for one array and failed
(ValueError), whether one result or all were used. Value and every gradient against central differences."""
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def both_used(x, y):
    a, b = np.atleast_1d(x, y)
    return np.sum(a * b)


def second_used(x, y):
    a, b = np.atleast_1d(x, y)
    return np.sum(b ** 2)


def first_used_2d(x, y):
    a, b = np.atleast_2d(x, y)
    return np.sum(np.sin(a)) + 0.0 * b.shape[0]


def scalar_and_vector_2d(x, y):
    a, b = np.atleast_2d(x[0], y)
    return np.sum(a @ b)


def three_3d(x, y):
    a, b, c = np.atleast_3d(x, y, x[:1] * y[1])
    return np.sum(a * c) + np.sum(b ** 3) + float(a.ndim + b.ndim + c.ndim)


def result_indexed(x, y):
    lifted = np.atleast_1d(x, y)
    return np.sum(lifted[1] * lifted[0][0]) + len(lifted)


def in_a_loop(x, y):
    total = 0.0
    for k in range(2):
        a, b = np.atleast_1d(x * k, y[k])
        total = total + np.sum(a) * np.sum(b)
    return total


FUNCTIONS = [both_used, second_used, first_used_2d, scalar_and_vector_2d, three_3d, result_indexed, in_a_loop]
X, Y = np.array([0.3, -1.2]), np.array([0.8, 0.5])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_several_arrays_lifted(f, mode):
    value, grads = value_and_gradient(f, X.copy(), Y.copy())
    np.testing.assert_allclose(value, f(X.copy(), Y.copy()), rtol=1e-12)
    for k, g in enumerate(grads):
        want = central(f, (X, Y), k)
        np.testing.assert_allclose(np.zeros_like(X) if g is None else g, want, rtol=1e-6, atol=1e-8)


def test_an_unused_argument_gets_none(mode):
    gx, gy = gradient(second_used, X.copy(), Y.copy())
    assert gx is None
    np.testing.assert_allclose(gy, 2 * Y)


def test_numpy_sequence_kept():
    def kind(x, y):
        lifted = np.atleast_1d(x, y)
        assert type(lifted) is type(np.atleast_1d(X, Y))
        return np.sum(lifted[0])
    np.testing.assert_allclose(gradient(kind, X.copy(), Y.copy())[0], np.ones(2))

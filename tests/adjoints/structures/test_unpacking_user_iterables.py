"""Unpacking an object of a user's class that defines `__iter__` (`w, x, y, z = q`; adjoints/structures/sequences.py
`unpack`): walked by its `__iter__`, derived, as `list(q)` is. Its items' cotangents had no way back, and it was
refused in the backward, naming no line. Value and gradient against central differences in float64, in both
optimisation settings, and a `hessian`."""
import numpy as np
import pytest
from plain_checks import central, central_hessian

from zygotepy import gradient, hessian, value_and_gradient

A = np.array([0.5, 0.2, -0.3, 0.8])


class Quat:
    def __init__(self, v):
        self.v = v

    def __iter__(self):
        return iter(self.v)


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iter__(self):
        return iter((self.a, self.b))


class Fields:
    def __init__(self, x):
        self.x = x
        self.names = ["first", "last"]

    def __iter__(self):
        return iter([self.x[0] * 2.0, self.x[-1] ** 2])


def quaternion_product_term(a):
    w, x, y, z = Quat(a * 2.0)
    return w * x + y * z


def pair_of_arrays(a):
    u, v = Pair(a[:2], np.sin(a[2:]))
    return np.sum(u * v) + np.sum(u ** 2)


def computed_items(a):
    first, last = Fields(a)
    return first * last + np.sum(a)


def unpacked_in_a_loop(a):
    s = 0.0
    for k in range(3):
        w, x, y, z = Quat(a * (k + 1.0))
        s = s + w * z - x * y
    return s


@pytest.mark.parametrize("f", [quaternion_product_term, pair_of_arrays, computed_items, unpacked_in_a_loop],
                         ids=lambda f: f.__name__)
def test_unpacking_a_user_iterable_agrees_with_central_differences(f, mode):
    value, (g,) = value_and_gradient(f, A.copy())
    np.testing.assert_allclose(value, f(A.copy()), rtol=1e-12)
    np.testing.assert_allclose(g, central(f, (A.copy(),), 0), rtol=1e-6, atol=1e-8)


def test_the_hessian_of_an_unpacking():
    np.testing.assert_allclose(hessian(quaternion_product_term, A.copy()),
                               central_hessian(quaternion_product_term, A.copy()), rtol=1e-6, atol=1e-7)
    assert gradient(quaternion_product_term, A.copy())[0].shape == A.shape

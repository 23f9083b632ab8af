"""Forward mode through the functions Python answers with a method of a user's class (`abs(v)` runs `Vec.__abs__`,
`round`, `math.floor`, unary minus): the method runs transformed, as any method does (forward/transform.py
`_UNARY_DUNDERS`); `abs(v)` was refused (a dual number converted to a float inside the untransformed method).
`derivative` and `hessian` against central differences in float64."""
import math
import os
import sys

import numpy as np
import pytest

from zygotepy import derivative, hessian

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central_hessian  # noqa: E402


class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __abs__(self):
        return math.sqrt(self.x ** 2 + self.y ** 2)

    def __neg__(self):
        return Vec(-self.x, -self.y * self.x)

    def __round__(self, ndigits=None):
        return self.x * 2.0 + self.y

    def __floor__(self):
        return self.x ** 3


CASES = [
    lambda t: abs(Vec(t, 2.0)),
    lambda t: abs(-Vec(t, 2.0)) * t,
    lambda t: round(Vec(t, t * t)),
    lambda t: math.floor(Vec(t, 1.0)) + math.sin(t),
    lambda t: (-Vec(t, 3.0)).y,
]


@pytest.mark.parametrize("f", CASES, ids=["abs", "abs of neg", "round", "floor", "neg"])
def test_derivative_through_a_user_dunder(f, mode):
    h = 1e-6
    assert derivative(f, 0.7) == pytest.approx((f(0.7 + h) - f(0.7 - h)) / (2 * h), rel=1e-6, abs=1e-8)


def norm(v):
    return abs(Vec(v[0], v[1]))


def test_hessian_through_a_user_abs(mode):
    v = np.array([0.3, 0.4])
    np.testing.assert_allclose(hessian(norm, v), central_hessian(norm, v), rtol=1e-5, atol=1e-6)

"""Comparisons used as values (ast_adjoint/compare_checks.py): a user's comparison method answering a value that
carries a gradient is refused, naming the line; masks, branch tests and truth-valued methods are followed."""
import dataclasses
import math

import numpy as np
import pytest

from zygotepy import gradient, hessian
from zygotepy.errors import ZygoteError


class Soft:
    """A "soft" comparison: `a < b` is a probability, differentiable in both values."""

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return 1.0 / (1.0 + np.exp(self.v - other.v))

    def __gt__(self, other):
        return 1.0 / (1.0 + np.exp(other.v - self.v))

    def __eq__(self, other):
        return self.v * other.v


class Hard:
    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return self.v < other.v


@dataclasses.dataclass(order=True)
class Ordered:
    a: float


def soft_less(x):
    return Soft(x) < Soft(2.0)


def soft_scaled(x):
    return (Soft(x) < Soft(2.0)) * 3.0 + x


def soft_reflected(x):
    return 2.0 * (Soft(2.0) > Soft(x))


def soft_equal(x):
    return Soft(x) == Soft(3.0)


def soft_chain(x):
    return Soft(1.0) < Soft(x) < Soft(3.0)


def _less(a, b):
    return a < b


def soft_in_helper(x):
    return _less(Soft(x), Soft(2.0)) + x


@pytest.mark.parametrize("f", [soft_less, soft_scaled, soft_reflected, soft_equal, soft_chain, soft_in_helper])
def test_soft_comparison_is_refused_naming_the_line(f):
    with pytest.raises(ZygoteError, match=r"test_compare_checks\.py:\d+: the comparison `[<>=]+` of a Soft answers"):
        gradient(f, 1.0)


def soft_branch(x):
    if Soft(x) < Soft(2.0):  # (a branch's test: Python takes its truth value)
        return x * x
    return x


def hard_value(x):
    return (Hard(x) < Hard(2.0)) * x + x * x


def ordered_value(x):
    return (Ordered(x) < Ordered(2.0)) * x + x * x


def relu_mask(x):
    return np.sum(x * (x > 0))


def leaky_where(x):
    return np.sum(np.where(x > 0, x, 0.1 * x) ** 2)


def scalar_mask(xs):
    s = 0.0
    for v in xs:
        s = s + v * (v > 1.0) + (v <= 1.0) * math.sin(v)
    return s


def equal_value(x):
    return (x == x) * x * x


def _central(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


@pytest.mark.parametrize("f, x", [
    (soft_branch, 1.0), (hard_value, 1.5), (hard_value, 2.5), (ordered_value, 1.5), (ordered_value, 2.5),
    (relu_mask, np.array([1.0, -2.0, 3.0])), (leaky_where, np.array([1.5, -2.0, 3.0])), (equal_value, 1.5),
])
def test_comparisons_as_data_are_followed(f, x):
    got = gradient(f, x)[0]
    want = _central(lambda v: f(float(v) if np.ndim(v) == 0 else v), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_scalar_mask_in_a_loop():
    xs = [0.5, 2.0, 1.5, -0.3]
    got = gradient(scalar_mask, xs)[0]
    want = [(1.0 if v > 1.0 else math.cos(v)) for v in xs]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_hessian_through_a_mask():
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(hessian(leaky_where, x), np.diag([2.0, 0.02, 2.0]), rtol=1e-12)

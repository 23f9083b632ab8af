"""Rules for the helpers generated code calls (adjoints/nesting/helper_rules.py), differentiated by an outer level."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import gradient, hessian

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central_hessian  # noqa: E402


def d(f):
    """The derivative of a scalar function, by reverse mode (nests)."""
    return lambda x: gradient(f, x)[0]


def test_the_back_of_structgrads_rule_differentiates_at_second_order():
    # an outer level differentiates this back (a sixth level does): it copies the mapping by a comprehension, not by
    # `dict(dy)`, whose constructor rule the twins do not cover
    from zygotepy.adjoints.nesting.helper_rules import _structgrad_rule
    from zygotepy.structgrad import StructGrad

    def f(v):
        _, back = _structgrad_rule({"a": v})
        return back(StructGrad({"a": v * v * v}))[0]["a"]
    assert d(d(f))(1.5) == pytest.approx(9.0)


def _recursive_power(a, b):
    def r(n):  # a nested function calling itself, capturing a and b: a * b ** 2
        if n == 0:
            return a
        return r(n - 1) * b
    return r(2)


def _its_derivative_in_b(a, b):
    return gradient(_recursive_power, a, b)[1]


@pytest.mark.dual_route
def test_the_gradient_of_a_gradient_through_a_recursive_nested_function(mode):
    """The outer level's derivative of the recursive closure's fold came out (None, 0.7) for (2 b, 2 a) = (0.4, 1.4):
    refused there, forward-over-reverse takes it."""
    assert gradient(_its_derivative_in_b, 0.7, 0.2) == (pytest.approx(0.4), pytest.approx(1.4))


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.cross([x[0], x[1], 0.5], [1.0, x[0], 0.5]) ** 2),
    lambda x: np.sum(np.linalg.solve(np.array([[2.0, 0.3], [0.1, 1.5]]) * (1 + x[0]), [x[1], 1.0]) ** 2),
    lambda x: np.einsum("i,i->", x, [x[1], 1.0]) ** 2,
], ids=["cross", "solve", "einsum"])
def test_second_derivatives_through_a_list_of_values_and_constants(f, mode):
    """The cotangent of a list a rule's back unbroadcasts to (`[x[0], x[1], 0.5]`) holds None for a constant item,
    which the outer level's broadcast made a NaN: every second derivative NaN (or a crash, by the function)."""
    x = np.array([0.31, -0.47])
    want = central_hessian(f, x)
    np.testing.assert_allclose(hessian(f, x), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gradient(lambda t: gradient(f, t)[0][0], x)[0], want[0], rtol=1e-5, atol=1e-6)

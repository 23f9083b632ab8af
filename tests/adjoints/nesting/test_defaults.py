"""Nested reverse mode through nested functions whose defaults are computed from the differentiated value
(`lambda t, b=x * x: t * b`): the default's gradient reaches the value it was taken from at every level (nesting's
"defaulted" twin, `_defaults_of`, `_join_defaults`, make_closure's rule; the entry points' `_by_position`). Each row
against central differences of the inner gradient in float64; rows the twins refuse take forward-over-reverse."""
import numpy as np
import pytest

from zygotepy import gradient, pullback, value_and_gradient


def inner_gradient_default(x):
    g = lambda t, b=x * x: t * b  # noqa: E731
    return gradient(g, x)[0]


def inner_gradient_constant_point(x):
    def g(t, b=np.sin(x), c=2.0):
        return t * b * c + b
    return gradient(g, 1.5)[0]


def default_at_inner_level(x):
    def inner(y):
        h = lambda t, b=y * y: t * b  # noqa: E731
        return h(y)
    return gradient(inner, x)[0]


def value_and_gradient_default(x):
    def g(t, b=x * x):
        return t * t * b
    value, grads = value_and_gradient(g, x)
    return grads[0] + value


def array_default(x):
    def g(t, b=x):
        return np.sum(t * b)
    return np.sum(gradient(g, np.ones(3))[0] * x)


def third_order(x):
    def mid(y):
        g = lambda t, b=y * y: t * t * b  # noqa: E731
        return gradient(g, y)[0]
    return gradient(mid, x)[0]


def pullback_default(x):
    def g(t, b=x * x):
        return t * b
    y, back = pullback(g, x)
    return back(1.0)[0]


def two_points(x):
    def g(t, b=x * x):
        return t * b
    return gradient(g, x)[0] + gradient(g, 2 * x)[0]


TRANSFORM_ROUTE = [inner_gradient_default, inner_gradient_constant_point, default_at_inner_level,
                   value_and_gradient_default, array_default, third_order, pullback_default, two_points]


def keyword_constant(x):
    g = lambda t, c=1.0, b=x * x: t * b * c  # noqa: E731
    return gradient(g, x, c=2.0)[0]


def keyword_call_at_inner_level(x):
    def inner(y):
        h = lambda t, s=1.0, b=y * y: t * b * s  # noqa: E731
        return h(y, s=2.0)
    return gradient(inner, x)[0]


def keyword_only_call(x):
    def inner(y):
        h = lambda t, s=1.0, b=y * y: t * b * s  # noqa: E731
        return h(t=y)
    return gradient(inner, x)[0]


def central(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("f", TRANSFORM_ROUTE, ids=lambda f: f.__name__)
def test_default_from_the_differentiated_value(f):
    x = 1.3
    (g,) = gradient(f, x)
    assert g is not None
    np.testing.assert_allclose(g, central(f, x), rtol=1e-6)


@pytest.mark.dual_route  # (keywords the twins do not take: forward-over-reverse)
@pytest.mark.parametrize("f", [keyword_constant, keyword_call_at_inner_level, keyword_only_call],
                         ids=lambda f: f.__name__)
def test_default_with_keywords(f):
    x = 1.3
    (g,) = gradient(f, x)
    assert g is not None
    np.testing.assert_allclose(g, central(f, x), rtol=1e-6)


def test_third_order_closed_form():
    # third_order(x) = d/dy [d/dt (t^2 y^2) at t = y] = d/dy 2 y^3 = 6 y^2, whose derivative is 12 y
    assert gradient(third_order, 1.3)[0] == pytest.approx(12 * 1.3, rel=1e-12)

"""A nested function with decorators (lower/definitions.py: the decorators are calls applied to it, innermost first,
as Python does), once refused as "a decorated nested function": `@functools.wraps(g)` (its `update_wrapper` has a rule,
adjoints/functional.py, which keeps the wrapper's own notes of what it captured), `@functools.lru_cache`, a user's
decorator applied twice; and JAX's `grad`/`value_and_grad` of a closure inside a differentiated function (they wrap
with `functools.wraps`). Checked against central differences, every optimisation on and off."""
import functools

import pytest

from zygotepy import grad, gradient, hessian, value_and_grad


def with_wraps(x):
    def scale(g):
        @functools.wraps(g)
        def inner(t):
            return g(t) * x
        return inner
    h = scale(lambda t: t * t)
    return h(x) + h(2.0)


def with_cache(x):
    @functools.lru_cache(maxsize=None)
    def sq(n):
        return n * n
    return sq(3) * x + sq(3)


def stacked(x):
    def twice(g):
        def inner(t):
            return g(g(t))
        return inner

    @twice
    @twice
    def step(t):
        return t * x + 1.0
    return step(1.0)


def jax_grad_inside(x):
    return grad(lambda y: x * y * y)(x)


def jax_value_and_grad_inside(x):
    v, g = value_and_grad(lambda y: x * y ** 3)(x)
    return v + g


@pytest.mark.parametrize("f", [with_wraps, with_cache, stacked, jax_grad_inside, jax_value_and_grad_inside])
def test_decorated_nested_functions(mode, f):
    for x in (1.5, -0.5):
        h = 1e-6
        assert gradient(f, x)[0] == pytest.approx((f(x + h) - f(x - h)) / (2 * h), rel=1e-6, abs=1e-8)


@pytest.mark.dual_route
def test_jax_grad_inside_hessian():
    assert hessian(lambda x: grad(lambda y: x * y ** 3)(x), 2.0) == pytest.approx(36.0)


def cached_recursion(x, a):
    @functools.lru_cache(maxsize=None)
    def s(k):
        return x[0] if k == 0 else a * s(k - 1) + x[k]
    return s(len(x) - 1)


def test_a_decorated_function_calling_itself_is_refused_naming_the_way_out(mode):
    """Its cell holds the decorated function, which the recursion rule does not follow: refused at the decorator's
    line, saying what works (the same function at module level)."""
    import numpy as np

    from zygotepy import UnsupportedSyntax
    with pytest.raises(UnsupportedSyntax, match=r"test_decorated_definitions\.py:\d+: .*'s'.* calls itself through "
                                                r"a decorator .*module level"):
        gradient(cached_recursion, np.array([1.0, 2.0, 3.0]), 0.5)

"""Nested `def`s that call themselves (ast_adjoint/lower/definitions.py): the function's cell of its own name holds
the function itself, bound just after it is made (`runtime.ITSELF` among `make_closure`'s values), and each call of
itself leaves its closure's cotangent nested in entry `name` of the caller's; `runtime.recursive_closure`'s rule folds
them into one, whose entries go to what the cells held. Before, every recursive nested function was refused ("reads
'rec' before it is assigned"). Each function is checked against one plain call (its value) and central differences in
float64, with every optimisation on and with every one off."""
import numpy as np
import pytest

import zygotepy
from zygotepy import UnsupportedSyntax, gradient, hessian, value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1, 0.6])
B = 1.3


def geometric_sum(x, b):
    def rec(n, t):
        return t if n == 0 else rec(n - 1, t * b) + t
    return rec(3, x[0])


def two_calls_of_itself(x, b):
    def fib(n, t):
        if n < 2:
            return t * b
        return fib(n - 1, t) + fib(n - 2, t * t)
    return fib(4, x[0])


def halves_of_a_captured_array(x, b):
    w = x * b

    def tree(lo, hi):
        if hi - lo == 1:
            return w[lo]
        mid = (lo + hi) // 2
        return tree(lo, mid) * tree(mid, hi)
    return tree(0, 4)


def made_again_in_a_loop(x, b):
    out = 0.0
    for c in x:
        def power(n):
            return 1.0 if n == 0 else c * power(n - 1)
        out = out + power(2) * b
    return out


def on_arrays(x, b):
    def rec(n, t):
        return t if n == 0 else rec(n - 1, np.sin(t) * b)
    return np.sum(rec(3, x))


def over_a_list(x, b):
    def total(xs):
        return 0.0 if not xs else xs[0] * b + total(xs[1:])
    return total(list(x))


def with_a_default(x, b):
    def rec(n, t, k=2.0):
        return t if n == 0 else rec(n - 1, t * b, k) * k
    return rec(2, x[0])


CASES = [geometric_sum, two_calls_of_itself, halves_of_a_captured_array, made_again_in_a_loop, on_arrays, over_a_list,
         with_a_default]


@pytest.mark.parametrize("optimized", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_nested_function_calling_itself(f, optimized):
    with zygotepy.optimizations(optimized):
        value, _ = value_and_gradient(f, X.copy(), B)
        assert value == pytest.approx(f(X.copy(), B), rel=1e-13)
        check_grads(f, X.copy(), B)


def test_the_geometric_sum_by_hand():
    dx, db = gradient(geometric_sum, X.copy(), B)
    assert dx[0] == pytest.approx(1 + B + B ** 2 + B ** 3) and not dx[1:].any()
    assert db == pytest.approx(X[0] * (1 + 2 * B + 3 * B ** 2))


def test_its_hessian():
    def f(v):
        def rec(n, u):
            return u if n == 0 else rec(n - 1, u * u * 0.5 + np.sin(u))
        return np.sum(rec(2, v))
    x = X[:2].copy()
    eps = 1e-5
    grad = lambda v: gradient(f, v)[0]  # noqa: E731
    numeric = np.array([(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(hessian(f, x), numeric, rtol=1e-6, atol=1e-8)


def test_rebound_before_the_call_raises():
    """The cell of its own name then holds the other function: the gradient would go to the wrong one."""
    def f(x, b):
        def rec(n, t):
            return t if n == 0 else rec(n - 1, t * b)
        r = rec

        def rec(n, t):  # noqa: F811 - the name rebound on purpose
            return t
        return r(2, x[0])
    with pytest.raises(UnsupportedSyntax, match="after 'rec', which it captures, was assigned a new value"):
        gradient(f, X.copy(), B)


def test_a_def_makes_no_jump_of_the_function_around_it():
    """A nested function's own `return` leaves only it: the statements after the `def` are not put under a test of
    a return flag (`_go_on`), which the generated code had for every function with a nested `def`."""
    text = zygotepy.show_adjoint(geometric_sum)
    assert "_go_on" not in text and "_recursive_closure" in text

"""Rule backs reuse the buffers only the backward pass holds (adjoints/handover.py): the elementwise rules and `*` on
arrays take generated code's running cotangents (`back(dy, need, *into)`) and compute into a derivative they have just
made, into a handed-over `dy`, or into a running cotangent. Checked here: the gradients stay right (finite
differences, nesting, float32, broadcasting), the buffers really are reused, and no array anyone else holds (the
user's cotangent, a value the forward saved) is ever written. The switch on/off equivalence over the feature table is
in tests/ast_adjoint/test_equivalence.py ("reuse buffers")."""
import numpy as np
import pytest

from zygotepy import gradient, pullback
from zygotepy.adjoints.registry import find_rule
from zygotepy.ast_adjoint import runtime as rt
from zygotepy.testing import check_grads


def chain(x):
    return np.sum(np.tanh(np.sin(x) * x))


def chain_grad(x):
    s = np.sin(x)
    t = np.tanh(s * x)
    return (1.0 - t * t) * (np.cos(x) * x + s)


def biased(W, b, x):
    return np.sum(np.exp(x @ W * b) * b)


def test_the_elementwise_chain_is_right():
    x = np.random.default_rng(0).normal(size=1000)
    g, = gradient(chain, x)
    np.testing.assert_allclose(g, chain_grad(x), rtol=1e-13)
    check_grads(chain, x[:20])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_broadcasting_and_float32_take_the_out_of_place_path_where_they_must(dtype):
    rng = np.random.default_rng(1)
    W, b, x = (rng.normal(size=s).astype(dtype) * 0.3 for s in ((4, 3), (3,), (5, 4)))
    g = gradient(biased, W, b, x)
    assert all(gi.dtype == dtype and gi.shape == a.shape for gi, a in zip(g, (W, b, x)))
    if dtype is np.float64:
        check_grads(biased, W, b, x)


def test_a_second_derivative_through_the_reusing_backs():
    def outer(x):
        return np.sum(gradient(chain, x)[0] * x)
    x = np.linspace(0.1, 1.0, 5)
    check_grads(outer, x)


def test_the_users_cotangent_and_the_saved_values_are_never_written():
    x = np.random.default_rng(2).normal(size=50)
    y, back = pullback(lambda v: np.exp(np.sin(v) * v), x)
    y_before = y.copy()
    dy = np.ones(50)
    first, = back(dy)
    second, = back(dy)
    assert np.array_equal(dy, np.ones(50)) and np.array_equal(first, second) and np.array_equal(y, y_before)


def _generated_code_call(back, dy, *into):
    """A call in the shape generated code makes: dy and the running cotangents held by one local variable each."""
    return back(dy, None, *into)


N = 5000  # elements: the arrays of these tests are large enough to be reused (runtime.REUSE_BYTES)


@pytest.mark.optimizations
def test_the_buffers_are_reused():
    assert N * 8 >= rt.REUSE_BYTES
    x = np.linspace(0.1, 1.0, N)
    y, back = find_rule(np.tanh)(x)
    dy = np.ones(N)
    dx, = _generated_code_call(back, dy, None)
    assert dx is not dy and np.array_equal(dx, 1 - y * y) and np.array_equal(dy, np.ones(N))  # into the fresh 1 - y*y
    y, back = find_rule(np.exp)(x)  # the derivative is y itself: never written; the handed-over dy takes the product
    dy = np.ones(N)
    dx, = back(dy, None, None)
    assert dx is dy and np.array_equal(y, np.exp(x))
    running = np.full(N, 2.0)
    y, back = find_rule(np.sin)(x)
    dx, = back(np.ones(N), None, running)
    assert dx is running and np.array_equal(dx, 2.0 + np.cos(x))


def test_small_buffers_are_not_reused():
    """Below runtime.REUSE_BYTES a new array costs less than the checks: the same values, in new arrays."""
    x = np.linspace(0.1, 1.0, 8)
    y, back = find_rule(np.exp)(x)
    dy = np.ones(8)
    dx, = back(dy, None, None)
    assert dx is not dy and np.array_equal(dy, np.ones(8)) and np.array_equal(dx, y)
    running = np.full(8, 2.0)
    y, back = find_rule(np.sin)(x)
    dx, = back(np.ones(8), None, running)
    assert dx is not running and np.array_equal(running, np.full(8, 2.0)) and np.array_equal(dx, 2.0 + np.cos(x))
    a, b = np.linspace(1.0, 2.0, 8), np.ones(8)
    assert rt.acc_var(a, b) is not a and np.array_equal(a, np.linspace(1.0, 2.0, 8))


def test_nothing_is_reused_when_someone_else_holds_it():
    x = np.linspace(0.1, 1.0, N)
    y, back = find_rule(np.exp)(x)
    dy = np.ones(N)
    keep = dy  # a second holder
    dx, = back(dy, None, None)
    assert dx is not keep and np.array_equal(keep, np.ones(N))
    running = np.full(N, 2.0)
    also = running
    dx, = back(np.ones(N), None, running)
    assert dx is not also and np.array_equal(also, np.full(N, 2.0))
    dx, = back(np.ones(N))  # a plain call hands nothing over
    assert np.array_equal(dx, np.exp(x))


@pytest.mark.optimizations
def test_products_reuse_the_handed_over_cotangent():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=N), rng.normal(size=N)
    y, back = find_rule(__import__("operator").mul)(a, b)
    dy = np.ones(N)
    da, db = back(dy, None, None, None)
    assert da is dy and np.array_equal(da, b) and np.array_equal(db, a)
    dy = np.ones(N)
    _, db = back(dy, (False, True), None, None)
    assert db is dy and np.array_equal(db, a)


act = np.tanh


def uses_a_global_activation(x):
    return np.sum(act(x) * x)


def test_a_global_rebound_to_a_function_whose_back_takes_nothing_handed_over():
    global act
    x = np.linspace(-1.0, 1.0, 7)
    check_grads(uses_a_global_activation, x)
    try:
        act = np.cumsum  # a built-in rule whose back takes no running cotangents
        g, = gradient(uses_a_global_activation, x)
        np.testing.assert_allclose(g, np.cumsum(x[::-1])[::-1] + np.cumsum(x), rtol=1e-13)
        act = lambda v: v * v  # a user function
        g, = gradient(uses_a_global_activation, x)
        np.testing.assert_allclose(g, 3 * x * x, rtol=1e-13)
    finally:
        act = np.tanh


DIVIDED = {np.log: lambda x: x, np.log1p: lambda x: 1 + x, np.arctan: lambda x: 1 + x * x,
           np.arcsinh: lambda x: np.sqrt(x * x + 1), np.cbrt: lambda x: 3 * np.cbrt(x) * np.cbrt(x)}


@pytest.mark.parametrize("fn", list(DIVIDED), ids=lambda f: f.__name__)
def test_a_derivative_one_over_e_divides_the_cotangent(fn):
    """log's back is `dy / x`, not `dy * (1 / x)` (derivatives.py's divisor form): the same bits as the division,
    whichever buffer takes it, and the array path's formula gives the same bits as the rule."""
    x = np.linspace(0.2, 1.4, 7)
    y, back = find_rule(fn)(x)
    dy = np.random.default_rng(4).normal(size=7)
    expected = dy / DIVIDED[fn](x)
    dx, = back(dy.copy())
    np.testing.assert_array_equal(dx, expected)
    handed = dy.copy()
    dx, = _generated_code_call(back, handed, None)
    np.testing.assert_array_equal(dx, expected)
    np.testing.assert_array_equal(x, np.linspace(0.2, 1.4, 7))  # the argument (log's divisor itself) never written
    from zygotepy.adjoints.numpy.array_inline import UNARY
    np.testing.assert_array_equal(UNARY[fn](dy, y, x)[0], expected)


@pytest.mark.optimizations
def test_the_divisor_takes_the_quotient_where_it_is_fresh():
    x = np.linspace(0.2, 1.4, N)
    y, back = find_rule(np.log1p)(x)
    dy = np.ones(N)
    keep = dy  # a second holder: dy is not handed over, so the fresh 1 + x takes the quotient
    dx, = _generated_code_call(back, dy, None)
    assert dx is not keep and np.array_equal(keep, np.ones(N)) and np.array_equal(dx, 1 / (1 + x))
    y, back = find_rule(np.log)(x)  # the divisor is x itself: never written; the handed-over dy takes it
    dy = np.ones(N)
    dx, = back(dy, None, None)
    assert dx is dy and np.array_equal(x, np.linspace(0.2, 1.4, N))


def logs(x):
    return np.sum(np.log(x) * np.arctan(x) + np.log1p(x * x))


def test_second_derivatives_through_the_divided_backs():
    """An outer level transforms the backs, which call `handover.divided`: its rule gives the second derivative."""
    x = np.linspace(0.3, 1.2, 5)

    def outer(v):
        return np.sum(gradient(logs, v)[0] ** 2)
    check_grads(outer, x)
    check_grads(logs, x.astype(np.float64))

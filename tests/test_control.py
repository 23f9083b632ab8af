"""checkpoint, hook and dropgrad: gradients against finite differences and closed forms, and how often the
checkpointed forward and the hook run."""
import functools
import math
import random
import types

import numpy as np
import pytest

import zygotepy
from zygotepy import checkpoint, dropgrad, gradient, hessian, hook, pullback, value_and_gradient
from zygotepy.testing import check_grads

RNG = np.random.default_rng(7)


# --- checkpoint --------------------------------------------------------------------------------------------------------------

def block(x, w):
    for _ in range(3):
        x = np.tanh(x * w)
    return x


def chain(x, w):
    for _ in range(4):
        x = checkpoint(block, x, w)
    return np.sum(x * x)


def chain_plain(x, w):
    for _ in range(4):
        x = block(x, w)
    return np.sum(x * x)


def test_checkpoint_gradients_match_finite_differences_and_the_plain_chain():
    x, w = RNG.uniform(-1, 1, 6), RNG.uniform(0.5, 1.5, 6)
    check_grads(chain, x, w)
    g, g_plain = gradient(chain, x, w), gradient(chain_plain, x, w)
    for a, b in zip(g, g_plain, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_checkpoint_of_scalars_lambdas_and_closures():
    check_grads(lambda x: checkpoint(math.sin, x) * x, 0.4)
    check_grads(lambda x, y: checkpoint(lambda a, b: a * math.exp(b), x, y) ** 2, 0.4, -0.3)

    def f(x, k):
        def inner(t):
            return k * t * t  # k is captured: its gradient flows through the closure's cotangent
        return checkpoint(inner, x)
    check_grads(f, 1.5, 0.7)
    assert gradient(f, 1.5, 0.7) == pytest.approx((2 * 0.7 * 1.5, 1.5 ** 2))


def test_checkpoint_returns_the_value():
    assert checkpoint(math.hypot, 3.0, 4.0) == 5.0
    assert value_and_gradient(lambda x: checkpoint(math.hypot, x, 4.0), 3.0) == (5.0, (0.6,))


def test_checkpointed_forward_runs_twice_per_gradient_and_again_per_back():
    calls = []

    def inner(x):
        calls.append(x)
        return x * x * x

    def f(x):
        return checkpoint(inner, x) + 1.0

    assert gradient(f, 2.0) == (12.0,)
    assert len(calls) == 2  # the forward, and once more in the backward pass
    calls.clear()
    y, back = pullback(f, 2.0)
    assert len(calls) == 1
    assert back(1.0) == (12.0,)
    assert len(calls) == 2
    assert back(2.0) == (24.0,)  # back again: one more recomputation
    assert len(calls) == 3


def test_checkpoint_output_without_gradient_recomputes_nothing():
    calls = []

    def inner(x):
        calls.append(x)
        return x * 2.0, x * 3.0

    def f(x):
        a, b = checkpoint(inner, x)
        return x * 1.0 + 0.0 * 0.0

    assert gradient(f, 1.0) == (1.0,)
    assert len(calls) == 1


def _append_once(xs, a):
    if len(xs) < 3:
        xs.append(a * 2.0)
    return sum(t * t for t in xs)


def _store_if_positive(x, a):
    if np.sum(x) < 0.0:
        x[0] = math.cos(a)
    return np.sum(x * x)


def _field_if_positive(s, a):
    if s.v > 0:
        s.v = a
    return s.v * a


def _key_if_positive(d, a):
    if d["x"] > 0:
        d["x"] = a
    return d["x"] * a


def _inner_array_store(ps, a):
    if ps[0][0] > 0:
        ps[0][1] = a
    return np.sum(ps[0] * a)


@pytest.mark.parametrize("f, arg, name", [
    (_store_if_positive, lambda: np.array([-1.0, 0.5]), "x"),
    (_append_once, lambda: [1.0, 2.0], "xs"),
    (_key_if_positive, lambda: {"x": 1.0}, "d"),
    (_field_if_positive, lambda: types.SimpleNamespace(v=1.0), "s"),
    (_inner_array_store, lambda: [np.ones(2)], "ps"),
], ids=["array", "list", "dict", "object", "array-in-list"])
def test_checkpoint_of_a_function_updating_its_argument_is_refused(mode, f, arg, name):
    """The recomputation in the backward pass started from the updated argument and took the other branch of `f`:
    `(array([1.911, 1.]), None)` for the array case, where the answer is `(array([0., 1.]), -0.5646)`."""
    with pytest.raises(zygotepy.ZygoteError, match=f"{f.__name__} updated its argument '{name}' in place"):
        gradient(lambda v, a: checkpoint(f, v, a), arg(), 0.3)
    gradient(f, arg(), 0.3)  # (without checkpoint the same program is differentiated)


def _reads_containers(ps, d, s, x):
    return np.sum(ps[0] * x[1:]) * d["k"] * s.v + np.nansum(x * x)  # (x[0] is NaN: its bytes compare equal)


def test_checkpoint_of_a_function_reading_containers_is_not_refused():
    ps, d, s, x = [RNG.normal(size=2)], {"k": 2.0}, types.SimpleNamespace(v=3.0), np.array([np.nan, 0.5, 2.0])
    got = gradient(lambda p, e, o, v: checkpoint(_reads_containers, p, e, o, v), ps, d, s, x)
    want = gradient(_reads_containers, ps, d, s, x)
    np.testing.assert_allclose(got[0][0], want[0][0])
    assert got[1] == pytest.approx(want[1]) and got[2]["v"] == pytest.approx(want[2]["v"])
    np.testing.assert_allclose(got[3], want[3])


_DROP = np.random.default_rng(11)


def _dropout_global(x):
    return np.sum(x * (_DROP.random(x.shape) > 0.5) * 2.0)


def _dropout_legacy(x):
    return np.sum(x * (np.random.rand(*x.shape) > 0.5) * 2.0)


def _dropout_stdlib(x):
    return np.sum(x * np.array([random.random() > 0.5 for _ in range(x.size)]) * 2.0)


def _dropout_closure():
    rng = np.random.default_rng(12)
    return lambda x: np.sum(x * (rng.random(x.shape) > 0.5) * 2.0)


@pytest.mark.parametrize("make", [lambda: _dropout_global, lambda: _dropout_legacy, lambda: _dropout_stdlib,
                                  _dropout_closure], ids=["global-generator", "np.random", "random", "closure"])
def test_checkpoint_recomputes_with_the_random_numbers_of_the_forward(mode, make):
    """The recomputation drew new numbers: a dropout mask in the value and another in the gradient (6.0 with three
    ones kept, but a gradient with three other ones). Now the gradient is the mask of the value, and the streams go
    on as they would without checkpoint."""
    f = make()
    x = np.ones(8)
    for _ in range(3):
        value, (grad,) = value_and_gradient(lambda v: checkpoint(f, v), x)
        assert value == pytest.approx(np.sum(grad))
        assert set(np.unique(grad)) <= {0.0, 2.0}


class _Dropout:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def __call__(self, x):
        return np.sum(x * (self.rng.random(x.shape) > 0.5) * 2.0)


def _dropout_from(rng, x):
    return np.sum(x * (rng.random(x.shape) > 0.5) * 2.0)


def _dropout_of_a_bit_generator():
    bits = np.random.PCG64(5)
    return lambda x: np.sum(x * (np.random.Generator(bits).random(x.shape) > 0.5) * 2.0)


@pytest.mark.parametrize("call", [
    lambda x: checkpoint(_dropout_from, np.random.default_rng(7), x),  # (f's argument)
    lambda x: checkpoint(_Dropout(8), x),  # (a callable object's field)
    lambda x: checkpoint(functools.partial(_dropout_from, np.random.default_rng(9)), x),
    lambda x, box={"rng": np.random.default_rng(10)}: checkpoint(lambda v: _dropout_from(box["rng"], v), x),
], ids=["argument", "object", "partial", "dict"])
def test_checkpoint_replays_generators_it_reaches_through_arguments_objects_and_containers(mode, call):
    """A generator passed to the checkpointed function, held by its object, a partial or a dict, or a bit generator a
    Generator is made from inside: the recomputation drew fresh numbers (found by a probe of random code)."""
    x = np.ones(8)
    for _ in range(3):
        value, (grad,) = value_and_gradient(call, x)
        assert value == pytest.approx(np.sum(grad))
        assert set(np.unique(grad)) <= {0.0, 2.0}
    f = _dropout_of_a_bit_generator()
    value, (grad,) = value_and_gradient(lambda v: checkpoint(f, v), x)
    assert value == pytest.approx(np.sum(grad))


def test_checkpoint_leaves_the_random_stream_where_the_forward_left_it(mode):
    rng = np.random.default_rng(3)
    f = lambda x: np.sum(x * rng.normal(size=x.shape))  # noqa: E731
    gradient(lambda v: checkpoint(f, v), np.ones(4))
    after_checkpoint = rng.normal()
    rng = np.random.default_rng(3)
    gradient(f, np.ones(4))
    assert rng.normal() == after_checkpoint


def test_checkpoint_is_exported():
    assert {"checkpoint", "hook", "dropgrad"} <= set(zygotepy.__all__)


# --- hook ----------------------------------------------------------------------------------------------------------------------

def test_hook_reverses_the_gradient():
    assert gradient(lambda x: hook(lambda g: -g, x) * 3.0, 2.0) == (-3.0,)
    # f = x * h(x): the direct factor keeps its gradient, only the hooked path is reversed: d = h - x = 0
    assert gradient(lambda x: x * hook(lambda g: -g, x), 2.0) == (0.0,)


def test_hook_sees_the_total_gradient_once_per_backward_pass():
    seen = []

    def spy(g):
        seen.append(g)
        return g * 2.0

    def f(x):
        h = hook(spy, x)
        return h * h + 3.0 * h  # dh = 2h + 3

    assert gradient(f, 1.0) == (10.0,)
    assert seen == [5.0]
    y, back = pullback(f, 1.0)
    back(1.0)
    back(1.0)
    assert seen == [5.0, 5.0, 5.0]


def test_hook_on_arrays_and_hook_value():
    x = RNG.uniform(-1, 1, 4)
    g, = gradient(lambda v: np.sum(np.sin(hook(lambda d: np.clip(d, -0.5, 0.5), v))), x)
    np.testing.assert_allclose(g, np.clip(np.cos(x), -0.5, 0.5))
    assert hook(abs, -2.0) == -2.0


def test_identity_hook_matches_finite_differences():
    check_grads(lambda x, y: hook(lambda g: g, x * y) ** 2 + y, 0.3, 1.2)


# --- dropgrad ------------------------------------------------------------------------------------------------------------------

def test_dropgrad_stops_the_gradient():
    assert gradient(lambda x: x * dropgrad(x), 3.0) == (3.0,)
    assert gradient(lambda x: dropgrad(x) * 2.0, 3.0) == (None,)
    assert dropgrad(5.0) == 5.0
    x = RNG.uniform(-1, 1, 3)
    g, = gradient(lambda v: np.sum(v * dropgrad(np.exp(v))), x)
    np.testing.assert_allclose(g, np.exp(x))


def test_dropgrad_inside_a_loop_and_a_callee():
    def damped(x, n):
        for _ in range(n):
            x = x + 0.5 * dropgrad(x * x)
        return x
    assert gradient(damped, 0.3, 4) == (1.0, None)


def _store_into_zeros(t):
    out = np.zeros(3)
    for i in range(3):
        out[i] = t[i] * t[(i + 1) % 3]
    return np.sum(out ** 2)


def _store_into_zeros_like(t):
    out = np.zeros_like(t)
    for i in range(3):
        out[i] = t[i] * t[(i + 1) % 3]
    return np.sum(out ** 2)


def test_hessian_through_checkpoint_of_a_store_into_plain_zeros_is_a_clear_error():
    """Under hessian the checkpointed function runs plainly on dual numbers; NumPy's own ValueError from storing one
    into np.zeros(n) became forward mode's error, as without checkpoint."""
    from zygotepy import ForwardModeError, hessian
    x = np.array([0.3, -0.6, 0.8])
    with pytest.raises(ForwardModeError, match="plain array made from constants"):
        hessian(lambda t: checkpoint(_store_into_zeros, t), x)
    np.testing.assert_allclose(hessian(lambda t: checkpoint(_store_into_zeros_like, t), x),
                               hessian(_store_into_zeros_like, x), rtol=1e-12)


_PARTIAL_NAMESPACE = types.ModuleType("partial_namespace")  # no `r_`, as torch's namespace has none
_PARTIAL_NAMESPACE.sin, _PARTIAL_NAMESPACE.tanh = np.sin, np.tanh


def _loop_that_returns_before_a_missing_function(x):
    s = 0.0
    for k in range(3):
        if k == 1:
            return s + np.sum(_PARTIAL_NAMESPACE.sin(x))
        s += np.sum(_PARTIAL_NAMESPACE.tanh(x))
        if k == 2:
            s += np.sum(_PARTIAL_NAMESPACE.r_[x, 0.5])
    return s


def test_a_loop_reads_a_global_only_where_it_stands():
    # the loop's guards on globals were hoisted before it: `_PARTIAL_NAMESPACE.r_`, which plain Python never reads,
    # raised AttributeError
    x = np.array([0.3, -0.2])
    g = gradient(_loop_that_returns_before_a_missing_function, x)[0]
    assert np.allclose(g, np.cos(x) + 1.0 / np.cosh(x) ** 2, rtol=1e-12)


@pytest.mark.parametrize("on", [True, False], ids=["optimized", "plain"])
def test_a_hook_may_edit_its_gradient_in_place(on):
    """The gradient a hook gets is its own (a copy): with every optimisation on it was a read-only broadcast, and
    clipping it in place raised."""
    def clip_(g):
        g[np.abs(g) > 1.0] = 1.0
        return g

    def f(x):
        y = hook(clip_, x * 1.0)
        return np.sum(y * 3.0) + np.sum(x * 0.5)
    with zygotepy.optimizations(on):
        np.testing.assert_allclose(gradient(f, np.array([1.0, 2.0]))[0], [1.5, 1.5])


def test_forwarddiff_of_an_int_is_differentiated_as_a_real():
    """An int given to forwarddiff had no gradient (None); an int in arithmetic gets a float one (docs/api.md)."""
    from zygotepy import forwarddiff
    assert gradient(lambda x: forwarddiff(lambda t: t * t, x), 3) == (6.0,)


def _cubed_sine(x):
    return x ** 3 * math.sin(x)


@pytest.mark.dual_route
def test_checkpoint_of_a_helper_using_math_under_second_order(mode):
    """The checkpoint rule ran the helper plainly on forward mode's dual numbers, which `math.sin` cannot take:
    ForwardModeError under a gradient of a gradient and under hessian."""
    x = 0.7
    want = 6 * x * math.sin(x) + 6 * x * x * math.cos(x) - x ** 3 * math.sin(x)
    assert hessian(lambda t: checkpoint(_cubed_sine, t), x) == pytest.approx(want)
    assert gradient(lambda s: gradient(lambda t: checkpoint(_cubed_sine, t), s)[0], x)[0] == pytest.approx(want)


@pytest.mark.parametrize("fn", [lambda g: np.ones(5), lambda g: 1.0, lambda g: g.reshape(3, 1)],
                         ids=["longer", "a number", "a column"])
def test_a_hook_returning_a_gradient_of_another_shape_is_refused(fn, mode):
    """It came back as the argument's gradient unchecked (shape (5,) for (3,)), or broadcast where x is read again."""
    with pytest.raises(zygotepy.ZygoteError, match=r"test_control.py:\d+: the function given to hook returned a "
                                                   r"gradient of shape"):
        gradient(lambda x: np.sum(hook(fn, x) ** 2) + np.sum(x), np.array([1.0, 2.0, 3.0]))


_LAYERS = [np.array([[0.5, 0.1], [-0.2, 0.4]]), np.array([[0.3, -0.6], [0.2, 0.1]]), np.eye(2) * 0.7]


def _checkpointed_layers(x, layers):
    h = x
    for W in layers:
        h = h + checkpoint(lambda t: np.sin(W @ t), h)
    return np.sum(h * h)


def test_checkpoint_of_a_lambda_made_in_a_loop_reading_the_loop_variable(mode):
    """The backward recomputed each lambda after `W` was rebound (refused: it would read the last `W`); it recomputes
    the call as the forward made it, with the cells' values of then."""
    x = np.array([0.3, -1.2])
    (g, dlayers) = gradient(_checkpointed_layers, x, _LAYERS)
    check_grads(lambda x: _checkpointed_layers(x, _LAYERS), x)
    h = 1e-6
    e = np.zeros((2, 2))
    e[0, 1] = h
    want = (_checkpointed_layers(x, [_LAYERS[0], _LAYERS[1] + e, _LAYERS[2]])
            - _checkpointed_layers(x, [_LAYERS[0], _LAYERS[1] - e, _LAYERS[2]])) / (2 * h)
    assert dlayers[1][0, 1] == pytest.approx(want, rel=1e-6)

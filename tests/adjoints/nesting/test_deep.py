"""Nested `gradient` by forward-over-reverse (adjoints/nesting/deep.py): levels beyond MAX_LEVELS, and inner gradients
the twins cannot transform, checked against closed forms and central differences of the level below."""
import dataclasses
import functools
import math

import numpy as np
import pytest

import zygotepy.adjoints.nesting.deep as deep
import zygotepy.adjoints.nesting.entries as nesting
from test_entries import report  # (the seed's nestlevel and its rule)
from plain_checks import central_hessian
from zygotepy import ZygoteError, derivative, gradient, hessian, hook, pullback, value_and_gradient

pytestmark = pytest.mark.dual_route


@pytest.fixture
def fresh_routes(monkeypatch):
    """No route remembered from other tests; returns a setter for the limit of transformed levels."""
    monkeypatch.setattr(deep, "_DUAL_KEYS", set())
    return lambda levels: monkeypatch.setattr(nesting, "MAX_LEVELS", levels)


def d(f):
    return lambda x: gradient(f, x)[0]


def nth(f, k):
    for _ in range(k):
        f = d(f)
    return f


def central(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


def power_loop(x):
    r = 1.0
    for _ in range(8):
        r = r * x
    return r


def sin_exp(x):
    return math.exp(0.5 * x) * math.sin(x)


def sin_exp_derivative(k, x):  # Im of (0.5 + i)^k e^{(0.5 + i) x}
    return (complex(0.5, 1.0) ** k * complex(math.cos(x), math.sin(x))).imag * math.exp(0.5 * x)


@pytest.mark.parametrize("k", [3, 5, 8])
@pytest.mark.parametrize("fn, closed", [
    (power_loop, lambda k, x: math.factorial(8) / math.factorial(8 - k) * x ** (8 - k)),
    (lambda x: x ** 8, lambda k, x: math.factorial(8) / math.factorial(8 - k) * x ** (8 - k)),
    (sin_exp, sin_exp_derivative)], ids=["loop", "power", "exp-sin"])
def test_levels_beyond_a_lowered_limit_match_closed_forms(fresh_routes, fn, closed, k):
    fresh_routes(2)
    assert nth(fn, k)(0.7) == pytest.approx(closed(k, 0.7), rel=1e-10)
    assert deep._DUAL_KEYS  # the levels above the second took the dual route


def test_every_nested_level_by_dual_numbers_with_captured_variables(fresh_routes):
    fresh_routes(1)  # every gradient that calls a gradient takes the dual route

    def g(x):  # d/dy at y = 0.8 of x^3 y^2 + sin(x y): x's gradient flows through the closure
        return gradient(lambda y: x ** 3 * y ** 2 + math.sin(x * y), 0.8)[0]
    assert d(g)(1.3) == pytest.approx(central(g, 1.3), rel=1e-8)
    assert d(d(g))(1.3) == pytest.approx(central(d(g), 1.3), rel=1e-7)


def test_array_gradients_of_gradient_norms_by_dual_numbers(fresh_routes):
    fresh_routes(1)

    def f(w):
        return np.sum(np.sin(w) * w ** 2)

    def q(w):
        gw = gradient(f, w)[0]
        return np.sum(gw * gw)

    def qq(w):
        return np.sum(gradient(q, w)[0] ** 2)
    w = np.array([0.3, -1.2, 2.0])
    for fn in (q, qq):
        expected = [central(lambda t: fn(w + t * e), 0.0) for e in np.eye(3)]
        np.testing.assert_allclose(gradient(fn, w)[0], expected, rtol=1e-7)


def test_value_and_gradient_inside_by_dual_numbers(fresh_routes):
    fresh_routes(1)

    def vg(x):  # y^4 times its derivative: 4 x^7
        v, (gx,) = value_and_gradient(lambda y: y ** 4, x)
        return v * gx
    assert gradient(vg, 1.1)[0] == pytest.approx(28 * 1.1 ** 6, rel=1e-12)
    assert d(d(vg))(1.1) == pytest.approx(168 * 1.1 ** 5, rel=1e-12)


def test_complex_and_structured_arguments_by_dual_numbers(fresh_routes):
    fresh_routes(1)

    def norm_of_gradient(z):  # a complex argument: the cotangent convention of docs/api.md, through forward mode's |z|
        g = gradient(lambda w: abs(w) ** 4 + (w * w).real, z)[0]
        return (g * np.conj(g)).real + 0.3 * g.real
    z, h = 0.7 - 0.4j, 1e-6
    along = [(norm_of_gradient(z + h * v) - norm_of_gradient(z - h * v)) / (2 * h) for v in (1.0, 1j)]
    assert gradient(norm_of_gradient, z)[0] == pytest.approx(complex(along[0], along[1]), rel=1e-7)

    def mixed(s):  # a dict holding a tuple
        g = gradient(lambda p: p["a"] ** 3 * p["b"][0] + np.sin(p["b"][1]), {"a": s, "b": (2.0 * s, s)})[0]
        return g["a"] * g["b"][0] + g["b"][1]
    assert gradient(mixed, 0.8)[0] == pytest.approx(central(mixed, 0.8), rel=1e-7)


def _scaled(x, scale=1.0):
    return scale * x ** 3


def test_an_inner_gradient_with_keyword_constants():
    # the twins take no keyword constants: `gradient(f, x, scale=2.0)` inside a gradient takes the dual route
    f = lambda x: gradient(_scaled, x, scale=2.0)[0]  # noqa: E731
    assert gradient(f, 1.5) == pytest.approx((12 * 1.5,), rel=1e-12)


def test_forward_mode_over_nested_reverse_mode():
    # dual numbers entering an inner gradient of a gradient: the inner levels take the dual route (a transformed level
    # cannot take dual numbers: this was an UnsupportedSyntax error)
    assert derivative(nth(sin_exp, 2), 0.3) == pytest.approx(sin_exp_derivative(3, 0.3), rel=1e-12)
    assert derivative(nth(sin_exp, 3), 0.3) == pytest.approx(sin_exp_derivative(4, 0.3), rel=1e-12)

    def second(t):  # the dual number reaches the inner levels through closures, not arguments: 3 t^4 - t^2 sin t
        return gradient(lambda x: gradient(lambda y: (t * y) ** 4 / 4 + math.sin(t * y), x)[0], 1.0)[0]
    t = 0.9
    assert second(t) == pytest.approx(3 * t ** 4 - t ** 2 * math.sin(t), rel=1e-12)
    assert derivative(second, t) == pytest.approx(12 * t ** 3 - 2 * t * math.sin(t) - t ** 2 * math.cos(t), rel=1e-12)


# --- what the twins refuse to transform, taken by forward-over-reverse --------------------------------------------------

def _cubed_by_partial(a, x):
    return a * x ** 3


class _V:
    def __init__(self, v):
        self.v = v

    def __mul__(self, other):
        return _V(self.v * other.v)

    def __add__(self, other):
        return _V(self.v + other.v)


class _Squares:
    def __init__(self, w):
        self.w = w
        self.w2 = self.square()

    def square(self):
        return self.w * self.w


@dataclasses.dataclass
class _Post:
    a: float
    b: float = 0.0

    def __post_init__(self):
        self.b = self.a * self.a


def _appended(x):
    out = []
    for i in range(3):
        out.append(x ** i)
    return sum(out) * x


def _squared_in_place(w):
    w = w.copy()
    w *= w
    return np.sum(w * w)


@pytest.mark.parametrize("inner", [
    lambda z: gradient(functools.partial(_cubed_by_partial, z), z)[0],  # 3 z z^2
    lambda z: gradient(lambda x: (_V(x) * _V(x) * _V(x) + _V(x)).v, z)[0],
    lambda z: gradient(lambda x: _Squares(x).w2 * x, z)[0],
    lambda z: gradient(lambda x: _Post(x).b * x, z)[0],
    lambda z: gradient(_appended, z)[0],
    lambda z: np.sum(gradient(_squared_in_place, z * np.array([1.0, 2.0]))[0])],
    ids=["partial", "user-operators", "init-calling-a-method", "post-init", "list-append", "array-imul"])
def test_inner_gradients_the_twins_refuse(fresh_routes, inner):
    for x in (1.3, -0.6):
        assert gradient(inner, x)[0] == pytest.approx(central(inner, x), rel=1e-7)
    assert deep._DUAL_KEYS


_runs = []


def _logged_partial(y):
    _runs.append(y)
    return functools.partial(_cubed_by_partial, 1.0)(y)


def test_the_inner_function_runs_again_in_the_dual_route(fresh_routes):
    # documented (nesting/deep.py): the transform route's attempt runs f's forward until the twins refuse (here the
    # partial), then the dual route runs f for the value and once more on dual numbers in the backward
    _runs.clear()
    assert gradient(lambda x: gradient(_logged_partial, x)[0], 1.5) == pytest.approx((9.0,))
    assert len(_runs) == 3
    _runs.clear()
    assert gradient(lambda x: gradient(_logged_partial, x)[0], 1.5) == pytest.approx((9.0,))
    assert len(_runs) == 2  # the route is remembered: no second attempt


_MIX = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [1.5, 0.2, 0.7]])


def _hooked_after_an_update(x):
    y = x * 1.0
    y *= 2.0  # (the twins refuse the update: the dual route)
    z = hook(lambda g: _MIX @ g, y)
    return np.sum(np.sin(z) * x)


def _hooked(x):
    z = hook(lambda g: _MIX @ g, x * 2.0)
    return np.sum(np.sin(z) * x)


def test_a_hook_in_a_gradient_the_dual_route_takes_is_refused(fresh_routes):
    """The dual route gives Hessian-vector products, which are vector-Hessian ones for a true gradient only; a hook
    makes the inner gradient another function, and the outer gradient came out transposed ([1.90, 1.22, 2.31] for
    finite differences' [0.81, -2.44, 1.86]). Refused, naming the hook's line; by the transform route it is right."""
    x, w = np.array([0.4, 0.7, -0.3]), np.array([0.3, -0.2, 0.9])
    with pytest.raises(ZygoteError, match=r"test_deep\.py:\d+: a nested gradient whose inner gradient passes "
                                          r"through hook"):
        gradient(lambda x: np.sum(gradient(_hooked_after_an_update, x)[0] * w), x)
    outer = lambda x: np.sum(gradient(_hooked, x)[0] * w)  # noqa: E731
    want = [(outer(x + 1e-6 * e) - outer(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)]
    np.testing.assert_allclose(gradient(outer, x)[0], want, rtol=1e-6)
    # hessian's forward-over-reverse is the Jacobian of the hooked gradient, column by column: no transpose there
    inner = lambda x: gradient(_hooked_after_an_update, x)[0]  # noqa: E731
    jac = np.stack([(inner(x + 1e-6 * e) - inner(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(hessian(_hooked_after_an_update, x), jac, rtol=1e-6, atol=1e-8)


def test_pullback_nested_beyond_the_limit_is_still_refused(fresh_routes):
    fresh_routes(1)  # (only gradient and value_and_gradient take the dual route)
    with pytest.raises(ZygoteError, match="deeper than 1 levels of transformed code"):
        gradient(lambda x: pullback(lambda y: y ** 3, x)[1](1.0)[0], 1.5)


def test_a_rule_sees_one_level_in_the_dual_route(fresh_routes, capsys):
    # documented difference: the dual route's only reverse pass is the innermost one, so a rule's forward counts one
    # level (the seed's nestlevel example counts right by the transform route, up to MAX_LEVELS)
    fresh_routes(1)
    assert nth(lambda x: report(x) * x, 2)(1.0) == pytest.approx(2.0)
    assert set(capsys.readouterr().out.splitlines()) == {"1 levels of nesting"}


@pytest.mark.usefixtures("deep_stack")
def test_sixth_and_seventh_derivatives_at_the_default_limit(fresh_routes):
    # the transform route is tried up to MAX_LEVELS (5), refused at the sixth, and the dual route takes over: a few
    # seconds (the sixth level by transform took 7-10 minutes and 7.5 GB)
    assert nesting.MAX_LEVELS == 5
    assert nth(power_loop, 6)(0.7) == pytest.approx(math.factorial(8) / 2 * 0.49, rel=1e-10)
    assert nth(power_loop, 7)(0.7) == pytest.approx(math.factorial(8) * 0.7, rel=1e-10)
    assert nth(math.sin, 7)(0.7) == pytest.approx(-math.cos(0.7), rel=1e-10)


@pytest.mark.dual_route
def test_reverse_over_reverse_through_an_update_in_place():
    # the twins cannot transform the mutation rules; the inner gradient is taken by forward-over-reverse instead
    def f(x):
        y = np.zeros(3)
        y[0] = x * x
        return y.sum()
    assert gradient(f, 2.0) == (4.0,)
    with pytest.raises(ZygoteError, match=r"np.zeros_like\(x\)"):  # forward mode's limit: a plain array holds no tangent
        gradient(lambda x: gradient(f, x)[0], 2.0)

    def g(x):  # an array made from the input holds the tangent: x0^2 x1 + x1^4, updated in place
        y = np.zeros_like(x)
        y[0] = x[0] * x[0]
        y[1] = x[1] ** 3
        y *= x[1]
        return y.sum()
    x0, v = np.array([0.7, -1.2]), np.array([1.0, 2.0])
    hv = gradient(lambda x: gradient(g, x)[0] @ v, x0)[0]
    np.testing.assert_allclose(hv, np.array([[2 * x0[1], 2 * x0[0]], [2 * x0[0], 12 * x0[1] ** 2]]) @ v, rtol=1e-12)


class _Vec2:
    def __init__(self, p, q):
        self.p, self.q = p, q

    def __mul__(self, k):
        return _Vec2(self.p * k, self.q * k)

    __rmul__ = __mul__

    def dot(self, o):
        return self.p * o.p + self.q * o.q


def _scaled_norm(a, b):
    v = _Vec2(a, b) * math.sin(b - a)
    w = 0.5 * v
    return v.dot(w)


@pytest.mark.parametrize("levels", [1, 2])
def test_a_user_class_operator_beside_a_dual_number(fresh_routes, levels):
    """`v * s` with `v` a user class and `s` a dual number (forward-over-reverse: a Hessian, or an inner gradient
    beyond the limit of transformed levels) is the class's own `__mul__`, as in Python: the operator rule ran instead
    and multiplied the class's cotangent by a number (TypeError), or recursed without end (dispatch._user_operator)."""
    fresh_routes(levels)

    def slope(a, b):
        return gradient(_scaled_norm, a, b)[0]
    h = 1e-6
    want = [(slope(0.3 + h, 0.7) - slope(0.3 - h, 0.7)) / (2 * h), (slope(0.3, 0.7 + h) - slope(0.3, 0.7 - h)) / (2 * h)]
    assert np.allclose(gradient(slope, 0.3, 0.7), want, rtol=1e-6)
    assert np.allclose(hessian(_scaled_norm, 0.3, 0.7)[0], want, rtol=1e-6)


_MIX = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [-0.1, 0.2, 0.6]])


def _by_loop(u):
    acc = []
    for t in u:
        acc.append(t * t if t > 0 else -t)
    return np.array(acc)


def _by_einsum(u):
    return np.einsum("ij,j->i", _MIX, u)


_helper = _by_loop


def _objective(u):
    return np.sum(_helper(u)) + np.prod(u * 0.5 + 1.0)


@pytest.mark.dual_route
def test_a_refusal_remembered_for_a_function_is_forgotten_when_a_helper_it_names_is_redefined():
    """The remembered refusal was keyed by the function's code alone, which compares equal whatever its globals hold:
    after the nested gradient of `_objective` with a loop helper (which the twins refuse), redefining the helper (a
    later notebook cell) still sent `hessian(_objective)` down the refused route (ForwardModeError on einsum)."""
    global _helper
    x, v = np.array([0.3, -0.5, 1.2]), np.array([1.0, 2.0, 3.0])
    try:
        gradient(lambda t: np.sum(gradient(_objective, t)[0] * v), x)
        _helper = _by_einsum
        got = hessian(_objective, x)
        factors = x * 0.5 + 1.0  # (the einsum is linear: the Hessian is the product's, 0.25 p / (f_i f_j) off the diagonal)
        want = 0.25 * np.prod(factors) / np.outer(factors, factors) * (1 - np.eye(3))
        np.testing.assert_allclose(got, want, atol=1e-12)
    finally:
        _helper = _by_loop


def _dropped_out(w, r):
    h = np.tanh(w)
    h *= r.random(4) > 0.3  # (in-place dropout: the transform route refuses it, forward-over-reverse takes it)
    return np.sum(h ** 2)


def _one_inner_step(w):
    r = np.random.default_rng(0)
    g = gradient(_dropped_out, w, r)[0]
    return _dropped_out(w - 0.5 * g, r)  # (the next mask, from the same generator)


@pytest.mark.dual_route
def test_forward_over_reverse_draws_what_the_forward_drew(mode):
    """The dual route runs the inner function again in the backward: it drew new masks (0.98 for 0.58), and the
    transform route's refused attempt had drawn some already (the value 0.61 for 1.23). The generators it may draw from
    are put back before each run (runtime/randomness.py), as checkpoint's are."""
    w = np.array([0.3, -0.8, 1.1, 0.4])
    value, (g,) = value_and_gradient(_one_inner_step, w)
    assert value == pytest.approx(_one_inner_step(w), rel=1e-12)
    h = 1e-6
    want = [(_one_inner_step(w + h * e) - _one_inner_step(w - h * e)) / (2 * h) for e in np.eye(4)]
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def _weighted_energy(u, s):
    h = np.ones(3)
    h[0] = 2.0  # constant weights filled in place
    return np.sum(np.tanh(u * h * s))


def _weights_from_zeros(u, s):
    h = np.zeros_like(u)
    h[:2] = 1.5
    h[2] = 0.5
    return np.sum(np.exp(-u * h) * s)


@pytest.mark.parametrize("energy", [_weighted_energy, _weights_from_zeros], ids=lambda f: f.__name__)
def test_an_inner_function_filling_a_constant_array_in_place(energy, fresh_routes, mode):
    """An unrolled gradient step whose energy fills constant weights in place: with the optimisations on, the store
    was called as a rule straight from the inner level's code, which the outer level took for a constant, and the
    inner backward's undo of the store changed the weights the outer level's tape held (-0.26 for -0.128). The store
    goes through J in code an outer level transforms: the twins refuse it, and the dual route is right."""
    x = np.array([0.3, -1.2, 0.8])

    def outer(s, x):
        u = x - 0.5 * gradient(energy, x, s)[0]
        return np.sum(u ** 2)
    got = gradient(outer, 0.9, x.copy())
    want_s = (outer(0.9 + 1e-6, x) - outer(0.9 - 1e-6, x)) / 2e-6
    want_x = [(outer(0.9, x + e) - outer(0.9, x - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(got[0], want_s, rtol=1e-6)
    np.testing.assert_allclose(got[1], want_x, rtol=1e-6, atol=1e-8)


Q0 = np.array([0.3, 0.7])


def _squared_inner_gradient(t):
    g, = gradient(lambda q: np.sum(np.array([np.sum(q), q[0]]) * t), Q0)  # (an array made from numbers)
    return np.sum(g * g * t)


def test_hessian_of_a_function_whose_inner_gradient_builds_an_array_from_numbers(mode):
    """Forward-over-reverse of the inner gradient, whose directions carry `hessian`'s own dual numbers: the inner
    gradient's arguments are perturbed by a dual tangent, and `np.array([...])` of its dual items gives a dual array
    (forward/levels.py make_dual, forward/dual.py _split). Both raised ForwardModeError, and the retry by
    reverse-over-reverse a ValueError from the third level."""
    t0 = np.array([1.5, -0.5])
    t_sum = t0[0] + t0[1]  # inner gradient g = (t0 + t1, t0): the function is (t0 + t1)^2 t0 + t0^2 t1
    want = np.array([[2 * t0[0] + 4 * t_sum + 2 * t0[1], 4 * t0[0] + 2 * t_sum], [4 * t0[0] + 2 * t_sum, 2 * t0[0]]])
    assert np.allclose(hessian(_squared_inner_gradient, t0), want)
    assert np.allclose(central_hessian(_squared_inner_gradient, t0), want, atol=1e-6)

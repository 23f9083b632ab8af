"""Forward mode: pushforward and derivative against central finite differences (float64) and closed forms.

The first half is one table of functions (`CASES`): math and NumPy calls, operators, loops, branches, helpers,
closures and methods, each pushed forward in one random direction and compared with central differences of `f`.
The second half holds the explicit tests: perturbation confusion, nesting, containers, the errors.
"""
import functools
import math
import os
import sys

import numpy as np
import pytest

import zygotepy
from zygotepy import (
    ForwardModeError,
    MissingTangentRule,
    ZygoteError,
    derivative,
    pushforward,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from feature_helpers import cube, poly

RNG = np.random.default_rng(7)


def _arr(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape)


def numerical_jvp(f, args, tangents, eps=1e-6):
    """(f(args + eps t) - f(args - eps t)) / (2 eps), argument by argument (numbers and arrays)."""
    plus = [a + eps * t for a, t in zip(args, tangents, strict=True)]
    minus = [a - eps * t for a, t in zip(args, tangents, strict=True)]
    return (np.asarray(f(*plus), dtype=float) - np.asarray(f(*minus), dtype=float)) / (2 * eps)


def _random_like(a):
    return float(RNG.standard_normal()) if isinstance(a, float) else RNG.standard_normal(np.shape(a))


# --- user helpers, the kind of code forward mode must run through ---------------------------------------------------------
def helper_loop(x, n):
    acc = 0.0
    for k in range(n):
        acc = acc + math.sin(k * x) / (k + 1)
    return acc


def helper_while(x):
    y = x
    while abs(y) < 10.0:
        y = y * 1.7 + math.cos(y)
    return y


def helper_branch(x):
    if x > 0:
        return math.exp(-x) * x
    return math.log1p(x * x)


def helper_recursive(x, n):
    return x if n == 0 else math.sin(helper_recursive(x, n - 1)) + x


class Affine:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return np.tanh(self.w @ x + self.b)

    def energy(self, x):
        return float(np.sum(self(x) ** 2))


W, B = _arr(3, 4), _arr(3)


def mlp(x):
    h = Affine(W, B)(x)
    return np.sum(np.maximum(h, 0.1) * h)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def closure_maker(a):
    def inner(x):
        return a * math.atan(x) + x ** 3
    return inner


def comprehension(x):
    return sum(math.sinh(x * k) for k in range(1, 4)) + max([x, x * x])


def list_building(x):
    out = [x[i] * x[i - 1] for i in range(1, len(x))]
    return np.array(out) ** 2


def inplace_update(x):
    y = x.copy()
    y[0] = y[0] * 3.0
    y[1:] = np.sin(y[1:])
    return y.sum() * y


def uses_partial(x):
    f = functools.partial(math.pow, x)
    return f(3.0) + math.hypot(x, 2.0 * x)


CASES = [
    ("math_sin", lambda x: math.sin(x), (0.7,)),
    ("math_mix", lambda x: math.exp(math.cos(x)) * math.sqrt(x) + math.log(x, 3.0), (1.3,)),
    ("math_inverse_trig", lambda x: math.asin(x) + math.acos(x / 2) * math.atan2(x, 0.3), (0.4,)),
    ("math_hyperbolic", lambda x: math.tanh(x) + math.asinh(x) + math.erf(x) - math.erfc(x / 2), (0.6,)),
    ("math_two_args", lambda x, y: math.pow(x, y) + math.hypot(x, y) + math.atan2(y, x), (1.2, 0.8)),
    ("operators", lambda x, y: (x * y - x / y) ** 2 + abs(-x) % 1.0 + -y + 2.0 ** x, (1.3, 0.7)),
    ("builtin_pow_float", lambda x: pow(x, 2.5) + float(x) * 2, (1.7,)),
    ("np_elementwise", lambda x: np.sin(x) * np.exp(x) + np.sqrt(x) / np.cosh(x), (_arr(5, low=0.1),)),
    ("np_binary", lambda x, y: np.arctan2(x, y) + np.hypot(x, y) + np.power(np.abs(x), y), (_arr(4), _arr(4, low=0.5))),
    ("np_broadcast", lambda x, y: x[:, None] * y[None, :] + x[:, None] / 2, (_arr(3), _arr(4))),
    ("np_reductions", lambda x: np.sum(x ** 2, axis=0) + np.mean(x, axis=1).sum() + np.max(x), (_arr(3, 4),)),
    ("np_min_axis", lambda x: np.min(x, axis=1) * np.amax(x, axis=0)[:3], (_arr(3, 4),)),
    ("np_matmul", lambda a, b: a @ b + np.dot(a, b).T.T, (_arr(3, 4), _arr(4, 2))),
    ("np_vector_matmul", lambda x, a: x @ a @ x + np.outer(x, x).sum() + np.inner(x, x), (_arr(3), _arr(3, 3))),
    ("np_shapes", lambda x: np.transpose(x.reshape(2, 6)).ravel()[::2] * np.squeeze(x[None, :, :1]).sum(),
     (_arr(3, 4),)),
    ("np_stack", lambda x, y: np.concatenate([x, y * 2, np.ones(2)]) + np.stack([x, y]).sum(axis=0).repeat(3),
     (_arr(2), _arr(2))),
    ("np_where_clip", lambda x: np.where(x > 0, x ** 2, -x) + np.clip(x, -0.5, 0.5), (_arr(6),)),
    *([("np_astype_function", lambda x: np.astype(x * x, np.complex128).real + x, (_arr(3),))]
      if hasattr(np, "astype") else []),
    ("np_linalg", lambda a: np.linalg.inv(a + 3 * np.eye(3)) @ np.ones(3) + np.linalg.norm(a),
     (_arr(3, 3),)),
    ("np_solve", lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b), (_arr(3, 3), _arr(3))),
    ("softmax", softmax, (_arr(5),)),
    ("loop", lambda x: helper_loop(x, 5), (0.9,)),
    ("while", helper_while, (0.3,)),
    ("branch_pos", helper_branch, (0.8,)),
    ("branch_neg", helper_branch, (-0.8,)),
    ("recursion", lambda x: helper_recursive(x, 4), (0.5,)),
    ("helpers_module", lambda x: cube(x) + poly(x, (1.0, -2.0, 0.5)), (1.1,)),
    ("callable_object", mlp, (_arr(4),)),
    ("method", lambda x: Affine(W, B).energy(x), (_arr(4),)),
    ("closure", lambda x: closure_maker(2.0)(x), (0.4,)),
    ("comprehension", comprehension, (0.3,)),
    ("list_to_array", list_building, (_arr(5),)),
    ("inplace_update", inplace_update, (_arr(4),)),
    ("partial", uses_partial, (1.4,)),
]


@pytest.mark.parametrize("name,f,args", CASES, ids=[c[0] for c in CASES])
def test_pushforward_matches_finite_differences(name, f, args):
    tangents = [_random_like(a) for a in args]
    got = pushforward(f, *args)(*tangents)
    want = numerical_jvp(f, args, tangents)
    assert np.shape(got) == np.shape(want), name
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=name)


SCALAR_CASES = [(name, f, args[0]) for name, f, args in CASES if len(args) == 1 and isinstance(args[0], float)]


@pytest.mark.parametrize("name,f,x", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_derivative_matches_gradient(name, f, x):
    """Forward and reverse mode agree on scalar functions (two independent implementations of the same math)."""
    (g,) = zygotepy.gradient(f, x)
    assert derivative(f, x) == pytest.approx(g, rel=1e-10, abs=1e-12)


def test_closed_forms():
    assert derivative(lambda x: x ** 3, 2.0) == 12.0
    assert derivative(math.sin, 0.0) == 1.0
    assert derivative(lambda x: math.exp(2 * x), 0.0) == 2.0
    assert type(derivative(lambda x: math.sin(x) * x, 1.0)) is float
    assert pushforward(lambda x, y: x * y, 3.0, 4.0)(1.0, 0.0) == 4.0
    assert pushforward(lambda x, y: x * y, 3.0, 4.0)(None, 1.0) == 3.0


def test_perturbation_confusion():
    """Siskind & Pearlmutter's example: without tags the inner derivative sees the outer x's perturbation (2.0)."""
    assert derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0) == 1.0


def test_nested_derivatives():
    # d2/dx2 x^4 = 12 x^2; d3/dx3 sin = -cos
    assert derivative(lambda x: derivative(lambda y: y ** 4, x), 2.0) == pytest.approx(48.0)
    third = derivative(lambda x: derivative(lambda y: derivative(math.sin, y), x), 0.4)
    assert third == pytest.approx(-math.cos(0.4))
    # mixed partial d/dx d/dy (x y^2 sin x) at (x, y) = 2 y (sin x + x cos x)
    x0, y0 = 0.7, 1.3
    mixed = derivative(lambda x: derivative(lambda y: x * y ** 2 * math.sin(x), y0), x0)
    assert mixed == pytest.approx(2 * y0 * (math.sin(x0) + x0 * math.cos(x0)))


def test_nested_arrays():
    """A Hessian-vector product by forward-over-forward on arrays: H = diag(-sin x) + 2 * ones."""
    x, v = _arr(4), _arr(4)

    def f(x):
        return np.sum(np.sin(x)) + np.sum(x) ** 2

    def grad_dot(x):  # directional derivative along each basis vector: the gradient, by forward mode
        return np.array([pushforward(f, x)(np.eye(4)[i]) for i in range(4)])
    hv = pushforward(grad_dot, x)(v)
    np.testing.assert_allclose(hv, -np.sin(x) * v + 2 * np.sum(v), rtol=1e-10)


def test_containers_in_and_out():
    def f(p):
        a, b = p["a"], p["b"]
        return (a * b[0], [math.sin(a), b[1] ** 2])
    out = pushforward(f, {"a": 0.5, "b": (2.0, 3.0)})({"a": 1.0, "b": (0.0, 1.0)})
    assert out[0] == pytest.approx(2.0)
    assert out[1][0] == pytest.approx(math.cos(0.5))
    assert out[1][1] == pytest.approx(6.0)


def test_constant_output_has_zero_tangent():
    assert pushforward(lambda x: 3.0, 1.0)(1.0) == 0.0
    np.testing.assert_array_equal(pushforward(lambda x: np.ones(3), 1.0)(1.0), np.zeros(3))


def test_int_argument_is_differentiated_as_a_real():
    assert derivative(lambda x: x * x, 3) == 6.0


def test_dual_into_plain_array_raises():
    def f(x):
        out = np.zeros(2)
        out[0] = x
        return out
    with pytest.raises((ForwardModeError, ValueError)) as info:  # NumPy re-raises ours as a ValueError
        pushforward(f, 1.0)(1.0)
    chain = [info.value, info.value.__context__, info.value.__cause__]
    assert any(isinstance(e, ForwardModeError) and "plain" in str(e) for e in chain)


def test_missing_tangent_rule_names_the_callee():
    with pytest.raises(MissingTangentRule, match="eig"):
        derivative(lambda t: np.linalg.eig(np.eye(2) * t)[0], 2.0)
    with pytest.raises(MissingTangentRule, match="nextafter"):  # (C code, no rule: math.fsum has one now)
        derivative(lambda x: math.nextafter(x, 2.0), 1.0)


def test_derivative_needs_a_scalar():
    with pytest.raises(ZygoteError, match="scalar"):
        derivative(np.sin, np.ones(3))


def test_user_tangent_rule():
    from zygotepy.forward import tangent_rule
    calls = []

    def softplus_c(x):  # pretend this is C code: no readable source is needed once it has a rule
        return math.log1p(math.exp(x))

    @tangent_rule(softplus_c)
    def _(fn, primals, tangents, kwargs):
        calls.append(1)
        (x,), (t,) = primals, tangents
        return fn(x), t / (1 + math.exp(-x))
    assert derivative(lambda x: softplus_c(2 * x), 0.3) == pytest.approx(2 / (1 + math.exp(-0.6)))
    assert calls


def test_tracebacks_point_at_user_lines():
    def bad(x):
        return math.sqrt(x) + undefined_name  # noqa: F821
    with pytest.raises(NameError) as info:
        derivative(bad, 1.0)
    frames = [(tb.tb_frame.f_code.co_filename, tb.tb_lineno) for tb in _walk(info.value.__traceback__)]
    assert (os.path.abspath(__file__), bad.__code__.co_firstlineno + 1) in frames


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_doctests():
    import doctest

    import zygotepy.api_modes
    result = doctest.testmod(zygotepy.api_modes, extraglobs={"np": np})
    assert result.attempted >= 6 and result.failed == 0


def test_ufunc_outer_on_dual_numbers():
    from zygotepy import pushforward
    x, v = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    ydot = pushforward(lambda x: np.multiply.outer(x, np.sin(x)), x)(v)
    expected = np.multiply.outer(v, np.sin(x)) + np.multiply.outer(x, np.cos(x) * v)
    np.testing.assert_allclose(ydot, expected)


def test_forward_mode_sees_updates_in_place_of_list_items():
    """`v *= t` on a dual number of an array updates it in place, as on the array (a list holding it sees the change);
    it made a new value, so forward mode differentiated another function (derivative 3.0 here)."""
    def g(t):
        vs = [np.array([t, 2 * t])]
        for v in vs:
            v *= t
        return np.sum(vs[0])
    assert derivative(g, 1.5) == pytest.approx(2 * 1.5 * 3)

    def f(v0):
        vs = [v0 * 1.0, v0 * 2.0]
        for v in vs:
            v *= v0
        return vs[0] + vs[1]
    x = np.array([0.3, 1.2])
    assert np.allclose(pushforward(f, x)(np.array([1.0, 0.0])), [6 * 0.3, 0.0])


# --- what a user's code does with a number: dual numbers behave as the numbers they carry ---------------------------
@pytest.mark.parametrize("f, expected", [
    (lambda t: sum(v * v for v in np.array([t, 2 * t]).tolist()), 7.0),
    (lambda t: t * t if f"{t:.3f}" else 0.0, 1.4),
    (lambda t: divmod(t, 0.3)[1] ** 2, 0.2),
], ids=["tolist", "format", "divmod"])
def test_dual_numbers_in_plain_python(f, expected):
    assert zygotepy.derivative(f, 0.7) == pytest.approx(expected)
    assert zygotepy.gradient(f, 0.7)[0] == pytest.approx(expected)


def test_a_library_function_failing_on_a_dual_names_itself():
    """A library's Python code that cannot take a dual number (statistics converts to fractions) raises zygotepy's
    MissingTangentRule naming it, not a TypeError from inside the library."""
    import statistics
    with pytest.raises(zygotepy.errors.MissingTangentRule, match="statistics.mean"):
        zygotepy.derivative(lambda t: statistics.mean([t, t * t]), 0.7)


def test_flat_of_a_dual_array_is_refused_clearly():
    with pytest.raises(zygotepy.errors.ForwardModeError, match="x.ravel"):
        zygotepy.derivative(lambda t: np.array([t, 2 * t]).flat[1], 0.7)


# --- tangent rules of more NumPy functions, against central differences along a direction -------------------------
_A = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])
_SPD = np.array([[2.0, 0.3], [0.3, 1.5]])


@pytest.mark.parametrize("f", [
    lambda t: np.var(_A * t + t * t),
    lambda t: np.var(_A * t, axis=0, ddof=1),
    lambda t: np.std(_A + t * _A ** 2, axis=1, keepdims=True),
    lambda t: np.sort(_A * t + np.sin(t * _A), axis=0),
    lambda t: np.sort(_A * t - t * t, axis=None),
    lambda t: np.einsum("ij,kj->ik", _A * t, _A + t),
    lambda t: np.convolve(_A[0] * t, _A[1] + t),
    lambda t: np.linspace(t, t * t, 5),
    lambda t: np.pad(_A * t, 1, constant_values=0.5),
    lambda t: np.pad(_A * t, ((1, 0), (2, 1)), mode="reflect"),
    lambda t: np.linalg.cholesky(_SPD + t * np.eye(2)),
], ids=["var", "var-axis-ddof", "std-keepdims", "sort-axis0", "sort-none", "einsum", "convolve", "linspace",
        "pad-constant", "pad-reflect", "cholesky"])
def test_tangent_rules_of_numpy_functions(f):
    t, h = 0.8, 1e-6
    expected = (np.asarray(f(t + h)) - np.asarray(f(t - h))) / (2 * h)
    assert np.allclose(zygotepy.derivative(f, t), expected, atol=1e-6)


def test_a_sums_initial_value_is_no_part_of_its_tangent():
    """`np.sum(x, initial=c)`: the linear rule applied the call's keywords to the tangent too, adding c to it (6.0
    for 3.0; found by a probe of NumPy idioms)."""
    x = np.array([0.5, -0.4, 1.3])
    assert derivative(lambda t: np.sum(np.array([t, 2 * t]), initial=3.0), 1.0) == 3.0
    assert pushforward(lambda v: v.sum(initial=3.0), x)(np.ones(3)) == 3.0
    np.testing.assert_allclose(pushforward(lambda v: np.sum(v * v, axis=0, initial=3.0, keepdims=True), x)(
        np.ones(3)), [2 * np.sum(x)])


def test_an_extremum_with_where_and_initial():
    """`np.max(x, where=m, initial=c)`: the entries left out cannot attain the maximum, and a maximum that is the
    constant `initial` has no tangent (an entry's was taken: [0, 0, 1] for [1, 0, 0])."""
    x = np.array([0.5, -0.4, 1.3])
    m = np.array([True, True, False])
    np.testing.assert_allclose(pushforward(lambda v: np.max(v, where=m, initial=-10.0), x)(np.array([1.0, 2, 4])),
                               1.0)
    assert pushforward(lambda v: np.max(v, initial=5.0), x)(np.ones(3)) == 0.0
    np.testing.assert_allclose(pushforward(lambda v: np.min(v[None] * [[1.0], [-1.0]], axis=1, where=m,
                                                            initial=10.0), x)(np.array([1.0, 2, 4])), [2.0, -1.0])


def test_the_imaginary_part_of_a_dual_number():
    """`z.imag` of a complex value carrying a tangent (`.real` and `np.imag(z)` worked; an AttributeError)."""
    x = np.array([0.5, -0.4, 1.3])
    np.testing.assert_allclose(pushforward(lambda v: (v * (1 + 2j)).imag, x)(np.ones(3)), 2 * np.ones(3))
    np.testing.assert_allclose(pushforward(lambda v: np.fft.fft(v).imag, x)(np.ones(3)), np.fft.fft(np.ones(3)).imag)


def _sine_times(v):
    return math.sin(v) * v


def _pair(v):
    return np.array([v[0] * v[1], np.exp(v[0])])


def test_checkpoint_and_forwarddiff_run_their_function_in_forward_mode():
    """Forward mode ran `checkpoint(f, x)`'s and `forwarddiff(f, x)`'s `f` untransformed: `math.sin` of a dual number
    was refused."""
    want = math.cos(0.4) * 0.4 + math.sin(0.4)
    assert derivative(lambda t: zygotepy.checkpoint(_sine_times, t), 0.4) == pytest.approx(want)
    assert derivative(lambda t: zygotepy.forwarddiff(_sine_times, t), 0.4) == pytest.approx(want)
    x = np.array([0.3, 0.5])
    _, t = zygotepy.jvp(lambda v: np.sum(zygotepy.checkpoint(_pair, v)), (x,), (np.ones(2),))
    assert t == pytest.approx(x[1] + x[0] + np.exp(x[0]))


def test_item_with_an_index_in_forward_mode_and_item_under_hessian():
    """`x.item(1)` of a dual array raised TypeError; `x.item()` under hessian stored a dual number into a plain array."""
    x = np.array([0.3, -0.5, 1.2])
    _, t = zygotepy.jvp(lambda v: v.item(1) * 3.0 + v.item((2,)), (x,), (np.array([1.0, 2.0, 4.0]),))
    assert t == pytest.approx(10.0)
    hessian = zygotepy.hessian
    np.testing.assert_allclose(hessian(lambda v: v.item(1) ** 3 + v[0], x), np.diag([0.0, 6 * x[1], 0.0]))
    np.testing.assert_allclose(hessian(lambda v: v[0] * v[1].item() ** 2, x[:2]),
                               [[0.0, 2 * x[1]], [2 * x[1], 2 * x[0]]])


def _stores_into_a_constant(a):
    R = np.eye(2)
    R[0, 0] = np.cos(a)  # (a store of a value carrying a tangent into an array of constants: refused)
    return R[0, 0] * 2.0


def _no_tangent_rule(a):
    return float(np.sum(np.gradient(np.linspace(0.0, 1.0, 70) * a)))  # (a reverse rule only, 70 outputs)


def test_forward_mode_refusals_name_the_users_line():
    """pushforward, derivative and jvp raised these with no file or line of the user's (hessian's said it)."""
    store_line = _stores_into_a_constant.__code__.co_firstlineno + 2
    rule_line = _no_tangent_rule.__code__.co_firstlineno + 1
    for f, line in ((_stores_into_a_constant, store_line), (_no_tangent_rule, rule_line)):
        for run in (lambda: zygotepy.pushforward(f, 0.3)(1.0), lambda: zygotepy.derivative(f, 0.3),
                    lambda: zygotepy.jvp(f, (0.3,), (1.0,))):
            with pytest.raises(zygotepy.ZygoteError) as info:
                run()
            said = str(info.value) + "\n".join(getattr(info.value, "__notes__", ()))
            assert f"test_forward.py:{line}" in said, said

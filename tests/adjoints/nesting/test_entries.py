"""Nested reverse mode through the entry points: `gradient`, `value_and_gradient` and `pullback` of functions that
call them (adjoints/nesting/entries.py), second to sixth derivatives and the levels past MAX_LEVELS, checked against
closed forms and finite differences of the inner gradient."""
import math
import os

import numpy as np
import pytest

import zygotepy
from zygotepy import ZygoteError, adjoint, gradient, pullback, value_and_gradient


def nestlevel():
    return 0


@adjoint(nestlevel)
def _nestlevel():
    return nestlevel() + 1, lambda _: ()


def report(x):
    print(nestlevel(), "levels of nesting")
    return x


def test_seed_nestlevel_example(capsys):
    report(1.0)
    assert capsys.readouterr().out == "0 levels of nesting\n"
    assert gradient(report, 1.0) == (1.0,)
    assert capsys.readouterr().out == "1 levels of nesting\n"
    assert gradient(lambda x: x * gradient(report, x)[0], 1.0) == (1.0,)
    assert capsys.readouterr().out == "2 levels of nesting\n"
    # the inner function is x * 1 = x, whose derivative 1 does not depend on y: no gradient (None)
    assert gradient(lambda y: gradient(lambda x: x * gradient(report, x)[0], y)[0], 1.0) == (None,)
    assert capsys.readouterr().out == "3 levels of nesting\n"


def d(f):
    """The derivative of a scalar function, by reverse mode (nests)."""
    return lambda x: gradient(f, x)[0]


def powloop(x, n=4):
    r = 1.0
    for _ in range(n):
        r = r * x
    return r


def damped(x):
    r = x
    k = 0
    while k < 3:
        r = math.sin(r) * 0.5 + x * r
        k += 1
    return r


def test_second_derivatives_match_closed_forms():
    assert d(d(math.sin))(0.7) == pytest.approx(-math.sin(0.7))
    assert d(d(math.cos))(0.7) == pytest.approx(-math.cos(0.7))
    assert d(d(math.exp))(0.3) == pytest.approx(math.exp(0.3))
    assert d(d(lambda x: x ** 4))(1.3) == pytest.approx(12 * 1.3 ** 2)
    assert d(d(lambda x: x * x * x * x))(1.3) == pytest.approx(12 * 1.3 ** 2)
    assert d(d(lambda x: math.log(x) * x))(1.7) == pytest.approx(1 / 1.7)


def test_second_derivative_through_a_loop():
    assert d(d(powloop))(1.3) == pytest.approx(12 * 1.3 ** 2)
    assert d(powloop)(1.3) == pytest.approx(4 * 1.3 ** 3)


def test_second_derivative_through_a_while_loop_matches_finite_differences():
    h = 1e-5
    inner = d(damped)
    fd = (inner(0.4 + h) - inner(0.4 - h)) / (2 * h)
    assert d(d(damped))(0.4) == pytest.approx(fd, rel=1e-6)


def test_nested_value_and_gradient_and_pullback():
    # sin(x) * cos(x) = sin(2x) / 2: derivative cos(2x)
    f = lambda x: value_and_gradient(math.sin, x)[1][0] * value_and_gradient(math.sin, x)[0]  # noqa: E731
    assert gradient(f, 0.5) == pytest.approx((math.cos(1.0),))

    def g(x):
        y, back = pullback(lambda t: t * t * t, x)
        return back(2.0)[0] + y  # 6 x^2 + x^3
    assert gradient(g, 1.5) == pytest.approx((12 * 1.5 + 3 * 1.5 ** 2,))


def test_mixed_partials_of_two_arguments():
    # d/da and d/db of d/dx (x^2 y) at (a, b) = 2 a b: (2 b, 2 a)
    assert gradient(lambda a, b: gradient(lambda x, y: x * x * y, a, b)[0], 1.5, 2.0) == pytest.approx((4.0, 3.0))


def test_inner_gradient_closing_over_the_outer_variable():
    # d/dx [d/dy (x y^2)]_{y=x} = d/dx (2 x^2) = 4 x
    assert gradient(lambda x: gradient(lambda y: x * y * y, x)[0], 1.2) == pytest.approx((4.8,))


def test_third_derivatives_match_closed_forms():
    assert d(d(d(math.sin)))(0.7) == pytest.approx(-math.cos(0.7))
    assert d(d(d(math.exp)))(0.3) == pytest.approx(math.exp(0.3))
    assert d(d(d(lambda x: x ** 4)))(1.3) == pytest.approx(24 * 1.3)
    assert d(d(d(lambda x: math.log(x) * x)))(1.7) == pytest.approx(-1 / 1.7 ** 2)
    assert d(d(d(powloop)))(1.3) == pytest.approx(24 * 1.3)


def test_third_derivative_through_a_while_loop_matches_finite_differences():
    h = 1e-4
    inner = d(d(damped))
    assert d(d(d(damped)))(0.4) == pytest.approx((inner(0.4 + h) - inner(0.4 - h)) / (2 * h), rel=1e-6)


def test_nested_second_derivative_of_array_powers():
    x = np.array([1.0, 2.0, 3.0])
    g = gradient(lambda x: np.sum(gradient(lambda y: np.sum(y ** 3), x)[0]), x)[0]
    np.testing.assert_allclose(g, 6 * x)
    g = gradient(lambda x: np.sum(gradient(lambda y: np.sum(y ** 2.5), x)[0]), x)[0]
    np.testing.assert_allclose(g, 2.5 * 1.5 * x ** 0.5)


def test_third_order_through_a_closure_in_the_user_function():
    def f(x):
        scale = x * x
        g = lambda t: scale * t  # a closure over a local: x^3 in all
        return g(x)
    assert d(d(d(f)))(1.1) == pytest.approx(6.0)


def test_errors_at_the_third_level_name_the_users_line():
    def f(x):
        return math.sin(x) * undefined_name  # noqa: F821
    with pytest.raises(NameError) as info:
        d(d(d(f)))(0.5)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"{__file__}, line {f.__code__.co_firstlineno + 1}" in notes


# --- fourth derivatives (levels beyond MAX_LEVELS: test_deep.py) ----------------------------------------------------
def _quartic(x):
    return x * x * x * x


def _d(f):
    return lambda x: gradient(f, x)[0]


def _powloop(x):
    r = 1.0
    for _ in range(5):
        r = r * x
    return r


@pytest.mark.parametrize("fn, fourth", [
    (_quartic, lambda x: 24.0), (math.sin, math.sin), (_powloop, lambda x: 120.0 * x)], ids=["x4", "sin", "loop"])
def test_fourth_derivatives_match_closed_forms(fn, fourth):
    assert _d(_d(_d(_d(fn))))(1.3) == pytest.approx(fourth(1.3), rel=1e-10)


# the first run of five or six levels transforms each level's generated code: a fifth derivative takes ~30 s on a quiet
# core, a sixth several minutes and GBs, so these run when ZYGOTEPY_SLOW_NESTING=1 is set
_skip_slow = pytest.mark.skipif(not os.environ.get("ZYGOTEPY_SLOW_NESTING"), reason="minutes: ZYGOTEPY_SLOW_NESTING=1")


def slow(test):
    return _skip_slow(pytest.mark.usefixtures("deep_stack")(test))


@pytest.mark.dual_route
def test_the_level_above_a_lowered_limit_takes_forward_over_reverse(monkeypatch):
    # a lowered limit: the third level is refused by the twins and taken by the dual route (nesting/deep.py)
    import zygotepy.adjoints.nesting.entries as nesting
    import zygotepy.adjoints.nesting.deep as deep
    monkeypatch.setattr(nesting, "MAX_LEVELS", 2)
    monkeypatch.setattr(deep, "_DUAL_KEYS", set())
    assert _d(_d(_quartic))(1.5) == pytest.approx(12 * 1.5 ** 2)
    assert not deep._DUAL_KEYS
    assert _d(_d(_d(_quartic)))(1.5) == pytest.approx(24 * 1.5)
    assert len(deep._DUAL_KEYS) == 1


# --- fifth and sixth derivatives (MAX_LEVELS is the deepest level these verify) --------------------------------------

def _quintic(x):
    return x ** 5


def _sextic(x):
    return x ** 6


def _powloop6(x):
    r = 1.0
    for _ in range(6):
        r = r * x
    return r


def _five(f):
    return _d(_d(_d(_d(_d(f)))))


@pytest.mark.usefixtures("deep_stack")
def test_a_fifth_derivative_through_a_loop_in_every_run():
    # ~45 s, in every run of the suite (the other fifth derivatives are slow tests): a change to a rule on the nested
    # path can drop a term only at the fifth level, as `splat`'s did from 2026-11-26 (112, not 120: its `_walkable` helper
    # ran as a constant when an outer level transformed the rule), unseen while the slow tests were not run
    assert _five(_powloop)(1.3) == pytest.approx(120.0, rel=1e-10)


@slow
def test_fifth_derivatives_match_closed_forms():
    from zygotepy.adjoints.nesting.entries import MAX_LEVELS
    assert MAX_LEVELS == 5  # the deepest level verified here is the deepest a user may reach
    assert _five(_quintic)(1.3) == pytest.approx(120.0, rel=1e-10)
    assert _five(math.sin)(0.7) == pytest.approx(math.cos(0.7), rel=1e-10)
    assert _five(math.exp)(0.3) == pytest.approx(math.exp(0.3), rel=1e-10)
    assert _five(_powloop)(1.3) == pytest.approx(120.0, rel=1e-10)  # x^5 by a loop
    assert _five(_powloop6)(1.3) == pytest.approx(720.0 * 1.3, rel=1e-10)  # x^6 by a loop


@slow
def test_sixth_derivatives_match_closed_forms(monkeypatch):
    # the loop gave 696.0, not 720, until 2026-11-27 (stop 16: 720 after the nesting changes of that session, cause not
    # isolated); MAX_LEVELS stays 5 until the nestlevel example is checked at six levels too
    # ~12 min and ~9 GB on one core: the sixth level's first run transforms ~2.5 million lines of generated code
    import zygotepy.adjoints.nesting.entries as nesting
    monkeypatch.setattr(nesting, "MAX_LEVELS", 6)
    assert _d(_five(_sextic))(1.3) == pytest.approx(720.0, rel=1e-10)
    assert _d(_five(math.sin))(0.7) == pytest.approx(-math.sin(0.7), rel=1e-10)
    assert _d(_five(math.exp))(0.3) == pytest.approx(math.exp(0.3), rel=1e-10)
    assert _d(_five(_powloop6))(1.3) == pytest.approx(720.0, rel=1e-10)  # x^6 by a loop


@slow
def test_seed_nestlevel_example_at_five_levels(capsys):
    # as the seed's example: h1 = report, h(k+1)(x) = x * h_k'(x); gradient(h_k) runs report under k levels
    h = report
    for level in range(1, 6):
        assert gradient(h, 1.0) in ((1.0,), (None,))
        assert capsys.readouterr().out == f"{level} levels of nesting\n"
        h = (lambda g: lambda x: x * gradient(g, x)[0])(h)


def _scaled_square(x, c=1.0, y=1.0):
    return np.sum(x * x * y) * c


def _fd(fn, a, h=1e-6):
    a = np.asarray(a, dtype=float)
    out = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i] = h
        out[i] = (np.sum(fn(a + e)) - np.sum(fn(a - e))) / (2 * h)
    return out


@pytest.mark.parametrize("kind", ["gradient", "value_and_gradient", "argnums"])
def test_an_outer_gradient_reaches_a_keyword_of_the_inner_one(kind):
    """`gradient(f, x, y=a)` inside an outer gradient: y is the inner level's constant, and the outer gradient
    reaches `a` through it (a ZygoteError before: the keyword's cotangent was dropped). Checked against central
    differences of the inner gradient; the parameter `c` between takes its default."""
    def inner(a):
        if kind == "gradient":
            return gradient(_scaled_square, a * 0.5, y=a)[0]
        if kind == "argnums":
            return gradient(_scaled_square, a * 0.5, argnums=0, y=np.sin(a))
        value, (g,) = value_and_gradient(_scaled_square, a * 0.5, y=a)
        return g * value
    _outer_gradient_matches_finite_differences(inner)


def _outer_gradient_matches_finite_differences(inner):
    """The gradient of sum(tanh(inner(a))) against central differences of tanh(inner(a))."""
    def outer(a):
        return np.sum(np.tanh(inner(a)))
    a = np.array([0.3, -0.7, 1.1])
    (got,) = gradient(outer, a)
    np.testing.assert_allclose(got, _fd(lambda v: np.tanh(inner(v)), a), rtol=1e-7, atol=1e-9)


def test_a_keyword_of_the_inner_gradient_that_carries_no_outer_gradient_stays_a_constant():
    """An int keyword, and a scalar keyword given as a constant: the outer gradient is the one of x alone."""
    def outer(x):
        return gradient(_scaled_square, x, c=3, y=2.0)[0] * x
    (got,) = gradient(outer, 0.7)
    assert got == pytest.approx(4 * 3 * 2.0 * 0.7)


def _keyword_only(x, *, y=1.0):
    return x * x * y


@pytest.mark.dual_route
def test_a_keyword_only_parameter_of_the_inner_function_still_raises_when_the_outer_gradient_reaches_it():
    """Keyword-only parameters are not placed by position: the dual route takes them as constants, and an outer
    gradient that reaches one raises instead of dropping it."""
    from zygotepy import ZygoteError
    with pytest.raises(ZygoteError, match="keyword argument y="):
        gradient(lambda a: gradient(_keyword_only, a, y=a)[0], 1.5)


def _over_reversed_with_a_call(x):
    lst = [x, x * x]
    s = 0.0
    for e in reversed(lst):  # (its loop watches `lst` for updates by a call: that code is transformed again above)
        s = s + math.sin(e)
    return s


def test_third_derivative_through_a_loop_over_a_lazy_iterator_with_a_call():
    third = _d(_d(_d(_over_reversed_with_a_call)))
    second = _d(_d(_over_reversed_with_a_call))
    x, h = 0.7, 1e-5
    assert third(x) == pytest.approx((second(x + h) - second(x - h)) / (2 * h), rel=1e-6)
    # closed form: sin(x) + sin(x^2)
    assert third(x) == pytest.approx(-math.cos(x) + (-8 * x ** 3 * math.cos(x * x) - 12 * x * math.sin(x * x)),
                                     rel=1e-10)


def test_an_outer_gradient_reaches_a_keyword_of_an_inner_pullback():
    """`pullback(f, x, y=a)` inside an outer gradient: the inner back gives x's cotangent alone (one per positional
    argument), and the outer gradient reaches `a` through the value and through the back (a ZygoteError before:
    "keyword arguments in a call"). Checked against central differences."""
    def inner(a):
        value, back = pullback(_scaled_square, a * 0.5, y=a)
        (g,) = back(1.5)
        return g * value
    _outer_gradient_matches_finite_differences(inner)


def test_constant_keywords_of_an_inner_pullback():
    """An int keyword alone, and an int with a float given as constants: d/dx of c * y * (x**2 + 2 x**2)."""
    def outer(x):
        value, back = pullback(_scaled_square, x, c=3)
        return back(1.0)[0] * x + value

    def outer_both(x):
        return pullback(_scaled_square, x, c=3, y=2.0)[1](1.0)[0] * x
    assert gradient(outer, 0.7)[0] == pytest.approx(3 * (4 * 0.7 + 2 * 0.7))
    assert gradient(outer_both, 0.7)[0] == pytest.approx(4 * 3 * 2.0 * 0.7)


def test_a_keyword_only_parameter_of_an_inner_pullback_is_refused():
    from zygotepy import ZygoteError
    with pytest.raises(ZygoteError, match="keyword arguments in a call"):
        gradient(lambda a: pullback(_keyword_only, a, y=a)[1](1.0)[0], 1.5)


@pytest.mark.dual_route
def test_an_inner_gradient_of_a_function_updating_its_argument_is_refused():
    """The outer derivative was taken at the argument the inner call had updated (12 x0^4 for 12 x0^2: silently
    wrong; found by a probe of the higher-order APIs); `hessian` of the same function is right."""
    def f(x):
        x[0] = x[0] ** 2
        return np.sum(x * x)

    def outer(x):
        return np.sum(gradient(f, x)[0])

    with pytest.raises(ZygoteError, match="updates its argument in place, inside a function being differentiated"):
        gradient(outer, np.array([0.5, 2.0]))
    np.testing.assert_allclose(zygotepy.hessian(f, np.array([0.5, 2.0])), [[3.0, 0.0], [0.0, 2.0]])

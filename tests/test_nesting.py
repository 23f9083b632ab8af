"""Nested reverse mode: `gradient` of functions that call `gradient` (adjoints/nesting/), checked against closed
forms and finite differences of the inner gradient."""
import math
import os

import numpy as np
import pytest

import zygotepy
from zygotepy import ZygoteError, adjoint, gradient, pullback, show_adjoint, value_and_gradient


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


def _scaled_cube(x, k):
    return k * x ** 3


@adjoint(_scaled_cube)
def _scaled_cube_rule(x, k):  # gives no cotangent to a keyword (not keyword-aware)
    return k * x ** 3, lambda dy: (3 * k * x * x * dy, x ** 3 * dy)


@pytest.mark.dual_route
def test_a_keyword_that_carries_a_gradient_into_a_rule_at_second_order():
    # k passed by keyword carries a gradient, into a rule that is not keyword-aware: the twins refuse it, and the
    # inner gradient is taken by forward-over-reverse instead (nesting/deep.py): d/dx of 3 x y^2 at y = x is 9 x^2
    f = lambda x: gradient(lambda y: _scaled_cube(y, k=x), x)[0]  # noqa: E731
    assert gradient(f, 1.0) == pytest.approx((9.0,), rel=1e-12)
    assert gradient(f, 1.0)[0] == pytest.approx((f(1.0 + 1e-6) - f(1.0 - 1e-6)) / 2e-6, rel=1e-7)
    # as a constant it is fine: d/dx of 6 x^2 is 12 x
    assert gradient(lambda x: gradient(lambda y: _scaled_cube(y, k=2.0), x)[0], 1.5) == pytest.approx((18.0,))


def _kw_only(x, *, k=2.0):
    return k * x * x


def _by_keyword(x, scale=1.0, power=2):
    return scale * x ** power


@pytest.mark.parametrize("f, second", [
    (lambda y: _kw_only(y, k=3.0), lambda x: 6.0),
    (lambda y: _kw_only(y), lambda x: 4.0),
    (lambda y: _by_keyword(y, power=3, scale=2.0), lambda x: 12 * x),
    (lambda y: _by_keyword(x=y, power=4), lambda x: 12 * x * x)],
    ids=["keyword-only", "keyword-default", "keywords-for-positional-parameters", "every-argument-by-keyword"])
def test_second_order_through_calls_with_keywords(f, second):
    assert d(d(f))(1.3) == pytest.approx(second(1.3), rel=1e-12)
    third = d(d(d(f)))(1.3)  # (None where the second derivative is a constant: no gradient)
    assert (0.0 if third is None else third) == pytest.approx((second(1.3 + 1e-5) - second(1.3 - 1e-5)) / 2e-5,
                                                              rel=1e-6, abs=1e-8)


def test_a_keyword_value_that_carries_the_gradient_at_second_order():
    # k = x y: d/dy (x y^3) = 3 x y^2, at y = x: 3 x^3, whose derivative is 9 x^2
    assert gradient(lambda x: gradient(lambda y: _kw_only(y, k=x * y), x)[0], 1.2) == pytest.approx((9 * 1.44,))
    # and through a rule that gives keywords their cotangents (np.clip's a_min: the bound is x itself here)
    f = lambda x: gradient(lambda y: np.clip(y * y, a_min=x, a_max=10.0) * y, x)[0]  # noqa: E731
    h = 1e-6
    assert gradient(f, 1.5)[0] == pytest.approx((f(1.5 + h) - f(1.5 - h)) / (2 * h), rel=1e-6)


def test_second_order_through_numpy_keyword_arguments():
    x0 = np.array([[0.5, 1.0], [1.5, 2.0]])

    def f(y):
        return np.sum(np.sum(y ** 3, axis=0) ** 2)
    (hx,) = gradient(lambda x: gradient(f, x)[0].sum(), x0)
    h, fd = 1e-6, np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[i] = h
        fd[i] = (gradient(f, x0 + e)[0].sum() - gradient(f, x0 - e)[0].sum()) / (2 * h)
    np.testing.assert_allclose(hx, fd, rtol=1e-6)


def test_second_order_through_einsum():
    # f = (c . x)^2 with c the column sums of A: the gradient's sum is 2 (c . x) sum(c), whose gradient is 2 sum(c) c
    a = np.arange(6.0).reshape(2, 3) / 5
    c = a.sum(axis=0)
    (h,) = gradient(lambda x: gradient(lambda y: np.einsum("ij,j->i", a, y).sum() ** 2, x)[0].sum(),
                    np.array([0.1, 0.2, 0.3]))
    np.testing.assert_allclose(h, 2 * c.sum() * c, rtol=1e-12)


_Pair = __import__("collections").namedtuple("_Pair", "a b")


@__import__("dataclasses").dataclass
class _Fields:
    a: float
    b: float = 2.0


@pytest.mark.parametrize("make", [
    lambda y: _Pair(y, 2.0), lambda y: _Pair(b=2.0, a=y), lambda y: _Fields(y), lambda y: _Fields(a=y, b=2.0),
    lambda y: __import__("types").SimpleNamespace(a=y, b=2.0)],
    ids=["namedtuple", "namedtuple-keywords", "dataclass", "dataclass-keywords", "simplenamespace"])
def test_second_and_third_order_through_constructors(make):
    def f(y):
        p = make(y)
        return p.a ** 3 * p.b  # 2 y^3: second derivative 12 y, third 12
    assert d(d(f))(1.5) == pytest.approx(18.0, rel=1e-12)
    assert d(d(d(f)))(1.5) == pytest.approx(12.0, rel=1e-12)


def test_second_order_through_a_dict_built_with_keywords():
    def f(y):
        p = dict(a=y, b=2.0)
        return p["a"] ** 3 * p["b"]
    assert d(d(f))(1.5) == pytest.approx(18.0, rel=1e-12)


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


class _Plain:
    def __init__(self, v):
        self.v = v


class _Scaled2:
    """A docstring."""

    def __init__(self, v, s=2.0, *, shift=0.0):
        self.v, self.s = v, s
        self.w = self.v * s + shift  # reads an attribute it set
        self.w += 1.0
        note: str = "kept"
        self.note = note


class _CallsMethod:
    def __init__(self, v):
        self.v = self.clean(v)

    def clean(self, v):
        return v


class _SetsInBranch:
    def __init__(self, v):
        if v > 0:
            self.v = v
        else:
            self.v = -v


class _Child(_Plain):
    def __init__(self, v):
        super().__init__(v)


@pytest.mark.parametrize("make, second, third", [
    (lambda y: _Plain(y).v ** 3, lambda x: 6 * x, lambda x: 6.0),
    (lambda y: _Scaled2(y).w ** 2, lambda x: 8.0, None),  # (2y + 1)^2
    (lambda y: _Scaled2(y, y, shift=1.0).w * _Scaled2(y).s, lambda x: 4.0, None),  # 2 (y^2 + 2)
    (lambda y: _Scaled2(v=y, shift=y).w ** 2, lambda x: 18.0, None)],  # (3y + 1)^2
    ids=["fields", "computed-fields", "keywords", "all-keywords"])
def test_nested_reverse_through_plain_classes(make, second, third):
    # a plain class's __init__ is read as a function returning its attributes (adjoints/nesting/constructors.py)
    assert d(d(make))(1.3) == pytest.approx(second(1.3), rel=1e-12)
    if third is not None:
        assert d(d(d(make)))(1.3) == pytest.approx(third(1.3), rel=1e-12)


def test_nested_reverse_through_a_model_object_matches_the_hessian():
    from zygotepy import hessian

    class Model:
        def __init__(self, w, b):
            self.w = w
            self.b = b

        def __call__(self, x):
            return np.tanh(x @ self.w + self.b)
    xs = np.array([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]])

    def loss(w):
        return np.sum(Model(w, 0.1)(xs) ** 2)
    w0 = np.array([0.3, -0.2])
    (hv,) = gradient(lambda w: gradient(loss, w)[0] @ np.array([1.0, -2.0]), w0)
    np.testing.assert_allclose(hv, hessian(loss, w0) @ np.array([1.0, -2.0]), rtol=1e-10)


@pytest.mark.dual_route
@pytest.mark.parametrize("cls, why", [(_CallsMethod, "reads self.clean"), (_SetsInBranch, "inside a block"),
                                      (_Child, "closure")])
def test_plain_classes_whose_init_does_more_at_second_order(cls, why):
    assert gradient(lambda y: cls(y).v ** 3, 1.5) == pytest.approx((6.75,))  # one level: the derived __init__
    with pytest.raises(ZygoteError, match=why):  # the twins refuse to read such an __init__ as a function ...
        from zygotepy.adjoints.nesting.constructors import init_fields
        init_fields(cls)
    # ... so the inner gradient is taken by forward-over-reverse (nesting/deep.py): (y^3)'' = 6 y
    assert d(d(lambda y: cls(y).v ** 3))(1.5) == pytest.approx(9.0, rel=1e-12)



def test_a_rule_back_padding_with_a_repeated_tuple_differentiates_with_a_cotangent_in_the_padding():
    # `_drop_rule`'s back returns `(*(None,) * k, *dy)`; an outer level differentiating it may send a cotangent to the
    # padding (a fifth level did): the repetition must go through mul's rule, not the scalar fast path (which computed
    # `d_padding * (None,)`, "can't multiply sequence by non-int of type 'tuple'")
    from zygotepy.adjoints.nesting.cotangents import _drop_rule
    _, back = _drop_rule((None, 1.0, 2.0), 1)
    y, pb = pullback(lambda dy: back(dy)[0], (1.0, 2.0))
    assert y == (None, 1.0, 2.0)
    assert pb((7.0, 1.0, 3.0)) == ((1.0, 3.0),)


def test_a_twin_back_called_without_its_optional_parameters_nests():
    # `twin_J_args`' back is `args_back(dy, need=None, *into)`; a rule's back calls it as `back(dy)`, and an outer level
    # differentiating that call must bind the defaults (not refuse it as a call it cannot map)
    from zygotepy.adjoints.nesting.twins import twin_J_args
    def f(x):
        _, back = twin_J_args(math.sin, x)
        return back(1.0)[0]
    assert gradient(f, 0.7) == pytest.approx((-math.sin(0.7),))
    assert gradient(lambda x: gradient(f, x)[0], 0.7) == pytest.approx((-math.cos(0.7),))


def test_a_rule_with_keyword_only_parameters_differentiates_through_its_twin():
    # a sixth level differentiates zip's rule `zip_(*seqs, strict=False)` itself (called through twin_J without
    # keywords): its keyword-only parameter keeps its default, it is not refused
    from zygotepy.adjoints.nesting.twins import twin_J
    from zygotepy.adjoints.structures.iteration import zip_

    def f(x):
        (pairs, _), _ = twin_J(zip_, (x, 2.0), (3.0, x))
        return pairs[0][0] * pairs[1][1]  # x * x
    assert gradient(f, 1.5) == pytest.approx((3.0,))


def _tagged(x, tag):
    if tag.endswith("c"):
        return x * x * x
    return x


def test_a_method_call_on_data_runs_as_a_constant_at_the_third_level():
    # the inner code records the test's value for its backward; two levels up the call is a method of a str with no
    # rule, which J runs as a constant (it used to be refused as an unsupported method call)
    assert d(d(d(lambda x: _tagged(x, "abc"))))(1.5) == pytest.approx(6.0)


def test_the_back_of_structgrads_rule_differentiates_at_second_order():
    # an outer level differentiates this back (a sixth level does): it copies the mapping by a comprehension, not by
    # `dict(dy)`, whose constructor rule the twins do not cover
    from zygotepy.adjoints.nesting.helper_rules import _structgrad_rule
    from zygotepy.structgrad import StructGrad

    def f(v):
        _, back = _structgrad_rule({"a": v})
        return back(StructGrad({"a": v * v * v}))[0]["a"]
    assert d(d(f))(1.5) == pytest.approx(9.0)


def _starred(x):
    t = (x, x * x)
    u = (*t, x)  # a display with a starred item: splat's rule
    return u[0] * u[1] * u[2]  # x^4


def test_a_starred_display_differentiates_at_second_and_third_order():
    # splat's rule walks its items through `_walkable`, which was declared non-differentiable: an outer level (which
    # transforms that rule) saw the display as a constant, so d^2 came out 3.38, d^3 None, and five levels of a loop
    # (whose nested code has such displays) gave 112 for d^5 x^5
    assert d(_starred)(1.3) == pytest.approx(4 * 1.3 ** 3)
    assert d(d(_starred))(1.3) == pytest.approx(12 * 1.3 ** 2)
    assert d(d(d(_starred)))(1.3) == pytest.approx(24 * 1.3)


def test_a_generator_expression_differentiates_at_third_order():
    # a generator expression is `iter(list)`, whose rule makes an `Items`; two levels further up that constructor had no
    # twin (MissingAdjoint for Items; six levels of any loop reach it through the rules' own generator expressions)
    f = lambda x: sum(x * x * x * x * c for c in (1.0, 2.0))  # noqa: E731 (3 x^4)
    assert d(d(f))(1.3) == pytest.approx(36 * 1.3 ** 2)
    assert d(d(d(f)))(1.3) == pytest.approx(72 * 1.3)


class _Scaled:
    def __init__(self, w):
        self.w = w

    def f(self, x):
        return self.w * x * x

    def __call__(self, x):
        return self.w * x * x * x


def test_inner_gradient_of_a_bound_method_or_callable_object_reaches_its_object():
    # d/dw of d/dx (w x^2) at x = 1.5 is 3; of d/dx (w x^3), 6.75 (the object's cotangent used to be dropped: None)
    assert gradient(lambda w: gradient(_Scaled(w).f, 1.5)[0], 2.0) == pytest.approx((3.0,))
    assert gradient(lambda w: gradient(_Scaled(w), 1.5)[0], 2.0) == pytest.approx((6.75,))
    assert gradient(lambda w: value_and_gradient(_Scaled(w).f, 1.5)[1][0], 2.0) == pytest.approx((3.0,))


# --- what keeps an outer level's transform small (the cost of a level is the size of the code it transforms) --------

def _outer_text(fn):
    """The code an outer level generates from fn's generated forward (what a second level transforms)."""
    from zygotepy.ast_adjoint.compile import artefact, derive
    forward, _ = derive(fn, None, functional=True)
    return "\n".join(line for line in artefact(forward).source.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.optimizations
def test_an_outer_level_does_not_repeat_guards_the_inner_code_already_tested():
    text = _outer_text(lambda x: x ** 5)
    # the inner `if type(x) in _SC:` arm: x is a number there, so its operation takes no guard of its own; the tuple
    # the inner code unpacks is a tuple, so reading its items takes no `_NATIVE` guard
    assert text.count(" in _SC") == 1
    assert "_NATIVE" not in text


@pytest.mark.optimizations
def test_literal_arithmetic_is_folded_and_dead_joins_dropped():
    def folded(x):
        return x * (5 - 1) if 5 != 0 else 0.0  # the shape of an inlined derivative (pow's), as inner code has it

    def early(x, flag):
        if flag:
            t = x * 2  # not read after the `if`: no join for it (an `_Unbound` on the other path)
            return t
        return x * 3
    code = lambda f: "\n".join(l for l in show_adjoint(f, optimized=True).splitlines() if not l.lstrip().startswith("#"))  # noqa
    assert "!=" not in code(folded) and "5 - 1" not in code(folded)
    assert gradient(folded, 1.5) == (4.0,)
    assert "Unbound" not in code(early)
    assert gradient(early, 1.5, True) == (2.0, None) and gradient(early, 1.5, False) == (3.0, None)

# --- fourth derivatives (levels beyond MAX_LEVELS: tests/test_nesting_deep.py) ---------------------------------------
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


class _Scaled:
    def __init__(self, w):
        self.w = w

    def f(self, x):
        return self.w * x * x

    def __call__(self, x):
        return self.w * x * x * x


def test_an_inner_gradient_of_a_bound_method_or_callable_object_reaches_the_object():
    # d/dw of d/dx (w x^2) at x = 1.5 is 3; of d/dx (w x^3), 6.75 (the object's cotangent was dropped: None, silently)
    assert gradient(lambda w: gradient(_Scaled(w).f, 1.5)[0], 2.0) == pytest.approx((3.0,))
    assert gradient(lambda w: gradient(_Scaled(w), 1.5)[0], 2.0) == pytest.approx((6.75,))
    assert gradient(lambda w: value_and_gradient(_Scaled(w).f, 1.5)[1][0], 2.0) == pytest.approx((3.0,))


@pytest.mark.parametrize("f, second", [
    (lambda x: sum([x * x, x]), lambda x: 2.0),
    (lambda x: sum((v * v for v in [x, 2 * x]), x * x * x), lambda x: 10.0 + 6 * x),
    (lambda x: max(v * v for v in [x, 2 * x]), lambda x: 8.0),
    (lambda x: next(iter([x * x * x, x])), lambda x: 6 * x),
    (lambda x: next(v for v in [-x, x * x * x] if v > 0), lambda x: 6 * x)],
    ids=["sum-list", "sum-generator-start", "max-generator", "next-iter", "next-generator"])
def test_second_order_through_sum_max_and_next(f, second):
    # sum's rule called itself with two starred arguments, which an outer level could not transform (it raised)
    assert d(d(f))(1.3) == pytest.approx(second(1.3), rel=1e-9)


def _from_own_file(src, tag, namespace):
    """`f` compiled from its own (registered) file: functions made this way have equal code objects."""
    import linecache
    filename = f"<test_nesting-{tag}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)
    return namespace["f"]


def test_equal_code_objects_keep_their_own_transforms_at_second_order():
    """The transform cache is keyed by code object identity: equal code objects (equality ignores the file and what
    generated code binds as helpers) must never share a transform made for the other one."""
    src = "def f(x):\n    return h(x) * x\n"
    f_sin = _from_own_file(src, "sin", {"h": math.sin})
    f_cos = _from_own_file(src, "cos", {"h": math.cos})
    assert f_sin.__code__ == f_cos.__code__ and f_sin.__code__ is not f_cos.__code__
    x = 0.7
    for f, second in ((f_sin, 2 * math.cos(x) - x * math.sin(x)), (f_cos, -2 * math.sin(x) - x * math.cos(x))):
        (d2,) = gradient(lambda t: gradient(f, t)[0], x)
        assert d2 == pytest.approx(second, rel=1e-12)


def test_second_order_through_the_max_of_a_whole_array():
    """The max rule's back used np.multiply(..., dtype=), which nesting's multiply rule does not take (TypeError)."""
    x = np.array([0.3, 1.5, -0.2])
    (h,) = gradient(lambda t: gradient(lambda y: np.max(y) * y[0], t)[0][0], x)
    np.testing.assert_allclose(h, [0.0, 1.0, 0.0])


def _loop_in_an_untaken_arm(a, b, c):
    if b > 0.5:
        c *= 0.5
    elif a > -0.2:
        w = 0.5
        while w < 2:
            c *= 0.5
    return 0.5 * a * a + c * b


def _scaled_in_a_loop(a, b, m):
    s = b * m * 0.5
    for i in range(2):
        b *= 0.5
    return -0.8 * s * a + 0.3 * a * a


@pytest.mark.parametrize("nested_size", [True, False])
def test_nested_gradient_through_a_loop_in_one_arm(nested_size):
    """The outer level's if-join gave a captured name of the generated code (`type`, `_SC`) no value in the arms
    without the loop: `'_Unbound' object is not callable` (found by the fuzzer)."""
    with zygotepy.optimizations(nested_size=nested_size):
        assert gradient(lambda t: gradient(_loop_in_an_untaken_arm, t, 0.75, 1.1)[0], -0.3)[0] == pytest.approx(1.0)
        assert gradient(lambda t: gradient(_scaled_in_a_loop, t, 0.9, 1)[0], 1.07)[0] == pytest.approx(0.6)


def test_second_derivative_of_an_elementwise_function_on_another_library():
    # the outer level transformed backends.function (which names the library's function inside a rule's back): its
    # import inside the function was refused, and forward mode then refused the array (tests/gpu found it)
    xp = pytest.importorskip("array_api_strict")
    x = xp.asarray([0.3, -0.5, 1.1])
    (h,) = gradient(lambda y: xp.sum(gradient(lambda t: xp.sum(xp.cosh(t) * xp.sin(t)), y)[0]), x)
    v = np.array([0.3, -0.5, 1.1])
    expected = 2 * np.sinh(v) * np.cos(v)  # d/dv (sinh v sin v + cosh v cos v)
    assert type(h) is type(x)
    np.testing.assert_allclose(np.asarray(h), expected, rtol=1e-12)

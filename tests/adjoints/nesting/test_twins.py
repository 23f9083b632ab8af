"""Nested reverse mode, call by call: the twins of J for each kind of call an inner level makes (adjoints/nesting/
twins.py: calls with keywords, rules, bound methods and callable objects, method calls on data, the structure rules on
the nested path) and the size of the code an outer level transforms, checked against closed forms and finite
differences of the inner gradient."""
import math

import numpy as np
import pytest

import zygotepy
from zygotepy import adjoint, gradient, show_adjoint, value_and_gradient


def d(f):
    """The derivative of a scalar function, by reverse mode (nests)."""
    return lambda x: gradient(f, x)[0]


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


# A method called with keywords (`x.sum(axis=0)`) inside a function whose gradient an outer level differentiates: the
# twin took callmethod's own source, whose `getattr(obj, name)(**kwargs)` lost the object's gradient: the inner
# gradient came back None (a TypeError), or the outer one missed that path (silently wrong: `hessian` by
# reverse-over-reverse gave zeros). The method itself is now differentiated, with its keywords, as without them.
def _cubes(x):
    return (x ** 3).sum(axis=0) + np.sum(x ** 2)


def _diffs(x):
    return (np.diff(x) ** 2).sum(axis=0) * (x ** 2).astype(float, copy=True).mean(axis=-1)


def _slope_sum(f):
    def outer(x):
        return np.sum(gradient(f, x)[0] * np.array([1.0, 2.0, 3.0]))
    return outer


@pytest.mark.parametrize("f", [_cubes, _diffs], ids=["sum-axis", "diff-astype-mean"])
def test_methods_with_keywords_in_a_nested_gradient(f):
    from zygotepy import hessian, hvp
    x = np.array([0.5, -1.0, 1.5])
    h = 1e-5
    want = np.stack([(gradient(f, x + h * e)[0] - gradient(f, x - h * e)[0]) / (2 * h) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(gradient(_slope_sum(f), x)[0], want.T @ np.array([1.0, 2.0, 3.0]), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(hessian(f, x), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hvp(f, (x,), (np.array([1.0, 0.0, -1.0]),))[0], want @ np.array([1.0, 0.0, -1.0]),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", [
    lambda x: x[0] * x[1] ** 2,
    lambda x: x[0] ** 3 * x[1],
    lambda x: np.sin(x[0]) * x[1] * x[1],
    lambda x: np.sum(x ** 2) * x[-1],
    lambda x: (x[0] + x[1]) ** 4],
    ids=["item-times-item-squared", "cube-times-item", "sin-of-item", "sum-times-last-item", "fourth-power-of-sum"])
def test_third_order_of_items_of_an_array(mode, f):
    # third order runs the back of `x[i]` (the back adding into the running cotangents it is handed, `*into`) at the
    # outer levels: its forward returns the handed-over cotangents after the result, which the twin drops
    def g2(x):
        return gradient(lambda y: gradient(f, y)[0][1], x)[0][0]
    x = np.array([0.7, 1.3])
    got = gradient(g2, x)[0]
    h = 1e-5
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        assert got[k] == pytest.approx((g2(x + e) - g2(x - e)) / (2 * h), rel=1e-6, abs=1e-8)


def _scale_first(a):
    a[0] = a[0] * 2.0
    return a[0] * a[1]


@pytest.mark.dual_route
def test_third_order_through_a_helper_updating_its_argument(mode):
    # the twins cannot give the updated array its cotangent at the call (they refuse it), so the inner gradient is
    # taken by forward-over-reverse: d/dx0 of d/dx1 of 2 x0 x1^2 is 4 x1, whose gradient is (0, 4)
    def g2(x):
        return gradient(lambda y: gradient(lambda z: _scale_first(z * 1.0) * z[1], y)[0][1], x)[0][0]
    x = np.array([0.7, 1.3])
    assert g2(x) == pytest.approx(4.0 * 1.3)
    assert gradient(g2, x)[0] == pytest.approx([0.0, 4.0], abs=1e-12)

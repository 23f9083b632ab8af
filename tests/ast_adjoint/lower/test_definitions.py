"""Nested `def`s and lambdas (ast_adjoint/lower/definitions.py).

Those that call themselves (a `def`, or a lambda assigned to a name): the function's cell of its own name holds
the function itself, bound just after it is made (`runtime.ITSELF` among `make_closure`'s values), and each call of
itself leaves its closure's cotangent nested in entry `name` of the caller's; `runtime.recursive_closure`'s rule folds
them into one, whose entries go to what the cells held. Before, every recursive nested function was refused ("reads
'rec' before it is assigned"). Each function is checked against one plain call (its value) and central differences in
float64, with every optimisation on and with every one off.

Those whose default values carry gradients (`lambda t, b=b: t * b`, the form the hint for a comprehension's variable
recommends): a call that leaves a parameter to such a default gives its cotangent to the function's own, under
`"b="` (ast_adjoint/derived.py), and the `def`'s backward passes it to the value the default was taken from. Before,
every such default was refused. An update in place of a default value (`def g(t, acc=buf): acc += t`) is refused:
it gave silently wrong gradients (the caller never saw the update)."""
import numpy as np
import pytest

import zygotepy
from zygotepy import UnsupportedSyntax, ZygoteError, gradient, hessian, value_and_gradient
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


def a_lambda_calling_itself(x, b):
    f = lambda t, n: t if n == 0 else f(t * b, n - 1) + t  # noqa: E731
    return f(x[0], 3)


def a_lambda_calling_itself_on_arrays(x, b):
    f = 1.0
    f = lambda t, n: t if n == 0 else f(np.sin(t) * b, n - 1)  # noqa: E731
    return np.sum(f(x, 2))


CASES = [geometric_sum, two_calls_of_itself, halves_of_a_captured_array, made_again_in_a_loop, on_arrays, over_a_list,
         with_a_default, a_lambda_calling_itself, a_lambda_calling_itself_on_arrays]


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


def test_a_lambda_calling_itself_after_its_name_was_rebound_raises():
    def f(x, b):
        g = lambda t, n: t if n == 0 else g(t * b, n - 1)  # noqa: E731
        h = g
        g = b * 2.0
        return h(x[0], 2) + g
    with pytest.raises(UnsupportedSyntax, match="after 'g', which it captures, was assigned a new value"):
        gradient(f, X.copy(), B)


def test_a_def_makes_no_jump_of_the_function_around_it():
    """A nested function's own `return` leaves only it: the statements after the `def` are not put under a test of
    a return flag (`_go_on`), which the generated code had for every function with a nested `def`."""
    text = zygotepy.show_adjoint(geometric_sum)
    assert "_go_on" not in text and "_recursive_closure" in text


def default_of_a_lambda(x, b):
    g = lambda t, b=b: t * b  # noqa: E731
    return np.sum(g(x) + g(2.0 * x))


def defaults_in_a_comprehension(x, b):
    fs = [lambda t, c=c: t * c for c in (b, 2.0 * b, b * b)]
    return np.sum(sum(h(x) for h in fs))


def default_overridden_by_position_and_keyword(x, b):
    def g(t, p=b, q=2.0 * b):
        return t * p + q
    return np.sum(g(x) + g(x, x) + g(x, q=x) + g(t=x))


def default_holding_an_array(x, b):
    w = np.cos(x) * b
    g = lambda t, w=w: np.sum(t * w)  # noqa: E731
    return g(x) * g(np.ones(4), 3.0 * w)


def default_made_in_a_loop(x, b):
    fs = []
    for i in range(3):
        b = b * x[i]
        fs.append(lambda t, b=b: t + b)
    return fs[0](1.0) * fs[2](2.0)


def default_holding_a_list(x, b):
    g = lambda t, pair=[b, 2.0 * b]: t * pair[0] + pair[1]  # noqa: E731
    return np.sum(g(x))


def default_holding_a_closure(x, b):
    g = lambda t, b=b: t * b  # noqa: E731
    h = lambda t, g=g: g(t) * 2.0  # noqa: E731
    return np.sum(h(x))


def default_through_map_and_sorted(x, b):
    g = lambda t, k=b: t * k  # noqa: E731
    return sum(map(g, x)) + sorted(list(x), key=g)[1]


def default_in_a_nested_helper(x, b):
    def outer(y):
        h = lambda t, c=b * y: t * c  # noqa: E731
        return h(y)
    return np.sum(outer(x) + outer(2.0 * x))


DEFAULTS = [default_of_a_lambda, defaults_in_a_comprehension, default_overridden_by_position_and_keyword,
            default_holding_an_array, default_made_in_a_loop, default_holding_a_list, default_holding_a_closure,
            default_through_map_and_sorted, default_in_a_nested_helper]


@pytest.mark.parametrize("optimized", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("f", CASES + DEFAULTS, ids=lambda f: f.__name__)
def test_against_a_plain_call_and_finite_differences(f, optimized):
    with zygotepy.optimizations(optimized):
        value, _ = value_and_gradient(f, X.copy(), B)
        assert value == pytest.approx(f(X.copy(), B), rel=1e-13)
        check_grads(f, X.copy(), B)


def test_the_default_of_a_lambda_by_hand():
    dx, db = gradient(default_of_a_lambda, X.copy(), B)
    np.testing.assert_allclose(dx, np.full(4, 3.0 * B))
    assert db == pytest.approx(3.0 * np.sum(X))


def test_a_hessian_through_a_default():
    def f(v):
        g = lambda t, b=v[1]: t * t * b * b  # noqa: E731
        return g(v[0])
    v = np.array([1.5, 0.7])
    np.testing.assert_allclose(hessian(f, v), [[2 * v[1] ** 2, 4 * v[0] * v[1]], [4 * v[0] * v[1], 2 * v[0] ** 2]])


def _updates_its_default_with_an_augmented_assignment(x, b):
    buf = np.zeros(4)

    def g(t, acc=buf):
        acc += t * b
        return acc
    g(x)
    return np.sum(g(x) ** 2)


def _updates_its_default_by_appending(x, b):
    out = [0.0]

    def g(t, acc=out):
        acc.append(t * b)
        return acc
    g(x[0])
    return sum(g(x[1]))


def _caller_reads_the_updated_default(x, b):
    buf = np.zeros(4)

    def g(t, acc=buf):
        acc[:] = acc + t * b
    g(x)
    return np.sum(buf ** 2)


@pytest.mark.parametrize("optimized", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("f, line", [(_updates_its_default_with_an_augmented_assignment, 6),
                                     (_updates_its_default_by_appending, 6),
                                     (_caller_reads_the_updated_default, 5)],
                         ids=["augmented", "append", "caller_reads"])
def test_an_update_of_a_default_value_raises_naming_the_call(f, line, optimized):
    """Each gave a silently wrong gradient: the default is one object shared by every call, which no argument reaches,
    so the caller never saw its update."""
    with zygotepy.optimizations(optimized), pytest.raises(ZygoteError) as info:
        gradient(f, X.copy(), B)
    assert f"test_definitions.py:{f.__code__.co_firstlineno + line}:" in str(info.value)
    assert "updates its parameter 'acc' in place, and this call leaves it to its default value" in str(info.value)


def _default_updated_after_the_def(x, b):
    ws = [x[0]]
    g = lambda t, ws=ws: ws[0] * t  # noqa: E731
    ws[0] = x[1] * b
    return g(1.0)


def _default_array_scaled_after_the_def(x, b):
    w = x * 1.0
    g = lambda w=w: np.sum(w)  # noqa: E731
    w *= b
    return g()


def _empty_default_appended_after_the_def(x, b):
    acc = []
    g = lambda t, acc=acc: sum(acc) * t  # noqa: E731
    acc.append(x[0] * b)
    return g(2.0)


@pytest.mark.parametrize("optimized", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("f, line", [(_default_updated_after_the_def, 4), (_default_array_scaled_after_the_def, 4),
                                     (_empty_default_appended_after_the_def, 4)],
                         ids=["item", "scaled", "appended"])
def test_a_call_after_its_default_was_updated_raises_naming_the_call(f, line, optimized):
    """The function reads the default's new contents, its derived code the old: silently wrong gradients (the empty
    list's too: the function looked constant). The default is held by the function, as a captured object is."""
    with zygotepy.optimizations(optimized), pytest.raises(UnsupportedSyntax) as info:
        gradient(f, X.copy(), B)
    assert f"test_definitions.py:{f.__code__.co_firstlineno + line}:" in str(info.value)
    assert "after its default value of" in str(info.value) and "was updated in place" in str(info.value)


def lambda_defaulting_to_a_lambda(x, b):
    f = lambda t, g=lambda s: s * b: g(t) * t  # noqa: E731
    return np.sum(f(x))


def test_a_lambda_defaulting_to_a_lambda_on_its_line():
    """Two lambdas on one line: the default's code object comes first, as Python compiles it; the outer lambda took
    it (its value and gradient were the default's)."""
    value, _ = value_and_gradient(lambda_defaulting_to_a_lambda, X.copy(), B)
    assert value == pytest.approx(lambda_defaulting_to_a_lambda(X.copy(), B), rel=1e-13)
    check_grads(lambda_defaulting_to_a_lambda, X.copy(), B)


def _counts_its_calls(t, calls=[0]):  # noqa: B006 - the shared default is the point
    calls[0] += 1
    return t * 2.0


def test_a_default_holding_no_gradient_may_be_updated():
    """A call counter in a default list holds ints: nothing to lose, so it runs (as before)."""
    def f(x, b):
        return np.sum(_counts_its_calls(x) * b)
    check_grads(f, X.copy(), B)


def _lambda_after_return(x):
    return x * x
    g = lambda t: t * x  # noqa: E731, F841 - unreachable: CPython makes no code object for it


def _def_under_if_false(x):
    if False:
        def g(t):
            return t * 2

        class Scale:
            pass
        x = g(x)
    return x * x


def _lambda_after_break(x):
    for _ in range(3):
        x = x * 1.5
        break
        h = lambda t: t  # noqa: E731, F841
    return x


@pytest.mark.parametrize("f, want", [(_lambda_after_return, 3.0), (_def_under_if_false, 3.0),
                                     (_lambda_after_break, 1.5)])
def test_definitions_in_unreachable_code(mode, f, want):
    # they were refused ("its code object was not found"): CPython drops them, and so may zygotepy
    assert gradient(f, 1.5) == (want,)

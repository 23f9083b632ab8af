"""@adjoint in full: rules for user functions, methods, builtins and NumPy functions (latest wins, also over the
built-in tables), None cotangents, functions of no arguments, `back` receiving None, and the checks on what a user's
`back` returns. Expected values are closed forms or finite differences (check_grads)."""
import contextlib
import math

import numpy as np
import pytest

from zygotepy import ZygoteError, adjoint, derivative, gradient, hessian, pullback
from zygotepy.adjoints import registry
from zygotepy.testing import check_grads


@contextlib.contextmanager
def restored(*targets):
    """Put the registry entries of `targets` back as they were (tests override built-in rules)."""
    keys = [registry._key(t) for t in targets]
    saved = [(k, t, registry.RULES.get(k), registry.SCALAR.get(k), registry.ARRAY.get(k), registry.FORWARD.get(t),
              k in registry.NONDIFF) for k, t in zip(keys, targets)]
    try:
        yield
    finally:
        for k, t, rule, scalar, array, tangent, nondiff in saved:
            for table, key, value in ((registry.RULES, k, rule), (registry.SCALAR, k, scalar),
                                      (registry.ARRAY, k, array), (registry.FORWARD, t, tangent)):
                if value is None:
                    table.pop(key, None)
                else:
                    table[key] = value
            if nondiff:
                registry.NONDIFF.add(k)
        registry.generation[0] += 1


# --- user functions ------------------------------------------------------------------------------------------------------

def softclip(x):
    return math.log(1.0 + math.exp(x))  # overflows for large x: the rule below is the stable form


@adjoint(softclip)
def _softclip(x):
    y = max(x, 0.0) + math.log1p(math.exp(-abs(x)))

    def back(dy):
        return (dy / (1.0 + math.exp(-x)),)
    return y, back


def uses_softclip(x):
    s = 0.0
    for k in range(3):
        s = s + softclip(x * (k + 1))
    return s


def test_rule_for_a_user_function_is_used_and_correct():
    check_grads(uses_softclip, 0.3)
    # the rule's forward runs: the function itself would overflow at x = 1000
    assert gradient(softclip, 1000.0) == (1.0,)
    assert gradient(uses_softclip, 1000.0) == (6.0,)


def test_latest_rule_wins():
    def cube(x):
        return x * x * x

    def user(x):
        return cube(x) * 2.0

    assert gradient(user, 2.0) == (24.0,)  # d/dx 2 x^3 = 6 x^2

    @adjoint(cube)
    def _(x):
        return cube(x), lambda dy: (dy * 3.0 * x * x,)
    assert gradient(user, 2.0) == (24.0,)

    @adjoint(cube)
    def _(x):  # noqa: F811  (a deliberately different rule: only the latest may be used)
        return cube(x), lambda dy: (dy * 100.0,)
    assert gradient(user, 2.0) == (200.0,)


def test_rule_returning_none_cotangents():
    def scale(x, k):
        return x * k

    @adjoint(scale)
    def _(x, k):
        return scale(x, k), lambda dy: (dy * k, None)  # k declared a constant

    assert gradient(scale, 2.0, 5.0) == (5.0, None)
    assert gradient(lambda a: scale(a, a), 3.0) == (3.0,)  # only the first slot's path counts: d/da = k = 3


def test_rule_with_keyword_arguments_treats_them_as_constants():
    def affine(x, a=2.0, b=1.0):
        return a * x + b

    @adjoint(affine)
    def _(x, a=2.0, b=1.0):
        return affine(x, a, b), lambda dy: (dy * a, None, None)

    assert gradient(lambda x: affine(x, b=4.0, a=3.0), 1.5) == (3.0,)
    assert gradient(lambda x: affine(x), 1.5) == (2.0,)


# --- methods --------------------------------------------------------------------------------------------------------------

class Spring:
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return 0.5 * self.k * x * x


def test_rule_for_a_method_applies_to_bound_calls():
    s = Spring(4.0)

    def f(x):
        return s.energy(x) + s.energy(2.0 * x)

    check_grads(f, 0.7)  # derived: d/dx (0.5 k x^2 + 2 k x^2) = 5 k x
    with restored(Spring.energy):
        @adjoint(Spring.energy)
        def _(self, x):
            def back(dy):
                return (None, dy * self.k * x)  # correct for x, but says: no gradient for the object
            return self.energy(x), back
        assert gradient(f, 0.7) == pytest.approx((5 * 4.0 * 0.7,))
        g_obj, g_x = gradient(lambda obj, x: obj.energy(x), Spring(4.0), 0.7)
        assert g_obj is None and g_x == pytest.approx(4.0 * 0.7)
    # without the rule the object gets its structural gradient again: d/dk 0.5 k x^2 = x^2 / 2
    g_obj, g_x = gradient(lambda obj, x: obj.energy(x), Spring(4.0), 0.7)
    assert g_obj.k == pytest.approx(0.245) and g_x == pytest.approx(2.8)


# --- builtins and NumPy functions -------------------------------------------------------------------------------------------

def test_rule_overrides_a_builtin_scalar_rule():
    def f(x):
        return math.sin(x) * 2.0

    assert gradient(f, 0.5) == pytest.approx((2 * math.cos(0.5),))
    with restored(math.sin):
        @adjoint(math.sin)
        def _(x):
            return math.sin(x), lambda dy: (dy * 10.0,)
        assert gradient(f, 0.5) == (20.0,)
        assert gradient(lambda x: math.sin(x), 0.5) == (10.0,)
    assert gradient(f, 0.5) == pytest.approx((2 * math.cos(0.5),))


def test_rule_overrides_a_builtin_numpy_rule():
    x = np.array([0.1, -0.4, 0.9])

    def f(v):
        return np.sum(np.tanh(v) * v)

    check_grads(f, x)
    with restored(np.tanh):
        calls = []

        @adjoint(np.tanh)
        def _(v):
            y = np.tanh(v)

            def back(dy):
                calls.append(1)
                return (dy * (1 - y * y),)
            return y, back
        check_grads(f, x)
        g, = gradient(f, x)
        assert calls
        np.testing.assert_allclose(g, np.tanh(x) + x * (1 - np.tanh(x) ** 2))
    check_grads(f, x)


def test_a_rule_replacing_a_builtin_one_is_forward_modes_too():
    """A user's rule for a NumPy function with a built-in tangent rule: forward mode kept the built-in tangent, so
    `jacobian(mode="forward")` and `jvp` disagreed with reverse mode, and `hessian` with a gradient of a gradient.
    Forward mode now takes the tangent from the user's back, as for a function with no built-in tangent rule."""
    from zygotepy import jacobian, jvp
    x = np.array([0.3, 1.6, -0.8])
    with restored(np.maximum, np.tanh):
        @adjoint(np.maximum)
        def _(a, b):  # a leaky ReLU's slope where b wins
            y = np.maximum(a, b)
            return y, lambda dy: (dy * np.where(a >= b, 1.0, 0.01), None)

        def relu(v):
            return np.maximum(v, 0.0)
        slopes = np.where(x >= 0, 1.0, 0.01)
        np.testing.assert_allclose(jacobian(relu, x, mode="reverse")[0], np.diag(slopes))
        np.testing.assert_allclose(jacobian(relu, x, mode="forward")[0], np.diag(slopes))
        np.testing.assert_allclose(jvp(relu, (x,), (np.ones(3),))[1], slopes)

        @adjoint(np.tanh)
        def _(v):
            y = np.tanh(v)
            return y, lambda dy: (7.0 * dy * (1 - y * y),)

        def f(t):
            return np.tanh(t) ** 2
        nested = gradient(lambda t: gradient(f, t)[0], 0.3)[0]
        assert hessian(f, 0.3) == pytest.approx(nested, rel=1e-12)
    np.testing.assert_allclose(jacobian(lambda v: np.maximum(v, 0.0), x, mode="forward")[0], np.diag(x >= 0) * 1.0)
    assert hessian(lambda t: np.tanh(t) ** 2, 0.3) == pytest.approx(
        2 * (1 - np.tanh(0.3) ** 2) ** 2 - 4 * np.tanh(0.3) ** 2 * (1 - np.tanh(0.3) ** 2), rel=1e-12)


def test_rule_for_a_builtin_with_no_rule():
    def f(x):
        return math.gamma(x) * x  # a user rule for math.gamma wins over the built-in one

    with restored(math.gamma):
        @adjoint(math.gamma)
        def _(x):
            y = math.gamma(x)
            h = 1e-5  # a numerical rule is still a rule
            return y, lambda dy: (dy * (math.gamma(x + h) - math.gamma(x - h)) / (2 * h),)
        check_grads(f, 2.5, rtol=1e-4)


# --- functions of no arguments, None cotangents in -------------------------------------------------------------------------

def counter():
    return 0


@adjoint(counter)
def _counter():
    return counter() + 1, lambda dy: ()


def test_rule_of_no_arguments_runs_even_when_no_gradient_flows():
    def f(x):
        return x * counter()

    assert f(3.0) == 0.0
    assert gradient(f, 3.0) == (1.0,)  # under differentiation counter() is 1: f = x
    y, back = pullback(f, 3.0)
    assert y == 3.0 and back(2.0) == (2.0,)


def test_back_receives_none_for_an_unused_output():
    def pair(x):
        return x * 2.0, x * 3.0

    seen = []

    @adjoint(pair)
    def _(x):
        def back(dy):
            seen.append(dy)
            d0, d1 = dy
            return ((0.0 if d0 is None else d0 * 2.0) + (0.0 if d1 is None else d1 * 3.0),)
        return pair(x), back

    def first(x):
        a, b = pair(x)
        return a * 5.0
    assert gradient(first, 1.0) == (10.0,)
    assert seen[-1][1] is None

    def none_used(x):
        pair(x)
        return x * 1.0
    assert gradient(none_used, 1.0) == (1.0,)


# --- checks on a user's back -------------------------------------------------------------------------------------------------

def two_args(x, y):
    return x * y


def test_wrong_number_of_cotangents_names_rule_target_and_index():
    def local(x, y):
        return x * y

    @adjoint(local)
    def short_rule(x, y):
        return local(x, y), lambda dy: (dy * y,)

    with pytest.raises(ZygoteError) as e:
        gradient(lambda a, b: local(a, b), 2.0, 3.0)
    msg = str(e.value)
    assert "short_rule" in msg and "local" in msg and "argument index 1" in msg and "1 cotangents" in msg

    @adjoint(local)
    def long_rule(x, y):
        return local(x, y), lambda dy: (dy * y, dy * x, dy)
    with pytest.raises(ZygoteError, match=r"long_rule.*local.*argument index 2"):
        gradient(lambda a, b: local(a, b), 2.0, 3.0)

    @adjoint(local)
    def not_a_tuple(x, y):
        return local(x, y), lambda dy: dy * y
    with pytest.raises(ZygoteError, match=r"not_a_tuple.*local"):
        gradient(lambda a, b: local(a, b), 2.0, 3.0)


def test_wrong_cotangent_shape_names_rule_target_and_index():
    def mix(w, x):
        return np.sum(w * x)

    @adjoint(mix)
    def bad_shape(w, x):
        def back(dy):
            return dy * x, dy * np.ones(5)  # x has 3 entries
        return mix(w, x), back

    with pytest.raises(ZygoteError) as e:
        gradient(mix, np.ones(3), np.arange(3.0))
    msg = str(e.value)
    assert "bad_shape" in msg and "mix" in msg and "argument index 1" in msg and "(5,)" in msg and "(3,)" in msg

    @adjoint(mix)
    def good(w, x):
        return mix(w, x), lambda dy: (dy * x, dy * w)
    g = gradient(mix, np.ones(3), np.arange(3.0))
    np.testing.assert_allclose(g[0], np.arange(3.0))
    np.testing.assert_allclose(g[1], np.ones(3))


def test_array_cotangent_for_a_scalar_argument_is_rejected():
    def scal(x):
        return x * 2.0

    @adjoint(scal)
    def broadcasting(x):
        return scal(x), lambda dy: (np.ones(4) * dy,)
    with pytest.raises(ZygoteError, match=r"broadcasting.*argument index 0"):
        gradient(scal, 1.0)


def _times(x, *, w):
    return x * w


@registry.keyword_rule
@adjoint(_times)
def _times_nested_back(x, *, w):  # (its positional cotangents wrapped in a tuple of their own)
    return _times(x, w=w), lambda dy: ((dy * w,), {"w": dy * x})


def test_a_keyword_rule_giving_a_tuple_for_a_number_is_refused():
    # (the tuple came back as the float's gradient)
    with pytest.raises(ZygoteError, match="returned a tuple as the cotangent of argument index 0, a number"):
        gradient(lambda x, a: _times(x, w=a), 2.0, 3.0)


# --- a user's rule under forward mode ---------------------------------------------------------------------------------

def _ste_round(x):
    return np.round(x)


@adjoint(_ste_round)
def _ste_round_rule(x):
    return _ste_round(x), lambda dy: (dy,)  # a straight-through estimator: the derivative the rule says is 1


def _ste_outer(x):
    return np.outer(_ste_round(x), [1.0, 2.0, 3.0]).ravel()


def _ste_objective(x):
    return np.sum(x ** 2 * _ste_round(x))


def test_forward_mode_does_not_differentiate_the_source_of_a_function_with_a_users_rule(mode):
    """Forward mode differentiated `np.round`'s source (zero), not the rule: jacobian's auto mode, which picks forward
    mode for more outputs than inputs, gave a zero column where reverse mode gives [1, 2, 3, 0, 0, 0]; hessian (forward
    over reverse) gave 1.0 where gradient(gradient) gives 2.0."""
    from zygotepy import MissingTangentRule, derivative, forwarddiff, hessian, jacobian, jvp
    x = np.array([0.4, 1.6])
    want = jacobian(_ste_outer, x, mode="reverse")[0]
    np.testing.assert_array_equal(want[:, 0], [1.0, 2.0, 3.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(jacobian(_ste_outer, x)[0], want)
    # a small output's tangent comes from the rule's back, one back per element; a large one is refused
    np.testing.assert_array_equal(jvp(lambda v: _ste_round(v) * 2.0, (x,), (np.array([1.0, -3.0]),))[1], [2.0, -6.0])
    np.testing.assert_array_equal(gradient(lambda v: np.sum(forwarddiff(_ste_round, v) * v), x)[0],
                                  np.round(x) + x)
    assert derivative(lambda t: _ste_round(t) * t, 1.4) == pytest.approx(2.4)
    with pytest.raises(MissingTangentRule, match="reverse-mode rule"):
        jvp(lambda v: _ste_round(v) * 2.0, (np.ones(65),), (np.ones(65),))
    second = gradient(lambda t: gradient(lambda v: v * _ste_round(v), t)[0], 1.4)[0]
    assert second == 2.0 and hessian(lambda v: v * _ste_round(v), 1.4) == second
    # d/dx (2x round(x) + x**2) under the rule: 2 round(x) + 4x
    np.testing.assert_allclose(hessian(_ste_objective, x), np.diag(2 * np.round(x) + 4 * x))


def test_a_tangent_rule_beside_a_users_rule_gives_forward_mode_its_derivative():
    from zygotepy import hessian, jacobian, jvp
    from zygotepy.forward.dual import FORWARD, tangent_rule

    def ste_floor(x):
        return np.floor(x)

    @adjoint(ste_floor)
    def _(x):
        return ste_floor(x), lambda dy: (dy,)

    @tangent_rule(ste_floor)
    def _(fn, primals, tangents, kwargs):
        return fn(*primals), tangents[0]

    try:
        x = np.array([0.4, 1.6])
        np.testing.assert_array_equal(jvp(lambda v: ste_floor(v) * 2.0, (x,), (np.ones(2),))[1], [2.0, 2.0])
        np.testing.assert_array_equal(jacobian(lambda v: np.outer(ste_floor(v), [1.0, 2.0, 3.0]).ravel(), x)[0][:, 1],
                                      [0.0, 0.0, 0.0, 1.0, 2.0, 3.0])
        np.testing.assert_allclose(hessian(lambda v: np.sum(v ** 2 * ste_floor(v)), x),
                                   np.diag(2 * np.floor(x) + 4 * x))
    finally:
        FORWARD.pop(ste_floor, None)


def _total(x):
    return np.sum(x)


def test_a_users_rule_giving_a_number_or_a_list_for_an_array_is_refused():
    """A number (the seed itself) or a list came back as the gradient of a (3,) array, silently."""
    for make in (lambda dy: (dy,), lambda dy: ([dy] * 3,)):
        @adjoint(_total)
        def _(x, make=make):
            return _total(x), make

        with pytest.raises(ZygoteError, match=r"cotangent of argument index 0, an array of shape \(3,\)"):
            gradient(_total, np.ones(3))
    registry.RULES.pop(_total, None)


def _fill_sine(out, x):  # (a kernel writing into `out`)
    out[:] = np.sin(x)


@adjoint(_fill_sine)
def _fill_sine_rule(out, x):
    _fill_sine(out, x)
    return None, lambda dy: (None, None)  # nothing could give `out`'s cotangent


def _through_kernel(x):
    out = np.zeros_like(x)
    _fill_sine(out, x)
    return np.sum(out)


def test_a_users_rule_that_updates_an_array_argument_is_refused():
    """The gradient was None, silently (the true one is cos(x))."""
    with pytest.raises(ZygoteError, match="updated its argument 0 .* in place"):
        gradient(_through_kernel, np.array([0.1, 0.2]))


class _Unhashable:
    """A callable that is no dict key (as ctypes' C function pointers are not)."""
    __hash__ = None

    def __call__(self, x):
        return x * 3.0


def test_a_users_rule_for_an_unhashable_callable_runs_in_both_modes():
    """The user-rule wrapper asked `key in MUTATING` of an unhashable target: TypeError (examples/custom_rule.py's
    ctypes j0, held in a local name as here)."""
    from zygotepy import hessian
    triple = _Unhashable()

    @adjoint(triple)
    def _(x):
        return triple(x), lambda dy: (3.0 * dy,)

    assert gradient(lambda x: triple(x) ** 2, 1.5) == pytest.approx((27.0,))
    assert hessian(lambda x: triple(x) ** 2, 1.5) == pytest.approx(18.0)


_TRIPLE = _Unhashable()


@adjoint(_TRIPLE)
def _triple_rule(x):
    return _TRIPLE(x), lambda dy: (3.0 * dy,)


def _squared_triple(x):
    return _TRIPLE(x) ** 2


def test_a_users_rule_for_an_unhashable_callable_held_in_a_global():
    """The transform looked the global's value up in sets of known callees: TypeError."""
    from zygotepy import hessian
    assert gradient(_squared_triple, 1.5) == pytest.approx((27.0,))
    assert hessian(_squared_triple, 1.5) == pytest.approx(18.0)


def _smooth_abs(x):
    return np.sqrt(x * x + 0.01)


@adjoint(_smooth_abs, need=True)
def _smooth_abs_rule(x):
    y = _smooth_abs(x)

    def back(dy, need):
        return (dy * x / y if need[0] else None,)
    return y, back


def test_a_rule_declared_with_need_in_forward_mode():
    """Forward mode takes a user's rule's tangent from its back, which it called as `back(dy)`: a rule declared
    `need=True` (whose back takes the mask) crashed hessian and derivative (TypeError: missing 'need')."""
    s = np.sqrt(0.26)
    assert derivative(_smooth_abs, 0.5) == pytest.approx(0.5 / s)
    want = 3 * 0.5 / s - 0.5 ** 3 / s ** 3  # (x * sqrt(x^2 + 0.01))''
    assert hessian(lambda x: _smooth_abs(x) * x, 0.5) == pytest.approx(want)


# --- a user's rule declared updates=True: its function updates its first argument -------------------------------------
# The lowering did not take `scale_(y, a)` for an update of y: reads of y after it skipped the rule's back (never
# called: x's gradient without the factor a, a's None), and a list appended to crashed. Found by a probe of rules.

def scale_(buf, a):
    buf *= a
    return buf


def addto_(buf, v):
    buf += v


def push_(items, v):
    items.append(v * 2.0)


@adjoint(scale_, updates=True)
def _scale_(buf, a):
    old = buf.copy()
    scale_(buf, a)

    def back(dy):
        buf[...] = old  # (undoing it is the rule's choice: zygotepy redoes it when the backward is over)
        return (None, None) if dy is None else (dy * a, np.sum(dy * old))
    return buf, back


@adjoint(addto_, updates="if_active")
def _addto_(buf, v):
    addto_(buf, v)
    return None, lambda dy: (dy, None if dy is None else np.sum(dy))


@adjoint(push_, updates=True)
def _push_(items, v):
    push_(items, v)

    def back(ditems):
        if ditems is None:
            return None, None
        return list(ditems[:-1]), 2.0 * ditems[-1]
    return None, back


def _scaled_in_a_statement(x, a):
    y = x * 1.0
    scale_(y, a)
    return np.sum(y ** 2)


def _scaled_and_its_result(x, a):
    y = x * 1.0
    z = scale_(y, a)
    return np.sum(z * y) + np.sum(y)


def _added_to(x, a):
    y = x * 2.0
    addto_(y, a)
    return np.sum(y ** 3)


def _pushed(x, a):
    items = [x[0], x[1]]
    push_(items, a)
    return items[0] * items[2] + items[1]


@pytest.mark.parametrize("f", [_scaled_in_a_statement, _scaled_and_its_result, _added_to, _pushed],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_users_rule_declared_updates(f, mode):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from plain_checks import central
    x, a = np.array([0.5, -1.0, 2.0]), 1.7
    grads = gradient(f, x, a)
    np.testing.assert_allclose(grads[0], central(f, (x, a), 0), rtol=1e-6, atol=1e-9)
    assert grads[1] == pytest.approx(central(f, (x, a), 1), rel=1e-6)


def test_an_argument_a_users_updating_rule_changed_ends_as_the_call_left_it(mode):
    def f(y, a):
        scale_(y, a)
        return np.sum(y)
    y = np.array([1.0, 2.0])
    assert gradient(f, y, 3.0)[1] == pytest.approx(3.0)
    np.testing.assert_allclose(y, [3.0, 6.0])


def half_(buf):
    buf *= 0.5
    return 1.0


@adjoint(half_, updates=True)
def _half_(buf):
    half_(buf)
    return 1.0, lambda dy: (None,)


def test_a_users_updating_rule_returning_something_else_is_refused():
    with pytest.raises(ZygoteError, match="returned neither the object it updates"):
        gradient(lambda x: half_(x * 1.0), np.ones(2))


def test_a_call_of_an_updating_rule_the_lowering_cannot_see_is_refused():
    """Through a local name the lowering cannot tell the call updates its argument: reads after it would skip the
    rule's back (the silently wrong gradient above), so the call is refused."""
    def local_(buf, a):
        buf *= a
        return buf

    @adjoint(local_, updates=True)
    def _(buf, a):
        local_(buf, a)
        return buf, lambda dy: (a * dy, None)

    def f(x):
        y = x * 1.0
        z = local_(y, 2.0)
        return np.sum(z) + np.sum(y)
    with pytest.raises(ZygoteError, match="declared updates=True, and this call of it is one zygotepy cannot take"):
        gradient(f, np.ones(2))


def record(log, v):
    log["last"] = v
    return 2.0 * v


@adjoint(record)
def _record(log, v):
    return record(log, v), lambda dy: (None, 2.0 * dy)


def test_a_rule_whose_function_stores_into_an_argument_is_refused():
    """`record(log, v)` stores v into the dict it is given: read back later, its value had no gradient (1.4 for 2.8;
    found by a probe of rules). A rule's back cannot give the cotangent of what its function stored, so the rule's
    call is refused where an argument changed, as one updating an array argument was."""
    def f(a):
        log = {}
        y = record(log, a * 1.0)
        return y * log["last"]
    with pytest.raises(ZygoteError, match=r"updated its argument 0 \(dict\) in place"):
        gradient(f, 0.7)

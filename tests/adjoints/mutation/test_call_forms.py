"""Calls that update their arguments, in the forms the lowering meets them: an argument passed by keyword
(`helper(x, buf=y)`), a Python function's own parameter named `out` (`helper(x, out=y)`, which NumPy's `out=`
convention must not capture), `*args`/`**kwargs`, a callee reached through a name (`fn = fill; z = [fn(x, y)]`), a
bound method kept in a name (`upd = a.update; upd(v)`), a callable object updating itself (`cell(x)`), a loop whose
body keeps an updating call's value (zygotepy/adjoints/mutation/calls.py; ast_adjoint/lower/calls.py, updates.py,
loops.py; ast_adjoint/inactive.py `as_written_checked`; ast_adjoint/call_checks.py).

Before, the keyword updates, the loop and a method named like a builtin one (`fill`) gave silently wrong gradients,
the updates through `*args`, a name or a bound method too (now each raises naming the callee), and the `out`
parameter raised a TypeError from the generated code or a ZygoteError about the helper's own `out[:] = ...`. Each
case is checked against one plain call (value, and the state it leaves its arguments in) and central finite
differences in float64, with every optimisation on and with every one off (the conftest runs the suite both ways).
"""
import copy
import functools
import operator
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient
from zygotepy.testing import check_grads

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

X = np.array([0.3, -0.2, 0.5])
B = 0.7


def agree(f, *args):
    """zygotepy's value and gradient of f equal a plain call's and central differences, for every argument, and the
    arguments are left as a plain call leaves them."""
    plain_args = copy.deepcopy(args)
    want = f(*plain_args)
    given = copy.deepcopy(args)
    value, grads = value_and_gradient(f, *given)
    assert value == pytest.approx(want, rel=1e-12)
    for a, b in zip(given, plain_args):
        assert np.allclose(a, b, rtol=0, atol=1e-15)
    for k, g in enumerate(grads):
        assert np.allclose(g, central(f, copy.deepcopy(args), k), rtol=1e-6, atol=1e-8), (k, g)
    check_grads(f, *args)


def _fill(v, scale, buf=None):
    buf[:] = np.sin(v) * scale


def _fill_out(v, scale, out=None):
    out[:] = np.sin(v) * scale
    return out


def _fill_both(v, out, tmp):
    tmp[0] = v[0] * 2.0
    out[1:] = v[1:] * tmp[0]


class Filler:
    def __init__(self, scale):
        self.scale = scale

    def fill(self, v, into):
        into[1] = v[0] * self.scale
        return into[1]


# --- updates of arguments passed by keyword (silently wrong before) ---------------------------------------------------

def test_a_call_statement_that_updates_a_keyword_argument():
    def f(x, b):
        y = np.zeros(3)
        _fill(x, b, buf=y)
        return np.sum(y * y)
    agree(f, X, B)


def test_a_keyword_argument_that_is_a_view_of_an_array_read_afterwards():
    def f(x, b):
        y = x * 1.0
        _fill(x[1:], b, buf=y[1:])
        return np.sum(y * y)
    agree(f, X, B)


def test_a_keyword_update_of_the_callers_own_argument():
    def f(x, b):
        _fill(x * 1.0, b, buf=x)
        return np.sum(x * np.cos(x))
    agree(f, X, B)


def test_keyword_updates_of_two_arrays_and_a_positional_one_in_one_call():
    def f(x, b):
        y, t = x * b, np.zeros(1)
        _fill_both(np.tanh(x), tmp=t, out=y)
        return np.sum(y * y) + t[0] * b

    def g(x, b):
        y, t = x * b, np.zeros(1)
        _fill_both(np.tanh(x), y, tmp=t)
        return np.sum(y * y) + t[0] * b
    agree(f, X, B)
    agree(g, X, B)


def test_a_method_that_updates_a_keyword_argument():
    def f(x, b):
        y = x * 0.5
        s = Filler(b).fill(x, into=y)
        return np.sum(np.sin(y)) + s * b
    agree(f, X, B)


def _step(v, state=None):
    state["h"] = np.tanh(state["h"] + v)
    return np.sum(state["h"])


def test_a_helper_whose_result_is_used_and_that_updates_a_keyword_dict():
    def f(x, b):
        state = {"h": x * b}
        total = 0.0
        for _ in range(2):
            total = total + _step(x, state=state)
        return total + np.sum(state["h"] ** 2)
    agree(f, X, B)


def test_a_method_with_a_builtin_methods_name_that_updates_its_argument():
    # (silently wrong before, by keyword or by position: `fill` was taken for ndarray.fill, which updates its object
    # alone, so the argument's update went unseen)
    def f(x, b):
        y = x * 0.5
        s = Filler(b).fill(x, y)
        return np.sum(np.sin(y)) + s * b
    agree(f, X, B)


@pytest.mark.parametrize("by_keyword", [True, False])
def test_an_update_through_a_local_name(by_keyword):
    # (silently wrong before, by keyword or by position: a callee known only at run time, whose result no gradient
    # needs, ran as written, and y's gradient from x was missing; ast_adjoint/inactive.py `as_written_checked`)
    def f(x, b):
        fill = _fill if b > 0 else None
        y = np.zeros(3)
        z = [fill(x, b, buf=y) if by_keyword else fill(x, b, y)]
        return np.sum(y) + len(z)
    # (this module's class Acc has a `__call__` that updates its object: a call of a local name may be one, and goes
    # through `callobject`, which follows the update; where no class has one it raises: test_nested_helpers.py)
    agree(f, X, B)

    def g(x, b):  # the same callee called as a statement is followed
        fill = _fill if b > 0 else None
        y = np.zeros(3)
        if by_keyword:
            fill(x, b, buf=y)
        else:
            fill(x, b, y)
        return np.sum(y * y)
    agree(g, X, B)


# --- a parameter named `out` is an ordinary argument of a Python function ---------------------------------------------

def test_a_helper_with_an_out_parameter_called_as_a_statement():
    def f(x, b):
        y = np.zeros(3)
        _fill_out(x, b, out=y)
        return np.sum(y * y)
    agree(f, X, B)


def test_a_helper_with_an_out_parameter_whose_result_is_used():
    def f(x, b):
        y = np.zeros(3)
        z = _fill_out(x, b, out=y)
        return np.sum(z * y) + z[0]
    agree(f, X, B)


def test_a_nested_function_whose_out_parameter_is_a_number():
    def f(x, b):
        def scale(v, out):
            return v * out
        return np.sum(scale(x, out=b) ** 2)
    agree(f, X, B)


def test_numpys_out_keeps_its_meaning_beside_other_keywords():
    def f(x, b):
        y = np.zeros(3)
        mask = x > 0.0
        np.multiply(x, b, out=y, where=mask)
        np.add(y, x * x, out=y)
        return np.sum(y * np.cos(y))
    agree(f, X, B)


def test_out_bound_by_a_partial_raises_naming_the_line():
    def f(x, b):
        y = x * 1.0
        functools.partial(np.multiply, out=y)(y, b)
        return np.sum(np.sin(y))
    with pytest.raises(ZygoteError, match=r"test_call_forms.py:\d+.*out="):
        gradient(f, X, B)


# --- updates the lowering cannot give versions to: refused, naming the callee (each was silently wrong before) -------

def _star_in_a_list(x, b):
    y = np.zeros(3)
    z = [_fill(*(x, b, y))]
    return np.sum(y * y) + len(z)


def _star_statement(x, b):
    y = np.zeros(3)
    args = (x, b, y)
    _fill(*args)
    return np.sum(y * y)


def _splat_statement(x, b):
    y = np.zeros(3)
    _fill(**{"v": x, "scale": b, "buf": y})
    return np.sum(y * y)


def _splat_of_a_name(x, b):
    y, t = np.zeros(3), np.zeros(1)
    opts = {"tmp": t, "out": y}
    _fill_both(x, **opts)
    return np.sum(y * y) + t[0]


@pytest.mark.parametrize("f", [_star_in_a_list, _star_statement, _splat_statement, _splat_of_a_name])
def test_an_update_through_star_arguments_raises(f):
    with pytest.raises(ZygoteError, match=r"updates its arguments? '(buf|out)'.* in place.*\*args or \*\*kwargs"):
        gradient(f, X, B)


# --- updates of a loop's items by a call whose value is kept (silently wrong before) ----------------------------------

def test_a_loop_over_arrays_whose_body_keeps_an_updating_calls_value():
    def f(x, b):
        y, w = np.zeros(3), np.ones(3)
        for t in [y, w]:
            z = _fill_out(x * b, t[0] + 0.5, out=t)
        return np.sum(y * w) + np.sum(z)
    agree(f, X, B)


def test_a_comprehension_of_updating_calls():
    def f(x, b):
        y = np.zeros(3)
        r = [_fill(x, b, t) for t in (y,)]
        return np.sum(y * y) + len(r)
    agree(f, X, B)


# --- a method's object updated through a bound method or a call of the object ------------------------------------------

class Acc:
    def __init__(self, w):
        self.w = w * 1.0

    def update(self, v):
        self.w = self.w * 0.5 + np.sin(v)

    def __call__(self, v):
        self.w = self.w * v
        return np.sum(self.w)


def test_methods_called_on_their_objects_update_them():
    def by_class(x, b):
        a = Acc(x)
        Acc.update(a, x * b)
        return np.sum(a.w ** 2)

    def in_a_loop(x, b):
        accs = [Acc(x), Acc(x * b)]
        for acc in accs:
            acc.update(x)
        return np.sum(accs[0].w * accs[1].w)
    agree(by_class, X, B)
    agree(in_a_loop, X, B)


def _bound_in_a_name(x, b):
    a = Acc(x)
    upd = a.update
    upd(x * b)
    return np.sum(a.w ** 2)


def _bound_by_getattr(x, b):
    a = Acc(x)
    getattr(a, "update")(x * b)
    return np.sum(a.w ** 2)


def _bound_in_a_list(x, b):
    a = Acc(x)
    for fn in [a.update]:
        fn(x * b)
    return np.sum(a.w ** 2)


@pytest.mark.parametrize("f", [_bound_in_a_name, _bound_by_getattr, _bound_in_a_list])
def test_a_bound_method_kept_in_a_name_that_updates_its_object_raises(f):
    # (each was silently wrong: the object's update went unseen, and b's gradient was None)
    with pytest.raises(ZygoteError, match=r"Acc.update updates its argument 'self'.*obj.update\(...\)"):
        gradient(f, X, B)


def test_a_callable_object_that_updates_itself_is_followed():
    """`a(b)` on an object whose `__call__` updates `self` (the callee as an argument: `runtime.callobject`; it was
    refused). Called by a builtin (`map(a, xs)`), where nothing at the call site says an update happens, it raises."""
    def f(x, b):
        a = Acc(x)
        a(b)
        return np.sum(a.w ** 2)

    def mapped(x, b):
        a = Acc(x)
        list(map(a, [b, b * 2.0]))
        return np.sum(a.w ** 2)
    agree(f, X, B)
    with pytest.raises(ZygoteError, match=r"Acc.__call__ updates its argument 'self'.*a method of its own"):
        gradient(mapped, X, B)


# --- Python's operators in place called as functions (silently wrong before: y's update went unseen) --------------------

def _iadd_by_module_name(x, b):
    y = x * 1.0
    z = operator.iadd(y, x * b)
    return np.sum(np.sin(y)) + np.sum(z)


def _iadd_in_a_name(x, b):
    y = x * 1.0
    add_into = operator.iadd if b > 0 else None
    z = add_into(y, x * b)
    return np.sum(np.sin(y)) + np.sum(z)


def _iadd_through_a_module_parameter(x, b, ops=operator):
    y = x * 1.0
    z = ops.iadd(y, x * b)
    return np.sum(np.sin(y)) + np.sum(z)


def _iadd_in_a_name_as_a_statement(x, b):  # (silently wrong before: the statement reached J_mutating, unchecked)
    y = x * 1.0
    add_into = operator.iadd if b > 0 else None
    add_into(y, x * b)
    return np.sum(np.sin(y))


@pytest.mark.parametrize("f", [_iadd_by_module_name, _iadd_in_a_name, _iadd_through_a_module_parameter,
                               _iadd_in_a_name_as_a_statement])
def test_an_operator_in_place_called_as_a_function_raises_naming_the_line(f):
    with pytest.raises(ZygoteError, match=r"test_call_forms.py:\d+.*operator.iadd.*x \+= y"):
        gradient(f, X, B)


def test_a_fold_with_an_operator_in_place():
    def into_an_array(x, b):
        y = x * 1.0
        total = functools.reduce(operator.iadd, [y, x * b])
        return np.sum(np.sin(y)) + np.sum(total)

    def of_numbers(a, b):  # (numbers are never updated in place: the plain operator)
        return functools.reduce(operator.imul, [a, b, 2.0]) + functools.reduce(operator.iadd, [a, b], 0.5)
    with pytest.raises(ZygoteError, match=r"a fold with operator.iadd, which updates the first item \(ndarray\)"):
        gradient(into_an_array, X, B)
    agree(of_numbers, 1.5, 2.0)


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@_logged
def _logged_fill(v, s, buf):
    buf[:] = np.sin(v) * s


def test_a_decorated_helper_that_updates_an_argument_raises_naming_the_wrapper():
    # (its wrapper's `fn(*args, **kwargs)` cannot hand the update back to the call site: a clear error, not a
    # silently missing gradient)
    def f(x, b):
        y = np.zeros(3)
        _logged_fill(x, b, y)
        return np.sum(y ** 2)
    with pytest.raises(ZygoteError, match=r"_logged_fill updates its argument.*a decorator's wrapper"):
        gradient(f, X, B)


class _Sum:
    def __init__(self, w):
        self.w = w

    def __iadd__(self, other):
        self.w = self.w + other.w
        return self


class _Fresh:
    def __init__(self, w):
        self.w = w

    def __iadd__(self, other):  # (updates itself, and returns another object)
        self.w = self.w * 1.0
        return _Fresh(self.w + other.w)


def test_a_user_operator_in_place_that_updates_self():
    # (refused: "_Sum.__iadd__ updates its argument 'self' in place, and the call site does not take it back")
    def f(x, b):
        v, u = _Sum(x * 1.0), _Sum(x * b)
        alias = v
        v += u
        return np.sum(np.sin(alias.w)) + np.sum(v.w * b)
    gx, gb = gradient(f, X, B)
    w = X + X * B
    np.testing.assert_allclose(gx, np.cos(w) * (1 + B) + B * (1 + B), rtol=1e-12)
    np.testing.assert_allclose(gb, np.sum(np.cos(w) * X + w + B * X), rtol=1e-12)

    def g(x):
        v = _Fresh(x)
        v += _Fresh(x * 2.0)
        return np.sum(v.w)
    with pytest.raises(ZygoteError, match=r"_Fresh.__iadd__: it updates its object in place and returns another"):
        gradient(g, X)


def _safe_divide(a, b):
    return np.sum(np.divide(a, b, out=np.zeros_like(a), where=b != 0) * np.array([1.0, 2.0, 3.0]))


def _safe_sqrt_in_place(x):
    np.sqrt(x, out=x, where=x > 0)
    return np.sum(x * np.array([1.0, 2.0, 3.0]))


def _masked_scalar_operand(x):
    y = np.ones(3)
    np.power(x, 0.5, out=y, where=x > 0)
    np.true_divide(2.0, x, out=y, where=x > 1.0)
    return np.sum(y ** 2)


@pytest.mark.parametrize("f, args", [(_safe_divide, (np.array([0.3, -1.2, 2.1]), np.array([0.5, 0.0, 2.0]))),
                                     (_safe_sqrt_in_place, (np.array([0.3, -1.2, 2.1]),)),
                                     (_masked_scalar_operand, (np.array([0.3, -1.2, 2.1]),))],
                         ids=["safe divide", "sqrt in place", "number operand"])
def test_a_ufunc_with_where_differentiates_only_what_it_computed(f, args, mode):
    """`np.divide(a, b, out=z, where=b != 0)`: NumPy computes nothing where the mask is False, but the rule ran on
    every entry, and its derivative there (1/0, sqrt'(-1.2)) times a zero cotangent gave nan. Away from the
    masks' edges the function is smooth: central differences."""
    got = gradient(f, *[a.copy() for a in args])
    np.testing.assert_allclose(got[0], central(f, args, 0), rtol=1e-6, atol=1e-8)
    if len(args) > 1:  # (b = 0 is the mask's edge: differences there cross it)
        a, b = args
        np.testing.assert_allclose(got[1], [-a[0] / b[0] ** 2, 0.0, -3 * a[2] / b[2] ** 2])

"""Generated names are built from the user's (`dx` is the cotangent of `x`, `x_back` its pullback, `x_2` its next
version): a local named `ef` or `el` made a cotangent named `def` or `del`, a SyntaxError in the generated code
(naming.py now never hands out a keyword). A local named `_globals` hid the factory's parameter of that name, which a
nested definition's closure reads (compile.py now asks the namer for a fresh one). Every table entry is checked
against central differences with the optimisations on and off, and `show_adjoint` of it compiles."""
import keyword

import numpy as np
import pytest

from plain_checks import central
from zygotepy import show_adjoint, value_and_gradient
from zygotepy.ast_adjoint.naming import Namer


def array_el(x, y):
    el = x * y
    return np.sum(el ** 2)


def scalars_ef_el(x, y):
    ef = x * y
    el = ef + x
    _ef = el * y
    _el = _ef * x
    return _el + ef


def soft_keywords_and_builtins(x, y):
    match = x * y
    case = match + x
    type = case * 2.0  # noqa: A001
    _ = type * y
    o = _ + x
    print = o * o  # noqa: A001
    return print + match


def generated_schemes(x, y):
    x_back = x * y
    dx = x_back + x
    x_2 = dx * y
    _t = x_2 * x
    d = _t + 1.0
    dx_2 = d * y
    g = dx_2 + x
    g_2 = g * g
    _tape = g_2 + y
    return _tape * x_back


def loop_over_ef(x, y):
    el = 0.0
    ef = [x, y]
    for elif_ in ef:
        el = el + elif_ * x
    s_all = el
    for el_ in (1.0, 2.0):
        s_all = s_all * y + el_
    return s_all + el


def branches_on_el(x, y):
    el = x * y
    if el > 0:
        ef = el * x
    else:
        ef = el * y
    return ef * el


def builtin_names_one_letter_off(x, y):
    ict = x * y
    en = ict + x
    ivmod = en * y
    ir = ivmod * ivmod
    elattr = ir + x
    return elattr * ict


def globals_local_beside_a_closure(x, y):
    def inner(t):
        return t * x
    _globals = inner(y)
    return _globals * x


def closure_over_el(x, y):
    el = x * 2.0

    def inner(t):
        return t * el
    ef = inner(y)
    return ef * el


CASES = [array_el, scalars_ef_el, soft_keywords_and_builtins, generated_schemes, loop_over_ef, branches_on_el,
         builtin_names_one_letter_off, globals_local_beside_a_closure, closure_over_el]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_names_next_to_keywords_and_generated_schemes(f, mode):
    args = (np.array([0.3, -0.5]), np.array([1.3, 0.7])) if f is array_el else (0.7, 1.3)
    value, grads = value_and_gradient(f, *args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    for k in range(len(args)):
        np.testing.assert_allclose(grads[k], central(f, args, k), rtol=1e-6, atol=1e-6)
    text = str(show_adjoint(f, optimized=mode))
    compile(text, "<show_adjoint>", "exec")


def test_the_namer_never_hands_out_a_keyword():
    namer = Namer()
    names = [namer.fresh(word) for word in keyword.kwlist] + [namer.fresh("d" + rest) for rest in ("ef", "el")]
    names.append(namer.fresh("__debug__"))
    assert not any(keyword.iskeyword(n) for n in names)
    assert "__debug__" not in names and "def_2" in names and "del_2" in names

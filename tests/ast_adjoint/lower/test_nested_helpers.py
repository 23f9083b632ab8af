"""Calls of a function a `def` in the differentiated function's body makes, which updates its arguments in place, used
for their value (`acc = add(v, acc)`, `s = fill(y, v) + ...`): the lowering reads the nested function's code, as it
does a global helper's (ast_adjoint/lower/calls.py `updating_nested`), and takes the updated arguments back
(`mutate.mutcall`). Before, the call ran as a plain call, and the derived callee's update was refused ("the call site
does not take the updated object back"): a false refusal of a common way to collect values. And a number given to a
call that may update its arguments is not updated by it, so an array a nested function captures, whose item it is,
is unchanged (`captured_unchanged`'s `root`; it was refused). Each function is checked against one plain call (its
value) and central differences in float64."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


def appended_by_a_nested_helper(x):
    def add(v, acc=None):
        acc = [] if acc is None else acc
        acc.append(v)
        return acc
    a = add(x * x[0])
    a = add(x, a)
    return np.sum(a[0] * a[1])


def appended_in_a_loop(x):
    def push(v, acc):
        acc.append(v * x[1])
        return len(acc)
    acc = []
    n = 0
    for t in x:
        n = n + push(t, acc)
    return sum(acc) * n


def filled_twice_in_one_expression(x):
    c = x[2] * 1.0

    def fill(buf, v):
        buf[0] = v * c
        return buf[0] * 2
    y = np.zeros(2)
    s = fill(y, x[1]) + fill(y, x[0])
    return s + np.sum(y ** 2)


def stored_into_a_dict(x):
    def put(d, k, v):
        d[k] = v
        return v
    d = {}
    z = put(d, "a", x * x[0]) * 2
    return np.sum(d["a"] * z)


def rebound_to_a_pure_function(x):
    def f(buf):
        buf[0] = 5.0
        return 1.0
    f = lambda buf: np.sum(buf) * x[0]  # noqa: E731, F811 - the name a def made, bound to another function
    y = x * 1.0
    return f(y) + np.sum(y)


def _push(v, acc):
    acc.append(v * 2.0)
    return len(acc)


def items_of_a_captured_array_passed_on(x):
    g = lambda: x[1] * 3.0  # noqa: E731 - captures x, whose items (numbers) a helper that may update is given
    acc = []
    n = 0
    for t in x:
        n = n + _push(t, acc)
    return sum(acc) * n + g()


CASES = [appended_by_a_nested_helper, appended_in_a_loop, filled_twice_in_one_expression, stored_into_a_dict,
         rebound_to_a_pure_function, items_of_a_captured_array_passed_on]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_nested_helper_updating_its_argument(f):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())


def _fill(v, s, buf):
    buf[:] = np.sin(v) * s
    return buf[0]


@pytest.mark.parametrize("by_keyword", [True, False])
def test_an_update_the_lowering_cannot_see_raises(by_keyword):
    """A callee known only at run time (no `def` here, and no class of this module with a `__call__` that updates its
    object), called for its value, that updates its argument: refused naming it (it was silently wrong before the
    twelfth session; ast_adjoint/inactive.py `as_written_checked`)."""
    def f(x):
        fill = _fill if x[0] > 0 else None
        y = np.zeros(3)
        z = [fill(x, x[1], buf=y) if by_keyword else fill(x, x[1], y)]
        return np.sum(y) + len(z)
    with pytest.raises(ZygoteError, match=r"_fill updates its argument 'buf' in place.*Call it as a statement"):
        gradient(f, X.copy())

"""A name one path leaves unbound (assigned in one arm of an `if`, or in a loop's body that may not run), then read:
where it is unbound at run time, Python raises UnboundLocalError; zygotepy read the placeholder the join gave it
(`rt.UNBOUND`), into a list or a dict as a value (a gradient where Python has none) or into arithmetic (an internal
TypeError). Each read of such a name is now checked once (`check_bound`), the checked value rebinding the name;
names never read cost nothing, and the paths where the name is bound keep their gradients."""
import os
import re
import sys

import pytest

from zygotepy import show_adjoint, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def in_arithmetic(x):
    if x > 5.0:
        y = x
    return y * 2.0


def into_a_list(x):
    if x > 5.0:
        y = x
    pair = [x, y]
    return pair[0] * 3.0


def into_a_dict(x):
    if x > 5.0:
        y = x
    d = {"y": y}
    return x * len(d)


def as_a_call_argument(x):
    if x > 5.0:
        y = x
    return max(x, y)


def returned(x):
    if x > 5.0:
        y = x * 2.0
    return y


def compared_to_none(x):
    if x > 5.0:
        y = x
    is_missing = y is None
    return x * 2.0 if is_missing else x


def augmented(x):
    if x > 5.0:
        y = x
    y += 1.0
    return x


def elif_without_else(x):
    if x > 5.0:
        y = x
    elif x < -5.0:
        y = -x
    return y * x


def after_a_loop_that_did_not_run(x):
    for v in []:
        y = v * x
    return x + y


def read_before_the_first_assignment(x):
    tot = 0.0
    for i in range(3):
        tot = tot + prev * x  # noqa: F821 (unbound in the first iteration)
        prev = x * i
    return tot


def method_of_an_unbound_name(x):
    if x > 5.0:
        parts = [x]
    return x + sum(parts)


RAISE = [in_arithmetic, into_a_list, into_a_dict, as_a_call_argument, returned, compared_to_none, augmented,
         elif_without_else, after_a_loop_that_did_not_run, read_before_the_first_assignment,
         method_of_an_unbound_name]


@pytest.mark.parametrize("f", RAISE, ids=[f.__name__ for f in RAISE])
def test_a_read_of_an_unbound_name_raises_as_python_does(mode, f):
    with pytest.raises(UnboundLocalError) as python:
        f(1.5)
    name = re.search(r"variable '(\w+)'", str(python.value)).group(1)
    with pytest.raises(UnboundLocalError, match=re.escape(str(python.value))):
        value_and_gradient(f, 1.5)
    assert name in ("y", "prev", "parts")


def read_where_bound(x):
    if x > 0:
        scale = 2.0 * x
    if x > 0:
        return x * scale
    return x


def bound_in_the_first_iteration(x):
    tot = 0.0
    for i in range(3):
        if i == 0:
            base = x * 2.0
        else:
            tot = tot + base * i
    return tot


def carried_then_read(x):
    for i in range(3):
        if i > 0:
            prev = prev * x + 1.0  # noqa: F821 (bound by the else arm of the first iteration)
        else:
            prev = x
    return prev


def best_so_far(x):
    first = True
    for v in [x, 2 * x, 3 * x]:
        if first:
            best = v
            first = False
        elif v > best:
            best = v
    return best * best


def read_only_on_an_arm_not_taken(x):
    if x > 0:
        s = x * 2.0
    else:
        t = s + 1.0
        return t
    return s * x


def after_a_loop_that_ran(x):
    for k in range(3):
        y = x * k
    return y * y + x


def read_twice(x):
    if x > 0:
        y = x * x
    return y * 3.0 + y * x


def _appender():
    acc = [1.0]

    def captured_list_updated_in_one_arm(t):  # (the join of `acc`, a captured variable: never unbound)
        if t > 0:
            acc.append(t * 2.0)
        return acc[-1] * t
    return captured_list_updated_in_one_arm


captured_list_updated_in_one_arm = _appender()


GRADIENTS = [read_where_bound, bound_in_the_first_iteration, carried_then_read, best_so_far,
             read_only_on_an_arm_not_taken, after_a_loop_that_ran, read_twice, captured_list_updated_in_one_arm]


@pytest.mark.parametrize("f", GRADIENTS, ids=[f.__name__ for f in GRADIENTS])
def test_names_bound_on_the_path_taken_keep_their_gradients(mode, f):
    x = 0.7
    value, (grad,) = value_and_gradient(f, x)
    assert value == pytest.approx(f(x), rel=1e-12)
    assert grad == pytest.approx(central(f, (x,), 0), rel=1e-6, abs=1e-7)


def never_read(x):
    if x > 0:
        unused = x * 3.0
        y = x * 2.0
    else:
        y = -x
    return y * x


def test_names_never_read_cost_nothing():
    assert "check_bound" not in show_adjoint(never_read)
    assert "check_bound" not in show_adjoint(never_read, optimized=True)
    assert "check_bound" not in show_adjoint(_appender())


def test_each_read_is_checked_once():
    assert show_adjoint(read_twice).count("check_bound(") == 1

"""A `try` body whose last statement is one assignment with several targets (`y = lst[5] = v`) or a destructuring
(`y, (p, q) = v, (1.0,)`): Python stores the targets left to right, so it binds `y` before a later store fails;
zygotepy runs the body as one step and kept `y` from before the `try` (value and gradient silently wrong). Such an
assignment now counts as several steps (lower/tries.py `_bound_before_failing`): refused where a name it binds before
a store that may fail is read where the exception is handled, as the other partial failures are; an assignment that
binds nothing before its first store that may fail (names only, a flat unpacking into names, the failing target
first) is one step still, checked against a plain call and central differences."""
import os
import sys

import pytest

from zygotepy import UnsupportedSyntax, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


class Box:
    __slots__ = ("w",)


def nested_unpacking(x):
    y = x
    try:
        y, (p, q) = x * 2.0, (1.0,)
    except ValueError:
        pass
    return y


def chained_into_an_item(x):
    y = x
    lst = [0.0]
    try:
        y = lst[5] = x * 2.0
    except IndexError:
        pass
    return y


def unpacked_into_a_name_then_an_item(x):
    y = x
    t = (1.0, 2.0)
    try:
        y, t[0] = x * 2.0, 1.0
    except TypeError:
        pass
    return y


def chained_into_an_attribute(x):
    y = x
    box = Box()
    try:
        y = box.v = x * 3.0
    except AttributeError:
        y = y + 1.0
    return y


def read_in_the_handler(x):
    y = x
    lst = [0.0]
    try:
        y = lst[3] = x * 2.0
    except IndexError:
        return y * x
    return x


REFUSED = [nested_unpacking, chained_into_an_item, unpacked_into_a_name_then_an_item, chained_into_an_attribute,
           read_in_the_handler]


@pytest.mark.parametrize("f", REFUSED, ids=[f.__name__ for f in REFUSED])
def test_a_name_bound_before_a_later_target_fails_is_refused(mode, f):
    with pytest.raises(UnsupportedSyntax, match=r"test_try_partial_assignments.py:\d+: zygotepy cannot differentiate "
                                                r"a try whose last assignment binds 'y' before a later target that "
                                                r"may fail.*bind them in a statement of their own"):
        value_and_gradient(f, 0.3)


def chained_names(x):
    y = x
    try:
        y = z = x * 2.0 / (x - 0.3)
    except ZeroDivisionError:
        z = x
    return y * z


def flat_unpacking_that_fails(x):
    a, b = x, x * 3.0
    try:
        a, b = (x * 2.0, x, 1.0)
    except ValueError:
        pass
    return a * b


def failing_target_first(x):
    y = x
    lst = [0.0]
    try:
        lst[5], y = x, x * 2.0
    except IndexError:
        pass
    return y * x


def starred_unpacking(x):
    head = x
    try:
        head, *rest = []
    except ValueError:
        rest = [x]
    return head * rest[0]


def the_handler_leaves(x):
    y = x
    pair = (1.0, x * x)
    try:
        y, (p, q) = x * 2.0, pair
    except ValueError:
        return x * 5.0  # (reads no name the failed assignment may have bound)
    return y * q + p


ACCEPTED = [chained_names, flat_unpacking_that_fails, failing_target_first, starred_unpacking,
            the_handler_leaves]


@pytest.mark.parametrize("x", [0.3, 0.7])
@pytest.mark.parametrize("f", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
def test_assignments_that_bind_nothing_before_failing(mode, f, x):
    if f is chained_names and x == 0.3:
        x = 0.3 + 1e-3  # (the differences must not step over the pole)
    value, (grad,) = value_and_gradient(f, x)
    assert value == pytest.approx(f(x), rel=1e-12)
    assert grad == pytest.approx(central(f, (x,), 0, h=1e-7), rel=1e-5, abs=1e-7)

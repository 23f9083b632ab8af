"""Views and containers made by methods Python calls for you (a property `g.interior` returning `self.u[1:]`, a
descriptor's `__get__`, `__getattr__`, `__getitem__`, `__enter__`'s value, `__neg__` and the other operators, `abs`),
then updated in place or read after the array they view was updated, are followed as an explicit method call's result
(`g.interior_view()`) is (adjoints/mutation/computed.py; the lowering links an operator's and `__enter__`'s result to
its object). The update was not followed: d/ds came back 0, and d/dx as if the view were a copy. Checked against one
plain call and central differences."""
import functools
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


class Tail:
    """A descriptor whose `__get__` is Python code."""

    def __get__(self, obj, cls):
        return obj.u[1:]


class Grid:
    tail = Tail()

    def __init__(self, u):
        self.u = u

    @property
    def interior(self):
        return self.u[1:]

    @property
    def parts(self):
        return [self.u]

    @property
    def halves(self):
        return {"a": self.u[:2], "b": self.u[2:]}

    def interior_view(self):
        return self.u[1:]

    def __getattr__(self, name):
        if name == "inner":
            return self.u[1:]
        raise AttributeError(name)

    def __getitem__(self, k):
        return self.u[k]

    def __neg__(self):
        return self.u[::-1]

    def __pos__(self):
        return self.u

    def __matmul__(self, other):
        return self.u[1:]

    def __abs__(self):
        return self.u[1:]

    def __enter__(self):
        return self.u[1:]

    def __exit__(self, *exc):
        return False


class Outer:
    def __init__(self, g):
        self.g = g

    @property
    def inner(self):
        return self.g.interior


def explicit_call(x, s):
    g = Grid(x * 1.0)
    g.interior_view()[...] *= s
    return np.sum(g.u * g.u)


def property_item_updated(x, s):
    g = Grid(x * 1.0)
    g.interior[0] *= s
    return np.sum(g.u * g.u)


def property_updated_whole(x, s):
    g = Grid(x * 1.0)
    g.interior[...] *= s
    return np.sum(g.u * g.u)


def property_named_then_added_to(x, s):
    g = Grid(x * 1.0)
    v = g.interior
    v += x[1:] * s
    return np.sum(g.u * g.u)


def property_read_after_its_array_changed(x, s):
    g = Grid(x * 1.0)
    v = g.interior
    g.u *= s
    return np.sum(v * v)


def property_of_an_argument_read_after_it_changed(x, s):
    g = Grid(x)
    v = g.interior
    x *= s
    return np.sum(v * v)


def property_of_an_argument_updated(x, s):
    g = Grid(x)
    g.interior[...] *= s
    return np.sum(x * x)


def property_giving_a_list(x, s):
    g = Grid(x * 1.0)
    p = g.parts
    p[0] *= s
    return np.sum(g.u * g.u)


def property_giving_a_dict_of_views(x, s):
    g = Grid(x * 1.0)
    d = g.halves
    d["a"] *= s
    return np.sum(g.u * g.u)


class Boxes:
    def __init__(self, u):
        self.u = u

    def __getitem__(self, k):
        return Box(self.u[k])


class Box:
    def __init__(self, w):
        self.w = w


def getitem_giving_an_object_holding_a_view(x, s):
    b = Boxes(x * 1.0)
    box = b[1:]
    box.w *= s
    return np.sum(b.u * b.u)


def property_through_a_property(x, s):
    o = Outer(Grid(x * 1.0))
    o.inner[0] *= s
    return np.sum(o.g.u * o.g.u)


def property_in_a_loop(x, s):
    g = Grid(x * 1.0)
    for _ in range(3):
        g.interior[...] *= s
    return np.sum(g.u ** 2)


def property_read_in_a_loop_after_updates(x, s):
    g = Grid(x * 1.0)
    v = g.interior
    total = 0.0
    for _ in range(2):
        g.u *= s
        total = total + np.sum(v * x[1:])
    return total


def descriptor_updated(x, s):
    g = Grid(x * 1.0)
    v = g.tail
    v *= s
    return np.sum(g.u * g.u)


def descriptor_read_after_its_array_changed(x, s):
    g = Grid(x * 1.0)
    v = g.tail
    g.u[1] = s
    return np.sum(v * v)


def getattr_updated(x, s):
    g = Grid(x * 1.0)
    v = g.inner
    v *= s
    return np.sum(g.u * g.u)


def getitem_updated(x, s):
    g = Grid(x * 1.0)
    v = g[1:]
    v *= s
    return np.sum(g.u * g.u)


def getitem_read_after_its_array_changed(x, s):
    g = Grid(x * 1.0)
    v = g[1:]
    g.u[2] = s
    return np.sum(v * v)


def negation_updated(x, s):
    g = Grid(x * 1.0)
    v = -g
    v[0] = s
    return np.sum(g.u * g.u)


def _negated_and_set(g, s):
    v = -g
    v[0] = s
    return np.sum(g.u * g.u)


def negation_of_an_argument_updated(x, s):
    return _negated_and_set(Grid(x * 1.0), s)


def plus_updated(x, s):
    g = Grid(x * 1.0)
    v = +g
    v *= s
    return np.sum(g.u * g.u)


def matmul_updated(x, s):
    g = Grid(x * 1.0)
    v = g @ g
    v *= s
    return np.sum(g.u * g.u)


def abs_updated(x, s):
    g = Grid(x * 1.0)
    v = abs(g)
    v *= s
    return np.sum(g.u * g.u)


def entered_updated(x, s):
    g = Grid(x * 1.0)
    with g as v:
        v *= s
    return np.sum(g.u * g.u)


def entered_read_after_its_array_changed(x, s):
    g = Grid(x * 1.0)
    with g as v:
        g.u[2] = s
        total = np.sum(v * v)
    return total


def entered_manager_itself(x, s):
    class Manager:
        def __init__(self, u):
            self.u = u

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False
    m = Manager(x * 1.0)
    with m as same:
        same.u *= s
    return np.sum(m.u ** 2)


def views_only_read(x, s):
    g = Grid(x * s)
    return np.sum(g.interior * (-g)[:3]) + np.sum(abs(g))


def negated_arrays(x, s):
    y = -x
    y *= s
    x *= s
    return np.sum(y * x)


class Lazy:
    """`functools.cached_property`: a descriptor whose `__get__` is Python code and that the instance's own field
    hides once it has run."""

    def __init__(self, u):
        self.u = u

    @functools.cached_property
    def tail(self):
        return self.u[1:]


def cached_property_updated(x, s):
    g = Lazy(x * 1.0)
    g.tail *= s
    return np.sum(g.u ** 2) + np.sum(g.u[:2])


CASES = [explicit_call, property_item_updated, property_updated_whole, property_named_then_added_to,
         property_read_after_its_array_changed, property_of_an_argument_read_after_it_changed,
         property_of_an_argument_updated, property_giving_a_list, property_giving_a_dict_of_views,
         getitem_giving_an_object_holding_a_view, property_through_a_property, property_in_a_loop,
         property_read_in_a_loop_after_updates, descriptor_updated, descriptor_read_after_its_array_changed,
         getattr_updated, getitem_updated, getitem_read_after_its_array_changed, negation_updated,
         negation_of_an_argument_updated, plus_updated, matmul_updated, abs_updated, entered_updated,
         entered_read_after_its_array_changed, entered_manager_itself, views_only_read, negated_arrays,
         cached_property_updated]


def _copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_what_an_implicitly_called_method_made_is_followed(f, mode):
    args = (np.array([0.3, -0.5, 0.8, 0.4]), 0.7)
    plain = _copied(args)
    want = f(*plain)
    given = _copied(args)
    value, grads = value_and_gradient(f, *given)
    assert value == pytest.approx(want, rel=1e-12)
    np.testing.assert_array_equal(given[0], plain[0])
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(lambda *a: f(*_copied(a)), args, k), rtol=1e-6, atol=1e-8)


def test_which_slots_are_computed_follows_python_lookup():
    """Data descriptors first, then the instance's own field, then the class (a Python descriptor held in an instance's
    field is a plain value); answers kept per class are asked again when the class changes."""
    from zygotepy.adjoints.mutation.computed import computed_slot

    class Plain:
        tail = Tail()

        def __init__(self, u):
            self.u = u
            self.held = Tail()

        def method(self):
            return self.u

    p = Plain(np.zeros(3))
    assert computed_slot(p, "attr", "tail")
    assert not computed_slot(p, "attr", "u")
    assert not computed_slot(p, "attr", "held")
    assert not computed_slot(p, "attr", "method")
    p.__dict__["tail"] = p.u  # (Tail has no __set__: the field hides it)
    assert not computed_slot(p, "attr", "tail")
    assert computed_slot(Plain(np.zeros(3)), "attr", "tail")
    assert not computed_slot(p, "attr", "missing")
    Plain.__getattr__ = lambda self, name: self.u
    assert computed_slot(p, "attr", "missing")
    Plain.u = property(lambda self: self.__dict__["u"][1:])
    assert computed_slot(p, "attr", "u")
    del Plain.u
    assert not computed_slot(p, "attr", "u")

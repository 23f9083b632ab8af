"""A store taken as a value (`map(setattr, ...)`, `any(map(ys.__setitem__, ...))`, a name or `functools.partial`
holding one) is refused, naming the line: C code updating its object where no rule follows it (it gave a gradient of
None). The same stores written as calls in the function are followed (call_checks.store_callable)."""
import functools
import operator
import types

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient


class Box:
    pass


def map_setattr(x):
    o = Box()
    o.a = 0.0
    list(map(setattr, [o], ["a"], [x * 2]))
    return o.a


def map_setitem(x):
    d = {"a": 0.0}
    list(map(operator.setitem, [d], ["a"], [x * 2]))
    return d["a"]


def map_bound_setitem(x):
    ys = [0.0, 1.0]
    any(map(ys.__setitem__, [0], [x * 2]))
    return ys[0]


def loop_over_map(x):
    o = Box()
    o.a = 0.0
    for _ in map(setattr, [o], ["a"], [x * 2]):
        pass
    return o.a


def partial_setattr(x):
    o = Box()
    o.a = 0.0
    put = functools.partial(setattr, o, "a")
    put(x * 2)
    return o.a


def named_bound_setitem(x):
    ys = [0.0, 0.0]
    put = ys.__setitem__
    put(0, x * 2)
    return ys[0]


def array_setitem_through_map(x):
    a = np.zeros(2)
    list(map(a.__setitem__, [0], [x]))
    return a.sum()


def partial_append(x):
    ys = [1.0]
    add = functools.partial(ys.append)
    add(x * 2)
    return sum(ys)


@pytest.mark.parametrize("f", [map_setattr, map_setitem, map_bound_setitem, loop_over_map, partial_setattr,
                               named_bound_setitem, array_setitem_through_map, partial_append],
                         ids=lambda f: f.__name__)
def test_a_store_taken_as_a_value_is_refused(f):
    with pytest.raises(ZygoteError, match="test_store_callables.py") as info:
        gradient(f, 1.5)
    assert "called as a value" in str(info.value) or "bound method" in str(info.value)


def stores_written_as_calls(x):
    o, d, ys = Box(), {}, [0.0]
    setattr(o, "a", x)
    operator.setitem(d, "k", x)
    ys.__setitem__(0, x)
    list.__setitem__(ys, 0, ys[0] * 2)
    put = setattr  # (a name the lowering resolves: the store setattr is)
    put(o, "b", 3 * x)
    return o.a + d["k"] + ys[0] + o.b


def store_into_an_object_in_a_loop(x):
    ns = types.SimpleNamespace(a=0.0)
    for o, v in zip([ns], [x * 3]):
        setattr(o, "a", v)
    return ns.a


@pytest.mark.parametrize("f, expected", [(stores_written_as_calls, 7.0), (store_into_an_object_in_a_loop, 3.0)],
                         ids=["calls", "loop"])
def test_stores_written_as_calls_are_followed(f, expected):
    assert gradient(f, 1.5) == (pytest.approx(expected),)

"""A loop over a dict (its keys, values or items) or a set whose body changes its size: Python's iterator raises
`RuntimeError: dictionary changed size during iteration` (`Set changed size ...`) when asked for its next item, the one
after the last iteration too; zygotepy took the items when the loop began and returned a value. The loop's watch
(lazy_watch.py, lower/lazy.py `_walked_views`) now raises the same error at the same point; a dict whose keys were
replaced at the same size is refused; a body that only changes values, or changes the size and then leaves by
`break`, runs as Python does, checked against central differences."""
import collections

import numpy as np
import pytest

from plain_checks import central, line_of
from zygotepy import value_and_gradient
from zygotepy.errors import UnsupportedSyntax


def items_insert(x):
    d = {"a": x[0], "b": x[1]}
    for k, v in d.items():
        d[k + "_sq"] = v * v
    return sum(d.values())


def values_pop(x):
    d = {"a": x[0], "b": x[1], "c": x[0] * x[1]}
    t = 0.0
    for v in d.values():
        t = t + v
        if len(d) > 2:
            d.pop("c")
    return t


def keys_insert_in_the_last_iteration(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k in d:
        t = t + d[k]
        if k == "b":
            d["c"] = 1.0
    return t


def keys_view_delete(x):
    d = {"a": x[0], "b": x[1], "c": 3.0}
    t = 0.0
    for k in d.keys():
        t = t + d[k] * x[0]
        if k == "a":
            del d["c"]
    return t


def enumerate_items_update(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for i, (k, v) in enumerate(d.items()):
        t = t + v * i
        d.update({k * 2: v})
    return t


def continue_after_insert(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k in d:
        d.setdefault("q", x[1])
        if k == "a":
            continue
        t = t + d[k]
    return t


def comprehension_inserts(x):
    d = {"a": x[0], "b": x[1]}
    return sum([d.setdefault(k + "x", x[0]) for k in d])


def set_add(x):
    s = {1, 2}
    t = 0.0
    for e in s:
        t = t + x[0] * e
        s.add(e + 10)
    return t


def set_update_operator(x):
    s = {1.0, 2.0}
    t = 0.0
    for e in s:
        t = t + x[1] * e
        s |= {e * 3.0}
    return t


def ordered_dict_insert(x):
    d = collections.OrderedDict(a=x[0], b=x[1])
    for k, v in d.items():
        d[k + "!"] = v
    return sum(d.values())


_DICT, _SET = "dictionary changed size", "Set changed size"
RAISING = [(items_insert, _DICT), (values_pop, _DICT), (keys_insert_in_the_last_iteration, _DICT),
           (keys_view_delete, _DICT), (enumerate_items_update, _DICT), (continue_after_insert, _DICT),
           (comprehension_inserts, _DICT), (set_add, _SET), (set_update_operator, _SET),
           (ordered_dict_insert, "OrderedDict mutated")]
X = np.array([0.7, -0.3])


@pytest.mark.parametrize("f, kind", RAISING, ids=[f.__name__ for f, _ in RAISING])
def test_a_size_change_raises_as_python_does(mode, f, kind):
    with pytest.raises(RuntimeError, match=f"^{kind} during iteration"):
        f(X.copy())
    with pytest.raises(RuntimeError, match=f"^{kind} during iteration"):
        value_and_gradient(f, X.copy())


def values_rebound(x):
    d = {"a": x[0], "b": x[1]}
    for k, v in d.items():
        d[k] = v * 2.0
    return d["a"] * d["b"]


def values_read_later(x):
    d = {"a": x[0], "b": x[1], "c": 1.0}
    t = 0.0
    for k, v in d.items():
        d["c"] = v * 2.0
        t = t + v
    return t


def insert_then_break(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k, v in d.items():
        t = t + v
        d["z"] = v * 3.0
        break
    return t + sum(d.values())


def pop_and_put_back(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k in d:
        v = d.pop(k)
        d[k] = v * x[1]  # (back at the end of the dict: the last key is "b" again only for "b")
        t = t + d[k]
        if k == "a":
            return t
    return t


def insert_and_delete_again(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k, v in d.items():
        d["tmp"] = v * 2.0
        t = t + d["tmp"] * v
        del d["tmp"]
    return t


def helper_call_keeps_size(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k in d:
        t = t + np.sin(d[k]) * len(d)
    return t


def set_walk_with_calls(x):
    s = {1.0, 2.0, 4.0}
    t = 0.0
    for e in s:
        t = t + np.exp(x[0] * e) + x[1] * max(s)
    return t


RUNNING = [values_rebound, values_read_later, insert_then_break, pop_and_put_back, insert_and_delete_again,
           helper_call_keeps_size, set_walk_with_calls]


@pytest.mark.parametrize("f", RUNNING, ids=lambda f: f.__name__)
def test_a_body_keeping_the_size_runs(mode, f):
    value, (grad,) = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    np.testing.assert_allclose(grad, central(f, (X,), 0), rtol=1e-6, atol=1e-6)


def keys_replaced(x):
    d = {"a": x[0], "b": x[1], "c": 2.0}
    t = 0.0
    for k in d:  # marker
        if k == "a":
            del d["c"]
            d["z"] = x[0] * 5.0
        t = t + d[k]
    return t


def test_keys_replaced_at_the_same_size_are_refused(mode):
    """Python walks a, b, z here (3.9 for x = (0.7, -0.3)); zygotepy would walk a, b, c."""
    with pytest.raises(UnsupportedSyntax, match=rf":{line_of(keys_replaced, '# marker')}: .*the dict 'd' whose body "
                                                r"replaces its keys"):
        value_and_gradient(keys_replaced, X.copy())

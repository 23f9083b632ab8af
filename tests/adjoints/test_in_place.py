"""The methods that update their object in place are declared once (adjoints/in_place.py), where their rules are
defined, and the lowering reads the declarations: a method declared for a new type is lowered as an update, and the
list and array methods keep their rules and their gradients."""
import numpy as np
import pytest

import zygotepy  # noqa: F401  (registers the built-in rules)
from zygotepy import gradient
from zygotepy.adjoints import in_place
from zygotepy.ast_adjoint import mutate as mt
from zygotepy.ast_adjoint.lower import lower
from zygotepy.ast_adjoint.source import get_source


def calls_frob(obj, x):
    r = obj.frob(x)
    return r * x


def _lowered_text(fn):
    ir, _ = lower(get_source(fn), fn.__code__)
    return str(ir)


class Gadget:
    """A type no rule knows."""


def test_a_method_declared_to_update_in_place_is_lowered_as_an_update():
    plain = _lowered_text(calls_frob)
    assert mt.mutcall.__name__ not in plain and mt.valuecall.__name__ not in plain
    in_place.updates_without_rule(Gadget, "frob")
    try:
        assert "frob" in in_place.updating_names()
        declared = _lowered_text(calls_frob)
    finally:
        del in_place.METHODS[(Gadget, "frob")]
        in_place._names[0] = None
    assert mt.mutcall.__name__ in declared or mt.valuecall.__name__ in declared
    assert "frob" not in in_place.updating_names()


def test_every_built_in_in_place_method_is_declared_for_its_type():
    for cls, name in [(list, "append"), (list, "pop"), (list, "sort"), (dict, "update"), (dict, "setdefault"),
                      (np.ndarray, "fill"), (np.ndarray, "sort"), (set, "add"), (np.ndarray, "resize")]:
        assert (cls, name) in in_place.METHODS
        assert getattr(cls, name)  # a real method of that type
    assert in_place.METHODS[(list, "append")] is not None and in_place.METHODS[(np.ndarray, "resize")] is None
    assert "__setitem__" not in in_place.updating_names()  # (the lowering writes it as the store it is)


def appended_then_popped(x):
    out = []
    for k in range(3):
        out.append(x * (k + 1.0))
    last = out.pop()
    return last + sum(out)


def sorted_in_place(x):
    y = x * np.array([3.0, 1.0, 2.0])
    y.sort()
    return y[0] + 10.0 * y[2]


def resized(x):
    y = x * 1.0
    y.resize(4)
    return y.sum()


def test_the_declared_rules_give_their_gradients():
    assert gradient(appended_then_popped, 2.0)[0] == pytest.approx(6.0)
    x = np.array([1.0, 5.0, 1.0])  # y = [3, 5, 2]: sorted [2, 3, 5]; 2 comes from x[2], 5 from x[1]
    np.testing.assert_allclose(gradient(sorted_in_place, x)[0], [0.0, 10.0, 2.0])


def test_a_declared_method_without_a_rule_raises_where_a_gradient_flows():
    with pytest.raises(zygotepy.ZygoteError, match="resize"):
        gradient(resized, np.array([1.0, 2.0]))


def scattered(x):
    y = np.zeros(3)
    r = np.add.at(y, [0, 2, 0], x)  # a call for its value (None) still updates y
    return (y * np.array([1.0, 2.0, 3.0])).sum() + (r is None)


def diagonal_filled(x):
    y = np.outer(x, x)
    np.power.at(y, [0, 1], 2.0)  # (np.maximum.at has a rule since: mutation/array_calls.py)
    return y.sum()


def test_library_functions_that_update_their_first_argument_are_declared():
    for fn in (np.put, np.place, np.putmask, np.put_along_axis, np.fill_diagonal, np.copyto, np.add.at, np.maximum.at):
        assert in_place.updates_first(fn)
    assert not in_place.updates_first(np.sum) and not in_place.updates_first([])  # (an unhashable value)
    assert {"at", "put", "copyto", "fill_diagonal"} <= in_place.updating_function_names()
    np.testing.assert_allclose(gradient(scattered, np.array([1.0, 2.0, 3.0]))[0], [1.0, 3.0, 1.0])
    with pytest.raises(zygotepy.ZygoteError, match="power.at"):  # (np.fill_diagonal has a rule: overwrites.py)
        gradient(diagonal_filled, np.array([1.0, 2.0]))


def set_updates(x):
    s = {1, 2, 3}
    s.intersection_update({2, 3})
    t = s.difference_update({5})  # (called for its value: None, and still an update)
    s.discard(3)
    s.add(7)
    return x * len(s) + (t is None)


def set_in_a_loop(x):
    seen, out = set(), 0.0
    for k in range(4):
        if k % 2 not in seen:
            seen.add(k % 2)
            out = out + x * k
    seen.symmetric_difference_update({0, 9})
    return out * len(seen)


def test_a_sets_updates_are_seen():
    assert gradient(set_updates, 2.0) == (2.0,)  # {2, 7}
    assert gradient(set_in_a_loop, 2.0) == (2.0,)  # out = x, seen = {1, 9}

"""A list that holds the same object in two slots (`both = [a, a]`), a dict under two keys or an object in two
attributes: an update in place through one slot (`both[1] *= 2`, `d["w"] *= 2`, `p.w *= 2`) is an update of the object
the other slot holds too, so a read through the other slot afterwards must see it in value and gradient. This was
silently wrong (the read's cotangent went to the slot's older entry, missing the update's factor): for lists first,
then for dicts and attributes, and where another slot holds the object deeper, or another object holds it
(mutation/stores.py, `_twins`; held.py). Each case is checked against one plain call (value and the caller's argument state) and
central finite differences (tests/plain_checks.py, `agree_at`)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import agree_at  # noqa: E402

X = np.array([0.3, -1.2, 2.4])


def read_the_other_slot(a):
    both = [a, a]
    both[1] *= 2.0
    return np.sum(both[0] * both[0])


def read_the_first_slot_after_updating_it(a):
    both = [a, a]
    both[0] *= 3.0
    return np.sum(both[1] * a) + np.sum(both[0])


def read_before_and_after(a):
    both = [a * 1.0, None]
    both[1] = both[0]
    early = np.sum(both[0] * both[0])  # before the update: the old values
    both[1] += 1.5
    return early + np.sum(np.sin(both[0]))


def update_each_slot_in_a_loop(a):
    lst = [a, a, a]
    for k in range(3):
        lst[k] *= 1.5
    return np.sum(lst[0] * lst[2])


def a_nested_list_in_two_slots(a):
    inner = [a[0], a[1]]
    both = [inner, inner]
    both[1] += [a[2]]  # list += extends the shared list in place
    return both[0][0] * both[0][2] + len(both[0]) * both[1][1]


def written_by_index_of_a_name(a):
    w = a * 2.0
    lst = [w, 1.0, w]
    lst[2] -= a
    return np.sum(lst[0] * a) + lst[1]


def appended_from_itself_then_read_by_name(a):
    W = [a * 1.0, a * 2.0]
    first = W[0]
    W.append(W[0])
    W[-1] *= 2.0
    return np.sum(first * a) + np.sum(W[0])


def a_copy_of_a_list_with_twins(a):
    both = [a * 1.0]
    both.append(both[0])
    c = list(both)
    both[1] *= 2.0
    return np.sum(c[0] * a)


def twins_from_a_dict_entry(a):
    d = {"p": a * 1.0}
    lst = [d["p"], d["p"]]
    lst[0] *= 3.0
    return np.sum(lst[1] * a) + np.sum(d["p"])


def a_dict_with_one_array_under_two_keys(a):
    y = a * 1.0
    d = {"w": y, "v": y}
    d["w"] *= a[0] + 2.0
    return np.sum(d["v"] ** 2) + np.sum(y)


def a_dict_entry_aliased_then_updated(a):
    d = {"w": a * 1.0, "v": a * 2.0}
    d["v"] = d["w"]
    d["w"] += a
    d["v"] *= 0.5
    return np.sum(d["v"] * d["w"] * a)


class _Pair:
    def __init__(self, w):
        self.w = w
        self.v = w


def an_object_with_one_array_in_two_attributes(a):
    p = _Pair(a * 1.0)
    p.w *= a[1]
    return np.sum(p.v ** 2) + np.sum(p.w)


def an_object_with_one_array_in_two_attributes_stored_into(a):
    p = _Pair(a * 1.0)
    p.v *= a[1]
    p.w[0] = a[2]
    return np.sum(p.v ** 2) + np.sum(p.w)


def a_view_in_another_key(a):
    y = a * 1.0
    d = {"w": y, "v": y[:2]}
    d["w"] *= a[2]
    return np.sum(d["v"] ** 2)


def a_view_in_another_slot(a):
    y = a * 1.0
    lst = [y, y[1:]]
    lst[0] *= a[0]
    return np.sum(lst[1] ** 2)


def a_list_inside_a_dict_holds_it(a):
    y = a * 1.0
    d = {"w": y, "in": [y]}
    d["w"] *= a[1]
    return np.sum(d["in"][0] ** 2)


def a_dict_inside_a_list_holds_it(a):
    y = a * 1.0
    lst = [y, {"v": y}]
    lst[0] *= a[1]
    return np.sum(lst[1]["v"] ** 2)


def an_object_inside_the_object_holds_it(a):
    p = _Pair(a * 1.0)
    p.inner = _Pair(p.w)
    p.w *= a[0]
    return np.sum(p.inner.v ** 2)


def another_object_made_from_its_field(a):
    p = _Pair(a * 1.0)
    q = _Pair(p.w)
    p.w *= a[0]
    return np.sum(q.v ** 2) + np.sum(p.v * a)


def stored_into_through_a_key_read_deeper(a):
    y = a * 1.0
    d = {"w": y, "in": [y]}
    d["w"][1] = a[0] * a[2]
    return np.sum(np.tanh(d["in"][0]))


def stored_into_through_an_attribute_read_deeper(a):
    p = _Pair(a * 1.0)
    p.inner = _Pair(p.w)
    p.w[1:3] = [a[0], 0.5]
    return np.sum(np.tanh(p.inner.v))


@pytest.mark.parametrize("f", [a_view_in_another_key, a_view_in_another_slot, a_list_inside_a_dict_holds_it,
                               a_dict_inside_a_list_holds_it, an_object_inside_the_object_holds_it,
                               another_object_made_from_its_field, stored_into_through_a_key_read_deeper,
                               stored_into_through_an_attribute_read_deeper],
                         ids=lambda f: f.__name__)
def test_the_updated_object_held_deeper_or_by_another_object(f):
    """The object updated through one slot sits inside another slot's item (a list, a dict, an object, a view of its
    memory), or in the fields of another object made from it: silently wrong before (mutation/stores.py `_twins`
    searches the other slots when a write puts back the object the slot held; links.py `_where_deep` finds every place
    of an array stored into through a slot; held.py `_where_items` follows an object's fields)."""
    agree_at(f, X)


@pytest.mark.parametrize("f", [a_dict_with_one_array_under_two_keys, a_dict_entry_aliased_then_updated,
                               an_object_with_one_array_in_two_attributes,
                               an_object_with_one_array_in_two_attributes_stored_into, appended_from_itself_then_read_by_name, a_copy_of_a_list_with_twins,
                               twins_from_a_dict_entry, read_the_other_slot, read_the_first_slot_after_updating_it, read_before_and_after,
                               update_each_slot_in_a_loop, a_nested_list_in_two_slots, written_by_index_of_a_name],
                         ids=lambda f: f.__name__)
def test_an_object_in_two_slots_updated_through_one(f):
    agree_at(f, X)


def equal_numbers_are_not_one_object(x):
    lst = [0.5, x[0]]
    lst[1] = 0.5  # may be the very float object of slot 0 (one code object's constant): no gradient either way
    return lst[0] * x[1] + lst[1] * x[2]


def test_equal_numbers_in_two_slots_keep_their_own_gradients():
    agree_at(equal_numbers_are_not_one_object, X)

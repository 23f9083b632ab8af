"""A list that holds the same object in two slots (`both = [a, a]`): an update in place through one slot
(`both[1] *= 2`) is an update of the object the other slot holds too, so a read through the other slot afterwards
must see it in value and gradient. This was silently wrong (the read's cotangent went to the slot's older entry,
missing the update's factor). Each case is checked against one plain call (value and the caller's argument state) and
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


@pytest.mark.parametrize("f", [appended_from_itself_then_read_by_name, a_copy_of_a_list_with_twins,
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

"""The truth of an object an `if` (or `a if c else b`, `c and d`) tests is taken once, when the test runs: an update in
place later (`if lst: lst.pop()` in a loop, a one-element array written after `if flag_arr:`) changes what Python
already decided. The backward picked each arm again from the object kept, as it was after the whole forward (an
emptied list: the other arm), giving 2.0 for 3.4 or crashing with "too many values to unpack" (lower/control.py
`truth`). Checked against one plain call and central differences."""
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def popped_in_one_arm(x):
    lst = [x, 2 * x]
    tot = 0.0
    for _ in range(2):
        if lst:
            lst.pop()
        tot = tot + (lst[-1] * x if lst else x)
    return tot


def popped_in_one_arm_then_an_if_statement(x):
    lst = [x, 2 * x]
    tot = 0.0
    for _ in range(2):
        if lst:
            lst.pop()
        if lst:
            tot = tot + lst[-1] * x
        else:
            tot = tot + x
    return tot


def popped_in_a_short_circuit(x):
    lst = [x, 2 * x, 3 * x]
    tot = 0.0
    for _ in range(3):
        t = lst and lst.pop()
        tot = tot + t * x + (lst[-1] if lst else 0.0)
    return tot


def popped_in_a_while_condition(x):
    lst = [x, 2 * x, 0.1 * x]
    tot = 0.0
    while lst and lst.pop() > 0.2:
        tot = tot + x * len(lst) + (lst[-1] if lst else 0.0)
    return tot + len(lst) * x


def a_dict_emptied(x):
    d = {"a": x, "b": 3 * x}
    tot = 0.0
    for k in ("a", "b"):
        if d:
            del d[k]
        tot = tot + (sum(d.values()) * x if d else x)
    return tot


def a_one_element_array_written_after(x):
    flag = np.array([1.0])
    tot = 0.0
    for i in range(3):
        if flag:
            tot = tot + x * (i + 1)
        else:
            tot = tot - x
        flag[0] = 0.0
    return tot


CASES = [popped_in_one_arm, popped_in_one_arm_then_an_if_statement, popped_in_a_short_circuit,
         popped_in_a_while_condition, a_dict_emptied, a_one_element_array_written_after]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_the_truth_of_an_object_is_taken_when_the_test_runs(f, mode):
    value, (g,) = value_and_gradient(f, 1.2)
    assert value == pytest.approx(f(1.2), rel=1e-12)
    assert g == pytest.approx(central(f, (1.2,), 0), rel=1e-6)

"""Links an `if`'s arm made between objects (`if flag: y[len(x) - 1] = s`, `L[1] = r` / `L[0] = r`, a swap in one arm)
hold only on that arm's path, and a loop's links only if its body ran (lower/region_links.py). Each arm was lowered
knowing the other's links, and after the join the then arm's key was used on both paths: the else arm's path read a
key only the then arm computed (UnboundLocalError in generated code), or routed an update through the slot the then
arm linked (d/dx of `r` stored into `L[0]` and doubled through the list: half of it). A loop that never ran left the
key of a link its body made undefined. Checked with either arm taken against one plain call and central
differences."""
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

W3 = np.array([1.0, 2.0, 3.0])


def stored_at_a_computed_index(x, s, flag):
    y = x.copy()
    if flag:
        y[len(x) - 1] = s
    y *= s
    return np.sum(y * W3)


def stored_at_a_local_index(x, s, flag):
    y = x.copy()
    k = 3
    if flag:
        y[k - 1] = s
    y *= s
    return np.sum(y * W3)


def stored_at_argmax_then_sliced(x, s, flag):
    y = x.copy()
    if flag:
        y[np.argmax(x)] = s
    else:
        y[0] = s * 2.0
    y[1:] -= s * x[:2]
    return np.sum(y * W3)


def stored_in_a_list_in_either_arm(x, s, flag):
    L = [np.ones(3), np.zeros(3)]
    r = x * s
    if flag:
        L[1] = r
    else:
        L[0] = r
    for a in L:
        a *= 2.0
    return np.sum(r * W3)


def swapped_in_one_arm(x, s, flag):
    L = [x * s, x * 2.0]
    a, b = L
    if flag:
        L[0], L[1] = b, a
    L[0] *= 3.0
    return np.sum(a * W3) + np.sum(b)


def stored_in_a_dict_in_one_arm(x, s, flag):
    d = {"a": x * 1.0}
    r = x * s
    key = "b" if x[0] > 0 else "c"
    if flag:
        d[key] = r
    d[key if flag else "a"] *= 2.0
    return np.sum(r * W3) + np.sum(d["a"])


class Box:
    def __init__(self, v):
        self.v = v


def set_as_a_field_in_one_arm(x, s, flag):
    o = Box(x * 1.0)
    r = x * s
    name = "v"
    if flag:
        setattr(o, name, r)
    else:
        o.w = r
    o.v *= 2.0
    return np.sum(r * W3)


def nested_ifs(x, s, flag):
    y = x.copy()
    if flag:
        if x[0] > 0:
            y[len(x) - 2] = s
        else:
            y[0] = s
    y *= s
    return np.sum(y * W3)


def in_a_loop_that_may_not_run(x, s, flag):
    y = x.copy()
    for i in range(2 if flag else 0):
        y[len(x) - 1 - i] = s * i
    y *= s
    return np.sum(y * W3)


def in_a_loop_branch(x, s, flag):
    y = x.copy()
    for i in range(3):
        if (i == 1) == flag:
            y[len(x) - 1 - i] = s * (i + 1)
        y *= s
    return np.sum(y * W3)


def in_a_while_loop_that_may_not_run(x, s, flag):
    y = x.copy()
    i = 0
    while flag and i < 2:
        y[len(x) - 1 - i] = s
        i += 1
    y += s
    return np.sum(y * y * W3)


CASES = [stored_at_a_computed_index, stored_at_a_local_index, stored_at_argmax_then_sliced,
         stored_in_a_list_in_either_arm, swapped_in_one_arm, stored_in_a_dict_in_one_arm, set_as_a_field_in_one_arm,
         nested_ifs, in_a_loop_that_may_not_run, in_a_loop_branch, in_a_while_loop_that_may_not_run]


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_links_made_in_one_arm_hold_on_its_path_only(f, flag, mode):
    x, s = np.array([0.3, -1.2, 0.8]), 0.7
    value, grads = value_and_gradient(f, x.copy(), s, flag)
    assert value == pytest.approx(f(x.copy(), s, flag), rel=1e-12)
    for k, g in enumerate(grads[:2]):
        np.testing.assert_allclose(g, central(lambda a, b: f(a, b, flag), (x, s), k), rtol=1e-6, atol=1e-8)

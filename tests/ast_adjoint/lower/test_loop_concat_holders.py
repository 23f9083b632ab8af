"""A container a loop makes anew each iteration from the one before (`hist = hist + [u]`, `(u,) + hist`, `d | {k: u}`,
`[*hist, u]`, a view `[u[1:]]`, a row `[w[0]]`, a field `[o.w]` or an entry `[d["w"]]`, in an inner loop, a
comprehension's list) holds the objects themselves: an update of one in place in a later iteration, made before the
statement that links them there (`u *= s` first in the body), changes what the container holds. The loop's first pass
saw no holder of `u` when it lowered `u *= s` (an augmented update, in place only of what something holds), and its
links between carried objects (lower/carried_links.py) went only upward from the object and through one object
between, and down from a carried object only to its slices (not to a field, an entry or a row), so nothing was linked
and d/du, d/ds came back as if every entry were a copy. Checked against one plain call and central differences."""
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def list_concatenated(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist = hist + [u]
    return sum(np.sum(h) for h in hist)


def list_concatenated_in_front(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist = [u] + hist
    return sum(np.sum(h * h) for h in hist)


def list_extended_in_place(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist += [u]
    return sum(np.sum(h) for h in hist)


def list_unpacked_into_a_display(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist = [*hist, u]
    return sum(np.sum(h) for h in hist)


def tuple_concatenated(x, s):
    u = x * 1.0
    hist = ()
    for _ in range(3):
        u *= s
        hist = hist + (u,)
    return sum(np.sum(h) for h in hist)


def dict_merged(x, s):
    u = x * 1.0
    d = {}
    for i in range(3):
        u *= s
        d = d | {i: u}
    return sum(np.sum(h) for h in d.values())


def while_loop(x, s):
    u = x * 1.0
    hist = []
    i = 0
    while i < 3:
        u *= s
        hist = hist + [u]
        i += 1
    return sum(np.sum(h) for h in hist)


def pairs_concatenated(x, s):
    u = x * 1.0
    hist = []
    for i in range(3):
        u *= s
        hist = hist + [(u, i)]
    return sum(np.sum(h[0]) for h in hist)


def through_a_list_of_the_body(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        new = [u]
        hist = hist + new
    return sum(np.sum(h * h) for h in hist)


def through_a_copy_of_the_list(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist = list(hist) + [u]
    return sum(np.sum(h) for h in hist)


def updated_in_one_arm(x, s):
    u = x * 1.0
    hist = []
    for i in range(3):
        if i > 0:
            u *= s
        hist = hist + [u]
    return np.sum(hist[0] * hist[2])


def kept_in_one_arm(x, s):
    u = x * 1.0
    first = None
    for _ in range(3):
        u *= s
        if first is None:
            first = [u]
    return np.sum(first[0])


def updated_through_the_list(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        if hist:
            hist[-1] *= s
        hist = hist + [u]
    return sum(np.sum(h) for h in hist)


def a_view_concatenated(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist = hist + [u[1:]]
    return sum(np.sum(h * h) for h in hist)


def concatenated_in_an_inner_loop(x, s):
    u = x * 1.0
    hist = []
    for _ in range(2):
        u *= s
        for _ in range(2):
            hist = hist + [u]
    return sum(np.sum(h * h) for h in hist)


def a_comprehension_concatenated(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist = hist + [v for v in [u]]
    return sum(np.sum(h) for h in hist)


def a_comprehension_extended_by(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u *= s
        hist.extend([v for v in [u]])
    return sum(np.sum(h) for h in hist)


def a_comprehension_concatenated_once(x, s):
    u = x * 1.0
    hist = [] + [v for v in [u]]
    u *= s
    return sum(np.sum(h) for h in hist)


def argument_concatenated(u, s):
    hist = []
    for _ in range(3):
        u *= s
        hist = hist + [u]
    return sum(np.sum(h * h) for h in hist)


def updated_after_the_concatenation(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        hist = hist + [u]
        u *= s
    return sum(np.sum(h) for h in hist)


def a_fresh_array_each_iteration(x, s):
    u = x * 1.0
    hist = []
    for _ in range(3):
        u = u * s
        hist = hist + [u]
    return sum(np.sum(h * h) for h in hist)


class _Holder:
    def __init__(self, w, b):
        self.w = w
        self.b = b


def a_field_concatenated(x, s):
    o = _Holder(x * 1.0, 0.0)
    hist = []
    for _ in range(3):
        o.w *= s
        hist = hist + [o.w]
    return sum(np.sum(h * h) for h in hist)


def a_field_extended_by(x, s):
    o = _Holder(x * 1.0, 0.0)
    hist = []
    for _ in range(3):
        o.w *= s
        hist += [o.w]
    return sum(np.sum(h * h) for h in hist)


def a_nested_field_in_a_tuple(x, s):
    o = _Holder(_Holder(x * 1.0, 0.0), 1.0)
    hist = ()
    for _ in range(3):
        o.w.w *= s
        hist = hist + (o.w.w,)
    return sum(np.sum(h * h) for h in hist)


def a_dict_entry_concatenated(x, s):
    d = {"w": x * 1.0}
    hist = []
    for _ in range(3):
        d["w"] *= s
        hist = hist + [d["w"]]
    return sum(np.sum(h * h) for h in hist)


def a_list_entry_concatenated(x, s):
    params = [x * 1.0, x * 2.0]
    hist = []
    for _ in range(3):
        params[0] *= s
        hist = hist + [params[0]]
    return sum(np.sum(h * h) for h in hist)


def a_field_merged_into_a_dict(x, s):
    o = _Holder(x * 1.0, 0.0)
    d = {}
    for i in range(3):
        o.w += s
        d = d | {i: o.w}
    return sum(np.sum(h * h) for h in d.values())


def a_number_field_and_an_array_item(x, s):
    o = _Holder(x * 1.0, float(x[0]))
    hist = []
    for _ in range(3):
        o.b *= s
        o.w *= s
        hist = hist + [o.b, o.w[1]]
    return sum(h * h for h in hist)


def a_copy_of_a_field(x, s):
    o = _Holder(x * 1.0, 0.0)
    hist = []
    for _ in range(3):
        o.w *= s
        hist = hist + [o.w.copy()]
    return sum(np.sum(h * h) for h in hist)


def a_state_dict_trajectory(x, s):
    state = {"x": x * 1.0, "v": x * 0.5}
    traj = []
    for _ in range(4):
        state["v"] -= s * state["x"] * 0.1
        state["x"] += 0.1 * state["v"]
        traj = traj + [state["x"]]
    return sum(np.sum(p ** 2) for p in traj)


def fields_put_in_front_in_a_while_loop(x, s):
    o = _Holder(x * 1.0, x * 0.5)
    traj = []
    t = 0
    while t < 4:
        o.b -= s * o.w * 0.1
        o.w += 0.1 * o.b
        traj = [o.w, o.b] + traj
        t += 1
    return sum(np.sum(p ** 2) for p in traj)


def fields_of_a_list_of_objects_in_an_inner_loop(x, s):
    objs = [_Holder(x * 1.0, 0.0), _Holder(x * 2.0, 0.0)]
    traj = []
    for _ in range(3):
        for o in objs:
            o.w *= s
        traj = traj + [objs[0].w, objs[1].w]
    return sum(np.sum(p ** 2) for p in traj)


def a_field_kept_in_one_arm(x, s):
    o = _Holder(x * 1.0, 0.0)
    first = None
    for _ in range(3):
        o.w *= s
        if first is None:
            first = [o.w]
    return np.sum(first[0] ** 2)


def a_field_updated_through_a_name(x, s):
    o = _Holder(x * 1.0, 0.0)
    traj = []
    for _ in range(3):
        w = o.w
        w *= s
        traj = traj + [o.w]
    return sum(np.sum(p ** 2) for p in traj)


def a_row_concatenated(x, s):
    w = np.outer(x, x) * 1.0
    hist = []
    for _ in range(3):
        w *= s
        hist = hist + [w[0]]
    return sum(np.sum(h ** 2) for h in hist)


def a_row_concatenated_after_an_inner_loop_updates_the_rows(x, s):
    w = np.outer(x, x) * 1.0
    hist = []
    for _ in range(2):
        for row in w:
            row *= s
        hist = hist + [w[0]]
    return sum(np.sum(h ** 2) for h in hist)


CASES = [list_concatenated, list_concatenated_in_front, list_extended_in_place, list_unpacked_into_a_display,
         tuple_concatenated, dict_merged, while_loop, pairs_concatenated, through_a_list_of_the_body,
         through_a_copy_of_the_list, updated_in_one_arm, kept_in_one_arm, updated_through_the_list,
         a_view_concatenated, concatenated_in_an_inner_loop, a_comprehension_concatenated,
         a_comprehension_extended_by, a_comprehension_concatenated_once, argument_concatenated,
         updated_after_the_concatenation, a_fresh_array_each_iteration, a_field_concatenated, a_field_extended_by,
         a_nested_field_in_a_tuple, a_dict_entry_concatenated, a_list_entry_concatenated, a_field_merged_into_a_dict,
         a_number_field_and_an_array_item, a_copy_of_a_field, a_state_dict_trajectory,
         fields_put_in_front_in_a_while_loop, fields_of_a_list_of_objects_in_an_inner_loop, a_field_kept_in_one_arm,
         a_field_updated_through_a_name, a_row_concatenated, a_row_concatenated_after_an_inner_loop_updates_the_rows]


def _copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _agrees(f, args):
    plain = _copied(args)
    want = f(*plain)
    given = _copied(args)
    value, grads = value_and_gradient(f, *given)
    assert value == pytest.approx(want, rel=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(lambda *a: f(*_copied(a)), args, k), rtol=1e-6, atol=1e-8)
    return given, plain


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_container_remade_each_iteration_holds_what_later_iterations_update(f, mode):
    given, plain = _agrees(f, (np.array([0.3, -0.5, 0.8, 0.4]), 0.7))
    np.testing.assert_array_equal(given[0], plain[0])


@pytest.mark.parametrize("f", [list_concatenated, tuple_concatenated, updated_after_the_concatenation],
                         ids=lambda f: f.__name__)
def test_numbers_concatenated_so(f, mode):
    """`u *= s` on a number makes a new one: each entry is the value it had."""
    _agrees(f, (0.3, 0.7))

"""A `for` loop's variable is an item of what the loop walks: updating it in place updates that container (array
rows, list items, dict values, objects), checked against central differences in float64, with the caller's arrays
left as one plain call leaves them."""

import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient
from zygotepy.errors import ZygoteError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import agree_at  # noqa: E402

X = np.array([0.3, -1.2, 2.4, 0.7, 1.1, -0.5])


class P:
    def __init__(self, w, b):
        self.w, self.b = w, b


def floats_rebound(x):  # `+=` on a float rebinds the name: nothing is updated
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for v in xs:
        v += 1.0
        t = t + v * v
    return t + sum(xs)


def rows_iadd(x):
    Y = np.outer(x[:3], x[3:])
    for r in Y:
        r += x[:3]
    return np.sum(Y ** 2)


def row_slice_derived(x):
    Y = np.outer(x[:3], x[3:])
    for r in Y:
        s = r[1:]
        s *= 2.0
    return np.sum(Y * Y)


def objects_attr_imul(x):
    ps = [P(x[:3].copy(), x[3]), P(x[3:] * 2, x[4])]
    for p in ps:
        p.w *= p.b
    return sum(np.sum(p.w ** 2) for p in ps)


def dict_items_imul(x):
    d = {"a": x[:3].copy(), "b": x[3:] + 1}
    for _, v in d.items():
        v *= x[0]
    return np.sum(d["a"] * d["b"])


def enumerate_rows_setitem(x):
    Y = np.outer(x[:3], x[3:])
    for i, r in enumerate(Y):
        r[i] = x[i] ** 2
    return np.sum(Y * Y)


def zip_rows(x):
    A = np.outer(x[:2], x[2:4])
    B = np.outer(x[4:], x[:2])
    for a, b in zip(A, B):
        a += b
    return np.sum(A * A) + np.sum(B)


def nested_loop_over_row(x):
    Y = np.outer(x[:3], x[3:])
    for row in Y:
        for j in range(len(row)):
            row[j] = row[j] ** 2
    return np.sum(Y)


def rows_of_3d(x):
    T = x[:4].reshape(2, 2, 1) * x[4]
    T = np.concatenate([T, T * 2], axis=2)
    for M in T:
        M[0] *= 3.0
    return np.sum(T * T)


def lists_of_floats(x):
    rows = [[x[0], x[1]], [x[2], x[3]]]
    for row in rows:
        row[0] = row[0] * row[1]
    return rows[0][0] + rows[1][0] * rows[0][1]


def rows_of_strided_view(x):
    Y = np.outer(x[:4], x[4:])
    for r in Y[::2]:
        r *= 3.0
    return np.sum(Y * Y)


def read_only_with_append(x):
    total, out = 0.0, []
    for v in [x[0], x[1], x[2]]:
        total = total + v
        out.append(v * total)
    return sum(out)


def ufunc_out_on_row(x):
    Y = np.outer(x[:3], x[3:])
    for r in Y:
        np.multiply(r, 2.0, out=r)
    return np.sum(Y * Y)


def row_and_container_updated(x):
    Y = np.outer(x[:3], x[3:])
    for r in Y:
        r[:] = r * 2
        Y[0] += 1.0
    return np.sum(Y * Y)


def updates_argument_rows(Y):
    for r in Y:
        r *= r
    return np.sum(Y)


CASES = [floats_rebound, rows_iadd, row_slice_derived, objects_attr_imul, dict_items_imul, enumerate_rows_setitem,
         zip_rows, nested_loop_over_row, rows_of_3d, lists_of_floats, rows_of_strided_view, read_only_with_append,
         ufunc_out_on_row, row_and_container_updated, updates_argument_rows]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_loop_target_update_matches_finite_differences(f):
    agree_at(f, X.reshape(2, 3).copy() if f is updates_argument_rows else X.copy())  # value, gradient, argument state


def columns_of_view_rebound(x):
    a = x.copy()
    b = a
    for _ in range(2):
        b = b[1:]
        b[:2] *= 2.0
    return np.sum(a * x)


def test_part_of_rebound_view_is_routed_through_shared_memory():
    agree_at(columns_of_view_rebound, X.copy())


# --- the item a later iteration reads was changed before it was read: read from the container as it is then ----------

def same_array_twice(x):
    a = x[:3].copy()
    for v in [a, a]:
        v *= x[3]
    return np.sum(a * x[:3])


def later_row_updated_through_container(x):
    Y = np.outer(x[:3], x[3:])
    t = 0.0
    for r in Y:
        Y[2] *= 2.0
        t = t + np.sum(r * r)
    return t


def later_row_updated_through_alias(x):
    Y = np.outer(x[:3], x[3:])
    Z = Y
    t = 0.0
    for r in Y:
        Z[2] *= 2.0
        t = t + np.sum(r * r)
    return t


def later_row_updated_by_augmented_view(x):
    Y = np.outer(x[:3], x[3:])
    Z = Y[2]
    t = 0.0
    for r in Y:
        Z += x[0]
        t = t + np.sum(r * r)
    return t


def later_row_updated_by_inner_loop(x):
    Y = np.outer(x[:3], x[3:])
    t = 0.0
    for r in Y:
        for j in range(3):
            Y[2, j] *= 2.0
        t = t + np.sum(r * r)
    return t


def enumerate_next_row_updated(x):
    Y = np.outer(x[:3], x[3:])
    t = 0.0
    for i, r in enumerate(Y):
        if i < 2:
            Y[i + 1] *= x[0]
        t = t + np.sum(r * r)
    return t


def later_float_replaced(x):
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for v in xs:
        xs[2] = x[3] * 5
        t = t + v * v
    return t


def loop_variable_updated_after_loop(x):
    Y = np.outer(x[:3], x[3:])
    for r in Y:
        r *= 2.0
    r[0] = 5.0
    return np.sum(Y * x[3:])


def later_display_item_updated(x):
    a, b = x[:3].copy(), x[3:].copy()
    t = 0.0
    for v in [a, b]:
        b *= 2.0
        t = t + np.sum(v * v)
    return t


def zip_items_updated_after_loop(x):
    A = np.outer(x[:2], x[2:4])
    B = np.outer(x[4:], x[:2])
    for a, b in zip(A, B):
        a += b
    a[0] = 3.0
    b *= 2.0
    return np.sum(A * A) + np.sum(B * B)


def last_row_read_after_container_updated(x):
    Y = np.outer(x[:3], x[3:])
    for i, r in enumerate(Y):
        r *= x[i]
    Y[2] *= 3.0
    return np.sum(r * r) + np.sum(Y)


def dict_value_updated_after_loop(x):
    d = {"a": x[:3].copy(), "b": x[3:] + 1}
    for _, v in d.items():  # noqa: PERF102
        v *= x[0]
    v[1] = 0.0
    return np.sum(d["a"] * d["b"])


def floats_of_reversed_rebound(x):
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for v in reversed(xs):
        v += 1.0
        t = t + v * v
    return t


def loop_variable_updated_after_an_empty_loop(x):
    lst = [x[:2].copy(), x[2:4].copy()]
    for v in lst:
        pass
    v *= 3.0  # (reads `v`: the loop carries it, as for a load; it gave `lst[1]` no gradient)
    return np.sum(lst[0] * lst[1])


ROUTED = [same_array_twice, later_display_item_updated, zip_items_updated_after_loop,
          last_row_read_after_container_updated, dict_value_updated_after_loop, floats_of_reversed_rebound, later_row_updated_through_container, later_row_updated_through_alias,
          later_row_updated_by_augmented_view, later_row_updated_by_inner_loop, enumerate_next_row_updated,
          later_float_replaced, loop_variable_updated_after_loop, loop_variable_updated_after_an_empty_loop]


@pytest.mark.parametrize("f", ROUTED, ids=[f.__name__ for f in ROUTED])
def test_item_changed_before_its_iteration_matches_finite_differences(f):
    _check(f)


# --- a loop over a copy of a container (reversed, sorted, list(), a slice, a call) whose items are updated in its
# body: routed to the container the copy was made from (shared.py `shared_contents`); after the loop: refused ----

def _items(lst):
    return [lst[1], lst[0]]


def reversed_list(x):
    lst = [x[:2].copy(), x[2:4].copy()]
    for v in reversed(lst):
        v *= 2.0
    return np.sum(lst[0] * lst[1])


def sorted_list(x):
    lst = [x[:2].copy(), x[2:4].copy()]
    for v in sorted(lst, key=lambda a: a[0]):
        v *= x[4]
    return np.sum(lst[0] * lst[1])


def list_copy(x):
    lst = [x[:2].copy(), x[2:4].copy()]
    for v in list(lst):  # noqa: PERF101
        v *= x[4]
    return np.sum(lst[0] * lst[1])


def list_slice(x):
    lst = [x[:2].copy(), x[2:4].copy()]
    for v in lst[::-1]:
        v *= x[4]
    return np.sum(lst[0] * lst[1])


def helper_call(x):
    lst = [x[:2].copy(), x[2:4].copy()]
    for v in _items(lst):
        v *= x[4]
    return np.sum(lst[0] * lst[1])


def list_of_rows(x):
    Y = np.outer(x[:3], x[3:])
    for r in list(Y):
        r *= x[0]
    return np.sum(Y * Y)


def copy_item_updated_after_loop(x):
    lst = [x[:2].copy(), x[2:4].copy()]
    for v in reversed(lst):
        pass
    v *= 3.0
    return np.sum(lst[0] * lst[1])


COPIED = [reversed_list, sorted_list, list_copy, list_slice, helper_call, list_of_rows]


@pytest.mark.parametrize("f", COPIED, ids=[f.__name__ for f in COPIED])
def test_update_of_item_of_copied_container_in_the_body_matches_finite_differences(f, mode):
    _check(f)


REFUSED = [copy_item_updated_after_loop]


@pytest.mark.parametrize("f", REFUSED, ids=[f.__name__ for f in REFUSED])
def test_update_of_item_of_copied_container_after_the_loop_is_refused(f):
    line = f.__code__.co_firstlineno + 2  # the `for` line
    with pytest.raises(ZygoteError, match=rf"test_loop_targets\.py:{line}: .*index the container"):
        value_and_gradient(f, X.copy())


def rows_of_reversed_view(x):
    Y = np.outer(x[:3], x[3:])
    for r in Y[::-1]:
        r *= x[0]
        Y[0] += 1.0
    return np.sum(Y * Y)


def rows_of_flipud(x):
    Y = np.outer(x[:3], x[3:])
    for r in np.flipud(Y):
        r *= x[0]
    return np.sum(Y * Y)


def read_only_over_copy(x):
    Y = np.outer(x[:3], x[3:])
    t = 0.0
    for r in list(Y):
        t = t + np.sum(r * r)
    Y[0] *= 2.0
    return t + np.sum(Y)


@pytest.mark.parametrize("f", [rows_of_reversed_view, rows_of_flipud, read_only_over_copy])
def test_views_and_read_only_copies_still_route(f):
    _check(f)


def _check(f):
    agree_at(f, X)


# --- the loop variable after the loop: the last item, a row that sees updates of its array and vice versa -------------
# (once an internal AssertionError "backward reads values the forward never defines", or a silently wrong gradient
# when the array was updated through an index after the row was bound)

Y3 = np.array([[0.3, -1.2], [0.7, 0.4], [1.1, -0.5]])
Y4 = np.array([[0.3, -1.2], [0.7, 0.4], [1.1, -0.5], [0.2, 0.9]])


def last_row_read(Y):
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
    return s + np.sum(r * r)


def index_read(Y):
    s = 0.0
    for i in range(len(Y)):
        s = s + Y[i] * i
    return np.sum(s) * i


def row_then_item_imul(Y):  # len 3: `r` is the row updated
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
    Y[2] *= 3.0
    return s + np.sum(r)


def row_then_item_store(Y):
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
    Y[2] = Y[0] * 3.0
    return s + np.sum(r * r)


def item_imul_inside_loop(Y):
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
        Y[2] *= 1.5
    return s + np.sum(r)


def item_store_inside_loop(Y):
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
        Y[-1] = r * 2.0
    return s + np.sum(r * r)


def whole_array_imul(Y):
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
    Y *= 2.0
    return s + np.sum(r * r)


def slice_store(Y):
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
    Y[1:] = Y[:-1] * 2.0
    return s + np.sum(r * r)


def row_imul_after(Y):  # the update through the row reaches the array
    s = 0.0
    for r in Y:
        s = s + np.sum(r * r)
    r *= 2.0
    return s + np.sum(Y * Y)


def enumerate_row_and_index(Y):
    for i, r in enumerate(Y):
        r += 0.5
    Y[i] *= 2.0
    return np.sum(r * Y[0]) * i


def list_item_after(Y):
    rows = [Y[0] * 1.0, Y[1] * 2.0]
    s = 0.0
    for r in rows:
        s = s + np.sum(r * r)
    rows[-1] *= 3.0
    return s + np.sum(r * Y[2])


def bound_before_loop(Y):  # after the loop the name is the last row, not what it held before
    r = Y[0] * 0.5
    s = 0.0
    for r in Y:
        s = s + np.sum(r)
    return s + np.sum(r * Y[1])


def bound_before_empty_loop(Y):  # no iteration: the name keeps what it held before
    r = Y[0] * 0.5
    for r in Y[len(Y):]:
        r = r * 2.0
    Y[0] *= 3.0
    return np.sum(r * Y[1])


def read_by_next_outer_iteration(Y):
    r = Y[0] * 1.0
    s = 0.0
    for _ in range(2):
        s = s + np.sum(r * r)
        for r in Y:
            s = s + np.sum(r)
        Y[-1] *= 1.5
    return s


def comprehension_variable_is_its_own(Y):
    r = Y[0] * 2.0
    t = [np.sum(r * r) for r in Y]
    Y[0] *= 3.0
    return sum(t) + np.sum(r * r)


AFTER = [last_row_read, index_read, row_then_item_imul, row_then_item_store, item_imul_inside_loop,
         item_store_inside_loop, whole_array_imul, slice_store, row_imul_after, enumerate_row_and_index,
         list_item_after, bound_before_loop, bound_before_empty_loop, read_by_next_outer_iteration,
         comprehension_variable_is_its_own]


@pytest.mark.parametrize("Y", [Y3, Y4], ids=["3 rows", "4 rows"])
@pytest.mark.parametrize("f", AFTER, ids=[f.__name__ for f in AFTER])
def test_loop_variable_after_the_loop_matches_finite_differences(f, Y):
    agree_at(f, Y)  # value, gradient (central differences), and the argument as one plain call leaves it


def _viterbi_backtrace(x):
    bps = []
    for _ in range(2):
        bp = np.argmax(x.reshape(2, 2), axis=0)
        bps.append(bp)
    path = [0]
    for bp in reversed(bps):  # (the name of the first loop's items, reused: nothing updates them)
        path.append(int(bp[path[-1]]))
    return x[path[-1]] * 2.0 + np.sum(bps[0] * x[:2])


def test_a_loop_variable_named_as_items_appended_earlier(mode):
    """`bps.append(bp)` counted as a possible update of `bp` (an argument of a call statement), so the second loop,
    whose variable is `bp` again, was refused as updating its loop variable in place (found by a probe of dynamic
    programming). A container's own method updates the container only."""
    x = np.array([1.0, 3.0, 2.0, 0.5])
    value, (g,) = value_and_gradient(_viterbi_backtrace, x)
    assert value == _viterbi_backtrace(x)
    np.testing.assert_allclose(g, [2.0 + 1.0, 0.0, 0.0, 0.0])  # (bps[0] is [1, 0])

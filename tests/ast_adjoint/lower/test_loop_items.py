"""The item a `for` loop reads is the one its container holds when the iteration begins, as in Python: a dict's
value a helper or an earlier iteration rebound (`d.values()`, `d.items()` read lazily), a pair a list holds now when the
target unpacks it (`for a, b in pairs`, `for k, (a, b) in enumerate(pairs)`), the numbers of an array's row; and an
element unpacked from an item (`a, b = pairs[0]`) is that item's, so an update of it in place is the container's.
Each function is checked against one plain call (its value) and central differences in float64. (Unpacking outside
loops: test_unpacking.py.)"""
import numpy as np
import pytest

from zygotepy import value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


def _set_b(d, v):
    d["b"] = v * 3.0


def items_rebound_by_a_helper(x):
    d = {"a": x[0], "b": x[1] * 2.0}
    s = 0.0
    for k, v in d.items():
        _set_b(d, v)  # the second iteration reads the new d["b"]
        s = s + v * v
    return s


def values_rebound_in_the_body(x):
    d = {"a": x[0], "b": x[1] * 2.0}
    s = 0.0
    for v in d.values():
        d["b"] = v * 3.0
        s = s + v * v
    return s


def values_of_a_constant_dict(x, d=None):
    d = {"a": 0.5, "b": 1.0} if d is None else d
    s = 0.0
    for v in d.values():
        d["b"] = 3.0
        s = s + v * x[0]
    return s


def items_rebound_by_update(x):
    d = {"a": x[0], "b": x[1] * 2.0}
    s = 0.0
    for k, v in d.items():
        d.update(b=v * 3.0)
        s = s + v * v
    return s


def keys_of_floats(x):
    d = {0.5: x[0], 1.5: x[1]}
    s = 0.0
    for k in d:  # keys: read as they are
        d[1.5] = d[1.5] * k + d[k]
        s = s + d[k] * k
    return s


def pairs_rebound(x):
    pairs = [(x[0], 2.0 * x[1]), (3.0 * x[2], 4.0 * x[0])]
    s = 0.0
    for a, b in pairs:
        pairs[1] = (a * 5.0, b)
        s = s + a * b
    return s


def pairs_of_lists_updated(x):
    pairs = [[x[0], 2.0 * x[1]], [3.0 * x[2], 4.0 * x[0]]]
    s = 0.0
    for a, b in pairs:
        pairs[-1][0] = a * 5.0
        s = s + a * b
    return s


def rows_unpacked(x):
    y = np.stack([x, x * 2.0, x * 0.5])
    s = 0.0
    for a, b, c in y:
        y[2] = y[2] * a
        s = s + a * b + c
    return s


def enumerated_pairs_rebound(x):
    pairs = [(x * 1.0, x * 2.0), (x * 3.0, x * 0.5)]
    s = 0.0
    for k, (a, b) in enumerate(pairs):
        if k + 1 < len(pairs):
            pairs[k + 1] = (a * b, b)
        s = s + np.sum(a * b)
    return s


def items_with_pair_values(x):
    d = {"u": (x * 1.0, x[0]), "v": (x * 2.0, x[1])}
    s = 0.0
    for key, (a, c) in d.items():
        d["v"] = (a * c, c)
        s = s + np.sum(a) * c
    return s


def zipped_pairs(x):
    l1 = [x * 1.0, x * 2.0]
    l2 = [(x[0], x[1]), (x[1], x[2])]
    s = 0.0
    for r, (a, b) in zip(l1, l2):
        r[0] = a * b
        l2[-1] = (np.sum(r), b)
        s = s + np.sum(r) * a
    return s


def pair_elements_updated_in_place(x):
    pairs = [(x * 1.0, x * 2.0), (x * 3.0, x * 0.5)]
    s = 0.0
    for a, b in pairs:
        a *= 2.0  # the array in pairs
        s = s + np.sum(a * b)
    return s + np.sum(pairs[0][0])


def dict_values_updated_and_rebound(x):
    d = {"u": x * 1.0, "v": x * 2.0}
    s = 0.0
    for v in d.values():
        v *= 3.0
        d["v"] = d["v"] + v
        s = s + np.sum(v)
    return s


def items_and_numbers_in_pairs_updated_in_place(x):
    ys = [x * 1.0, x * 2.0]
    for y, c in [(ys[0], x[0]), (ys[1], x[1])]:  # a number beside each item: the update is passed on by the pair's
        y *= c  # list, not from the number (it was: ys kept the values of the start)
    return np.sum(ys[0]) + np.sum(ys[1] ** 2)


def items_and_numbers_in_a_named_list_of_pairs(x):
    ys = [x * 1.0, x * 2.0]
    pairs = [(ys[0], x[2]), (ys[1], x[2])]
    for y, c in pairs:
        y *= c
    return np.sum(ys[0]) + np.sum(ys[1] ** 2) + np.sum(pairs[1][0])


def items_and_numbers_through_iter(x):
    ys = [x * 1.0, x * 2.0]
    pairs = iter([(ys[0], x[0]), (ys[1], x[0])])
    for y, c in pairs:
        y *= c
    return np.sum(ys[0]) + np.sum(ys[1] ** 2)


CASES = [items_rebound_by_a_helper, values_rebound_in_the_body, values_of_a_constant_dict, items_rebound_by_update,
         keys_of_floats, pairs_rebound, pairs_of_lists_updated, rows_unpacked, enumerated_pairs_rebound,
         items_with_pair_values, zipped_pairs, pair_elements_updated_in_place, dict_values_updated_and_rebound,
         items_and_numbers_in_pairs_updated_in_place, items_and_numbers_in_a_named_list_of_pairs,
         items_and_numbers_through_iter]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_the_loop_reads_the_item_of_now(f):
    """Before, the dict cases returned the value of the start (a rebound value read as the loop began: 2.45 for 4.9),
    the pair cases raised TypeError or were wrong, and the unpacked elements' updates were lost from the gradient
    (`keys_of_floats`, a loop over keys, is the control that was right already)."""
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())

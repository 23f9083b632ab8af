"""Dicts (adjoints/structures/dicts.py): keys read back out of a dict carry their gradient back to what computed them,
each row checked against central finite differences (float64). A float key computed from the input and read back by
iterating the dict used to drop its gradient silently (None)."""
import collections
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient
from zygotepy.runtime.context import current

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


# --- keys: computed from the input, stored, read back out -----------------------------------------------------------

def for_over_dict(x):
    d = {x: 1.0, 2.0: 3.0}
    t = 0.0
    for k in d:
        t = t + k * k
    return t


def over_keys(x):
    d = {x: 1.0}
    t = 0.0
    for k in d.keys():
        t = t + k * 3
    return t


def over_items(x):
    d = {x: 2.0}
    t = 0.0
    for k, v in d.items():
        t = t + k * v
    return t


def list_of_dict(x):
    return list({x: 1.0})[0] * 3


def sorted_dict(x):
    return sorted({x: 1.0, 5.0: 2.0})[0] * 3


def max_of_dict(x):
    return max({x: 1.0, 0.0: 2.0}) * 3


def stored_in_a_loop(x):
    d = {}
    for j in range(2):
        d[x + j] = j
    t = 0.0
    for k in d:
        t = t + k * k
    return t


def comprehension_keys(x):
    d = {x * j: j for j in range(1, 3)}
    return sum(d) * x


def tuple_of_dict(x):
    return tuple({x: 1})[0] * 2


def dict_of_pairs(x):
    d = dict(zip([x, 2.0], [1.0, x]))
    return sum(k * v for k, v in d.items())


def copied(x):
    e = {x: 1.0}.copy()
    return sum(e) * 2


def merged(x):
    e = {**{x: 1.0}, 3.0: 1.0}
    return sum(k * k for k in e)


def updated(x):
    d = {}
    d.update({x: 1.0})
    return sum(d) * 2


def set_default(x):
    d = {}
    d.setdefault(x * x, 1.0)
    return sum(d) * 2


def two_stores_one_key(x):
    d = {x: 1.0}
    e = {x: 2.0}
    return sum(k * v for k, v in d.items()) + sum(k * v for k, v in e.items())


def key_through_two_dicts(x):
    d = {x * 3: 1.0}
    e = {}
    for k in d:
        e[k] = k
    return sum(k * v for k, v in e.items())


def constant_keys(x):
    d = {0.5: 1.0, 1.5: 2.0}
    t = 0.0
    for k, v in d.items():
        t = t + k * v * x
    return t


def constant_keys_in_a_loop(x):
    d = {}
    for j in range(3):
        d[0.5 * j] = x * j
    t = 0.0
    for k in d:
        t = t + k * d[k]
    return t


def central_difference(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


ROWS = [for_over_dict, over_keys, over_items, list_of_dict, sorted_dict, max_of_dict, stored_in_a_loop,
        comprehension_keys, tuple_of_dict, dict_of_pairs, copied, merged, updated, set_default, two_stores_one_key,
        key_through_two_dicts, constant_keys, constant_keys_in_a_loop]


@pytest.mark.parametrize("f", ROWS, ids=lambda f: f.__name__)
def test_matches_finite_differences(f):
    x = 1.3
    (g,) = gradient(f, x)
    expected = central_difference(f, x)
    assert g is not None and g == pytest.approx(expected, rel=1e-6, abs=1e-8)
    assert not current().read_keys  # nothing is left filed once the call returns


def test_keys_of_an_input_dict_have_no_gradient():
    def f(x, d):
        t = 0.0
        for k, v in d.items():
            t = t + k * v * x
        return t
    gx, gd = gradient(f, 2.0, {0.5: 1.0, 1.5: 2.0})
    assert gx == pytest.approx(3.5)
    assert gd == {0.5: 1.0, 1.5: 3.0}


def test_float_dict_keys_carrying_a_gradient_pass_it_on():
    """d[x] = 1 with a differentiated x dropped its gradient (None); it then raised; the key now gets its gradient."""
    def f(x):
        d = {}
        d[x[0]] = 1.0
        return sum(k * v for k, v in d.items())
    agree(f)

    def g(x):
        d = {x[0] * 2: 2.0}
        return sum(k * v for k, v in d.items())
    agree(g)

    def h(x):  # constant float keys are fine
        t = 0.0
        for i in range(2):
            d = {0.5: x[i]}
            d[1.5] = x[i + 1]
            t = t + d[0.5] * d[1.5]
        return t
    agree(h)


def test_fromkeys_sums_the_cotangents_of_its_entries():
    def f(x):
        d = dict.fromkeys(["a", "b", "c"], x * x)
        return d["a"] + 2.0 * d["c"]
    assert gradient(f, 1.5) == (pytest.approx(3 * 2 * 1.5),)


class _Key:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):  # (takes only keys: comparing it with None raises, as in the program that found it)
        return self.n == other.n

    def __hash__(self):
        return hash(self.n)


def test_user_keys_whose_eq_takes_only_keys():
    # (crashed: the backward compared every key with None, `'NoneType' object has no attribute 'n'`)
    def f(x):
        d = {_Key(1): x, _Key(2): x * x}
        d[_Key(1)] = d[_Key(1)] * 3
        return d[_Key(1)] + d[_Key(2)]
    assert gradient(f, 0.7) == (pytest.approx(3.0 + 1.4),)


# --- a float key's gradient through the routes into a dict besides a display and a store ----------------------------

def _from_keys(x):
    return sum(dict.fromkeys([x, 2.0, x * 3.0])) * x


def _update_pairs(x):
    d = {}
    d.update([(x, 1.0), (2.0, x)])
    return sum(d) + d[2.0]


def _union(x):
    return sum({x: 1.0} | {2.0: x, x * 2.0: 1.0})


def _in_place_union(x):
    d = {2.0: 1.0}
    d |= {x: 1.0, 3.0: x}
    return sum(d) * d[3.0]


@pytest.mark.parametrize("f", [_from_keys, _update_pairs, _union, _in_place_union])
def test_a_key_gets_its_gradient_through_fromkeys_update_and_union(f):
    """Each gave None (the key's cotangent was never handed back) for the central difference."""
    for x in (1.5, -0.25):
        h = 1e-6
        want = (f(x + h) - f(x - h)) / (2 * h)
        assert gradient(f, x)[0] == pytest.approx(want, rel=1e-6, abs=1e-8)


# --- a defaultdict's lookup that puts a key carrying a gradient in ---------------------------------------------------

def _counted(x):
    d = collections.defaultdict(float)
    d[x] += 1.0
    d[x * 2.0] = d[x * 2.0] + x
    return sum(k * v for k, v in d.items())


def _constant_keys(x):
    d = collections.defaultdict(float)
    for k in (0.5, 1.5, 0.5):
        d[k] += k * x
    bins = collections.defaultdict(list)
    for k in (0.5, 1.0):
        bins[k].append(x * k)
    return sum(k * v for k, v in d.items()) + sum(sum(v) for v in bins.values())


def _read(x):
    d = collections.defaultdict(lambda: 2.0)
    t = d[x * x]
    return sum(d) * t + x


@pytest.mark.parametrize("f", [_counted, _constant_keys, _read])
def test_a_defaultdicts_key_gets_its_gradient_through_the_store_after_the_lookup(f, mode):
    """`d[x] += 1.0` on a defaultdict: the lookup put the key in, so the store's back took the key for one already
    there and gave it nothing (None for 1.0); the lookup's back hands the key its cotangent where no store under that
    key object follows."""
    for x in (1.5, -0.25):
        h = 1e-6
        want = (f(x + h) - f(x - h)) / (2 * h)
        assert gradient(f, x)[0] == pytest.approx(want, rel=1e-6, abs=1e-8)


def test_a_defaultdicts_key_put_in_by_a_lookup_alone_is_refused(mode):
    """No store follows the lookup, and the value it read gets no cotangent: no back hands the key its cotangent (it
    was None, silently)."""
    def appended(x):
        d = collections.defaultdict(list)
        d[x].append(2.0)
        return sum(k for k in d)

    def unused(x):
        d = collections.defaultdict(float)
        d[x]
        return sum(d)

    for f in (appended, unused):
        with pytest.raises(ZygoteError, match="put in a defaultdict by a lookup"):
            gradient(f, 3.0)

    def stored_yourself(x):
        d = {}
        d.setdefault(x, []).append(2.0)
        return sum(k * len(v) for k, v in d.items())

    assert gradient(stored_yourself, 3.0) == (1.0,)


# --- an OrderedDict: its constructor and its own items/values/keys/copy/update/pop/popitem/move_to_end work as a dict's
# do (they were refused: MissingAdjoint); an array it holds, updated through it, is the dict's item as a plain dict's is
# (the update's gradient was dropped) ----------------------------------------------------------------------------------

def ordered_layers(x):
    layers = collections.OrderedDict()
    layers["l1"] = x[:2] * 1.0
    layers["l2"] = x[2:] * 2.0
    h = 0.0
    for name, w in layers.items():
        h = np.tanh(h + np.sum(w ** 2))
    return h + sum(np.sum(v) for v in layers.values()) + len(list(layers.keys()))


def ordered_items_updated_in_a_loop(x):
    d = collections.OrderedDict()
    d["a"] = x[:2] * 1.0
    d["b"] = x[2:] * 2.0
    for k, v in d.items():
        v *= 0.5
    return np.sum(d["a"] * d["b"])


def ordered_copy_then_an_update(x):
    d = collections.OrderedDict()
    d["a"] = x[:2] * 1.0
    e = d.copy()
    d["a"] += x[2:]
    return np.sum(e["a"] * x[:2])


def ordered_dict_holding_an_array_updated_through_it(x):
    w = x * 1.0
    od = collections.OrderedDict()
    od["a"] = w
    od["a"] *= 2.0
    od["a"][0] = 3.0 * w[1]
    return np.sum(w * w)


def defaultdict_holding_an_array_updated_through_it(x):
    w = x * 1.0
    dd = collections.defaultdict(float)
    dd["a"] = w
    dd["a"] *= 2.0
    return np.sum(w * x) + dd["missing"]


def ordered_from_pairs_and_keywords(x):
    od = collections.OrderedDict([("a", x[:2] * 2.0), ("b", x[2:] ** 2)], c=x[0] * x)
    return np.sum(od["a"] * od["b"]) + np.sum(od["c"])


def ordered_updated_and_popped(x):
    od = collections.OrderedDict()
    od.update({"a": x[:2] * 2.0}, b=x[2:] ** 3)
    od.update([("c", x * 0.5)])
    od.setdefault("d", x[1] * x)
    first_key, first = od.popitem(last=False)
    _, last = od.popitem()
    _, mid = od.popitem(True)
    return np.sum(first) * np.sum(mid * last) + np.sum(od.pop("b"))


def ordered_moved_then_read_in_order(x):
    od = collections.OrderedDict(a=x[:2] * 1.0, b=x[2:] * 3.0)
    od.move_to_end("a")
    od.move_to_end("b", last=False)
    head, tail = list(od.values())
    od.clear()
    od["z"] = head * 2.0
    return np.sum(head * tail ** 2) + np.sum(od["z"])


@pytest.mark.parametrize("f", [ordered_layers, ordered_items_updated_in_a_loop, ordered_copy_then_an_update,
                               ordered_dict_holding_an_array_updated_through_it,
                               defaultdict_holding_an_array_updated_through_it, ordered_from_pairs_and_keywords,
                               ordered_updated_and_popped, ordered_moved_then_read_in_order],
                         ids=lambda f: f.__name__)
def test_an_ordered_dict_matches_finite_differences(f, mode):
    agree_at(f, X)

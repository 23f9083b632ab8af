"""One expression that reads an object and then, further right, calls something that updates it in place: Python
evaluates left to right, so a value read first is the object itself (a method returning `self`, a list, an array),
which the later update changes too. Each value an expression holds while it evaluates the rest is refreshed by such an
update as a named variable is (lower/expressions.py `in_order`); before, the first entry kept a stale version, and
`[a.add(x), a.add(y)]` then an update through the first entry gave y's gradient as None. Checked with every
optimisation on and off against central differences in float64."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central  # noqa: E402


class Acc:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v
        return self

    def scale(self, c):
        self.total = self.total * c
        return self.total

    def get(self):
        return self.total


def list_of_two_chained_calls_then_update_first(x, y):
    a = Acc()
    chain = [a.add(x), a.add(y)]
    chain[0].total = chain[0].total * 2.0
    return a.total * 3.0


def object_then_its_update(x, y):
    a = Acc()
    a.add(x)
    pair = [a, a.add(y)]
    return pair[0].total * pair[1].total


def tuple_of_chained_calls(x, y):
    a = Acc()
    t = (a.add(x), a.add(y))
    return t[0].total ** 2


def dict_of_chained_calls(x, y):
    a = Acc()
    d = {"p": a.add(x), "q": a.add(y)}
    return d["p"].total * 2.0 + x


def list_then_its_append(x, y):
    lst = [x]
    out = [lst, lst.append(y)]
    return sum(out[0]) * 2.0


def array_then_written_by_out(x, y):
    v = np.array([x, y])
    s = np.stack([v, np.multiply(v, 2.0, out=v)])
    return np.sum(s * np.array([[1.0, 2.0], [3.0, 5.0]]))


def list_item_times_pop(x, y):
    lst = [x, y]
    return lst[1] * lst.pop() + sum(lst)


def chained_call_in_a_conditional_arm(x, y):
    a = Acc()
    r = [a.add(x), a.add(y) if x > 0 else a.add(2.0 * y)]
    return r[0].total ** 2


def value_read_then_scaled(x, y):
    a = Acc()
    return a.add(x).total * a.scale(y) + a.total


def dict_item_then_its_append(x, y):
    d = {"k": [x]}
    m = (d["k"], d["k"].append(y * 3.0))
    return sum(m[0]) ** 2


def object_before_three_updates(x, y):
    a = Acc()
    t = [a, a.add(x), a.add(y), a.scale(2.0)]
    return t[0].total * t[3]


def array_then_sorted_in_place(x, y):
    w = np.array([x, y, x * y])
    stats = (w, w.sort(), w[0])
    return float(stats[0][2]) * 2.0 + stats[2]


def receiver_then_argument_updates_it(x, y):
    a = Acc()
    return a.add(x).add(a.get() * y).total


def numbers_read_before_the_update(x, y):
    a = Acc()
    return a.add(x).get() * a.add(y).get() + max(a.total, 0.0)


def comprehension_updating_an_earlier_entry(x, y):
    a = Acc()
    r = [a.add(x), [a.add(y).total for _ in range(2)], a.total]  # (the loop a comprehension is carries the entry)
    return r[0].total * 2.0 + sum(r[1]) + r[2]


@pytest.mark.parametrize("f", [
    comprehension_updating_an_earlier_entry, list_of_two_chained_calls_then_update_first, object_then_its_update, tuple_of_chained_calls,
    dict_of_chained_calls, list_then_its_append, array_then_written_by_out, list_item_times_pop,
    chained_call_in_a_conditional_arm, value_read_then_scaled, dict_item_then_its_append, object_before_three_updates,
    array_then_sorted_in_place, receiver_then_argument_updates_it, numbers_read_before_the_update,
], ids=lambda f: f.__name__)
@pytest.mark.parametrize("args", [(1.5, 2.5), (-0.7, 1.3)], ids=["positive", "negative"])
def test_a_value_read_before_an_update_to_its_right_sees_it(f, args, mode):
    value, grads = value_and_gradient(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-13)
    for k in range(2):
        assert grads[k] is not None
        assert float(grads[k]) == pytest.approx(float(central(f, args, k)), rel=1e-6, abs=1e-8)

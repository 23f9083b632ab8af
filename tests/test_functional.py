"""End to end: functools.reduce, math.prod, itertools, `operator.itemgetter` / `attrgetter` (which raised
MissingAdjoint: rules for calling their objects, adjoints/functional.py) and `.item()` inside differentiated code, and helpers that
append the items of an argument to a new list (which raised: the transform cannot tell `out.append(row)` from a call
that updates `row`), against central finite differences."""
import functools
import itertools
import math
import operator

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient
from zygotepy.testing import check_grads


def running_products(seq):
    out = []
    for item in seq:
        if out:
            item = out[-1] * item
        out.append(item)
    return out


def collect(rows):
    out = []
    for row in rows:
        out.append(row)
    return out


def collect_then_update(X):
    out = []
    for row in X:
        out.append(row)
        row[0] = 3.0 * row[1]  # after the append: the list holds the updated row, and so does X
    return np.sum(np.stack(out) ** 2) + np.sum(X)


class Bag:
    """A user class whose `append` updates its argument too (unlike list.append)."""

    def __init__(self):
        self.items = []

    def append(self, v):
        v[0] = v[0] * 2.0
        self.items.append(v)


def fills_bag(x):
    bag = Bag()
    row = x * 1.0
    bag.append(row)
    return np.sum(row * x) + np.sum(bag.items[0])


class Pair:
    def __init__(self, u, v):
        self.u, self.v = u, v

    def scaled(self, k, p=1.0):
        return self.u * k * p


def weighted(xs, w):
    return functools.reduce(lambda acc, v: acc * w + v, xs, 0.5)


CASES = [
    ("reduce_mul", lambda xs: functools.reduce(operator.mul, xs), ([1.2, -0.7, 2.0],)),
    ("reduce_closure_initial", weighted, ([1.2, -0.7, 2.0], 0.8)),
    ("reduce_arrays", lambda v: np.sum(functools.reduce(np.multiply, [v, v * 2.0, np.sin(v)])), (np.array([0.3, 1.1]),)),
    ("math_prod", lambda xs: math.prod(xs) + math.prod(x * x for x in xs), ([1.2, -0.7, 2.0],)),
    ("accumulate", lambda xs: sum(v * v for v in itertools.accumulate(xs)), ([1.2, -0.7, 2.0],)),
    ("accumulate_max", lambda xs: sum(itertools.accumulate(xs, max)), ([1.2, -0.7, 2.0],)),
    ("accumulate_func_by_keyword", lambda xs: sum(itertools.accumulate(xs, func=operator.mul)), ([1.2, -0.7, 2.0],)),
    ("accumulate_initial", lambda xs: sum(itertools.accumulate(xs, operator.mul, initial=2)), ([1.2, -0.7, 2.0],)),
    ("accumulate_initial_differentiated", lambda xs, c: sum(itertools.accumulate(xs, operator.mul, initial=c)),
     ((1.2, -0.7, 2.0), 1.3)),
    ("chain", lambda a, b: sum(v * i for i, v in enumerate(itertools.chain(a, b, a))), ([1.0, 2.0], (3.0,))),
    ("chain_from_iterable", lambda rows: sum(v * v for v in itertools.chain.from_iterable(rows)),
     ([[1.0, 2.0], [3.0]],)),
    ("starmap", lambda a, b: sum(itertools.starmap(math.atan2, zip(a, b))), ([1.0, 2.0], [0.5, -0.3])),
    ("product", lambda xs, ys: sum(x * y * y for x, y in itertools.product(xs, ys)), ([1.0, 2.0], [0.5, -0.3, 0.2])),
    ("product_repeat", lambda xs: sum(a * b * b for a, b in itertools.product(xs, repeat=2)), ([1.0, 2.0, -0.4],)),
    ("item_of_scalar", lambda v: np.sum(v * v).item() * 3.0, (np.array([1.0, 2.0]),)),
    ("item_at", lambda m: m.item(1, 0) * m.item((0, 1)) + m.item(-1), (np.arange(1.0, 7.0).reshape(2, 3),)),
    ("helper_appends_items", lambda xs: sum(v * v for v in collect(xs)), ([1.0, 2.0, 3.0],)),
    ("helper_running_products", lambda xs: sum(running_products(xs)), ([1.0, 2.0, 3.0],)),
    ("helper_collects_array_rows", lambda X: np.sum(np.stack(collect(X)) ** 2), (np.arange(6.0).reshape(3, 2),)),
    ("helper_collects_arrays", lambda rows: sum(np.sum(r * r) for r in collect(rows)), ([np.ones(2), np.arange(2.0)],)),
    ("collect_then_update", collect_then_update, (np.arange(6.0).reshape(3, 2),)),
    ("user_append_updates_its_argument", fills_bag, (np.array([1.0, 2.0]),)),
    ("itemgetter_items", lambda v: operator.itemgetter(0, 2)(v * v)[1] * v[1], (np.array([1.0, 2.0, 3.0]),)),
    ("itemgetter_sort_key", lambda xs: sum(r[1] * r[0] for r in sorted(zip(xs, xs[::-1]), key=operator.itemgetter(1))),
     ([1.0, 2.5, -0.5],)),
    ("itemgetter_key_of_a_dict", lambda a, b: operator.itemgetter("w")({"w": a * b, "v": a}) ** 2, (1.5, 0.7)),
    ("attrgetter_dotted", lambda a, b: math.prod(operator.attrgetter("u", "v.v")(Pair(a, Pair(b, a * b)))), (1.5, 0.7)),
    ("methodcaller_array", lambda v: operator.methodcaller("sum")(v * v) * v[0], (np.array([1.0, 2.0, 3.0]),)),
    ("methodcaller_keywords", lambda a, b: operator.methodcaller("scaled", 3.0, p=2.0)(Pair(a * b, b)), (1.5, 0.7)),
    ("methodcaller_as_key", lambda xs: sum(p.u for p in sorted([Pair(v * v, v) for v in xs],
                                                               key=operator.methodcaller("scaled", -1.0))),
     ([1.0, 2.5, -0.5],)),
]


@pytest.mark.parametrize("fn, args", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_against_finite_differences(fn, args):
    grads = check_grads(fn, *args)
    assert all(g is not None for g in grads)


def test_accumulate_with_initial_over_an_array_gives_an_array():
    (g,) = gradient(lambda x: sum(itertools.accumulate(x, initial=0.5)), np.array([0.5, -1.3, 0.8]))
    assert type(g) is np.ndarray and np.array_equal(g, [3.0, 2.0, 1.0])  # (it was a list: `x -= lr * g` failed)


def test_running_products_closed_form():
    assert gradient(lambda xs: sum(running_products(xs)), [1.0, 2.0, 3.0]) == ([9.0, 4.0, 2.0],)


def test_math_prod_start_gets_its_gradient():
    assert gradient(lambda s: math.prod([1.5, 2.0], start=s), 2.0) == (3.0,)
    check_grads(lambda x, s: math.prod([x, x * x], start=s), 1.3, 0.7)


def test_methodcaller_of_an_updating_method_is_refused():
    # (the update of the list was unseen: its later reads missed the appended item's gradient)
    def f(x):
        items = [x]
        operator.methodcaller("append", 2.0)(items)
        return sum(items)
    with pytest.raises(ZygoteError, match=r"methodcaller\('append', \.\.\.\)"):
        gradient(f, 1.5)

"""An object that is an item of a container (`o = todo[0]`, the neighbours `zip(order, order[1:])` walks), updated in
place, is no cycle of references: the object does not hold the container, it is held by it. It was refused as "a
cycle of references (a parent pointer)" where the object, or a copy of the list, held the container's items
(adjoints/mutation/links.py `_put_held` counted holding the items as holding the container). Real parent pointers are
still refused (test_parent_cycles.py). Checked against one plain call and central differences."""
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


class Item:
    def __init__(self, w):
        self.w = w
        self.vel = 0.1


def an_item_through_a_join(x):
    objs = [Item(x[0]), Item(x[1])]
    todo = list(objs)
    o = todo[0]
    if isinstance(o, tuple):
        o = o[1]
    o.w = o.w * 5.0
    return objs[0].w + objs[1].w * objs[0].w


def neighbours_of_a_sorted_list(x):
    ps = [Item(v) for v in x]
    order = sorted(ps, key=lambda p: p.w)
    for a, b in zip(order, order[1:]):
        a.vel = a.vel - b.w
        b.vel = b.vel + a.w * a.w
    return sum(p.vel * p.w for p in ps)


def arrays_of_neighbours_updated(x):
    ps = [Item(x * (k + 1.0)) for k in range(4)]
    for a, b in zip(ps, ps[1:]):
        a.w *= 0.5
        b.w += a.w
    return sum(np.sum(p.w ** 2) for p in ps)


def items_of_a_copy_updated_in_a_loop(x):
    ps = [Item(x * (k + 1.0)) for k in range(3)]
    work = ps[:]
    for p in work:
        p.w *= x[0]
    return sum(np.sum(p.w * p.w) for p in ps)


CASES = [an_item_through_a_join, neighbours_of_a_sorted_list, arrays_of_neighbours_updated,
         items_of_a_copy_updated_in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_an_item_updated_in_place_is_no_cycle(f, mode):
    x = np.array([0.3, -0.2, 0.9, 0.5])
    value, (g,) = value_and_gradient(f, x.copy())
    assert value == pytest.approx(f(x.copy()), rel=1e-12)
    np.testing.assert_allclose(g, central(f, (x,), 0), rtol=1e-6, atol=1e-8)

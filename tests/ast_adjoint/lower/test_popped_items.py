"""An item taken out of a container by a call that gives it back (`list.pop`, `dict.pop`, `dict.popitem`,
`deque.pop/popleft`, `heapq.heappop/heapreplace`), often by unpacking what it gives (`_, _, o = heapq.heappop(h)`),
then updated in place (`o.w = o.w * 5`, `r *= 5`, `r[0] = ...`) and read back through another container or name that
holds the same object. The call's links tied the item to the container it left, where an update of it is no longer
found at run time, so its factor was lost (the gradient 1 for 5). What the container held is linked to the item now
(lower/lineage.py `note_taken_out`). Checked against central differences with every optimisation on and off."""
import collections
import heapq
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


class Node:
    def __init__(self, w, kids=()):
        self.w = w
        self.kids = list(kids)


def popped_object(a, b):
    objs = [Item(a), Item(b)]
    todo = [objs[0], objs[1]]
    o = todo.pop(0)
    o.w = o.w * 5.0
    return objs[0].w + objs[1].w


def popped_object_augmented(a, b):
    o1, o2 = Item(a), Item(b)
    todo = [o1, o2]
    o = todo.pop()
    o.w *= 5.0
    return o1.w * o2.w


def popped_from_a_slice_copy(a, b, c):
    objs = [Item(a), Item(b), Item(c)]
    todo = objs[:]
    todo.sort(key=lambda o: o.w)
    o = todo.pop()
    o.w = o.w * 5.0
    return sum(p.w for p in objs)


def popped_then_the_other_holder_updated(a, b):
    objs = [Item(a), Item(b)]
    todo = [objs[0], objs[1]]
    o = todo.pop(0)
    objs[0].w = objs[0].w * 5.0
    return o.w + objs[1].w


def dict_pop(a, b):
    objs = [Item(a), Item(b)]
    d = {0: objs[0], 1: objs[1]}
    o = d.pop(1)
    o.w = o.w * 5.0
    return objs[0].w + objs[1].w


def dict_popitem_unpacked(a, b):
    objs = [Item(a), Item(b)]
    d = {"x": objs[0], "y": objs[1]}
    _, o = d.popitem()
    o.w = o.w * 5.0
    return objs[0].w + objs[1].w * a


def heap_of_tuples_unpacked(a, b):
    objs = [Item(a), Item(b)]
    h = []
    for i, o in enumerate(objs):
        heapq.heappush(h, (o.w, i, o))
    _, _, top = heapq.heappop(h)
    top.w = top.w * 5.0
    return objs[0].w + objs[1].w


def heapified_comprehension_indexed(a, b):
    objs = [Item(a), Item(b)]
    h = [(o.w, i, o) for i, o in enumerate(objs)]
    heapq.heapify(h)
    top = heapq.heappop(h)[2]
    top.w = top.w * 5.0
    return objs[0].w + objs[1].w


def list_of_tuples_popped_unpacked(a, b):
    objs = [Item(a), Item(b)]
    h = [(o.w, i, o) for i, o in enumerate(objs)]
    _, _, top = h.pop(0)
    top.w = top.w * 5.0
    return objs[0].w + objs[1].w


def heapreplace_given_back(a, b):
    objs = [Item(a), Item(b)]
    h = [(objs[0].w, 0, objs[0]), (objs[1].w, 1, objs[1])]
    heapq.heapify(h)
    out = heapq.heapreplace(h, (0.0, 2, Item(a * b)))
    out[2].w = out[2].w * 5.0
    return objs[0].w + objs[1].w + h[0][2].w


def heap_drained_in_a_loop(a, b, c):
    objs = [Item(a), Item(b), Item(c)]
    todo = [(o.w, i, o) for i, o in enumerate(objs)]
    heapq.heapify(todo)
    total = 0.0
    while todo:
        _, i, o = heapq.heappop(todo)
        o.w = o.w * (i + 2.0)
        total = total + o.w
    return total + objs[0].w + objs[1].w * objs[2].w


def stack_drained_in_a_loop(a, b, c):
    objs = [Item(a), Item(b), Item(c)]
    todo = [objs[0], objs[1], objs[2]]
    while todo:
        o = todo.pop()
        o.w = o.w * 3.0
    return objs[0].w + objs[1].w * objs[2].w


def requeued_in_a_loop(a, b):
    objs = [Item(a), Item(b)]
    todo = [objs[0], objs[1]]
    for _ in range(3):
        o = todo.pop(0)
        o.w = o.w * 2.0
        todo.append(o)
    return objs[0].w + objs[1].w * objs[0].w


def tree_walked_breadth_first(a, b, c):
    leaves = [Node(b), Node(c)]
    root = Node(a, leaves)
    q = [root]
    while q:
        n = q.pop(0)
        n.w = n.w * 2.0
        for k in n.kids:
            q.append(k)
    return root.w + leaves[0].w * leaves[1].w


def array_unpacked_from_a_popped_tuple(x):
    arr = x * 1.0
    queue = [(1, arr)]
    _, r = queue.pop()
    r *= 5.0
    return np.sum(arr * x)


def array_popped_from_subscripts(x):
    arrs = [x * 1.0, x * 2.0]
    todo = [arrs[0], arrs[1]]
    r = todo.pop(0)
    r *= 5.0
    return np.sum(arrs[0]) + np.sum(arrs[1] * x)


def array_item_stored_after_dict_pop(x):
    arrs = [x * 1.0, x * 2.0]
    d = {"a": arrs[0], "b": arrs[1]}
    r = d.pop("b")
    r[0] = r[0] * 5.0
    return np.sum(arrs[0]) + np.sum(arrs[1] * x)


def array_of_a_heap_updated(x):
    h = []
    arrs = [x * 1.0, x * 2.0]
    for i, r in enumerate(arrs):
        heapq.heappush(h, (float(r.sum()), i, r))
    _, _, top = heapq.heappop(h)
    top *= 5.0
    return np.sum(arrs[0]) + np.sum(arrs[1] * x)


def deque_popleft(x):
    arrs = [x * 1.0, x * 2.0]
    q = collections.deque([arrs[0], arrs[1]])
    r = q.popleft()
    r *= 5.0
    return np.sum(arrs[0]) + np.sum(arrs[1] * x)


def deque_pop_unpacked(x):
    arrs = [x * 1.0, x * 2.0]
    q = collections.deque([(0, arrs[0]), (1, arrs[1])])
    _, r = q.pop()
    r *= 5.0
    return np.sum(arrs[0]) + np.sum(arrs[1] * x)


def list_popped_from_a_list(xs):
    inner = [xs[0], xs[1]]
    outer = [inner]
    todo = [outer[0]]
    r = todo.pop()
    r[0] = r[0] * 5.0
    return outer[0][0] + inner[1]


def arrays_stacked_then_drained(x):
    arrs = [x * 1.0, x * 2.0, x * 3.0]
    stack = []
    for r in arrs:
        stack.append(r)
    out = 0.0
    while stack:
        r = stack.pop()
        r *= 2.0
        out = out + np.sum(r * x)
    return out + np.sum(arrs[0] * arrs[2])


def popped_from_a_copy_of_a_nested_list(a, b):
    box = {"items": [Item(a), Item(b)]}
    q = list(box["items"])
    o = q.pop()
    o.w = o.w * 3.0
    return box["items"][1].w + box["items"][0].w


class Linked:
    def __init__(self, w, parent=None):
        self.w = w
        self.parent = parent
        self.kids = []
        if parent is not None:
            parent.kids.append(self)


# the forms that already worked, kept beside them
def tree_with_parent_pointers_walked_depth_first(a, b, c):
    root = Linked(a)
    Linked(b, root)
    Linked(c, root)
    q = [root]
    total = 0.0
    while q:
        n = q.pop()
        total = total + n.w * n.w
        q.extend(n.kids)
    return total


def popped_from_a_list_copy(a, b):
    objs = [Item(a), Item(b)]
    todo = list(objs)
    o = todo.pop(0)
    o.w = o.w * 5.0
    return objs[0].w + objs[1].w


def popped_tuple_indexed_by_name(a, b):
    o1, o2 = Item(a), Item(b)
    h = [(0, o1), (1, o2)]
    t = h.pop(0)
    o = t[1]
    o.w = o.w * 5.0
    return o1.w + o2.w


def read_by_index(a, b):
    objs = [Item(a), Item(b)]
    todo = [objs[0], objs[1]]
    o = todo[0]
    o.w = o.w * 5.0
    return objs[0].w + objs[1].w


P, Q, R = 0.3, 0.7, 0.5
V = np.array([0.3, 0.7])
CASES = [
    (popped_object, (P, Q)),
    (popped_object_augmented, (P, Q)),
    (popped_from_a_slice_copy, (P, Q, R)),
    (popped_then_the_other_holder_updated, (P, Q)),
    (dict_pop, (P, Q)),
    (dict_popitem_unpacked, (P, Q)),
    (heap_of_tuples_unpacked, (P, Q)),
    (heapified_comprehension_indexed, (P, Q)),
    (list_of_tuples_popped_unpacked, (P, Q)),
    (heapreplace_given_back, (P, Q)),
    (heap_drained_in_a_loop, (P, Q, R)),
    (stack_drained_in_a_loop, (P, Q, R)),
    (requeued_in_a_loop, (P, Q)),
    (tree_walked_breadth_first, (P, Q, R)),
    (array_unpacked_from_a_popped_tuple, (V,)),
    (array_popped_from_subscripts, (V,)),
    (array_item_stored_after_dict_pop, (V,)),
    (array_of_a_heap_updated, (V,)),
    (deque_popleft, (V,)),
    (deque_pop_unpacked, (V,)),
    (list_popped_from_a_list, (V,)),
    (arrays_stacked_then_drained, (V,)),
    (popped_from_a_copy_of_a_nested_list, (P, Q)),
    (tree_with_parent_pointers_walked_depth_first, (P, Q, R)),
    (popped_from_a_list_copy, (P, Q)),
    (popped_tuple_indexed_by_name, (P, Q)),
    (read_by_index, (P, Q)),
]


def _fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_an_item_taken_out_then_updated_reaches_its_other_holders(mode, f, args):
    value, grads = value_and_gradient(f, *_fresh(args))
    assert value == pytest.approx(f(*_fresh(args)), rel=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-6, atol=1e-7, err_msg=f"argument {k}")

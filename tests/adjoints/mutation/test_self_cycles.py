"""Objects that hold themselves (`a.me = a`, `a.nb = b` beside `b.nb = a`), also through lists and tuples (`a.bonds =
[(b, w)]` beside `b.bonds = [(a, w)]`, `a.kids = [a]`, a doubly linked list, a parent whose `__init__`-made child
appends itself to its list): a store into one of their fields, then a read through the cycle, reads the stored value
(adjoints/mutation/self_cycles.py); each gradient agrees with central differences."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central, line_of  # noqa: E402


class Cell:
    def __init__(self, value):
        self.value = value


def held_by_itself(x, y):
    a = Cell(x)
    a.me = a
    a.value = a.value * 3.0
    return a.me.value ** 2 + y


def held_by_each_other(x, y):
    a, b = Cell(x), Cell(y)
    a.nb = b
    b.nb = a
    a.value = a.value + a.nb.value
    b.value = b.value * a.value
    return a.nb.nb.value + b.nb.nb.value * a.value


def a_dict_holding_itself(x, y):
    node = {"v": x}
    node["me"] = node
    node["v"] = node["v"] * 3.0
    return node["me"]["v"] ** 2 + y


def dicts_holding_each_other(x, y):
    a = {"v": x}
    b = {"v": y, "o": a}
    a["o"] = b
    a["v"] = a["v"] * 3.0
    b["v"] = b["v"] * a["o"]["o"]["v"]
    return b["o"]["v"] ** 2 + a["o"]["v"]


class Body:
    def __init__(self, p):
        self.p = p
        self.bonds = []


def bonded_through_tuples(x, y):
    a, b = Body(x), Body(y)
    a.bonds.append((b, 1.0))
    b.bonds.append((a, 1.0))
    for o in (a, b):
        o.p = o.p * 3.0
    return sum(c.bonds[0][0].p ** 2 for c in (a, b))


def held_in_its_own_list(x, y):
    a = Body(x)
    a.bonds.append(a)
    a.p = a.p * 3.0
    return a.bonds[0].p ** 2 + y


def neighbours_in_lists(x, y):
    a, b, c = Body(x), Body(y), Body(x * y)
    a.bonds = [b, c]
    b.bonds = [a]
    c.bonds = [a]
    for n in [a, b, c]:
        n.p = n.p + sum(m.p for m in n.bonds)
    return a.p ** 2 + b.p ** 2 + c.p ** 2


class Linked:
    def __init__(self, v, parent=None):
        self.v = v
        self.prev = self.next = None
        self.parent = parent
        self.kids = []
        if parent is not None:
            parent.kids.append(self)


def chain_of(values):
    head = tail = Linked(values[0])
    for v in values[1:]:
        n = Linked(v)
        n.prev = tail
        tail.next = n
        tail = n
    return head, tail


def doubly_linked_walked_back(x, y):
    head, tail = chain_of([x, y, x + y, x * y, 2.0 * y])
    head.next.v = head.next.v * 3.0
    n, s = tail, 0.0
    while n is not None:
        s = s + n.v * n.v
        n = n.prev
    return s


def child_appends_itself_in_init(x, y):
    r = Linked(x)
    k = Linked(y, r)
    k.v = k.v * 2.0
    return r.kids[0].v ** 2 + r.v


@pytest.mark.parametrize("f", [held_by_itself, held_by_each_other, a_dict_holding_itself, dicts_holding_each_other,
                               bonded_through_tuples, held_in_its_own_list, neighbours_in_lists,
                               doubly_linked_walked_back, child_appends_itself_in_init], ids=lambda f: f.__name__)
def test_a_store_into_an_object_that_holds_itself_reaches_reads_around_the_cycle(f, mode):
    args = (0.7, 1.3)
    grads = gradient(f, *args)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-6, atol=1e-8)


def a_list_appended_to_itself(x, y):
    lst = [x]
    lst.append(lst)  # refused
    lst[0] = lst[0] * 3.0
    return lst[1][0] ** 2 + y


def a_list_inserted_into_itself(x, y):
    lst = [x, y]
    lst.insert(0, lst)  # refused
    return lst[0][1] * x


@pytest.mark.parametrize("f", [a_list_appended_to_itself, a_list_inserted_into_itself], ids=lambda f: f.__name__)
def test_a_list_put_into_itself_is_refused_naming_the_line(f, mode):
    """(its cotangent would hold itself at every depth: the backward crashed with a ValueError)"""
    line = line_of(f, "refused")
    with pytest.raises(ZygoteError, match=rf"test_self_cycles\.py:{line}: .*list put into itself"):
        gradient(f, 0.7, 1.3)

"""`for n in reversed(nodes): n.value = ...` (or `iter(nodes)`) updates a field of each item, which the links log as an
update of `nodes`, the list holding it: the watch of the lazy iterator (lazy_watch.py) took that for an update of the
list the iterator walks and refused ("body updates 'nodes' in place through a call"), though `reversed` and `iter`
give the objects the slots hold, the same in Python as in zygotepy's list of them taken when the loop began. Such a
source is now watched by its slots: a change of what they hold, or of the length, is still refused."""
import numpy as np
import pytest

from plain_checks import central, line_of
from zygotepy import UnsupportedSyntax, value_and_gradient


class Node:
    def __init__(self, value):
        self.value = value
        self.kids = []


def bump(n, s):
    n.value = n.value * s


def sums_of_kids(x):
    nodes = [Node(x[0]), Node(x[1]), Node(x[2])]
    nodes[0].kids = [nodes[1], nodes[2]]
    for n in reversed(nodes):
        n.value = n.value + sum(k.value for k in n.kids)
    return nodes[0].value ** 2


def chain_reads_updated_kids(x):
    nodes = [Node(x[0]), Node(x[1]), Node(x[2])]
    nodes[0].kids = [nodes[1]]
    nodes[1].kids = [nodes[2]]
    for n in reversed(nodes):
        n.value = n.value * 1.5 + sum(k.value * k.value for k in n.kids)
    return nodes[0].value ** 2 + nodes[2].value


def fields_through_a_helper(x):
    nodes = [Node(x[0]), Node(x[1]), Node(x[2])]
    for n in reversed(nodes):
        bump(n, x[1])
    return nodes[0].value * nodes[2].value


def iter_of_nodes(x):
    nodes = [Node(x[0]), Node(x[1])]
    nodes[1].kids = [nodes[0]]
    for n in iter(nodes):
        n.value = n.value * x[1] + sum(k.value for k in n.kids)
    return nodes[1].value


def rows_of_a_list(x):
    rows = [[x[0], x[1]], [x[2], x[0]]]
    for r in reversed(rows):
        r[0] = r[0] * r[1] + sum(v for v in r)
    return rows[0][0] * rows[1][0]


def mapped_before_the_updates(x):
    nodes = [Node(x[0]), Node(x[1]), Node(x[2])]
    nodes[0].kids = [nodes[1], nodes[2]]
    out = 0.0
    for v in map(lambda n: n.value, reversed(nodes)):
        out = out + v
    for n in reversed(nodes):
        n.value = n.value + sum(k.value for k in n.kids)
    return out + nodes[0].value


CASES = [sums_of_kids, chain_reads_updated_kids, fields_through_a_helper, iter_of_nodes, rows_of_a_list,
         mapped_before_the_updates]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_updates_of_the_items_of_a_reversed_list_are_followed(f, mode):
    x = np.array([0.3, 0.7, 1.1])
    value, (grad,) = value_and_gradient(f, x.copy())
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, central(f, (x,), 0), rtol=1e-6, atol=1e-6)


def swap(lst):
    lst[0], lst[1] = lst[1], lst[0]


def slots_swapped_by_a_helper(x):
    nodes = [Node(x[0]), Node(x[1]), Node(x[2])]
    out = 0.0
    for n in reversed(nodes):  # swaps while walking
        out = out * 2.0 + n.value
        swap(nodes)
    return out


def grow(lst, v):
    lst.append(Node(v))


def grown_by_a_helper(x):
    nodes = [Node(x[0]), Node(x[1])]
    out = 0.0
    for n in iter(nodes):  # grows while walking
        out = out + n.value
        if len(nodes) < 4:
            grow(nodes, out)
    return out


def value_read_by_map(x):
    nodes = [Node(x[0]), Node(x[1]), Node(x[2])]
    out = 0.0
    for v in map(lambda n: n.value * 2.0, reversed(nodes)):  # maps while walking
        out = out + v
        bump(nodes[0], 3.0)
    return out


@pytest.mark.parametrize("f", [slots_swapped_by_a_helper, grown_by_a_helper, value_read_by_map],
                         ids=lambda f: f.__name__)
def test_a_change_of_the_slots_or_a_mapped_item_is_still_refused(f, mode):
    line = line_of(f, "while walking")
    with pytest.raises(UnsupportedSyntax, match=rf"test_reversed_item_fields.py:{line}: .*a loop over a lazy "
                                                rf"iterator of 'nodes' whose body updates 'nodes' in place"):
        value_and_gradient(f, np.array([0.3, 0.7, 1.1]))

"""Updates in place of an object deep inside a structure that also holds it another way (a flat list beside a tree
of nested lists, a chain of objects): the searches by identity (held.py, `SEARCH_DEPTH`) reach it, where they stopped
at 8 steps (4 levels of `[value, children]` nodes) and the update's cotangent was lost silently."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central  # noqa: E402


def nested_lists_updated_through_a_flat_list(x):
    nodes = [[x[0], []]]
    for v in x[1:]:
        c = [v, []]
        nodes[-1][1].append(c)
        nodes.append(c)
    nodes[-1][0] = nodes[-1][0] * 2.0

    def total(n):
        return n[0] + sum(total(c) for c in n[1])
    return total(nodes[0])


class T:
    def __init__(self, v):
        self.v = v
        self.kids = []


def chain_updated_through_a_flat_list(x):
    r = T(x[0])
    cur, nodes = r, [r]
    for v in x[1:]:
        c = T(v)
        cur.kids.append(c)
        cur = c
        nodes.append(c)
    for n in nodes:
        n.v = n.v * 2.0
    n, s = r, r.v
    while n.kids:
        n = n.kids[0]
        s = s + n.v * n.v
    return s


@pytest.mark.parametrize("levels", [6, 9])
@pytest.mark.parametrize("f", [nested_lists_updated_through_a_flat_list, chain_updated_through_a_flat_list],
                         ids=lambda f: f.__name__)
def test_an_update_deep_in_a_structure_reaches_its_reads(f, levels, mode):
    x = [0.5 + 0.1 * i for i in range(levels)]
    np.testing.assert_allclose(gradient(f, x)[0], central(f, (np.array(x),), 0), rtol=1e-6, atol=1e-8)

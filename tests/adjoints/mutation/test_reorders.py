"""heapq's routines and bisect.insort on lists whose items carry gradients (adjoints/mutation/reorders.py): the
permutation they make of the items, found by running them on stand-ins that compare as the items do. They were
refused ("cannot differentiate heappop, which updates its argument in place"), even on a heap of constant floats.
Checked against one plain call and central differences in float64."""
import bisect
import heapq
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central  # noqa: E402

EDGES = {0: [(1, 0), (2, 1)], 1: [(2, 2), (3, 3)], 2: [(3, 4)], 3: []}  # node -> [(next node, weight index)]


def dijkstra(w):
    dist = {0: 0.0}
    heap = [(0.0, 0)]
    done = set()
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v, k in EDGES[u]:
            nd = d + w[k] * w[k]
            if v not in dist or nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return dist[3]


def heap_of_floats(w):
    h = [w[0] * 2.0, w[1], w[2] + 1.0, 3.0, w[3] * w[4]]
    heapq.heapify(h)
    a = heapq.heappop(h)
    b = heapq.heappushpop(h, w[1] * 0.5)
    c = heapq.heapreplace(h, w[4])
    return a + 2.0 * b + 3.0 * c + sum(h[k] * (k + 1) for k in range(len(h)))


def constant_heap(w):
    h = [1.0, 2.0, 3.0]
    heapq.heappush(h, 0.5)
    return w[0] * heapq.heappop(h) + w[1] * h[0]


def insorted(w):
    xs = sorted([w[0], w[1] * 2.0, 1.5])
    bisect.insort(xs, w[2])
    bisect.insort_left(xs, w[3] - 1.0)
    return sum(xs[k] * (k + 1.0) for k in range(len(xs)))


def insorted_by_key(w):
    xs = [(w[0], "a"), (w[1] + 1.0, "b")]
    bisect.insort(xs, (w[2], "c"), key=lambda p: p[0])
    return xs[0][0] + 2.0 * xs[1][0] + 3.0 * xs[2][0]


W = np.array([0.9, 1.3, 0.4, 1.1, 0.7])


@pytest.mark.parametrize("f", [dijkstra, heap_of_floats, constant_heap, insorted, insorted_by_key],
                         ids=lambda f: f.__name__)
def test_reordering_routines_of_the_standard_library(f, mode):
    value, (g,) = value_and_gradient(f, W.copy())
    assert value == pytest.approx(f(W.copy()), rel=1e-14)
    np.testing.assert_allclose(g, central(f, (W,), 0), rtol=1e-6, atol=1e-9)


def test_an_argument_heap_ends_as_the_call_left_it(mode):
    def f(h, x):
        heapq.heappush(h, x)
        return heapq.heappop(h) * 3.0
    h = [0.5, 2.0, 1.0]
    assert value_and_gradient(f, h, 0.25) == (0.75, (None, 3.0))
    assert h == [0.5, 2.0, 1.0]
    assert value_and_gradient(f, h, 1.25) == (1.5, ([3.0, None, None], None))
    assert h == [1.0, 1.25, 2.0]  # (as the plain call leaves it)

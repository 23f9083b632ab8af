"""A number put into what may hold it (`q.append(b)` of an int unpacked from a global list of tuples, an int given to
a helper that updates another argument) leaves that holder as it was (links.py `_put_held`): the global list is not
taken for one updated in place, whose later read would be refused."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central  # noqa: E402

EDGES = [(0, 1), (1, 2)]


def relax(dist, u, v, w):
    if dist[u] + w < dist[v]:
        dist[v] = dist[u] + w


def relaxed_twice_over_global_edges(w):
    dist = np.array([0.0, 100.0, 100.0])
    for _ in range(2):
        for k, (u, v) in enumerate(EDGES):
            relax(dist, u, v, w[k])
    return np.sum(dist)


def global_ends_queued(w):
    s = 0.0
    q = []
    for _ in range(2):
        for k, (a, b) in enumerate(EDGES):
            s = s + w[k] * (a + 1)
            q.append(b)
    return s * len(q)


@pytest.mark.parametrize("f", [relaxed_twice_over_global_edges, global_ends_queued], ids=lambda f: f.__name__)
def test_ints_of_a_global_list_put_into_local_holders(f, mode):
    w = np.array([1.0, 2.0])
    np.testing.assert_allclose(gradient(f, w)[0], central(f, (w,), 0), rtol=1e-6, atol=1e-8)

"""Objects that hold each other (a mesh's vertices with neighbour lists, a half-edge structure, nodes whose `__init__`
appends them to their parent's list), made in the function and then updated through a loop over them or read
through the links: the searches for an updated object inside its holders (adjoints/mutation/held.py) found an object
first below another in a cycle and then took it for one that does not hold the updated object (half a gradient, or
None); and a constructor that appends its new object to an argument did not link the object as held there
(lower/updates.py). Each gradient against central differences in float64, in both optimisation settings; and a graph
whose objects hold each other in too many ways to search is refused."""
import numpy as np
import pytest
from plain_checks import central

from zygotepy import ZygoteError, gradient

EDGES_PATH = [(0, 1), (0, 2), (1, 4), (3, 4)]
EDGES_DENSE = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3)]


class Vertex:
    def __init__(self, p):
        self.p = p
        self.nbrs = []


def linked(P, edges):
    vs = [Vertex(P[i]) for i in range(len(P))]
    for i, j in edges:
        vs[i].nbrs.append(vs[j])
        vs[j].nbrs.append(vs[i])
    return vs


def path_rescaled(P):
    vs = [Vertex(P[i]) for i in range(5)]
    for i, j in EDGES_PATH:
        vs[i].nbrs.append(vs[j])
        vs[j].nbrs.append(vs[i])
    for v in vs:
        v.p = v.p * 2.0
    return sum(np.sum(v.p ** 2) for v in vs)


def laplacian_smoothed(P):
    vs = [Vertex(P[i]) for i in range(5)]
    for i, j in [(0, 3), (2, 4), (1, 3), (0, 4)]:
        vs[i].nbrs.append(vs[j])
        vs[j].nbrs.append(vs[i])
    for v in vs:
        if v.nbrs:
            v.p = 0.5 * v.p + 0.5 * sum(u.p for u in v.nbrs) / len(v.nbrs)
    return sum(np.sum(v.p * np.array([1.0, 2.0])) ** 2 for v in vs)


def dense_graph_read(P):
    vs = linked(P, EDGES_DENSE)
    return sum(np.sum(v.p * n.p) for v in vs for n in v.nbrs)


def dense_graph_rescaled_by_a_helper(P):
    vs = linked(P, EDGES_DENSE)
    for v in vs:
        v.p = v.p * np.sum(v.nbrs[0].p)
    return sum(np.sum(v.p ** 2) for v in vs)


class V:
    def __init__(self, p):
        self.p = p
        self.he = None


class HalfEdge:
    def __init__(self, origin):
        self.origin = origin
        self.twin = None
        self.next = None


def half_edge_fan(P):
    vs = [V(P[i]) for i in range(4)]
    edges = {}
    for a, b, c in [(0, 1, 2), (0, 2, 3), (0, 3, 1)]:
        hs = [HalfEdge(vs[a]), HalfEdge(vs[b]), HalfEdge(vs[c])]
        for k, (i, j) in enumerate([(a, b), (b, c), (c, a)]):
            hs[k].next = hs[(k + 1) % 3]
            vs[i].he = hs[k]
            edges[(i, j)] = hs[k]
    for (i, j), h in edges.items():
        h.twin = edges.get((j, i))
    for v in vs:
        v.p = v.p * 1.5
    return sum(np.sum(v.p ** 2) for v in vs) + np.sum(vs[1].he.next.origin.p)


class Joint:
    def __init__(self, length, parent=None):
        self.length = length
        self.parent = parent
        self.kids = []
        if parent is not None:
            parent.kids.append(self)


def chain_read_from_the_root(P):
    a = Joint(P[0])
    b = Joint(P[1], a)
    Joint(P[2], b)
    return np.sum(a.kids[0].kids[0].length * 2.0) + np.sum(a.length)


def chain_listed_and_scaled(P):
    a = Joint(P[0])
    joints = [a]
    b = Joint(P[1], a)
    joints.append(b)
    c = Joint(P[2], b)
    joints.append(c)
    for j in joints:
        j.length = j.length * 3.0
    return np.sum(c.length * c.parent.length) + np.sum(a.kids[0].kids[0].length)


CASES = [path_rescaled, laplacian_smoothed, dense_graph_read, dense_graph_rescaled_by_a_helper, half_edge_fan,
         chain_read_from_the_root, chain_listed_and_scaled]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_objects_holding_each_other_agree_with_central_differences(f, mode):
    P = np.random.default_rng(3).normal(size=(5, 2))
    (grad,) = gradient(f, P)
    np.testing.assert_allclose(0.0 if grad is None else grad, central(f, (P,), 0), rtol=1e-6, atol=1e-8)


def complete_graph_rescaled(P):
    vs = linked(P, [(i, j) for i in range(len(P)) for j in range(i + 1, len(P))])
    for v in vs:
        v.p = v.p * 2.0
    return sum(np.sum(v.p ** 2) for v in vs)


def test_objects_holding_each_other_in_too_many_ways_are_refused(mode):
    """(a complete graph of 10 vertices has millions of paths without a cycle: the search stops and says so)"""
    P = np.random.default_rng(4).normal(size=(10, 2))
    with pytest.raises(ZygoteError, match="hold each other in too many ways to follow"):
        gradient(complete_graph_rescaled, P)

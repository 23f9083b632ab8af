"""A loop (or a comprehension, or a generator) over a namedtuple gives its cotangent as the namedtuple's structural
gradient, field by field (accumulate.iter_cotangent), as unpacking and `enumerate` do: rebuilding the class from a
list of cotangents raised a TypeError in the backward. Checked against central differences in float64."""
import collections
from typing import NamedTuple

import numpy as np
import pytest

from zygotepy import gradient


class Pt(NamedTuple):
    x: float
    y: float


class Arrays(NamedTuple):
    a: np.ndarray
    b: np.ndarray


P3 = collections.namedtuple("P3", "u v w")


def generator(p):
    return sum(c * c for c in p)


def loop(p):
    s = 0.0
    for c in p:
        s += c * c * c
    return s


def comprehension(p):
    return sum([np.sin(c) * c for c in p])


def arrays_loop(p):
    total = 0.0
    for arr in p:
        total = total + np.sum(np.tanh(arr) * arr)
    return total


def nested(ps):
    return sum(c * k for k, p in enumerate(ps) for c in p)


def break_early(p):
    s = 0.0
    for c in p:
        s += c * c
        if s > 10.0:
            break
    return s


CASES = [
    (generator, Pt(0.3, -0.7)),
    (loop, Pt(1.1, 0.4)),
    (comprehension, P3(0.2, -1.3, 0.8)),
    (loop, P3(0.5, 0.25, -0.6)),
    (break_early, Pt(0.9, -0.2)),
]


def _central(f, p, h=1e-6):
    """d f / d field for each field of the namedtuple p of floats."""
    out = []
    for k in range(len(p)):
        up, down = list(p), list(p)
        up[k] += h
        down[k] -= h
        out.append((f(type(p)(*up)) - f(type(p)(*down))) / (2 * h))
    return out


@pytest.mark.parametrize("f, p", CASES, ids=lambda v: getattr(v, "__name__", type(v).__name__))
def test_a_loop_over_a_namedtuple_of_floats(f, p, mode):
    (g,) = gradient(f, p)
    want = _central(f, p)
    assert [g.get(name, 0.0) for name in p._fields] == pytest.approx(want, rel=1e-6, abs=1e-8)


def test_a_loop_over_a_namedtuple_of_arrays(mode):
    p = Arrays(np.array([0.3, -0.4, 1.2]), np.array([0.7, 0.1]))
    (g,) = gradient(arrays_loop, p)
    for name in p._fields:
        value = getattr(p, name)
        want = np.zeros_like(value)
        for i in range(value.size):
            e = np.zeros_like(value)
            e[i] = 1e-6
            want[i] = (arrays_loop(p._replace(**{name: value + e})) - arrays_loop(p._replace(**{name: value - e}))) / 2e-6
        np.testing.assert_allclose(g[name], want, rtol=1e-6, atol=1e-8)


def test_a_list_of_namedtuples_walked_twice_deep(mode):
    ps = [Pt(0.3, -0.7), Pt(1.5, 0.2)]
    (g,) = gradient(nested, ps)
    assert g[0] is None or all(v == 0.0 for v in g[0].values())  # (k = 0: the first contributes nothing)
    assert [g[1]["x"], g[1]["y"]] == pytest.approx([1.0, 1.0])

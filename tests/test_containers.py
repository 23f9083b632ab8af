"""Containers and objects as inputs, outputs and intermediates: every gradient against central finite differences,
and the structure of each gradient (API.md: tuples/lists/dicts mirror their argument, objects get a StructGrad)."""
import types
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

from zygotepy import StructGrad, gradient, pullback
from zygotepy.testing import check_grads

P = namedtuple("P", "a b")


@dataclass
class D:
    w: float
    b: float


class Plain:
    def __init__(self, w, b):
        self.w = w
        self.b = b


def nt_ctor(x):
    p = P(x, 2 * x)
    return p.a * p.b + p[0]


def nt_kw_ctor(x):
    p = P(b=x, a=3.0)
    return p.a * p.b


def dc_ctor(x, y):
    p = D(x, b=y * x)
    return p.w * p.b


def ns_ctor(x):
    p = types.SimpleNamespace(w=x, b=2 * x)
    return p.w * p.b


def dict_kw(x):
    d = dict(w=x, b=x * x)
    return d["w"] * d["b"]


def dict_of_pairs(x):
    d = dict([("w", x), ("b", 3.0)])
    return d["w"] * d["b"]


def nt_unpack(p):
    a, b = p
    return a * b * b


def nested_out(x):
    return {"a": x * 2, "b": (x, [x * x, P(x, 1.0)])}


def set_loop(x):
    s = {x * 2.0, 3.0, x * 2.0}
    t = 0.0
    for v in s:
        t = t + v * v
    return t


CASES = [
    ("tuple", lambda t: t[0] * t[1] ** 2, ((2.0, 3.0),)),
    ("list", lambda t: t[0] * t[1] ** 2, ([2.0, 3.0],)),
    ("dict", lambda d: d["a"] * d["b"], ({"a": 2.0, "b": 3.0, "c": 1.0},)),
    ("nested", lambda d: d["a"][0] * d["b"]["c"][1], ({"a": [2.0, 1.0], "b": {"c": (3.0, 4.0)}},)),
    ("namedtuple attr", lambda p: p.a * p.b, (P(2.0, 3.0),)),
    ("namedtuple item", lambda p: p[0] * p.b, (P(2.0, 3.0),)),
    ("namedtuple unpack", nt_unpack, (P(2.0, 3.0),)),
    ("dataclass", lambda p: p.w * p.b, (D(2.0, 3.0),)),
    ("plain object", lambda p: p.w * p.b, (Plain(2.0, 3.0),)),
    ("SimpleNamespace", lambda p: p.w * p.b, (types.SimpleNamespace(w=2.0, b=3.0),)),
    ("object in dict in tuple", lambda d: d["x"][1].w * 2, ({"x": (1, D(2.0, 3.0))},)),
    ("arrays in list", lambda l: np.sum(l[0] * l[1]), ([np.ones(3), np.arange(3.0)],)),
    ("namedtuple constructor", nt_ctor, (3.0,)),
    ("namedtuple keywords", nt_kw_ctor, (3.0,)),
    ("dataclass constructor", dc_ctor, (3.0, 1.5)),
    ("SimpleNamespace constructor", ns_ctor, (3.0,)),
    ("dict(**kw)", dict_kw, (3.0,)),
    ("dict(pairs)", dict_of_pairs, (3.0,)),
    ("dict comprehension", lambda d: sum(v * v for v in {k: v * 2 for k, v in d.items()}.values()),
     ({"a": 1.0, "b": 2.0},)),
    ("nested output", nested_out, (3.0,)),
    ("set comprehension", lambda l: sum({v * v for v in l}), ([1.0, 2.0, 3.0],)),
    ("set display and iteration", set_loop, (1.5,)),
]


@pytest.mark.parametrize("name,f,args", CASES, ids=[c[0] for c in CASES])
def test_container_gradients(name, f, args):
    check_grads(f, *args)


def test_gradient_structure_mirrors_arguments():
    (g,) = gradient(lambda d: d["a"][0] * d["b"]["c"], {"a": [2.0, 1.0], "b": {"c": 3.0}, "n": 4})
    assert g == {"a": [3.0, None], "b": {"c": 2.0}, "n": None}
    (g,) = gradient(lambda p: p[0] * p.b, P(2.0, 3.0))
    assert isinstance(g, StructGrad) and g.a == 3.0 and g["b"] == 2.0
    (g,) = gradient(lambda p: p.w * 4.0, D(2.0, 3.0))
    assert isinstance(g, StructGrad) and g.w == 4.0 and "b" not in g
    (g,) = gradient(lambda p: p.w * p.b, types.SimpleNamespace(w=2.0, b=3.0))
    assert (g.w, g.b) == (3.0, 2.0)


@pytest.mark.parametrize("dy", [P(1.0, 2.0), (1.0, 2.0), {"a": 1.0, "b": 2.0}], ids=["namedtuple", "tuple", "dict"])
def test_structured_cotangent_of_namedtuple_output(dy):
    y, back = pullback(lambda x: P(x * 2, x * 3), 3.0)
    assert y == P(6.0, 9.0)
    assert back(dy) == (8.0,)


def test_structured_cotangent_of_dataclass_output():
    y, back = pullback(lambda x: D(x * 2, x * x), 3.0)
    assert y == D(6.0, 9.0)
    assert back(D(1.0, 1.0)) == (8.0,)
    assert back({"w": 1.0}) == (2.0,)


def test_nested_output_cotangent_with_none_entries():
    y, back = pullback(nested_out, 3.0)
    assert back({"a": 1.0, "b": (None, [1.0, None])}) == (8.0,)

"""Containers and objects as inputs, outputs and intermediates: every gradient against central finite differences,
and the structure of each gradient (docs/api.md: tuples/lists/dicts mirror their argument, objects get a StructGrad)."""
import types
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np
import pytest

from zygotepy import StructGrad, ZygoteError, gradient, pullback
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
    d = dict(w=x, b=x * x)  # noqa: C408  (the dict constructor is what is tested)
    return d["w"] * d["b"]


def dict_of_pairs(x):
    d = dict([("w", x), ("b", 3.0)])  # noqa: C406
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


def dict_unpacked(x, y):
    d = {"a": x, "b": y}
    e = {"a": y * 2, **d, "b": x * x, **{"c": y}}  # d's "a" wins over the first, the later "b" over d's
    return e["a"] * e["b"] + e["c"] * len(e)


def dict_unpacked_shares_arrays(x):
    d = {"w": x * 2.0}
    e = {**d}
    e["w"] *= 3.0  # the array both dicts hold
    return np.sum(e["w"] * d["w"])


def dict_duplicate_keys(x, y):
    d = {"a": x, "b": y, "a": x * y}  # noqa: F601  (Python keeps the last "a": x alone gets nothing through it)
    return d["a"] * d["b"]


def _cube(w):
    return w * w * w


def map_filter(x, c):
    W = [x, -2.0 * x, x * c]
    kept = list(filter(lambda w: w > 0.0, W))
    return sum(map(_cube, kept)) + sum(map(lambda a, b: a * b * c, W, reversed(W))) + sum(filter(None, [x, 0.0]))


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
    ("dict display with **", dict_unpacked, (1.5, 2.0)),
    ("{**d} shares its arrays", dict_unpacked_shares_arrays, (np.array([1.0, -0.5]),)),
    ("dict display with a repeated key", dict_duplicate_keys, (1.5, 2.0)),
    ("map and filter", map_filter, (1.5, 0.7)),
    ("map over an array", lambda x: sum(map(np.tanh, x * 2.0)), (np.array([0.1, -0.4, 0.3]),)),
]


@pytest.mark.parametrize("name,f,args", CASES, ids=[c[0] for c in CASES])
def test_container_gradients(name, f, args):
    check_grads(f, *args)


def test_dict_display_gradients_go_to_the_entry_python_kept():
    # exact values, beyond the finite-difference check: the entry a later key replaced receives nothing
    assert gradient(dict_duplicate_keys, 1.5, 2.0) == (4.0, 6.0)  # (x y) y: y^2, 2 x y
    assert gradient(dict_unpacked, 1.5, 2.0) == (3 * 1.5 ** 2, 3.0)  # x * x^2 + 3 y


def test_a_gradient_through_a_mapping_that_is_not_a_dict_is_an_error_naming_the_line():
    class Pairs:  # a mapping that is not a dict: keys() and []
        def __init__(self, x):
            self.x = x

        def keys(self):
            return ["a"]

        def __getitem__(self, k):
            return self.x

    def f(x):
        e = {**Pairs(x)}
        return e["a"] * 2.0
    with pytest.raises(ZygoteError, match="test_containers.py"):
        gradient(f, 1.5)


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
    _, back = pullback(nested_out, 3.0)
    assert back({"a": 1.0, "b": (None, [1.0, None])}) == (8.0,)


# --- user types: methods, __call__, properties, super(), operators, __init__ ------------------------------------------

class RGB:
    def __init__(self, r, g, b):
        self.r, self.g, self.b = r, g, b

    def __add__(self, other):
        return RGB(self.r + other.r, self.g + other.g, self.b + other.b)

    def __mul__(self, s):
        return RGB(self.r * s, self.g * s, self.b * s)

    __rmul__ = __mul__

    def luma(self):
        return 0.3 * self.r + 0.6 * self.g + 0.1 * self.b

    @property
    def total(self):
        return self.r + self.g + self.b


class Dense:
    """A Flux-style layer: an object holding weights, called like a function."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)


class Chain:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Base:
    def __init__(self, s):
        self.s = s

    def f(self, x):
        return self.s * x


class Sub(Base):
    def __init__(self, s, t):
        super().__init__(s)
        self.t = t

    def f(self, x):
        return super().f(x) + self.t * x * x


@dataclass
class Scaled:
    w: float
    k: float = 2.0

    def __post_init__(self):
        self.kw = self.k * self.w


@dataclass(frozen=True)
class FrozenScaled:  # (a derived field of a frozen dataclass, set the only way it can be: its gradient was None)
    w: float
    k: float = 2.0
    kw: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "kw", self.k * self.w ** 2)


def build_chain(W1, W2, x):
    model = Chain(Dense(W1, np.zeros(3)), Dense(W2, np.ones(2)))
    return np.sum(model(x) ** 2)


_rng = np.random.default_rng(0)
_W1, _W2, _x = _rng.standard_normal((3, 4)), _rng.standard_normal((2, 3)), _rng.standard_normal(4)

USER_CASES = [
    ("method", lambda c: c.luma(), (RGB(1.0, 2.0, 3.0),)),
    ("__add__ and luma", lambda c, d: (c + d).luma(), (RGB(1.0, 2.0, 3.0), RGB(0.5, 0.2, 0.1))),
    ("__mul__ by a scalar", lambda c, s: (c * s).total, (RGB(1.0, 2.0, 3.0), 2.0)),
    ("__rmul__", lambda c, s: (s * c).luma() ** 2, (RGB(1.0, 2.0, 3.0), 2.0)),
    ("property", lambda c: c.total ** 2, (RGB(1.0, 2.0, 3.0),)),
    ("constructor of a plain class", lambda x: RGB(x, 2 * x, 3.0).luma() * x, (2.0,)),
    ("layer object called", lambda m, x: np.sum(m(x)), (Dense(_W1, np.ones(3)), _x)),
    ("layers built inside", build_chain, (_W1, _W2, _x)),
    ("super() in a method", lambda o, x: o.f(x), (Sub(2.0, 3.0), 1.5)),
    ("super().__init__", lambda x: Sub(x, 2 * x).f(3.0), (1.5,)),
    ("dataclass __post_init__", lambda x: Scaled(x, k=3.0).kw * x, (1.5,)),
    ("frozen dataclass __post_init__", lambda x, k: FrozenScaled(x, k).kw * x + FrozenScaled(k).kw, (1.5, 0.5)),
]


@pytest.mark.parametrize("name,f,args", USER_CASES, ids=[c[0] for c in USER_CASES])
def test_user_types(name, f, args):
    check_grads(f, *args)


def test_a_frozen_dataclass_field_set_in_post_init():
    assert gradient(lambda w: FrozenScaled(w).kw * 3.0, 0.5) == (6.0,)  # d(2 w^2 * 3)/dw = 12 w


def test_colours_gradient_is_a_structgrad_with_fields_r_g_b():
    ga, gb = gradient(lambda a, b: (a + b * 2.0).luma(), RGB(1.0, 2.0, 3.0), RGB(0.5, 0.2, 0.1))
    assert isinstance(ga, StructGrad) and (ga.r, ga.g, ga.b) == (0.3, 0.6, 0.1)
    assert (gb["r"], gb["g"], gb["b"]) == (0.6, 1.2, 0.2)


def test_layer_gradient_fields_are_its_weights():
    (g,) = gradient(lambda m: np.sum(m(_x)), Dense(_W1, np.ones(3)))
    assert set(g) == {"W", "b"} and g.W.shape == _W1.shape and g["b"].shape == (3,)

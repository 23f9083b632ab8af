"""tree_map on the structures gradients come in (trees.py), as api.md states: another tree may match a namedtuple by
position (a plain tuple gave `fn` None for every leaf: nothing was updated), a shorter tree gives None where it has
no entry (it raised IndexError), and objects are rebuilt whatever their kind: `types.SimpleNamespace` (TypeError), a
dataclass with an `init=False` field (ValueError), a `__slots__` object (it was a leaf)."""
import dataclasses
import types
from collections import namedtuple

import numpy as np
import pytest

import zygotepy
from zygotepy import gradient, tree_map

NT = namedtuple("NT", "a b")


def step(p, g):
    return p if g is None else p - 0.1 * g


@dataclasses.dataclass
class Post:
    a: float
    b: float = dataclasses.field(init=False)

    def __post_init__(self):
        self.b = self.a * 2


class Slotted:
    __slots__ = ("p", "q")

    def __init__(self, p, q):
        self.p, self.q = p, q


def test_a_namedtuple_matched_by_position():
    assert tree_map(step, NT(1.0, 2.0), (1.0, 1.0)) == pytest.approx(NT(0.9, 1.9))
    assert tree_map(step, NT(1.0, 2.0), [1.0]) == pytest.approx(NT(0.9, 2.0))


def test_a_shorter_tree_gives_none():
    assert tree_map(lambda a, b: (a, b), [1.0, 2.0], [5.0]) == [(1.0, 5.0), (2.0, None)]


def test_a_simple_namespace_is_rebuilt():
    ns = types.SimpleNamespace(a=1.0, b=2.0)
    new = tree_map(step, ns, gradient(lambda o: o.a * o.b, ns)[0])
    assert vars(new) == pytest.approx({"a": 0.8, "b": 1.9}) and vars(ns) == {"a": 1.0, "b": 2.0}


def test_a_dataclass_field_not_in_init_is_rebuilt():
    m = Post(1.0)
    new = tree_map(step, m, gradient(lambda m: m.a * m.b, m)[0])
    assert (new.a, new.b) == pytest.approx((0.8, 1.9)) and (m.a, m.b) == (1.0, 2.0)


def test_a_slots_object_is_a_node():
    s = Slotted(1.0, 2.0)
    new = tree_map(step, s, gradient(lambda s: s.p * s.q, s)[0])
    assert type(new) is Slotted and (new.p, new.q) == pytest.approx((0.8, 1.9)) and (s.p, s.q) == (1.0, 2.0)


def test_gradients_of_a_containers_entries_are_distinct_arrays():
    """`xs[0] + xs[1]` hands both entries one cotangent: scaling one in place (`g[0] *= 0.1`) changed the other."""
    import numpy as np
    g, = gradient(lambda xs: np.sum(xs[0] + xs[1]), [np.ones(2), np.ones(2)])
    assert g[0] is not g[1]
    g[0] *= 0.1
    np.testing.assert_array_equal(g[1], [1.0, 1.0])
    d, = gradient(lambda p: np.sum(p["a"] * 2.0 + p["b"] * 2.0), {"a": np.ones(2), "b": np.ones(2)})
    assert d["a"] is not d["b"]


class _Layer:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


def test_a_callable_object_is_a_tree_as_its_gradient_is():
    """A layer with `__call__` was a leaf to tree_map, so an optimiser step got the whole object and its StructGrad."""
    net = _Layer(np.ones((2, 2)), np.zeros(2))
    g, = gradient(lambda n: np.sum(n(np.ones(2))), net)
    stepped = tree_map(lambda p, d: p - 0.5 * d, net, g)
    assert type(stepped) is _Layer
    assert np.allclose(stepped.W, net.W - 0.5 * g.W) and np.allclose(stepped.b, net.b - 0.5 * g.b)
    assert tree_map(lambda f: f, np.tanh) is np.tanh  # (functions stay leaves)


def _inner_loss(p):
    return np.sum((p["w"] * 2.0 - 1.0) ** 2) + p["b"] ** 2


def _one_step_then_loss(p):  # (MAML: an inner gradient step on a dict of parameters, then the loss)
    g = zygotepy.gradient(_inner_loss, p)[0]
    return _inner_loss(tree_map(lambda a, d: a - 0.1 * d, p, g))


def test_tree_map_inside_a_differentiated_function(mode):
    """tree_map's `like_container` held a `try` (for container subclasses), which kept zygotepy from differentiating it."""
    p = {"w": np.array([0.3, -0.2]), "b": 0.5}
    with zygotepy.optimizations(mode):
        (g,) = zygotepy.gradient(lambda p: (lambda q: q["a"] * np.sum(q["b"]))(tree_map(lambda a: a * 2.0, p)),
                                 {"a": 0.5, "b": np.ones(3)})
        assert g["a"] == 12.0 and np.array_equal(g["b"], [2.0, 2.0, 2.0])
        (g,) = zygotepy.gradient(_one_step_then_loss, p)
    # (the inner step scales each parameter's distance to its minimum: w - 0.5 by 0.2, b by 0.8)
    np.testing.assert_allclose(g["w"], 8 * 0.2 ** 2 * (p["w"] - 0.5))
    assert g["b"] == pytest.approx(2 * 0.8 ** 2 * p["b"])


def test_a_counter_argument_gets_a_counter_of_its_gradients(mode):
    """A `collections.Counter` argument's gradient was rebuilt with Counter's own update, which counts the pairs it
    is given: keys ('a', 2.5) counted once, `g["a"]` 0 (found by a probe of dict-heavy code)."""
    import collections

    from zygotepy import gradient, jacobian

    c = collections.Counter({"a": 1.5, "b": 2.5, "c": -0.5})
    (g,) = gradient(lambda d: d["a"] * d["b"] + d["c"] ** 2, c)
    assert type(g) is collections.Counter and dict(g) == {"a": 2.5, "b": 1.5, "c": -1.0}
    (j,) = jacobian(lambda d: 2.0 * d["a"] + d["b"] ** 2, collections.Counter({"a": 0.5, "b": 1.0}))
    assert dict(j) == {"a": 2.0, "b": 2.0}


def test_a_dict_subclass_whose_getattr_raises_key_error(mode):
    """`class AttrDict(dict): __getattr__ = lambda self, k: self[k]` (a common config class): the item rule asked
    `hasattr(x, "shape")`, which its KeyError escaped (a crash)."""
    from zygotepy import gradient

    class AttrDict(dict):
        def __getattr__(self, k):
            return self[k]

    (g,) = gradient(lambda cfg: cfg.lr * cfg["w"] ** 2, AttrDict(lr=0.5, w=3.0))
    assert dict(g) == {"lr": 9.0, "w": 3.0}

"""An object inside a container or object that an update in place reaches, which the parent also holds elsewhere
(shared.py `shared_contents`): `ds = [{"w": s}, {"w": s}]`, then `ds[0]["w"] *= 0.5` changes `ds[1]["w"]` too, so a
read through the second path must see the update's gradient. Each case against central differences and one plain
call (plain_checks.agree_at), with every optimisation on and with every one off."""
from collections import namedtuple

import numpy as np
import pytest

from plain_checks import agree_at
from zygotepy import ZygoteError, gradient, hessian

Pair = namedtuple("Pair", "w v")


class Layer:
    def __init__(self, w):
        self.w = w


class Tied:
    def __init__(self, w):
        self.enc = Layer(w)
        self.dec = Layer(w)


class TiedTransposed:
    def __init__(self, w):
        self.enc = Layer(w)
        self.dec = Layer(w.T)


def two_dicts_in_a_list(x):
    s = x * 1.0
    ds = [{"w": s}, {"w": s}]
    ds[0]["w"] *= 0.5
    return np.sum(ds[1]["w"] * x)


def three_levels(x):
    s = x * 1.0
    ds = [[{"w": s}], [{"w": s}]]
    ds[0][0]["w"] *= 0.5
    return np.sum(ds[1][0]["w"] * x)


def tied_layers(x):
    m = Tied(x * 1.0)
    m.enc.w *= 0.5
    return np.sum(m.dec.w * x)


def tied_transposed(x):
    W = np.outer(x, x[::-1]) * 1.0
    m = TiedTransposed(W)
    m.enc.w *= 0.5
    return np.sum(m.dec.w * W)


def a_view_in_the_other(x):
    s = x * 1.0
    ds = [{"w": s}, {"w": s[:2]}]
    ds[0]["w"] *= 0.5
    return np.sum(ds[1]["w"] * x[:2])


def lists_in_a_dict(x):
    s = x * 1.0
    ds = {"a": [s], "b": [s]}
    ds["a"][0] += x
    return np.sum(ds["b"][0] * x)


def a_loop_over_layers_sharing_a_weight(x):
    w = x * 1.0
    layers = [Layer(w), Layer(w)]
    for layer in layers:
        layer.w *= 0.5
    return np.sum(layers[1].w * x)


def an_sgd_step_on_tied_layers(x):
    m = Tied(x * 1.0)
    loss = np.sum(np.tanh(m.enc.w) * m.dec.w)
    m.enc.w -= 0.1 * loss * x
    return np.sum(m.dec.w ** 2)


def shared_but_not_updated(x):
    s = x * 1.0
    ds = [{"w": s, "b": x * 2.0}, {"w": s}]
    ds[0]["b"] *= 3.0
    return np.sum(ds[1]["w"] * ds[0]["b"])


def namedtuples_sharing_an_array(x):
    s = x * 1.0
    a, b = Pair(s, x), Pair(s, x * 2.0)
    a.w[...] *= 0.5
    return np.sum(b.w * b.v)


def a_dict_holding_itself(x):
    root = {"w": x * 1.0}
    root["me"] = root
    root["me"]["w"] *= 2.0
    root["me"]["w"] += x
    return np.sum(root["w"] ** 2)


CASES = [two_dicts_in_a_list, three_levels, tied_layers, tied_transposed, a_view_in_the_other, lists_in_a_dict,
         a_loop_over_layers_sharing_a_weight, an_sgd_step_on_tied_layers, shared_but_not_updated,
         namedtuples_sharing_an_array, a_dict_holding_itself]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_an_update_reaches_every_place_of_what_it_changed(f, mode):
    agree_at(f, np.array([0.7, -1.3, 2.1]))


class Node:
    def __init__(self, w, parent=None):
        self.w, self.parent, self.children = w, parent, []


def test_a_loop_updating_an_array_shared_in_a_tree_of_parent_pointers_is_refused(mode):
    """`c1.w` is `root.w` and every child points back to `root`: the update through the loop variable cannot be routed
    through that cycle, so it is refused naming the line (it was silently wrong)."""
    def f(s, x):
        root = Node(s * 1.0)
        c1, c2 = Node(root.w, root), Node(x * 1.0, root)
        root.children.append(c1)
        root.children.append(c2)
        for c in root.children:
            c.w *= 1.5
        return np.sum(root.w * x)
    with pytest.raises(ZygoteError, match=r"test_shared\.py:\d+: .*parent pointers"):
        gradient(f, np.array([0.3, -0.7, 1.1]), np.array([0.5, 1.5, -2.0]))


def _hessian_by_differences(f, x, h=1e-4):
    return np.column_stack([(gradient(f, x + h * e)[0] - gradient(f, x - h * e)[0]) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.dual_route
@pytest.mark.parametrize("f", [f for f in CASES if f is not namedtuples_sharing_an_array], ids=lambda f: f.__name__)
def test_the_hessian_through_what_an_update_changed(f, mode):
    """hessian runs the reverse pass on dual numbers: what an updated object holds, held elsewhere too, is found by
    identity and, for views (`w.T`, `s[:2]`), by the memory of their primals."""
    x = np.array([0.7, -1.3, 2.1])
    np.testing.assert_allclose(hessian(f, x), _hessian_by_differences(f, x), rtol=1e-5, atol=1e-6)

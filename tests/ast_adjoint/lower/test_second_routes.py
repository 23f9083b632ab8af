"""An update in place that reaches an object by two routes (lower/mutation.py `refresh_again`, and a holder told
again): the first found may be a call's result that may hold its arguments (`t = f(w, b)`), which finds nothing at
run time, while the object's real link to the updated one (a view it holds, the array it holds) comes second. Both
are followed now; before, the second was skipped and the read after the update missed its gradient. Parent pointers
(a cycle of holders) keep their single route. A holder told again keeps the version that gave it (`self.parent =
parent; parent.children.append(self); self.W = W`: the refreshed `parent` passed on dropped it, gradient None). Each
case against central differences and one plain call."""
import copy

import numpy as np
import pytest

from plain_checks import agree_at
from zygotepy import gradient, hessian


def _noop(a, b):
    return 0.0


def _lin(p, x):
    return np.sum(p[0] * x)


def _read(d):
    return np.sum(d["w"] ** 2)


def _first(lst):
    return np.sum(lst[0][0])


class _Layer:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return self.w @ x


class _Node:
    def __init__(self, w, parent=None):
        self.w = w
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)


def a_view_in_a_list_given_to_a_call(w):
    w = w * 1.0
    b = [w[:2]]
    t = _noop(w, b)
    w *= 2.0
    return np.sum(b[0]) + t


def one_array_in_two_lists_each_given_to_a_call(w):
    W = w * 1.0
    p1 = [W]
    p2 = [W]
    a = _lin(p1, w)
    b = _lin(p2, w)
    p1[0] *= 2.0
    return np.sum(p2[0] * w) + a + b


def two_dicts_read_in_one_statement(w):
    a = {"w": w * 1.0}
    b = {"w": a["w"]}
    r = _read(a) + _read(b)
    a["w"] *= 2.0
    return _read(b) + r


def a_tied_autoencoder_called_then_stepped(w):
    W = np.outer(w, w[::-1]) * 0.5
    enc = _Layer(W)
    dec = _Layer(W.T)
    y = dec(enc(w))
    W *= 2.0
    return np.sum(dec.w @ w) + np.sum(y)


def a_flat_buffer_with_views(w):
    flat = w * 1.0
    p = {"w": flat[:2]}
    q = [flat]
    loss = np.sum(p["w"] * w[:2]) + np.sum(q[0] ** 2)
    q[0] *= 2.0
    return np.sum(p["w"]) + loss


def an_inner_list_shared_then_appended(w):
    inner = [w * 1.0]
    a = [inner]
    b = [inner]
    t = _first(a) + _first(b)
    a[0].append(w * 3.0)
    return np.sum(b[0][-1] ** 2) + t


def a_deepcopy_beside_the_update(w):
    a = [w * 1.0]
    b = [a[0]]
    snap = copy.deepcopy([a, b])
    a[0] *= w
    return np.sum(b[0]) + np.sum(snap[0][0])


def parent_pointers_in_dicts(w):
    root = {"kids": []}
    a = {"parent": root}
    b = {"w": w * 1.0, "parent": root}
    root["kids"].append(a)
    root["kids"].append(b)
    root["t"] = 0.0
    return np.sum(b["w"] ** 2)


def a_chain_of_nodes(w):
    root = _Node(w * 1.0)
    a = _Node(w * 2.0, root)
    b = _Node(w * 3.0, a)
    root.z = 1.0
    root.w *= 2.0
    return np.sum(b.w ** 2) + np.sum(root.w * a.w)


class _Registered:
    def __init__(self, W, parent):
        self.parent = parent
        parent.children.append(self)
        self.W = W


class _Owner:
    def __init__(self, W):
        self.children = []
        _Registered(W, self)


class _RegisteredThenScaled:
    def __init__(self, W, parent):
        self.W = W
        self.parent = parent
        parent.children.append(self)
        self.W = self.W * 2.0


def a_layer_registering_itself_then_storing_its_weight(w):
    net = _Owner(w * 1.0)
    return np.sum(net.children[0].W ** 2)


def a_layer_registering_itself_then_rebinding_its_weight(w):
    net = _Owner(w * 0.0)
    net.children = []
    _RegisteredThenScaled(w * 1.0, net)
    return np.sum(net.children[0].W * w)


def _both(a, b):
    return np.sum(a[0]) * np.sum(b[0])


def a_view_held_then_its_base_updated_by_maybe_in_place(w):
    s = w * 1.0
    v = s[:2]
    held = [v]
    p = _both([s], held)
    s += w  # (`+=` may make a new object: its names' versions are split; a holder told again passes on only its own)
    return np.sum(v ** 2) + p


CASES = [a_view_in_a_list_given_to_a_call, one_array_in_two_lists_each_given_to_a_call,
         two_dicts_read_in_one_statement, a_tied_autoencoder_called_then_stepped, a_flat_buffer_with_views,
         an_inner_list_shared_then_appended, a_deepcopy_beside_the_update, parent_pointers_in_dicts, a_chain_of_nodes,
         a_layer_registering_itself_then_storing_its_weight, a_layer_registering_itself_then_rebinding_its_weight,
         a_view_held_then_its_base_updated_by_maybe_in_place]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_an_update_reaching_an_object_by_two_routes(f, mode):
    agree_at(f, np.array([0.3, -0.7, 1.1]))


@pytest.mark.dual_route
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_the_hessian_of_an_update_reaching_an_object_by_two_routes(f, mode):
    x = np.array([0.3, -0.7, 1.1])
    by_differences = np.column_stack([(gradient(f, x + 1e-4 * e)[0] - gradient(f, x - 1e-4 * e)[0]) / 2e-4
                                      for e in np.eye(3)])
    np.testing.assert_allclose(hessian(f, x), by_differences, rtol=1e-5, atol=1e-6)

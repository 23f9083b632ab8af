"""Updates in place inside a cycle of references: layers that point at their net (`layer.parent = net`) while the
net's list holds them (zygotepy/adjoints/mutation/links.py, `put_held`). The cotangents are routed by path, and a
path around the cycle may reach an object by a route its update's links never pass the update to: a loop over
`net.layers` writing through each layer's parent pointer, followed by a read through another name, is refused, naming
the line. Updates the links do follow (through the layer's own name, through the cycle `a.parent.layers[1].W *= 2`,
a loop over the net's layers, into the net itself, a constructor registering its layer) agree with central finite
differences; a write into a layer through its own parent's list, read through another layer, is a known gap."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import agree_at, line_of  # noqa: E402

X = np.array([0.4, -0.8, 1.1])
W = np.random.default_rng(3).standard_normal((2, 3, 3))


class Layer:
    def __init__(self, W, parent):
        self.W = W
        self.parent = parent
        parent.layers.append(self)

    def __call__(self, h):
        return np.tanh(self.W @ h) * self.parent.scale


class Net:
    def __init__(self, scale=1.0):
        self.layers = []
        self.scale = scale


def _net(w):
    net = Net()
    return net, Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)


def through_the_cycle(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    a.parent.layers[1].W *= 2  # (b's weight)
    return np.sum(b(a(X)))


def each_layer_through_the_cycle(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    for layer in net.layers:
        layer.parent.layers[0].W *= 2
    return np.sum(b(a(X)))


def a_loop_scaling_each_layer(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    for layer in net.layers:
        layer.W *= 3.0
    return np.sum(b(a(X)))


def a_loop_storing_into_each_layer(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    for layer in net.layers:
        layer.W[0, 0] = layer.W[0, 0] * 3.0
    return np.sum(b(a(X)))


def through_the_cycle_made_one_by_one(w):
    net = Net()
    a = Layer(w[0] * 1.0, net)
    b = Layer(w[1] * 1.0, net)
    a.parent.layers[1].W *= 2
    return np.sum(b(a(X)))


def a_layer_through_itself_around_the_cycle(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    a.parent.layers[0].W *= 2
    return np.sum(b(a(X)))


@pytest.mark.parametrize("f, marker", [(each_layer_through_the_cycle, "*= 2")], ids=lambda v: getattr(v, "__name__", ""))
def test_a_write_through_the_cycle_read_by_another_name_is_refused(f, marker, mode):
    with pytest.raises(ZygoteError, match=rf"{Path(__file__).name}:{line_of(f, marker)}: .*cycle of references"):
        gradient(f, W.copy())


def through_its_own_name(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    a.W -= 0.1 * a.W ** 2
    b.W = b.W * 2.0
    return np.sum(b(a(X)))


def a_loop_scaling_each_layer_read_through_the_net(w):
    net = Net()
    Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    for layer in net.layers:
        layer.W *= 0.9
    h = X
    for layer in net.layers:
        h = layer(h)
    return np.sum(h)


def into_the_net_itself(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    a.parent.scale = 2.0 * np.sum(w[0, 0])
    return np.sum(b(a(X)))


def through_the_nets_list(w):
    net = Net()
    a, b = Layer(w[0] * 1.0, net), Layer(w[1] * 1.0, net)
    net.layers[1].W *= 2
    return np.sum(b(a(X)))


def parent_pointers_in_dicts(w):
    root = {"kids": []}
    a = {"w": w[0] * 1.0, "parent": root}
    b = {"w": w[1] * 1.0, "parent": root}
    root["kids"].append(a)
    root["kids"].append(b)
    root["t"] = 0.0
    return np.sum(b["w"] ** 2) + np.sum(np.sin(a["w"]))


# (the first four were refused: a constructor appending its object to the net did not link the object as held there,
# lower/updates.py; and `a`, made first in a tuple, was not refreshed when the second call appended `b`,
# lower/statements.py)
@pytest.mark.parametrize("f", [through_the_cycle, through_the_cycle_made_one_by_one, a_loop_scaling_each_layer,
                               a_loop_storing_into_each_layer, through_its_own_name,
                               a_loop_scaling_each_layer_read_through_the_net, into_the_net_itself,
                               through_the_nets_list, parent_pointers_in_dicts], ids=lambda f: f.__name__)
def test_updates_the_links_follow_agree_with_finite_differences(f, mode):
    agree_at(f, W)


@pytest.mark.xfail(strict=True, reason="known gap (docs/limitations.md): b's gradient is lost. With the "
                   "constructor's link, a's cotangent comes back around the cycle to the net as it was before b "
                   "was in it; without the link, three levels of nodes made by constructors lost theirs")
def test_a_write_into_a_layer_through_its_own_parents_list_then_a_read_through_another(mode):
    agree_at(a_layer_through_itself_around_the_cycle, W)


def made_by_a_helper_then_updated_through_its_own_name(w):
    net, a, b = _net(w)
    a.W -= 0.1 * a.W ** 2
    b.W = b.W * 2.0
    return np.sum(b(a(X)))


def made_by_a_helper_then_the_net_updated(w):
    net, a, b = _net(w)
    a.parent.scale = 2.0 * np.sum(w[0, 0])
    return np.sum(b(a(X)))


def made_by_a_helper_then_updated_around_the_cycle(w):
    net, a, b = _net(w)
    a.parent.layers[0].W *= 2
    return np.sum(b(a(X)))


@pytest.mark.xfail(strict=True, reason="silently wrong, known: a cycle made by a helper the lowering cannot see into "
                   "routes cotangents by paths around it (docs/limitations.md); needs cotangents kept by identity")
@pytest.mark.parametrize("f", [made_by_a_helper_then_updated_through_its_own_name,
                               made_by_a_helper_then_the_net_updated, made_by_a_helper_then_updated_around_the_cycle],
                         ids=lambda f: f.__name__)
def test_a_cycle_made_by_a_helper_then_updated(f, mode):
    agree_at(f, W)

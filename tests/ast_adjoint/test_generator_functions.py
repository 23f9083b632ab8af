"""A user's generator function called where a gradient flows (ast_adjoint/generators.py): differentiated as the
function computing its items when called (`for p in model.parameters():` was refused at `yield`); what its eager
items cannot do is refused, never run differently: updates in place by the generator, updates of what it reads
before its later items are taken, an iterator given to it, an endless loop, the value of a yield expression."""
import numpy as np
import pytest

from plain_checks import central
from zygotepy import gradient, value_and_gradient
from zygotepy.errors import UnsupportedSyntax, ZygoteError


class Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def parameters(self):
        yield self.w
        yield self.b

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class Model:
    def __init__(self, layers):
        self.layers = layers

    def parameters(self):
        for layer in self.layers:
            yield from layer.parameters()

    def __iter__(self):
        yield from self.layers

    def __call__(self, x):
        for layer in self:
            x = layer(x)
        return x


def regularised(m, x):
    decay = sum(np.sum(p ** 2) for p in m.parameters())
    return np.sum(m(x) ** 2) + 0.1 * decay


def test_a_model_s_parameters_and_layers_from_generators(mode):
    rng = np.random.default_rng(0)
    m = Model([Linear(rng.normal(size=(3, 4)), rng.normal(size=4)), Linear(rng.normal(size=(4, 2)), rng.normal(size=2))])
    x = rng.normal(size=(5, 3))
    value, (dm, dx) = value_and_gradient(regularised, m, x)
    assert value == pytest.approx(regularised(m, x))
    np.testing.assert_allclose(dx, central(lambda x: regularised(m, x), [x], 0), atol=1e-6)
    w = m.layers[1].w

    def in_w(v):
        m.layers[1].w = v
        try:
            return regularised(m, x)
        finally:
            m.layers[1].w = w
    np.testing.assert_allclose(dm.layers[1].w, central(in_w, [w], 0), atol=1e-6)


def pairs(xs):
    for i in range(len(xs) - 1):
        yield xs[i], xs[i + 1]


def powers(v, n):
    p = 1.0
    for _ in range(n):
        p = p * v
        yield p


def two_parts(x):
    yield from powers(x[0], 2)
    yield x[1] * 3.0
    if x[0] > 0:
        return
    yield 100.0 * x[1]


def windows(x, n):
    for i in range(0, len(x) - n + 1):
        yield x[i:i + n]


def early(x):
    for v in x:
        yield v
        if v > 1.0:
            break


@pytest.mark.parametrize("f, x", [
    (lambda x: sum(a * b for a, b in pairs(x)), [0.3, 1.2, -0.7]),
    (lambda x: sum(powers(x[0], 4)) + max(powers(x[1], 3)), [0.9, 1.1]),
    (lambda x: sum((k + 1) * v for k, v in enumerate(two_parts(x))), [0.5, -0.2]),
    (lambda x: sum((k + 1) * v for k, v in enumerate(two_parts(x))), [-0.5, 0.4]),
    (lambda x: next(powers(x[0], 3)) * 10.0 + list(powers(x[0], 3))[-1], [1.3, 0.0]),
    (lambda x: sum(np.sum(w) ** 2 for w in windows(x, 2)), [0.3, 1.2, -0.7, 0.5]),
    (lambda x: sum(early(x)) + np.sum(list(early(x[::-1]))), [0.3, 1.5, 0.7])],
    ids=["pairs", "powers", "yield from and return", "the other branch", "next then the rest", "windows",
         "break"])
def test_generator_functions_against_central_differences(mode, f, x):
    x = np.array(x)
    value, (g,) = value_and_gradient(f, x.copy())
    assert value == pytest.approx(f(x.copy()))
    np.testing.assert_allclose(g, central(f, [x], 0), atol=1e-6)


class Scaler:
    def __init__(self, k):
        self.k = k

    def scaled(self, xs):
        for v in xs:
            yield v * self.k


def consumer_updates_the_receiver(x):
    o = Scaler(x)
    t = 0.0
    for v in o.scaled([1.0, 2.0]):
        o.k = o.k * 2.0
        t = t + v
    return t


def doubled(ws):
    for w in ws:
        yield w * 2.0


def consumer_updates_the_argument(x):
    t = 0.0
    for v in doubled(x):
        x[1] = x[1] * 3.0
        t = t + v
    return t


def consumer_updates_through_a_method_call(x):
    t = 0.0
    for v in Scaler(1.0).scaled(x):
        x[1] = x[1] * 3.0
        t = t + v
    return t


class Holder:
    def __iter__(self):
        for w in self.ws:
            yield w * 2.0


def consumer_updates_what_iter_reads(x):
    h = Holder()
    h.ws = [x[0], x[1]]
    t = 0.0
    for v in h:
        h.ws[1] = h.ws[1] * 3.0
        t = t + v
    return t


def next_after_an_update(x):
    g = doubled(x)
    a = next(g)
    x[1] = x[1] * 3.0
    return a + next(g)


def zipped(x):
    t = 0.0
    for k, (v, w) in enumerate(zip(Scaler(1.0).scaled(x), [1.0, 2.0])):
        x[1] = x[1] * 3.0
        t = t + v * w
    return t


@pytest.mark.parametrize("f", [consumer_updates_the_receiver, consumer_updates_the_argument,
                               consumer_updates_through_a_method_call, consumer_updates_what_iter_reads,
                               next_after_an_update, zipped], ids=lambda f: f.__name__)
def test_an_update_of_what_a_generator_reads_before_its_next_item_is_refused(mode, f):
    """Python's generator reads it when the item is taken: the items computed when it was called would be stale
    (values 4.5 for 7.5, 6 for 14, silently)."""
    with pytest.raises(ZygoteError, match="in place"):
        gradient(f, np.array([1.5, 2.0]))


class Counter:
    def __init__(self):
        self.n = 0.0

    def steps(self, x):
        for v in x:
            self.n = self.n + v
            yield self.n * v


def endless(x):
    while True:
        for v in x:
            yield v


def sender(x):
    y = yield x[0]
    yield y


@pytest.mark.parametrize("f, match", [
    (lambda x: sum(v * 2.0 for v in Counter().steps(x)), "updates an object in place"),
    (lambda x: sum(v for _, v in zip(range(5), endless(x))), "endless generator"),
    (lambda x: sum(sender(x)), "value of a yield expression"),
    (lambda x: next(doubled(iter(x))), "given an iterator")], ids=["updates", "endless", "send", "iterator"])
def test_what_eager_items_cannot_do_is_refused(mode, f, match):
    with pytest.raises(UnsupportedSyntax, match=match):
        gradient(f, np.array([0.3, 1.2]))


def test_a_generator_no_gradient_flows_through_runs_as_written():
    def f(x):
        return x * sum(1.0 for _ in endless([1, 2]) if False) + x if False else x * len(list(zip(range(3),
                                                                                                  endless([1.0]))))
    assert gradient(f, 2.0) == (3.0,)


def captured_state_updated(x):
    state = [x[0], x[1]]

    def gen():
        for v in state:
            yield v * 2.0
    t = 0.0
    for v in gen():
        state[1] = state[1] * 3.0
        t = t + v
    return t


def test_what_a_nested_generator_captures_is_watched(mode):
    with pytest.raises(ZygoteError, match="in place"):
        gradient(captured_state_updated, np.array([1.5, 2.0]))

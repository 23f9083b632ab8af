"""A method that updates its object through another of its methods (lower/scan.py `may_update_in_place`, lower/
updates.py `objectcall`): `__call__` returning `self.forward(x)`, where `forward` keeps state (running statistics, the
last input, a call count), and the `nn.Module` idiom `__call__(self, *args)` returning `self.forward(*args)`. The call
site takes the updated object back; both were refused ("updates its argument 'self' in place, and the call site does not
take the updated object back"). An update of a starred argument stays refused: the call site cannot name it. Checked
against one plain call and central differences in float64."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

X = np.array([[0.3, -0.5], [1.2, 0.7], [0.1, 0.4]])


class _Layer:
    def __init__(self, w):
        self.w = w
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        self.last = x * self.w
        return np.tanh(self.last)

    def __call__(self, x):
        return self.forward(x)


class _Module:
    def __call__(self, *args):
        return self.forward(*args)


class _BatchNorm(_Module):
    def __init__(self):
        self.running = np.zeros(2)

    def forward(self, x, momentum=0.1):
        self.running = (1 - momentum) * self.running + momentum * x.mean(0)
        return (x - x.mean(0)) / (x.std(0) + 1e-3)


class _Pure(_Module):
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(x * self.w)


class _UpdatesItsArgument(_Module):
    def forward(self, buf):
        buf[0] = buf[0] * 2.0
        return np.sum(buf)


def through_call(x):
    layer = _Layer(x[0])
    y = layer(x[1:])
    return np.sum(y * layer.last) + layer.calls


def through_explicit_call(x):
    layer = _Layer(x[0])
    y = layer.__call__(x[1:])
    return np.sum(y * layer.last)


def module_keeping_statistics(x):
    bn = _BatchNorm()
    h = bn(x) * x
    return np.sum(bn(h) ** 2) + np.sum(bn.running ** 2)


def module_keeping_nothing(x):
    m = _Pure(x[0])
    return np.sum(m(x) * m(x * 2.0))


@pytest.mark.parametrize("f", [through_call, through_explicit_call, module_keeping_statistics,
                               module_keeping_nothing])
def test_a_call_delegating_to_an_updating_method(mode, f):
    value, (grad,) = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    np.testing.assert_allclose(grad, central(f, (X,), 0), rtol=1e-6, atol=1e-8)


def test_an_update_of_a_starred_argument_is_refused(mode):
    def f(x):
        b = x * 1.0
        y = _UpdatesItsArgument()(b)
        return y + np.sum(b * b)
    with pytest.raises(ZygoteError, match="updates its argument 'buf' in place"):
        gradient(f, X.copy())


class _Dense(_Module):
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(x @ self.w)


class _Sequence(_Module):
    def __init__(self, *modules):
        self.modules = list(modules)

    def forward(self, x):
        for m in self.modules:
            x = m(x)
        return x


def _two_layers(w):
    model = _Sequence(_Dense(w), _Dense(w.T * 0.5))
    return np.sum(model(X[:, :2] @ w) ** 2)


def test_a_sequence_of_modules_called_in_a_loop(mode):
    """`for m in self.modules: x = m(x)`, each module's `__call__` delegating to its `forward`: the loop put each
    module back into the list, which then counted as updated, and `Sequence.forward` was refused as updating `self`
    and `x` ("updates its arguments 'self', 'x' in place"); nothing is updated."""
    w = np.array([[0.4, -0.3], [0.2, 0.6]])
    value, (grad,) = value_and_gradient(_two_layers, w)
    assert value == pytest.approx(_two_layers(w), rel=1e-12)
    np.testing.assert_allclose(grad, central(_two_layers, (w,), 0), rtol=1e-6, atol=1e-8)

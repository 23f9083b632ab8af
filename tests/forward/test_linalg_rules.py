"""Tangent rules of np.linalg (zygotepy/forward/linalg_rules.py) and of the functions with several outputs
(np.split, np.meshgrid): `derivative` against central differences in float64, and `hessian` (forward-over-reverse:
the reverse rules run on dual numbers) against central differences of the gradient."""
import os
import sys

import numpy as np
import pytest

from zygotepy import derivative, hessian

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central_hessian  # noqa: E402

RNG = np.random.default_rng(11)
_A = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
_B = RNG.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
_C = _A + 1j * RNG.uniform(-1, 1, (3, 3))
_V = RNG.uniform(-1, 1, 6)


def _parts(v):
    """An output as a flat list of arrays (a tuple or list of outputs in order)."""
    if isinstance(v, (tuple, list)):
        return [p for item in v for p in _parts(item)]
    return [np.asarray(v, dtype=complex)]


def _agree(f, t, h=1e-6):
    got = _parts(derivative(f, t))
    want = [(p - m) / (2 * h) for p, m in zip(_parts(f(t + h)), _parts(f(t - h)), strict=True)]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert np.allclose(g, w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", [
    lambda t: np.linalg.det(_A + t * _A.T),
    lambda t: np.linalg.det(_B * t),
    lambda t: np.linalg.slogdet(_A * t - np.eye(3)),
    lambda t: np.linalg.slogdet(_B + t * np.eye(3))[1],
    lambda t: np.linalg.slogdet(_C + t * _A),
    lambda t: np.linalg.inv(_A + t),
    lambda t: np.linalg.solve(_A * t, _V[:3] * t),
    lambda t: np.split(_V * t + t * t, 3),
    lambda t: np.array_split(np.sin(_V * t), 4),
    lambda t: np.split(_B[0] * t, [1], axis=1),
    lambda t: np.meshgrid(_V[:2] * t, _V[2:5], indexing="ij"),
    lambda t: np.meshgrid(_V[:2], np.cos(t * _V[2:5])),
], ids=["det", "det-batched", "slogdet", "slogdet-batched", "slogdet-complex", "inv", "solve", "split",
        "array_split", "split-axis", "meshgrid-ij", "meshgrid-second"])
def test_tangent_rules(f):
    _agree(f, 0.7)


def logdet_loss(x):
    m = np.outer(x, x) + np.diag(x * x) + np.eye(3)
    return np.linalg.slogdet(m)[1] + np.linalg.det(m) * 0.1


def split_loss(x):
    a, b = np.split(x, 2)
    g1, g2 = np.meshgrid(a, b)
    return np.sum(np.sin(g1) * g2 ** 2)


@pytest.mark.parametrize("f, x", [(logdet_loss, np.array([0.3, -0.5, 0.8])),
                                  (split_loss, np.array([0.3, -0.5, 0.8, 1.2]))], ids=["slogdet", "split"])
def test_hessians(f, x):
    assert np.allclose(hessian(f, x), central_hessian(f, x), rtol=1e-5, atol=1e-6)


def test_dropgrad_and_hook_in_forward_mode():
    """`dropgrad` is a constant to forward mode too (`derivative` gave 6.75 for 2.25; `hessian` of a function of two
    arguments came out unsymmetric), and `hook`, which rewrites reverse-mode gradients, is refused by forward mode, so
    that `jacobian` takes reverse mode, which applies it (its forward pick silently skipped the hook)."""
    from zygotepy import ForwardModeError, dropgrad, hook, jacobian, jvp

    def f(t):
        return t * dropgrad(t * t)

    def g(x, y):
        return x * dropgrad(x * y) + y ** 2

    assert derivative(f, 1.5) == 2.25 and jvp(f, (1.5,), (1.0,))[1] == 2.25
    assert hessian(g, 0.7, 1.3) == ((0.0, 0.0), (0.0, 2.0))
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(jacobian(lambda v: dropgrad(v) * v, x, mode="forward")[0], np.diag(x))

    def hooked(v):
        return np.sin(hook(lambda g: 3 * g, 2 * v)) * np.ones(3)

    with pytest.raises(ForwardModeError, match="hook"):
        jacobian(hooked, x[:1], mode="forward")
    np.testing.assert_allclose(jacobian(hooked, x[:1])[0], 6 * np.cos(2 * x[:1]) * np.ones((3, 1)))

"""Tangent rules of scipy.special (zygotepy/forward/scipy_rules.py): `derivative` against central differences in
float64, and `hessian` of losses calling logsumexp / softmax / log_softmax (forward-over-reverse: their reverse rules
run on dual numbers) against central differences of the gradient."""
import os
import sys

import numpy as np
import pytest

from zygotepy import derivative, hessian

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central_hessian  # noqa: E402

sc = pytest.importorskip("scipy.special")

RNG = np.random.default_rng(12)
_X = RNG.uniform(-1, 1, (2, 4))
_B = RNG.uniform(0.5, 1.5, (2, 4))


def _parts(v):
    if isinstance(v, (tuple, list)):
        return [p for item in v for p in _parts(item)]
    return [np.asarray(v, dtype=float)]


@pytest.mark.parametrize("f", [
    lambda t: sc.expit(_X * t),
    lambda t: sc.gammaln(_B + t),
    lambda t: sc.xlogy(_B * t, _B + t),
    lambda t: sc.erf(_X * t) + sc.log_ndtr(_X - t),
    lambda t: sc.logsumexp(_X * t),
    lambda t: sc.logsumexp(_X * t, axis=1),
    lambda t: sc.logsumexp(_X * t, axis=0, keepdims=True),
    lambda t: sc.logsumexp(_X * t, b=_B),
    lambda t: sc.logsumexp(_X, 1, _B * t),
    lambda t: sc.logsumexp(_X * t, axis=1, b=_B - 1.2, return_sign=True),
    lambda t: sc.softmax(_X * t),
    lambda t: sc.softmax(_X * t, axis=1),
    lambda t: sc.log_softmax(_X * t + t * t, axis=0),
], ids=["expit", "gammaln", "xlogy", "erf-log_ndtr", "logsumexp", "logsumexp-axis", "logsumexp-keepdims",
        "logsumexp-b", "logsumexp-b-positional", "logsumexp-sign", "softmax", "softmax-axis", "log_softmax"])
def test_tangent_rules(f, t=0.7, h=1e-6):
    got = _parts(derivative(f, t))
    want = [(p - m) / (2 * h) for p, m in zip(_parts(f(t + h)), _parts(f(t - h)), strict=True)]
    for g, w in zip(got, want, strict=True):
        assert np.allclose(g, w, rtol=1e-6, atol=1e-6)


def lse_loss(x):
    return sc.logsumexp(x) + sc.logsumexp(x.reshape(2, 2), axis=1, b=np.array([[1.0, 2.0]])).sum()


def softmax_loss(x):
    return np.sum(sc.softmax(x) * np.arange(4.0)) + np.sum(sc.log_softmax(x.reshape(2, 2), axis=0) ** 2)


def expit_loss(x):
    return np.sum(sc.expit(x) ** 2 * sc.gammaln(x + 2.0))


@pytest.mark.parametrize("f", [lse_loss, softmax_loss, expit_loss], ids=lambda f: f.__name__)
def test_hessians(f):
    x = np.array([0.3, -0.5, 0.8, 0.1])
    assert np.allclose(hessian(f, x), central_hessian(f, x), rtol=1e-5, atol=1e-6)

"""Tangent rules of np.linalg (zygotepy/forward/linalg_rules.py) and of the functions with several outputs
(np.split, np.meshgrid): `derivative` against central differences in float64, and `hessian` (forward-over-reverse:
the reverse rules run on dual numbers) against central differences of the gradient."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ForwardModeError, derivative, hessian, jacobian

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central_hessian  # noqa: E402

RNG = np.random.default_rng(11)
_A = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
_B = RNG.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
_C = _A + 1j * RNG.uniform(-1, 1, (3, 3))
_V = RNG.uniform(-1, 1, 6)
_D = RNG.uniform(-1, 1, (3, 3))
_S = _A + _A.T  # symmetric, distinct eigenvalues
_TALL = RNG.uniform(-1, 1, (4, 3))
_WIDE = _TALL.T[:2]


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
    lambda t: np.linalg.eigh(_S + t * _D),
    lambda t: np.linalg.eigh(_S + t * _D, UPLO="U"),
    lambda t: np.linalg.eigvalsh(_B + t * _B[0]),
    lambda t: np.linalg.svd(_TALL + t * _TALL ** 2, full_matrices=False),
    lambda t: np.linalg.svd(_WIDE * t + _WIDE ** 3, full_matrices=False),
    lambda t: np.linalg.svd(_A + t * _D),
    lambda t: np.linalg.svd(_TALL + t, compute_uv=False),
    lambda t: np.linalg.svd(_TALL + t)[1],
    lambda t: np.linalg.qr(_TALL + t * _TALL ** 2),
    lambda t: np.linalg.qr(_A * t + _D, mode="r"),
    lambda t: np.linalg.pinv(_TALL + t * _TALL ** 2),
    lambda t: np.linalg.pinv(_WIDE * t),
    lambda t: np.linalg.pinv(_S + t * _D, hermitian=True),
    lambda t: np.linalg.lstsq(_TALL + t * _TALL ** 2, _V[:4] * t, rcond=None)[:2],
    lambda t: np.linalg.lstsq(_TALL, np.outer(_V[:4], _V[4:]) + t, rcond=None)[1],
    lambda t: np.linalg.lstsq(_A + t, _D, rcond=None)[3],
    lambda t: np.linalg.matrix_power(_A + t * _D, 3),
    lambda t: np.linalg.matrix_power(_A + t * _D, -2),
    lambda t: np.linalg.norm(_TALL + t * _V[:3], axis=1),
    lambda t: np.linalg.norm(_V * t - 0.2, 1),
    lambda t: np.linalg.norm(_V * t - 0.2, np.inf),
    lambda t: np.linalg.norm(_TALL * t - 0.2, 3, axis=0, keepdims=True),
    lambda t: np.linalg.norm(_TALL * t + _TALL ** 2, "nuc"),
    lambda t: np.linalg.norm(_TALL * t + _TALL ** 2, 2),
    lambda t: np.linalg.norm(_B + t * _B[0], -2, axis=(1, 2)),
    lambda t: np.linalg.norm(_B * t, "fro", axis=(1, 2)),
    lambda t: np.linalg.norm(_B * t),
], ids=["det", "det-batched", "slogdet", "slogdet-batched", "slogdet-complex", "inv", "solve", "split",
        "array_split", "split-axis", "meshgrid-ij", "meshgrid-second", "eigh", "eigh-upper-of-unsymmetric",
        "eigvalsh-batched", "svd-tall", "svd-wide", "svd-square-full", "svd-values", "svd-values-of-full", "qr",
        "qr-r", "pinv-tall", "pinv-wide", "pinv-hermitian-of-unsymmetric", "lstsq", "lstsq-residuals", "lstsq-singular-values", "matrix_power",
        "matrix_power-negative", "norm-axis", "norm-1", "norm-inf", "norm-3-keepdims", "norm-nuclear",
        "norm-spectral", "norm-smallest-batched", "norm-fro-batched", "norm-3d"])
def test_tangent_rules(f):
    _agree(f, 0.7)


def logdet_loss(x):
    m = np.outer(x, x) + np.diag(x * x) + np.eye(3)
    return np.linalg.slogdet(m)[1] + np.linalg.det(m) * 0.1


def decompositions_loss(x):
    m = np.outer(x, x[::-1]) + np.diag(x) + 4 * np.eye(3)
    w = np.linalg.eigvalsh(m)
    return np.sum(w ** 3) + np.linalg.norm(m, "nuc") + np.sum(np.linalg.pinv(m[:, :2]) ** 2) \
        + np.sum(np.linalg.qr(m)[1] ** 2) + np.sum(np.linalg.matrix_power(m, 2))


def vectors_loss(x):
    m = np.outer(x, x[::-1]) + np.diag(x) + 4 * np.eye(3)
    return np.sum(np.linalg.eigh(m)[1][:, 0] ** 4) + np.sum(np.linalg.svd(m[:, :2])[0][:, 0] ** 4)


def split_loss(x):
    a, b = np.split(x, 2)
    g1, g2 = np.meshgrid(a, b)
    return np.sum(np.sin(g1) * g2 ** 2)


@pytest.mark.parametrize("f, x", [(logdet_loss, np.array([0.3, -0.5, 0.8])),
                                  (split_loss, np.array([0.3, -0.5, 0.8, 1.2])),
                                  (decompositions_loss, np.array([0.3, -0.5, 0.8])),
                                  (vectors_loss, np.array([0.3, -0.5, 0.8]))],
                         ids=["slogdet", "split", "decompositions", "vectors"])
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


def test_completing_singular_vectors_have_nan_tangents():
    """np.linalg.svd's default full_matrices=True of a non-square matrix: the completing vectors are not unique; their
    tangents are nan (a result reading them is nan), the others' are the reduced factorization's."""
    U, s, Vh = derivative(lambda t: np.linalg.svd(_TALL + t * _TALL ** 2), 0.3)
    Ur, sr, Vhr = derivative(lambda t: np.linalg.svd(_TALL + t * _TALL ** 2, full_matrices=False), 0.3)
    assert U.shape == (4, 4) and np.isnan(U[:, 3:]).all()
    np.testing.assert_allclose(U[:, :3], Ur)
    np.testing.assert_allclose(s, sr)
    np.testing.assert_allclose(Vh, Vhr)


@pytest.mark.parametrize("f, match", [
    (lambda t: np.linalg.eigh(np.eye(3) * t), "repeated"),
    (lambda t: np.linalg.qr(_WIDE * t), "tall or square"),
    (lambda t: np.linalg.svd(_A * t, hermitian=True), "hermitian"),
    (lambda t: np.linalg.norm(_A * t, 1), "ord=1"),
    (lambda t: np.linalg.eigh(_C * t), "real"),
], ids=["eigh-degenerate", "qr-wide", "svd-hermitian", "norm-matrix-1", "eigh-complex"])
def test_refused(f, match):
    with pytest.raises(ForwardModeError, match=match):
        derivative(f, 0.3)


def test_forward_jacobian_of_eigenvalues():
    s = _S.copy()
    j = jacobian(np.linalg.eigvalsh, s, mode="forward")[0]
    np.testing.assert_allclose(j, jacobian(np.linalg.eigvalsh, s, mode="reverse")[0], atol=1e-10)


def test_cholesky_reads_the_lower_triangle():
    """NumPy's cholesky reads the lower triangle only: a perturbation of an upper entry changes nothing, one of a lower
    entry off the diagonal counts once (the symmetric formula gave the first a tangent and the second half of one;
    hessian then came out unsymmetric)."""
    a = np.array([[2.0, 0.3], [0.3, 1.5]])
    forward = jacobian(lambda m: np.linalg.cholesky(m).ravel(), a, mode="forward")[0]
    reverse = jacobian(lambda m: np.linalg.cholesky(m).ravel(), a, mode="reverse")[0]
    np.testing.assert_allclose(forward, reverse, atol=1e-12)
    assert not forward[:, 0, 1].any()
    w = np.arange(4.0).reshape(2, 2)

    def loss(v):
        return np.sum(np.linalg.cholesky(v.reshape(2, 2)) * w)
    np.testing.assert_allclose(hessian(loss, a.ravel()), central_hessian(loss, a.ravel()), rtol=1e-5, atol=1e-6)


def test_multi_dot():
    """A tangent rule (linear in each matrix of the list): hessian and a gradient of a gradient through it were
    refused, both routes (found by a probe of NumPy idioms)."""
    s = _A + 0.1 * _D

    def f(v):
        a = v.reshape(3, 3)
        return np.sum(np.linalg.multi_dot([a, a.T, a]) ** 2)
    np.testing.assert_allclose(hessian(f, s.ravel()), central_hessian(f, s.ravel()), rtol=1e-5, atol=1e-5)
    _agree(lambda t: np.linalg.multi_dot([_A * t, _D, _TALL.T, _V[:4] + t]), 0.4)


@pytest.mark.dual_route  # (the rule's own loop is not one an outer level of reverse mode transforms)
def test_gradient_of_a_gradient_through_multi_dot():
    from zygotepy import gradient
    s = _A + 0.1 * _D

    def f(v):
        a = v.reshape(3, 3)
        return np.sum(np.linalg.multi_dot([a, a.T, a]) ** 2)

    def g(v):
        return np.sum(gradient(f, v)[0] ** 2)
    h = 1e-6
    e = np.zeros(9)
    e[4] = h
    np.testing.assert_allclose(gradient(g, s.ravel())[0][4], (g(s.ravel() + e) - g(s.ravel() - e)) / (2 * h),
                               rtol=1e-5)


def test_a_cutoff_that_drops_a_singular_value_is_refused_in_forward_mode():
    """lstsq's tangent used the full pseudo-inverse whatever its rcond (596.5 against -0.21 by differences) and pinv's
    the matrix itself, not its truncation: refused where the cutoff drops a singular value; jacobian then takes
    reverse mode, whose rules follow the cutoff."""
    from zygotepy import jvp
    a, b = np.array([[3.0, 0.5], [1.0, 0.2], [0.0, 0.1]]), np.array([1.0, 2.0, 3.0])
    cases = [lambda m: np.sum(np.linalg.lstsq(m, b, rcond=0.1)[0] * np.array([1.0, -2.0])),
             lambda m: np.sum(np.linalg.pinv(m, rcond=0.1) * np.arange(6.0).reshape(2, 3))]
    for f in cases:
        with pytest.raises(ForwardModeError, match="the cutoff drops a singular value"):
            jvp(f, (a,), (np.ones_like(a),))
        fd = np.array([(f(a + 1e-6 * e) - f(a - 1e-6 * e)) / 2e-6 for e in np.eye(6).reshape(6, 3, 2)]).reshape(3, 2)
        np.testing.assert_allclose(jacobian(f, a)[0], fd, atol=1e-6)


def test_the_upper_cholesky_factor_in_forward_mode():
    """`cholesky(a, upper=True)`: the tangent was the lower factor's formula applied to U (not even triangular), and
    hessian and hvp through it were wrong; gradient was right."""
    from zygotepy import jvp
    a, da = np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([[1.0, 0.5], [0.5, 2.0]])
    _, got = jvp(lambda m: np.linalg.cholesky(m, upper=True), (a,), (da,))
    fd = (np.linalg.cholesky(a + 1e-6 * da, upper=True) - np.linalg.cholesky(a - 1e-6 * da, upper=True)) / 2e-6
    np.testing.assert_allclose(got, fd, atol=1e-8)
    f = lambda v: np.sum(np.linalg.cholesky(np.outer(v, v) + np.eye(2) * 3.0, upper=True) ** 3)  # noqa: E731
    np.testing.assert_allclose(hessian(f, np.array([0.4, 0.9])), central_hessian(f, np.array([0.4, 0.9])),
                               rtol=1e-6, atol=1e-8)

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


# --- batched and complex inputs: jvp against central differences (and reverse mode where it runs) -------------------
_R = np.random.default_rng(5)
_X3, _Y3 = _R.standard_normal((3, 3)), _R.standard_normal((3, 3))
_XB, _YB = _R.standard_normal((2, 3, 3)), _R.standard_normal((2, 3, 3))
_XT, _YT = _R.standard_normal((4, 3)), _R.standard_normal((4, 3))
_I3 = 3 * np.eye(3)


def _hpd(x, y):
    """A Hermitian positive-definite matrix (stack) of the real inputs."""
    z = x + 1j * y
    return z @ np.conj(np.swapaxes(z, -1, -2)) + 3 * np.eye(z.shape[-1])


_CASES = {  # name: (f of real arrays, the arrays, whether reverse mode gives the same gradient (a real scalar f))
    "solve-stack-vector-k-eq-n": (lambda a, b: np.linalg.solve(a + _I3, b), (_R.standard_normal((3, 3, 3)), _V[:3]), 0),
    "solve-stack-vector-k-ne-n": (lambda a, b: np.linalg.solve(a + _I3, b), (_XB, _V[:3]), 0),
    "solve-stack-vector-loss": (lambda a, b: np.sum(np.linalg.solve(a + _I3, b) * np.arange(9.0).reshape(3, 3)),
                                (_R.standard_normal((3, 3, 3)), _V[:3]), 1),
    "solve-stack-vector-b-only": (lambda b: np.linalg.solve(_XB + _I3, b), (_V[3:],), 0),
    "solve-stack-matrix": (lambda a, b: np.linalg.solve(a + _I3, b), (_XB, _R.standard_normal((2, 3, 2))), 0),
    "solve-stack-broadcast-matrix": (lambda a, b: np.linalg.solve(a + _I3, b), (_XB, _R.standard_normal((3, 1))), 0),
    "solve-matrix-stack-of-b": (lambda a, b: np.linalg.solve(a + _I3, b), (_X3, _R.standard_normal((4, 3, 2))), 0),
    "solve-complex-stack-vector": (lambda x, y, b: np.linalg.solve(x + 1j * y + _I3, b), (_XB, _YB, _V[:3]), 0),
    "norm-nuc-complex": (lambda x, y: np.linalg.norm(x + 1j * y, "nuc"), (_X3, _Y3), 1),
    "norm-2-complex": (lambda x, y: np.linalg.norm(x + 1j * y, 2), (_X3, _Y3), 1),
    "norm--2-complex": (lambda x, y: np.linalg.norm(x + 1j * y, -2), (_X3, _Y3), 1),
    "norm-nuc-complex-batched-keepdims": (lambda x, y: np.linalg.norm(x + 1j * y, "nuc", axis=(2, 0), keepdims=True),
                                          (_XB, _YB), 0),
    "norm-2-complex-tall": (lambda x, y: np.linalg.norm(x + 1j * y, 2), (_XT, _YT), 1),
    "svd-values-complex": (lambda x, y: np.linalg.svd(x + 1j * y, compute_uv=False), (_XT, _YT), 0),
    "svdvals-complex-batched": (lambda x, y: np.linalg.svdvals(x + 1j * y), (_XB, _YB), 0),
    "cholesky-complex": (lambda x, y: np.linalg.cholesky(_hpd(x, y)), (_X3, _Y3), 0),
    "cholesky-complex-upper": (lambda x, y: np.linalg.cholesky(_hpd(x, y), upper=True), (_X3, _Y3), 0),
    "cholesky-complex-batched": (lambda x, y: np.linalg.cholesky(_hpd(x, y)), (_XB, _YB), 0),
    # NumPy reads one triangle and its diagonal's real part only
    "cholesky-complex-one-triangle": (lambda x, y: np.linalg.cholesky(0.1 * (x + 1j * y) + 3 * _I3), (_X3, _Y3), 0),
    "cholesky-complex-one-triangle-upper": (lambda x, y: np.linalg.cholesky(0.1 * (x + 1j * y) + 3 * _I3, upper=True),
                                            (_X3, _Y3), 0),
    "eigvalsh-complex": (lambda x, y: np.linalg.eigvalsh(_hpd(x, y)), (_X3, _Y3), 0),
    "eigvalsh-complex-upper-batched": (lambda x, y: np.linalg.eigvalsh(_hpd(x, y), "U"), (_XB, _YB), 0),
    "eigvalsh-complex-one-triangle": (lambda x, y: np.linalg.eigvalsh(x + 1j * y, UPLO="U"), (_X3, _Y3), 0),
    "qr-complex": (lambda x, y: np.linalg.qr(x + 1j * y), (_XT, _YT), 0),
    "qr-complex-square-complete": (lambda x, y: np.linalg.qr(x + 1j * y, mode="complete"), (_X3, _Y3), 0),
    "qr-complex-batched-r": (lambda x, y: np.linalg.qr(x + 1j * y, mode="r"), (_XB, _YB), 0),
    "pinv-complex-tall": (lambda x, y: np.linalg.pinv(x + 1j * y), (_XT, _YT), 0),
    "pinv-complex-wide-batched": (lambda x, y: np.linalg.pinv(x + 1j * y), (_XB[:, :2], _YB[:, :2]), 0),
    "pinv-complex-hermitian": (lambda x, y: np.linalg.pinv(x + 1j * y + _I3, hermitian=True), (_X3, _Y3), 0),
    "lstsq-complex": (lambda x, y, b: np.linalg.lstsq(x + 1j * y, b + 1j, rcond=None), (_XT, _YT, _TALL[:, :2]), 0),
    "lstsq-complex-vector": (lambda x, y, b: np.linalg.lstsq(x + 1j * y, b, rcond=None)[:2], (_XT, _YT, _V[:4]), 0),
    "det-complex-batched": (lambda x, y: np.linalg.det(x + 1j * y + _I3), (_XB, _YB), 0),
    "slogdet-complex-batched": (lambda x, y: np.linalg.slogdet(x + 1j * y + _I3), (_XB, _YB), 0),
    "inv-complex-batched": (lambda x, y: np.linalg.inv(x + 1j * y + _I3), (_XB, _YB), 0),
    "matrix_power-complex-batched": (lambda x, y: np.linalg.matrix_power(x + 1j * y + _I3, -2), (_XB, _YB), 0),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_batched_and_complex_tangents(name):
    """The rules on stacks of matrices and complex ones (made of real inputs): `np.linalg.solve` of a stack and a 1-D b
    (NumPy 2 solves for that vector with each matrix) had a wrong tangent where the stack's length was n (-3.07 for
    18.95) and crashed otherwise; the norms of a complex matrix through its singular values came out complex
    (0.53-1.62j for 2.60); the complex cholesky factor was wrong off its first column."""
    from zygotepy import gradient, jvp
    f, args, reverse_too = _CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    ts = tuple(rng.standard_normal(np.shape(a)) for a in args)
    got = _parts(jvp(f, args, ts)[1])
    h = 1e-6
    plus, minus = (f(*[a + s * h * d for a, d in zip(args, ts, strict=True)]) for s in (1, -1))
    want = [(p - m) / (2 * h) for p, m in zip(_parts(plus), _parts(minus), strict=True)]
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    if reverse_too:
        grads = gradient(f, *args)
        np.testing.assert_allclose(sum(np.sum(g * d) for g, d in zip(grads, ts, strict=True)), got[0].real,
                                   rtol=1e-9, atol=1e-9)
        assert not np.iscomplexobj(jvp(f, args, ts)[1])


@pytest.mark.parametrize("k", [2, 3])
def test_forward_jacobian_of_solve_with_a_stack_and_a_vector(k):
    """jacobian(mode="forward") of solve(A (k, n, n), b (n,)): its shape was (k, n) + A's shape plus an extra n where
    k == n (hessian then failed to reshape it), and it crashed where k != n; now reverse mode's, and hessian agrees
    with differences of the gradient."""
    a = np.random.default_rng(k).standard_normal((k, 3, 3)) + _I3
    b = _V[:3]
    forward = jacobian(lambda m: np.linalg.solve(m, b), a, mode="forward")[0]
    reverse = jacobian(lambda m: np.linalg.solve(m, b), a, mode="reverse")[0]
    assert forward.shape == (k, 3, k, 3, 3)
    np.testing.assert_allclose(forward, reverse, atol=1e-12)
    w = np.arange(3.0 * k).reshape(k, 3)

    def loss(v):
        return np.sum(np.linalg.solve(v.reshape(k, 3, 3), b) ** 2 * w)
    np.testing.assert_allclose(hessian(loss, a.ravel()), central_hessian(loss, a.ravel()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f, match", [
    (lambda x, y: np.linalg.svd(x + 1j * y), "singular vectors are fixed up to a phase"),
    (lambda x, y: np.linalg.eigh(_hpd(x, y)), "np.linalg.eigvalsh"),
], ids=["svd-complex-vectors", "eigh-complex-vectors"])
def test_complex_singular_and_eigen_vectors_are_refused(f, match):
    """A complex matrix's singular vectors and eigenvectors are each fixed up to a phase, which LAPACK picks: forward
    mode refuses them (their values' tangents are given: compute_uv=False, eigvalsh)."""
    from zygotepy import jvp
    with pytest.raises(ForwardModeError, match=match):
        jvp(f, (_X3, _Y3), (_Y3, _X3))


def test_second_forward_derivative_of_a_complex_spectral_norm_is_refused():
    """The first derivative needs the singular vectors, whose own tangents forward mode refuses for a complex matrix:
    a derivative of a derivative says so rather than return a number."""
    from zygotepy import derivative

    def inner(t, s):
        return np.linalg.norm(_X3 + t * _Y3 + 1j * (_Y3 + s * _X3), "nuc")
    with pytest.raises(ForwardModeError, match="real matrices only"):
        derivative(lambda t: derivative(lambda s: inner(t, s), 0.2), 0.3)


def _triangle_area(P):
    return 0.5 * np.linalg.det(np.hstack([P.reshape(3, 2), np.ones((3, 1))]))


def _det_2x2(x):
    return np.linalg.det(x.reshape(2, 2)) * 3.0


@pytest.mark.parametrize("f, x", [(_triangle_area, np.array([0.0, 0.0, 1.0, 1.0, 2.0, 2.0])),
                                  (_det_2x2, np.array([1.0, 2.0, 2.0, 4.0]))], ids=lambda v: getattr(v, "__name__", ""))
def test_det_at_a_singular_matrix(f, x):
    """det's tangent tr(adj(A) dA), where det A is 0 (collinear points): it was det A tr(A^-1 dA), whose solve raised
    LinAlgError; `derivative` and `hessian` against central differences."""
    h = 1e-6
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        np.testing.assert_allclose(derivative(lambda t: f(x + t * e / h), 0.0), (f(x + e) - f(x - e)) / (2 * h),
                                   rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian(f, x), central_hessian(f, x, 1e-5), rtol=1e-6, atol=1e-7)

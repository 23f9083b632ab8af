"""Tests of `zygotepy/adjoints/numpy/decompositions.py` (norms and decompositions): its rows of the rule table against
finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py) and what the random
rows cannot reach."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("decompositions"))


la = np.linalg


def test_repeated_singular_values_and_eigenvalues_raise():
    _, back = registry.find_rule(la.svd)(np.eye(3))
    with pytest.raises(zygotepy.ZygoteError, match="singular vectors"):
        back((np.ones((3, 3)), None, None))
    np.testing.assert_allclose(back((None, np.ones(3), None))[0], np.eye(3))  # the values alone are fine
    _, back = registry.find_rule(la.eigh)(np.diag([1.0, 1.0, 2.0]))
    with pytest.raises(zygotepy.ZygoteError, match="eigenvectors"):
        back((None, np.ones((3, 3))))
    np.testing.assert_allclose(back((np.array([1.0, 0.0, 0.0]), None))[0], np.diag([1.0, 0.0, 0.0]))
    _, back = registry.find_rule(la.norm)(np.eye(2), 2)
    with pytest.raises(zygotepy.ZygoteError, match="repeated singular values"):
        back(1.0)


def test_undefined_decomposition_gradients_raise():
    rng = np.random.default_rng(0)
    _, back = registry.find_rule(la.qr)(rng.normal(size=(2, 4)))
    with pytest.raises(zygotepy.ZygoteError, match="tall or square"):
        back((np.ones((2, 2)), None))
    with pytest.raises(zygotepy.ZygoteError, match="mode='reduced'"):
        registry.find_rule(la.qr)(rng.normal(size=(3, 2)), "complete")
    _, back = registry.find_rule(la.svd)(rng.normal(size=(4, 2)))  # full_matrices=True: U is 4x4
    with pytest.raises(zygotepy.ZygoteError, match="full_matrices=False"):
        back((np.ones((4, 4)), None, None))
    dU = np.zeros((4, 4))
    dU[:, :2] = 1.0
    assert back((dU, None, None))[0].shape == (4, 2)  # no cotangent on the completing columns: defined


@pytest.mark.parametrize("op", [la.cholesky, la.qr, la.eigh, la.eigvalsh, la.svd, la.svdvals])
def test_complex_decompositions_are_refused(op):
    with pytest.raises(zygotepy.ZygoteError, match="real matrices"):
        registry.find_rule(op)(np.eye(2) * (1 + 1j))


@pytest.mark.parametrize("optimized", [True, False])
def test_gradient_with_respect_to_a_float_ord(optimized):
    """d/dp (sum |x|^p)^(1/p) = y (sum |x|^p ln|x| / (p s) - ln(s) / p^2); an int, inf or string ord is a constant,
    and so is the float ord of a matrix norm, or 0 (NumPy takes no ord near those: nothing to differentiate)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(3, 4))
    X[0, 1] = 0.0  # 0 ln 0 = 0
    with zygotepy.optimizations(optimized):
        (dp,) = zygotepy.gradient(lambda p: la.norm(np.array([1.0, 2.0]), p), 3.0)
        s = 1 + 8
        assert dp == pytest.approx(s ** (1 / 3) * (8 * np.log(2) / (3 * s) - np.log(s) / 9), rel=1e-12)
        check_grads(lambda x, p: la.norm(x, p, axis=1), X, 2.5)
        check_grads(lambda x, p: la.norm(x, p, 0, True), X, 1.5)
        check_grads(lambda x, p: la.norm(x, ord=p, axis=-1, keepdims=True), X, 3.5)
        check_grads(lambda x, p: la.norm(x.ravel(), p), X + 3.0, -2.0)
        (g, dp) = zygotepy.gradient(lambda x, p: la.norm(x, p), X[0], 2)
        np.testing.assert_allclose(g, X[0] / la.norm(X[0]), rtol=1e-12)
        assert dp is None
        assert zygotepy.gradient(lambda x, p: la.norm(x, p), X[0], np.inf)[1] is None
        assert zygotepy.gradient(lambda x, p: la.norm(x, p), X, np.inf)[1] is None
        assert zygotepy.gradient(lambda x: la.norm(x, 2.0), X)[0].shape == (3, 4)  # a constant float ord
        for f in (lambda x, p: la.norm(x, p), lambda x, p: la.norm(x, ord=p), lambda x, p: la.norm(x.ravel(), 0.0 * p)):
            assert zygotepy.gradient(f, X, 2.0)[1] is None
        (g,) = zygotepy.gradient(lambda x: la.norm(x, ord=2.0, axis=(0, 1)), X)  # a constant float ord, by keyword
        np.testing.assert_allclose(g, zygotepy.gradient(lambda x: la.norm(x, 2), X)[0], rtol=1e-12)


@pytest.mark.parametrize("optimized", [True, False])
def test_hermitian_svd_reads_the_lower_triangle(optimized):
    """svd(hermitian=True) is eigh of the lower triangle: the gradient sits there, as eigh's does."""
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    with zygotepy.optimizations(optimized):
        (g,) = zygotepy.gradient(lambda a: la.svd(a, compute_uv=False, hermitian=True)[0], a)
        w, V = la.eigh(a)
        G = np.outer(V[:, 1], V[:, 1])  # the gradient of the largest eigenvalue, symmetric
        np.testing.assert_allclose(g, np.tril(G + G.T) - np.diag(np.diag(G)), rtol=1e-12)
        assert g[0, 1] == 0.0
        b = np.random.default_rng(8).normal(size=(2, 3, 3))  # not symmetric: NumPy reads its lower triangles
        check_grads(lambda b: la.svd(b, compute_uv=False, hermitian=True), b)
        check_grads(lambda b: la.svd(b, hermitian=True), b)
        check_grads(lambda b: la.svd(b[0], True, True, True), b)
        check_grads(lambda b: np.sum(la.svd(b, hermitian=True)[0] ** 3) + np.sum(la.svd(b, hermitian=True)[2]), b)


sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # tests/plain_checks.py
from plain_checks import central  # noqa: E402

from zygotepy.adjoints.numpy.linalg import truncated_pinv  # noqa: E402


def _central(f, args, k):
    """dL/dRe z + 1j dL/dIm z (docs/api.md's convention) of the real loss f at z = args[k], by central differences."""
    z, rest = args[k], [*args[:k], *args[k + 1:]]
    if not np.iscomplexobj(z):
        return central(f, args, k)
    re = central(lambda x, *r: f(*r[:k], x + 1j * z.imag, *r[k:]), [z.real, *rest], 0)
    im = central(lambda y, *r: f(*r[:k], z.real + 1j * y, *r[k:]), [z.imag, *rest], 0)
    return re + 1j * im


def _with_singular_values(m, n, s, complex_=False, seed=0):
    """An m x n matrix with the singular values s (the rest 0), random singular vectors."""
    rng = np.random.default_rng(seed)
    U, V = (la.qr(rng.normal(size=(k, k)) + (1j * rng.normal(size=(k, k)) if complex_ else 0))[0] for k in (m, n))
    S = np.zeros((m, n))
    S[range(len(s)), range(len(s))] = s
    return U @ S @ V.conj().T


_CUT = [  # (a, rcond): the cutoff rcond * max(s) drops the smallest nonzero singular value
    (np.array([[3.0, 0.5], [1.0, 0.2], [0.0, 0.1]]), 0.1),  # s = 3.21, 0.103
    (_with_singular_values(4, 3, [3.0, 1.0, 0.1]), 0.05),
    (_with_singular_values(3, 5, [3.0, 1.0, 0.2], seed=1), 0.1),
    (_with_singular_values(4, 3, [3.0, 1.0, 0.15], True, seed=2), 0.1),
]


@pytest.mark.parametrize("case", range(len(_CUT)))
@pytest.mark.parametrize("matrix_b", [False, True])
def test_lstsq_with_a_cutoff_that_drops_a_singular_value(mode, case, matrix_b):
    """lstsq(a, b, rcond) is pinv_k(a) b, the pseudo-inverse of the truncation that keeps s > rcond max(s): its
    gradient at that fixed rank (it was pinv(a)'s, of the full matrix: wildly off), against central differences."""
    a, rcond = _CUT[case]
    rng = np.random.default_rng(case)
    shape = (a.shape[0], 2) if matrix_b else (a.shape[0],)
    b = rng.normal(size=shape) + (1j * rng.normal(size=shape) if np.iscomplexobj(a) else 0)
    w = rng.normal(size=(a.shape[1], 2) if matrix_b else a.shape[1])
    assert la.lstsq(a, b, rcond=rcond)[2] < min(a.shape)  # (the cutoff drops one)
    for f in (lambda a, b: np.sum(np.real(la.lstsq(a, b, rcond=rcond)[0]) * w),
              lambda a, b: np.sum(np.abs(la.lstsq(a, b, rcond)[0]) ** 2 * w)):
        grads = zygotepy.gradient(f, a.copy(), b.copy())
        for k, g in enumerate(grads):
            np.testing.assert_allclose(g, _central(f, [a, b], k), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("rcond", [None, -1, 1e-10])
def test_lstsq_of_full_rank_with_each_default_cutoff(mode, rcond):
    a, b = _with_singular_values(4, 3, [3.0, 1.0, 0.1], seed=3), np.array([1.0, -2.0, 0.5, 0.3])
    f = lambda a, b: np.sum(la.lstsq(a, b, rcond=rcond)[0] * np.array([1.0, -2.0, 0.5]))  # noqa: E731
    grads = zygotepy.gradient(f, a.copy(), b.copy())
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, [a, b], k), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", range(len(_CUT)))
@pytest.mark.parametrize("keyword", ["rcond", "rtol"])
def test_truncated_pinv_back_against_central_differences(case, keyword):
    """The back of pinv at the fixed rank its cutoff keeps (Golub and Pereyra's formula applied to the truncation is
    off by about the ratio of the dropped to the kept singular values), for a stack too."""
    a, rcond = _CUT[case]
    W = np.random.default_rng(case).normal(size=a.shape[::-1]) * (1 + 1j if np.iscomplexobj(a) else 1)
    X, back = truncated_pinv(a, rcond)
    np.testing.assert_allclose(X, la.pinv(a, **{keyword: rcond}), atol=1e-12)
    f = lambda a: np.real(np.sum(la.pinv(a, **{keyword: rcond}) * np.conj(W)))  # noqa: E731
    np.testing.assert_allclose(back(W), _central(f, [a], 0), rtol=1e-6, atol=1e-7)
    stack, Ws = np.stack([a, 2 * a]), np.stack([W, -W])
    X, back = truncated_pinv(stack, np.array([rcond, 0.01]))  # (0.01 keeps all of 2 a)
    np.testing.assert_allclose(X, la.pinv(stack, np.array([rcond, 0.01])), atol=1e-12)
    g = back(Ws)
    np.testing.assert_allclose(g[0], truncated_pinv(a, rcond)[1](W), atol=1e-10)
    f = lambda a: np.real(np.sum(la.pinv(a, 0.01) * np.conj(-W)))  # noqa: E731
    np.testing.assert_allclose(g[1], _central(f, [2 * a], 0), rtol=1e-6, atol=1e-7)


def _norm_2(p):
    return np.linalg.norm(p)


def _norm_rows(P):
    return np.sum(np.linalg.norm(P, axis=1) ** 3)


def _rotation_angle(w):
    return np.sin(np.linalg.norm(w)) * np.sum(w)


@pytest.mark.parametrize("f, x", [(_norm_2, np.array([1.0, 0.0])), (_norm_rows, np.array([[0.0, 0.5], [0.3, 0.0]])),
                                  (_rotation_angle, np.array([0.0, 0.0, 0.5]))], ids=lambda v: getattr(v, "__name__", ""))
def test_the_hessian_of_a_2_norm_where_entries_are_zero(f, x):
    """The 2-norm's gradient is x / |x|, whose derivative at an entry that is 0 is not: `sign(x) |x| / |x|` gave 0
    there (the gradient itself was right)."""
    from plain_checks import central_hessian
    flat = x.reshape(-1)
    g = lambda v: f(v.reshape(x.shape))  # noqa: E731
    np.testing.assert_allclose(zygotepy.hessian(g, flat), central_hessian(g, flat, 1e-5), rtol=1e-6, atol=1e-7)

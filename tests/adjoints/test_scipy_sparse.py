"""scipy.sparse (zygotepy/adjoints/scipy_sparse.py): a constant sparse matrix or array times a dense vector or matrix
(`A @ x`, `A.T @ x`, `x @ A`, `A.dot(x)`) and `spsolve(A, b)`, which were refused (SciPy's `csr_matvec` writes its
output in place), against central differences in float64 with every optimisation on and off."""
import sys
from pathlib import Path

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")
spla = pytest.importorskip("scipy.sparse.linalg")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plain_checks import agree_at, central  # noqa: E402
from zygotepy import gradient  # noqa: E402

N = 5
LAPLACIAN = sp.diags([-1.0, 2.2, -1.0], [-1, 0, 1], shape=(N, N), format="csr")
TALL = sp.random(N, 3, density=0.6, random_state=1, format="csc")
AS_ARRAY = sp.csr_array(LAPLACIAN)
X = np.linspace(0.1, 0.9, N)


def heat_steps(x):
    u = x
    for _ in range(5):
        u = u - 0.1 * (LAPLACIAN @ u)
    return np.sum(u ** 2)


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.tanh(LAPLACIAN @ x) ** 2),
    lambda x: np.sum((LAPLACIAN.T @ x) ** 3),
    lambda x: np.sum((x @ LAPLACIAN) * x),
    lambda x: np.sum(np.sin(LAPLACIAN @ x.reshape(N, 1) * x.reshape(N, 1))),
    lambda x: np.sum((AS_ARRAY @ x) ** 2) + np.sum(AS_ARRAY.dot(x) * x),
    lambda x: np.sum((TALL.T @ x) ** 2) + np.sum(x[:3] @ TALL.T),
    lambda x: float(x @ (LAPLACIAN @ x)),
    heat_steps,
], ids=["A @ x", "A.T @ x", "x @ A", "A @ column", "sparse array, dot", "rectangular", "quadratic form", "heat"])
def test_products_with_a_constant_sparse_matrix(f, mode):
    agree_at(f, X)


@pytest.mark.parametrize("f", [
    lambda b: np.sum(spla.spsolve(LAPLACIAN.tocsc(), b) ** 2),
    lambda b: np.sum(np.cos(spla.spsolve(LAPLACIAN.tocsc(), np.stack([b, b ** 2], axis=1)))),
], ids=["vector", "matrix"])
def test_spsolve_with_a_constant_matrix(f, mode):
    agree_at(f, X)


def test_a_complex_matrix_takes_its_conjugate_transpose(mode):
    """A complex sparse matrix (sigma_y): the backs take Aᴴ, not Aᵀ (the gradient of <z|Y|z> was 0 for 2 Y z, that of
    a real x through Y @ x had the wrong sign, spsolve's was half)."""
    Y = sp.csr_matrix(np.array([[0, -1j], [1j, 0]]))
    A = sp.csc_matrix(np.array([[2.0, 1j], [0.5j, 3.0]]))
    w = np.array([1.0, 2.0j])
    x, z = np.array([0.3, 0.7]), np.array([0.3 + 0.1j, -0.5 + 0.4j])
    assert np.allclose(gradient(lambda x: np.real(np.vdot(z, Y @ x) + np.sum((x @ Y) * w)), x)[0],
                       [central(lambda t: np.real(np.vdot(z, Y @ t) + np.sum((t @ Y) * w)), (x,), 0)], rtol=1e-6)
    assert np.allclose(gradient(lambda z: np.real(np.vdot(z, Y @ z)), z)[0], 2 * (Y @ z))
    h = lambda b: np.real(np.sum(spla.spsolve(A, b) * w))  # noqa: E731
    assert np.allclose(gradient(h, x)[0], central(h, (x,), 0), rtol=1e-6)

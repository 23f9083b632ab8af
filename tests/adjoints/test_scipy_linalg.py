"""`scipy.linalg`'s factorizations and solves (adjoints/scipy_linalg.py), which were refused (SciPy wraps them in code
with `try`): SciPy's value, and a gradient that reads what SciPy reads (one triangle for `lower=`, the transposed
system for `trans=`, an implicit unit diagonal), against central differences in float64 in every entry, with every
optimisation on and with every one off. Skipped without SciPy."""
import os
import sys

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")

from zygotepy import ZygoteError, gradient, hessian, value_and_gradient  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import central  # noqa: E402

_rng = np.random.default_rng(0)
A = _rng.standard_normal((3, 3))
S = A @ A.T + 3 * np.eye(3)  # symmetric positive definite
T = A + 2 * np.eye(3)
B = _rng.standard_normal((3, 2))
W = _rng.standard_normal((3, 3))

CASES = {
    "cholesky-upper": (lambda a: np.sum(sl.cholesky(a) * W), (S,)),
    "cholesky-lower": (lambda a: np.sum(sl.cholesky(a, lower=True) ** 3), (S,)),
    "cho_factor-with-the-other-triangle": (lambda a: np.sum(sl.cho_factor(a)[0] * W), (S,)),
    "cho_factor-then-cho_solve": (lambda a, b: np.sum(sl.cho_solve(sl.cho_factor(a), b) ** 2), (S, B)),
    "cho_factor-lower-then-cho_solve": (lambda a, b: np.sum(sl.cho_solve(sl.cho_factor(a, lower=True), b) * b),
                                        (S, B)),
    "solve_triangular": (lambda a, b: np.sum(sl.solve_triangular(a, b) ** 2), (T, B)),
    "solve_triangular-lower-transposed": (lambda a, b: np.sum(sl.solve_triangular(a, b, trans="T", lower=True) ** 2),
                                          (T, B)),
    "solve_triangular-unit-diagonal": (lambda a, b: np.sum(sl.solve_triangular(a, b, 0, True, True) ** 2), (T, B)),
    "solve": (lambda a, b: np.sum(sl.solve(a, b) ** 2), (T, B)),
    "solve-positive-definite": (lambda a, b: np.sum(sl.solve(a, b, assume_a="pos") ** 2), (S, B)),
    "solve-transposed": (lambda a, b: np.sum(sl.solve(a, b, transposed=True) * b), (T, B)),
    "inv": (lambda a: np.sum(sl.inv(a) ** 2), (T,)),
    "det": (lambda a: sl.det(a) ** 2, (T,)),
    "expm": (lambda a: np.sum(sl.expm(a * 0.3) * W), (A,)),
    "gaussian-process-marginal-likelihood": (
        lambda k, y: 0.5 * np.sum(y * sl.cho_solve((sl.cholesky(k, lower=True), True), y))
        + np.sum(np.log(np.diag(sl.cholesky(k, lower=True)))), (S, B)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_central_differences(mode, name):
    f, args = CASES[name]
    value, grads = value_and_gradient(f, *[a.copy() for a in args])
    assert value == pytest.approx(f(*args), rel=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-5, atol=1e-7)


def test_a_banded_assumption_is_refused():
    with pytest.raises(ZygoteError, match="assume_a"):
        gradient(lambda a: np.sum(sl.solve(a, B, assume_a="banded")), T.copy())


_F = np.asfortranarray  # (SciPy overwrites a Fortran-ordered matrix in place when allowed to)
OVERWRITING = {  # (name, function with the overwrite_* flag, the same function without it, args)
    "solve-overwrite_b": (lambda a, b: np.sum(sl.solve(a, b, overwrite_b=True) ** 2),
                          lambda a, b: np.sum(sl.solve(a, b) ** 2), (T, B[:, 0])),
    "solve-overwrite_a-fortran": (lambda a, b: np.sum(sl.solve(a, b, overwrite_a=True) ** 2),
                                  lambda a, b: np.sum(sl.solve(a, b) ** 2), (_F(T), B)),
    "solve-both-positional": (lambda a, b: np.sum(sl.solve(a, b, False, True, True) ** 2),
                              lambda a, b: np.sum(sl.solve(a, b) ** 2), (_F(T), _F(B))),
    "solve_triangular-overwrite_b": (
        lambda a: np.sum(sl.solve_triangular(a, a[:, 0] * 1.0, lower=True, overwrite_b=True) ** 2),
        lambda a: np.sum(sl.solve_triangular(a, a[:, 0] * 1.0, lower=True) ** 2), (T,)),
    "cho_solve-overwrite_b": (lambda a: np.sum(sl.cho_solve(sl.cho_factor(a), a[:, 1] * 1.0, overwrite_b=True) ** 2),
                              lambda a: np.sum(sl.cho_solve(sl.cho_factor(a), a[:, 1] * 1.0) ** 2), (S,)),
    "cholesky-overwrite_a-fortran": (lambda a: np.sum(sl.cholesky(a, lower=True, overwrite_a=True) * W),
                                     lambda a: np.sum(sl.cholesky(a, lower=True) * W), (_F(S),)),
    "cho_factor-overwrite_a-fortran": (lambda a: np.sum(sl.cho_factor(a, overwrite_a=True)[0] * W),
                                       lambda a: np.sum(sl.cho_factor(a)[0] * W), (_F(S),)),
    "inv-overwrite_a-fortran": (lambda a: np.sum(sl.inv(a, overwrite_a=True) * W),
                                lambda a: np.sum(sl.inv(a) * W), (_F(T),)),
    "det-overwrite_a": (lambda a: sl.det(a, overwrite_a=True), lambda a: sl.det(a), (T,)),
    "det-overwrite_a-fortran": (lambda a: sl.det(a, True) * 2.0, lambda a: sl.det(a) * 2.0, (_F(T),)),
}


@pytest.mark.parametrize("name", list(OVERWRITING))
def test_overwrite_flags_leave_the_gradient_as_without_them(mode, name):
    """SciPy overwrites an input when overwrite_a/overwrite_b allow it; the rules compute without the flag, so that
    the back reads the inputs as given: value and gradient are those without the flag, and central differences'."""
    f, plain, args = OVERWRITING[name]
    given = [a.copy(order="K") for a in args]
    value, grads = value_and_gradient(f, *given)
    assert value == pytest.approx(plain(*args), rel=1e-12)
    want = gradient(plain, *[a.copy(order="K") for a in args])
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, want[k], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, central(plain, args, k), rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(given[k], args[k])  # (left as given: NumPy/SciPy leave the contents unspecified)


def _complex_central(f, z, h=1e-6):
    """dL/dRe z + 1j dL/dIm z of the real scalar f by central differences (docs/api.md's convention)."""
    out = np.zeros(z.shape, dtype=complex)
    for i in np.ndindex(z.shape):
        for step, unit in ((h, 1.0), (1j * h, 1j)):
            up, down = z.copy(), z.copy()
            up[i] += step
            down[i] -= step
            out[i] += unit * (f(up) - f(down)) / (2 * h)
    return out


@pytest.mark.parametrize("assume_a, lower", [("pos", False), ("pos", True), ("her", False), ("her", True)])
def test_solve_with_a_complex_hermitian_matrix(assume_a, lower, mode):
    """assume_a='pos' took a complex matrix for a real symmetric one (both gradients wrong), and 'her' gave the
    diagonal an imaginary gradient where LAPACK reads its real part only."""
    a = np.array([[4.0 + 0.3j, 1.0 - 0.5j], [1.0 + 0.5j, 3.0 - 0.2j]])
    b = np.array([0.3 + 0.2j, -1.0 + 0.4j])

    def loss(a, b):
        return np.sum(np.abs(sl.solve(a, b, assume_a=assume_a, lower=lower)) ** 2)
    da, db = gradient(loss, a, b)
    np.testing.assert_allclose(db, _complex_central(lambda v: loss(a, v), b), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(da, _complex_central(lambda v: loss(v, b), a), rtol=1e-6, atol=1e-8)


def _discretised_covariance(a, y):
    A = sl.expm(np.array([[0.0, 1.0], [-a[0], -a[1]]]))  # (a continuous-time model's transition)
    P = np.eye(2)
    s = 0.0
    for t in range(len(y)):
        P = A @ P @ A.T
        s += y[t] / P[0, 0]
    return s


def test_hessian_through_expm(mode):
    """expm's rule runs on hessian's dual numbers (its value and its back's expm of the block matrix by the rule's
    own tangent): refused with every optimisation on, where it was called directly."""
    a, y = np.array([0.0, -0.5]), np.array([0.3, -0.2, 0.5])
    H = hessian(_discretised_covariance, a, y, argnums=0)
    h = 1e-6
    want = np.stack([(gradient(_discretised_covariance, a + h * e, y)[0]
                      - gradient(_discretised_covariance, a - h * e, y)[0]) / (2 * h) for e in np.eye(2)],
                    axis=1)
    assert np.allclose(H, want, atol=1e-6)

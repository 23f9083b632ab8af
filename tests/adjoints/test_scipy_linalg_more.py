"""`scipy.linalg`'s special matrices (toeplitz, circulant, block_diag), decompositions (eigh, eigvalsh, svd, svdvals,
qr), pinv, lstsq, norm, lu_factor / lu_solve and expm of a stack (adjoints/scipy_linalg_more.py and scipy_linalg.py),
which were refused: SciPy's value, and a gradient that agrees with central differences of SciPy's own function in
float64 in every entry, with every optimisation on and with every one off; and a `ZygoteError` naming each argument
the rules do not follow. Losses through eigenvectors or singular vectors read them squared or as products u v^T
(invariant to their signs), unless they test that the back uses SciPy's own vectors. Skipped without SciPy."""
import os
import re
import sys

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")

from zygotepy import ZygoteError, gradient, hessian, value_and_gradient  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import central  # noqa: E402

_rng = np.random.default_rng(1)
A = _rng.standard_normal((3, 3))
S = A @ A.T + np.diag([1.0, 3.0, 6.0])  # symmetric, distinct eigenvalues
T = A + 3 * np.eye(3)  # well conditioned
TALL = _rng.standard_normal((4, 3))
WIDE = _rng.standard_normal((2, 4))
B = _rng.standard_normal((3, 2))
BT = _rng.standard_normal((4, 2))
W3, W4, W2 = (_rng.standard_normal((n, n)) for n in (3, 4, 2))
STACK = _rng.standard_normal((2, 3, 3)) * 0.4
C3, R4 = _rng.standard_normal(3), _rng.standard_normal(4)
_Q, _ = np.linalg.qr(_rng.standard_normal((4, 4)))
LOW_RANK = _Q[:, :3] @ np.diag([3.0, 2.0, 0.0]) @ np.linalg.qr(_rng.standard_normal((3, 3)))[0]  # rank 2, 4 x 3


def _weights(shape, seed=2):
    return np.random.default_rng(seed).standard_normal(shape)


CASES = {
    # special matrices (linear)
    "toeplitz-c": (lambda c: np.sum(sl.toeplitz(c) * W3), (C3,)),
    "toeplitz-c-r": (lambda c, r: np.sum(sl.toeplitz(c, r) ** 2 * _weights((3, 4))), (C3, R4)),
    "toeplitz-r-by-keyword": (lambda c, r: np.sum(sl.toeplitz(c, r=r) * _weights((3, 4))), (C3, R4)),
    "toeplitz-batch-of-c": (lambda c, r: np.sum(sl.toeplitz(c, r) * _weights((2, 3, 4))), (STACK[0, :2], R4)),
    "toeplitz-number": (lambda c: np.sum(sl.toeplitz(c) * 3.0), (0.7,)),
    "circulant": (lambda c: np.sum(sl.circulant(c) * _weights((4, 4))), (R4,)),
    "circulant-batch": (lambda c: np.sum(sl.circulant(c) ** 2 * _weights((2, 3, 3))), (STACK[0, :2],)),
    "block_diag": (lambda a, b, c: np.sum(sl.block_diag(a, b, c) * _weights((5, 6))), (A, R4[:2], 0.3)),
    "block_diag-tall-and-wide": (lambda a, b: np.sum(sl.block_diag(a, b) ** 2 * _weights((6, 7))), (TALL, WIDE)),
    "block_diag-batch": (lambda a, b: np.sum(sl.block_diag(a, b) * _weights((2, 5, 5))), (STACK, W2)),
    # eigh, eigvalsh
    "eigh": (lambda a: np.sum(sl.eigh(a)[0] * np.arange(1.0, 4.0)) + np.sum(sl.eigh(a)[1] ** 2 * W3), (S,)),
    "eigh-upper": (lambda a: np.sum(sl.eigh(a, lower=False)[1] ** 2 * W3) + np.sum(sl.eigh(a, lower=False)[0] ** 2),
                   (S,)),
    "eigh-reconstructed": (lambda a: np.sum((sl.eigh(a)[1] * np.sin(sl.eigh(a)[0])) @ sl.eigh(a)[1].T * W3), (S,)),
    "eigh-scipy's-own-vectors": (lambda a: np.sum(sl.eigh(a)[1] * W3), (S,)),
    "eigh-eigvals_only": (lambda a: np.sum(sl.eigh(a, eigvals_only=True) ** 3), (S,)),
    "eigh-batch": (lambda a: np.sum(sl.eigh(a)[1] ** 2 * W3) + np.sum(sl.eigh(a)[0]), (STACK @ np.swapaxes(STACK, 1, 2)
                                                                                     + np.diag([1.0, 2.0, 4.0]),)),
    "eigvalsh": (lambda a: np.sum(sl.eigvalsh(a) * np.arange(1.0, 4.0)), (S,)),
    "eigvalsh-upper": (lambda a: np.sum(sl.eigvalsh(a, lower=False) ** 2), (S,)),
    # svd, svdvals
    "svd-full": (lambda a: np.sum(sl.svd(a)[0][:, :3] ** 2 * _weights((4, 3))) + np.sum(sl.svd(a)[1] ** 2)
                 + np.sum(sl.svd(a)[2] ** 2 * W3), (TALL,)),
    "svd-reduced-wide": (lambda a: np.sum(sl.svd(a, full_matrices=False)[0] ** 2 * W2)
                         + np.sum(sl.svd(a, False)[2] ** 2 * _weights((2, 4))), (WIDE,)),
    "svd-scipy's-own-vectors": (lambda a: np.sum(sl.svd(a, full_matrices=False)[0] * _weights((4, 3))), (TALL,)),
    "svd-compute_uv-false": (lambda a: np.sum(sl.svd(a, compute_uv=False) * np.arange(1.0, 4.0)), (TALL,)),
    "svd-product": (lambda a: np.sum(sl.svd(a, full_matrices=False)[0] @ sl.svd(a, full_matrices=False)[2] * W3), (T,)),
    "svdvals": (lambda a: np.sum(sl.svdvals(a) ** 2 * np.arange(1.0, 3.0)), (WIDE,)),
    # qr
    "qr-full-square": (lambda a: np.sum(sl.qr(a)[0] * W3) + np.sum(sl.qr(a)[1] ** 2 * W3), (T,)),
    "qr-full-tall": (lambda a: np.sum(sl.qr(a)[0][:, :3] * _weights((4, 3))) + np.sum(sl.qr(a)[1] * _weights((4, 3))),
                     (TALL,)),
    "qr-economic": (lambda a: np.sum(sl.qr(a, mode="economic")[0] * _weights((4, 3)))
                    + np.sum(sl.qr(a, mode="economic")[1] * W3), (TALL,)),
    "qr-r": (lambda a: np.sum(sl.qr(a, mode="r")[0] * _weights((4, 3))), (TALL,)),
    "qr-wide": (lambda a: np.sum(sl.qr(a)[0] * W2) + np.sum(sl.qr(a)[1] * _weights((2, 4))), (WIDE,)),
    "qr-pivoting": (lambda a: np.sum(sl.qr(a, mode="economic", pivoting=True)[0] * _weights((4, 3)))
                    + np.sum(sl.qr(a, pivoting=True)[1] ** 2 * _weights((4, 3))), (TALL * [1.0, 5.0, 2.0],)),
    "qr-batch": (lambda a: np.sum(sl.qr(a)[0] * W3) + np.sum(sl.qr(a)[1] * W3), (STACK + 2 * np.eye(3),)),
    # pinv, lstsq
    "pinv-tall": (lambda a: np.sum(sl.pinv(a) * _weights((3, 4))), (TALL,)),
    "pinv-return_rank": (lambda a: np.sum(sl.pinv(a, return_rank=True)[0] ** 2), (T,)),
    "pinv-low-rank-atol": (lambda a: np.sum(sl.pinv(a, atol=1e-3) * _weights((3, 4))), (LOW_RANK,)),
    "pinv-batch": (lambda a: np.sum(sl.pinv(a) * W3), (STACK + 2 * np.eye(3),)),
    "lstsq-tall": (lambda a, b: np.sum(sl.lstsq(a, b)[0] ** 2) + np.sum(sl.lstsq(a, b)[1])
                   + np.sum(sl.lstsq(a, b)[3] * np.arange(1.0, 4.0)), (TALL, BT)),
    "lstsq-vector": (lambda a, b: np.sum(sl.lstsq(a, b)[0] * np.arange(1.0, 4.0)) + sl.lstsq(a, b)[1] * 2.0,
                     (TALL, BT[:, 0])),
    "lstsq-wide": (lambda a, b: np.sum(sl.lstsq(a, b)[0] ** 2 * _weights((4, 2))), (WIDE, W2)),
    "lstsq-gelsy": (lambda a, b: np.sum(sl.lstsq(a, b, lapack_driver="gelsy")[0] ** 2), (TALL, BT)),
    "lstsq-low-rank-cond": (lambda a, b: np.sum(sl.lstsq(a, b, cond=1e-3)[0] * _weights((3, 2))), (LOW_RANK, BT)),
    # norm (np.linalg.norm's semantics)
    "norm": (lambda a: sl.norm(a) ** 2, (TALL,)),
    "norm-vector": (lambda a: sl.norm(a), (R4,)),
    "norm-vector-3": (lambda a: sl.norm(a, 3), (R4,)),
    "norm-nuc": (lambda a: sl.norm(a, "nuc"), (TALL,)),
    "norm-2": (lambda a: sl.norm(a, 2), (TALL,)),
    "norm-1-fortran": (lambda a: sl.norm(a, 1), (np.asfortranarray(TALL),)),
    "norm-inf": (lambda a: sl.norm(a, np.inf), (TALL,)),
    "norm-axis-keepdims": (lambda a: np.sum(sl.norm(a, axis=1, keepdims=True) * TALL), (TALL,)),
    # lu_factor, lu_solve
    "lu_factor": (lambda a: np.sum(sl.lu_factor(a)[0] * W3), (T,)),
    "lu_factor-pivots": (lambda a: np.sum(sl.lu_factor(a)[0] ** 2 * W3), (A[::-1] + np.eye(3)[::-1],)),
    "lu_factor-batch": (lambda a: np.sum(sl.lu_factor(a)[0] * W3), (STACK + 2 * np.eye(3),)),
    "lu_factor-then-lu_solve": (lambda a, b: np.sum(sl.lu_solve(sl.lu_factor(a), b) ** 2), (T, B)),
    "lu_solve-of-lu": (lambda lu, b: np.sum(sl.lu_solve((lu, np.array([2, 2, 2])), b) * B), (T, B)),
    "lu_solve-transposed": (lambda lu, b: np.sum(sl.lu_solve((lu, np.array([1, 2, 2])), b, trans=1) ** 2), (T, B)),
    "lu_solve-conjugate-transposed": (lambda lu, b: np.sum(sl.lu_solve((lu, np.array([2, 1, 2])), b, 2) ** 2),
                                      (T, B[:, 0])),
    # expm of a stack
    "expm-stack": (lambda a: np.sum(sl.expm(a) * W3), (STACK,)),
    "expm-number": (lambda a: sl.expm(a)[0, 0] ** 2, (0.4,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_central_differences(mode, name):
    f, args = CASES[name]
    value, grads = value_and_gradient(f, *[np.array(a, copy=True) if np.ndim(a) else a for a in args])
    assert value == pytest.approx(f(*args), rel=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-5, atol=1e-7, err_msg=f"argument {k}")


def _complex_central(f, z, h=1e-6):
    """dL/dRe z + 1j dL/dIm z of the real scalar f by central differences (docs/api.md's convention)."""
    out = np.zeros(np.shape(z), dtype=complex)
    for i in np.ndindex(np.shape(z)):
        for step, unit in ((h, 1.0), (1j * h, 1j)):
            up, down = np.array(z, dtype=complex), np.array(z, dtype=complex)
            up[i] += step
            down[i] -= step
            out[i] += unit * (f(up) - f(down)) / (2 * h)
    return out


_Z = A + 1j * _rng.standard_normal((3, 3)) + 3 * np.eye(3)
COMPLEX = {  # (loss, complex arguments): each argument's gradient against complex central differences
    "toeplitz-hermitian": (lambda c: np.sum(np.abs(sl.toeplitz(c) * W3) ** 2), (_Z[0],)),
    "toeplitz-c-r": (lambda c, r: np.sum(np.abs(sl.toeplitz(c, r) - 1j) ** 2), (_Z[0], _Z[1, :2])),
    "circulant": (lambda c: np.sum(np.abs(sl.circulant(c) @ _Z) ** 2), (_Z[2],)),
    "block_diag": (lambda a, b: np.sum(np.abs(sl.block_diag(a, b) - 2j) ** 2), (_Z, R4)),
    "lu_solve": (lambda lu, b: np.sum(np.abs(sl.lu_solve((lu, np.array([1, 2, 2])), b, trans=2)) ** 2), (_Z, _Z[0])),
    "lu_factor": (lambda a: np.sum(np.abs(sl.lu_factor(a)[0] - W3) ** 2), (_Z,)),
    "pinv": (lambda a: np.sum(np.abs(sl.pinv(a) - W3) ** 2), (_Z,)),
    "lstsq": (lambda a, b: np.sum(np.abs(sl.lstsq(a, b)[0] - 1j) ** 2) + sl.lstsq(a, b)[1],
              (np.vstack([_Z, _Z[0] * 1j]), TALL[:, 0] + 0.5j)),
    "norm": (lambda a: sl.norm(a, "fro") + sl.norm(a[0]), (_Z,)),
    "expm-stack": (lambda a: np.sum(np.abs(sl.expm(a)) ** 2), (np.stack([_Z, _Z.T]) * 0.3,)),
}


@pytest.mark.parametrize("name", list(COMPLEX))
def test_complex_arguments_against_central_differences(mode, name):
    f, args = COMPLEX[name]
    grads = gradient(f, *[np.array(a, copy=True) for a in args])
    for k, g in enumerate(grads):
        want = _complex_central(lambda v: f(*args[:k], v, *args[k + 1:]), args[k])
        np.testing.assert_allclose(g, want if np.iscomplexobj(args[k]) else want.real, rtol=1e-6, atol=1e-8,
                                   err_msg=f"argument {k}")


def test_overwrite_flags_leave_the_inputs_and_the_gradient_as_without_them(mode):
    def f(a, b):
        return np.sum(sl.lstsq(a, b, overwrite_a=True, overwrite_b=True)[0] ** 2) \
            + np.sum(sl.svd(a, overwrite_a=True)[1]) + np.sum(sl.lu_factor(a[:3], True)[0] * W3)
    args = (np.asfortranarray(TALL), np.asfortranarray(BT))
    given = [a.copy(order="F") for a in args]
    grads = gradient(f, *given)
    for k, g in enumerate(grads):
        np.testing.assert_array_equal(given[k], args[k])
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-5, atol=1e-7)


REFUSED = {  # the argument the message names: (loss, arguments)
    "b": (lambda a: np.sum(sl.eigh(a, S + 5 * np.eye(3))[0]), (S,)),
    "subset_by_index": (lambda a: np.sum(sl.eigh(a, subset_by_index=[1, 2])[0]), (S,)),
    "subset_by_value": (lambda a: np.sum(sl.eigvalsh(a, subset_by_value=[-1.0, 100.0])), (S,)),
    "type": (lambda a: np.sum(sl.eigvalsh(a, type=2)), (S,)),
    "complex input": (lambda a: np.sum(sl.eigvalsh(a).real), (_Z + _Z.conj().T,)),
    "full_matrices=True": (lambda a: np.sum(sl.svd(a)[0]), (TALL,)),
    "mode='raw'": (lambda a: np.sum(sl.qr(a, mode="raw")[1]), (TALL,)),
    "mode='full'": (lambda a: np.sum(sl.qr(a)[0]), (TALL,)),
    "a non-square matrix": (lambda a: np.sum(sl.lu_factor(a)[0]), (TALL,)),
    "a stack of factorizations": (lambda a: np.sum(sl.lu_solve(sl.lu_factor(a), np.ones(3))), (STACK + np.eye(3),)),
    "a stack of matrices": (lambda a: np.sum(sl.lstsq(a, np.ones(3))[0]), (STACK + np.eye(3),)),
}


@pytest.mark.parametrize("argument", list(REFUSED))
def test_what_the_rules_do_not_follow_is_refused_by_name(mode, argument):
    f, args = REFUSED[argument]
    with pytest.raises(ZygoteError, match=re.escape(f"; {argument} is not supported")):
        gradient(f, *[a.copy() for a in args])


SECOND = {  # hessian against central differences of the gradient (the rules' backs are differentiated in turn)
    "svd": (lambda a: np.sum(sl.svd(a)[1] ** 3) + np.sum(sl.svd(a)[0][:, :3] ** 2 * W3), T),
    "eigh": (lambda a: np.sum(sl.eigh(a)[1] ** 2 * W3) + np.sum(sl.eigvalsh(a) ** 2), S),
    "toeplitz": (lambda c: np.sum(sl.toeplitz(c, c[::-1] * 2.0) ** 3), C3),
    "lu_solve": (lambda a: np.sum(sl.lu_solve(sl.lu_factor(a), a[0]) ** 2), T),
}


@pytest.mark.parametrize("name", list(SECOND))
def test_hessian(mode, name):
    f, x = SECOND[name]
    h, eye = 1e-5, np.eye(x.size)
    want = np.stack([(gradient(f, x + h * e.reshape(x.shape))[0] - gradient(f, x - h * e.reshape(x.shape))[0])
                     / (2 * h) for e in eye], axis=-1).reshape(x.shape * 2)
    np.testing.assert_allclose(np.asarray(hessian(f, x.copy())), want, rtol=1e-5, atol=1e-6)

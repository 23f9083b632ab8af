"""Tests of `zygotepy/adjoints/numpy/linalg.py` (inverses, solves, determinants and the np.linalg names): its rows of
the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)
and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy import gradient  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("linalg"))


la = np.linalg


@pytest.mark.parametrize("op, shapes", [(la.inv, [(3, 3)]), (la.det, [(3, 3)]), (la.solve, [(3, 3), (3,)]),
                                        (np.einsum, None), (la.norm, [(4,)]), (np.vdot, [(3,), (3,)]),
                                        (np.kron, [(2,), (3,)]), (la.svdvals, [(3, 2)]),
                                        (la.eigvalsh, [(3, 3)]), (la.cholesky, [(3, 3)]), (la.pinv, [(3, 2)]),
                                        (la.matrix_power, None)])
def test_float32_linear_algebra(op, shapes):
    rng = np.random.default_rng(1)
    if op is np.einsum:
        args = ["ij,jk", rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(3, 2)).astype(np.float32)]
    elif op is la.matrix_power:
        args = [(rng.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32), 3]
    elif op is la.cholesky or op is la.eigvalsh:
        b = rng.normal(size=(3, 3))
        args = [(b @ b.T + 3 * np.eye(3)).astype(np.float32)]
    else:
        args = [(rng.normal(size=s) + (3 * np.eye(s[0]) if len(s) == 2 and s[0] == s[1] else 0)).astype(np.float32)
                for s in shapes]
    y, back = registry.find_rule(op)(*args)
    assert np.asarray(y).dtype == np.float32
    grads = back(np.ones_like(y))
    for g, a in zip(grads, args, strict=True):
        if isinstance(a, np.ndarray):
            assert g.dtype == np.float32, f"{op.__name__}: float32 argument got a {g.dtype} cotangent"


@pytest.mark.parametrize("optimized", [True, False])
def test_det_of_a_singular_matrix(optimized):
    """The gradient of det is the transposed adjugate, defined where the inverse is not."""
    v = np.array([0.5, -1.0, 2.0])
    rng = np.random.default_rng(2)
    batch = rng.normal(size=(3, 3, 3))
    batch[0] = np.outer(v, v)
    batch[1, 2] = batch[1, 0]
    with zygotepy.optimizations(optimized):
        (g,) = zygotepy.gradient(la.det, np.array([[1.0, 2.0], [2.0, 4.0]]))
        np.testing.assert_allclose(g, [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-12)
        (g,) = zygotepy.gradient(la.det, np.outer(v, v))
        np.testing.assert_allclose(g, np.zeros((3, 3)), atol=1e-12)  # rank 1: every 2x2 minor is 0
        check_grads(la.det, np.outer(v, v) + np.outer([1.0, 0.0, 1.0], [0.0, 1.0, 1.0]))  # rank 2
        check_grads(la.det, batch)
        check_grads(la.det, np.zeros((2, 2)))


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.power(x, [1.0, 2.0, 3.0])) + np.sum(np.float_power([x[0], 2.0], [2, x[1]])),
    lambda x: np.sum(np.linalg.pinv([[x[0] + 2, x[1]], [x[2], 2.0]])),
    lambda x: np.sum(np.linalg.matrix_power([[x[0], x[1]], [x[2], 2.0]], 2)),
    lambda x: np.sum(np.linalg.qr([[x[0] + 2, x[1]], [x[2], 2.0]])[1] ** 2),
    lambda x: np.sum(np.linalg.lstsq([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [x[0], x[1], x[2]])[0] ** 2),
], ids=["power", "pinv", "matrix_power", "qr", "lstsq"])
def test_lists_of_numbers_as_arrays(f):
    # (a matrix written as a list of lists crashed in the rules: `list - int`, `'list' object has no attribute`)
    x = np.array([0.3, -0.2, 1.5])
    h = 1e-6
    want = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(zygotepy.gradient(f, x)[0], want, rtol=1e-6, atol=1e-7)


def _complex_central(f, args, k, h=1e-6):
    """d f / d re + i d f / d im of argument k, by central differences (the convention of complex gradients here)."""
    grad = np.zeros_like(args[k])
    for idx in np.ndindex(args[k].shape):
        for unit in (1.0, 1j):
            up, down = [a.copy() for a in args], [a.copy() for a in args]
            up[k][idx] += h * unit
            down[k][idx] -= h * unit
            grad[idx] += (f(*up) - f(*down)) / (2 * h) * unit
    return grad


def _lstsq_loss(a, b):
    x, residuals, _, _ = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(np.abs(x) ** 2) + 0.5 * np.sum(residuals)


def test_complex_lstsq_with_a_vector_right_hand_side(mode):
    """The vector branch of lstsq's back took `dx b^T` and `r x^T` where the matrix branch takes `dx b^H`, `r x^H`."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(4, 2)) + 1j * rng.normal(size=(4, 2))
    b = rng.normal(size=4) + 1j * rng.normal(size=4)
    got = gradient(_lstsq_loss, a, b)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], _complex_central(_lstsq_loss, [a, b], k), atol=1e-7)


def _sign_loss(z):
    sign, logabsdet = np.linalg.slogdet(z)
    return np.sum(np.imag(sign) * 2.0 + np.real(sign) * 0.5 + logabsdet)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)], ids=["matrix", "batch"])
def test_the_sign_of_a_complex_slogdet_has_a_gradient(mode, shape):
    """A complex matrix's sign, exp(i arg det), had no gradient (None): it was taken as piecewise constant."""
    rng = np.random.default_rng(5)
    z = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    np.testing.assert_allclose(gradient(_sign_loss, z)[0], _complex_central(_sign_loss, [z], 0), atol=1e-8)


_WEIGHTS = np.array([[1.0, 10.0], [100.0, 1000.0]])


@pytest.mark.parametrize("a", [np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[2.0, 0.7], [0.3, 1.0]])],
                         ids=["symmetric", "lower-triangle-read"])
def test_pinv_hermitian_sends_the_gradient_to_the_lower_triangle_it_reads(mode, a):
    """With hermitian=True NumPy reads only the lower triangle; the gradient was the general one, on both."""
    for f in (lambda m: np.sum(np.linalg.pinv(m, hermitian=True) * _WEIGHTS),
              lambda m: np.sum(np.linalg.pinv(m, None, True) * _WEIGHTS)):
        got = gradient(f, a)[0]
        assert got[0, 1] == 0.0
        np.testing.assert_allclose(got, _complex_central(f, [a], 0).real, rtol=1e-6)


@pytest.mark.parametrize("call", ["rcond", "rtol", "positional", "stack"])
def test_pinv_with_a_cutoff_that_drops_a_singular_value(mode, call):
    """pinv(a, rcond) is the pseudo-inverse of a's truncation that keeps s > rcond max(s): its gradient at that fixed
    rank (Golub and Pereyra's formula on a itself was a few percent off), against central differences."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent.parent.parent))
    from plain_checks import central
    a = np.array([[3.0, 0.5], [1.0, 0.2], [0.0, 0.1]])  # singular values 3.21 and 0.103: 0.1 drops the second
    W = np.array([[1.0, -2.0, 0.5], [0.3, 1.2, -0.7]])
    f = {"rcond": lambda a: np.sum(np.linalg.pinv(a, rcond=0.1) * W),
         "rtol": lambda a: np.sum(np.linalg.pinv(a, rtol=0.1) * W),
         "positional": lambda a: np.sum(np.linalg.pinv(a, 0.1) ** 2 * W),
         "stack": lambda a: np.sum(np.linalg.pinv(np.stack([a, a * 2.0]), np.array([0.1, 0.01])) * W)}[call]
    np.testing.assert_allclose(zygotepy.gradient(f, a.copy())[0], central(f, [a], 0), rtol=1e-6, atol=1e-7)

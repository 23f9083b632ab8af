"""Tests of `zygotepy/adjoints/numpy/spectral.py` (np.linalg.eigvals and cond): its rows of the rule table against
finite differences (tests/adjoints/numpy/rows_linalg.py, `row_tests` of tests/adjoints/test_rules.py), calls in user
code, and the points where the gradient is undefined."""
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

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("spectral"))

A = np.random.default_rng(3).normal(size=(3, 3)) + 2 * np.eye(3)


@pytest.mark.parametrize("f", [
    lambda a: np.sum(np.abs(np.linalg.eigvals(a * 2.0)) ** 2),
    lambda a: np.real(np.sum(np.linalg.eigvals(a @ a) ** 3)),
    lambda a: np.linalg.cond(a) ** 2,
    lambda a: np.linalg.cond(np.sin(a), -2),
    lambda a: np.linalg.cond(a, "fro") + np.linalg.cond(a, p=np.inf),
    lambda a: np.linalg.cond(a, 1),
], ids=["eigvals abs", "eigvals real", "cond", "cond -2", "cond fro inf", "cond 1"])
@pytest.mark.parametrize("optimized", [True, False])
def test_in_user_code(f, optimized):
    with zygotepy.optimizations(optimized):
        check_grads(f, A)


def test_eigvals_of_a_symmetric_matrix_agree_with_eigvalsh():
    s = A + A.T
    (g1,) = gradient(lambda a: np.sum(np.sort(np.real(np.linalg.eigvals(a))) ** 3), s)
    (g2,) = gradient(lambda a: np.sum(np.linalg.eigvalsh(a) ** 3), s)
    np.testing.assert_allclose(g1 + g1.T, g2 + g2.T, rtol=1e-8)


def test_undefined_points_raise():
    with pytest.raises(zygotepy.ZygoteError, match="defective"):
        gradient(lambda a: np.sum(np.abs(np.linalg.eigvals(a))), np.array([[1.0, 1.0], [0.0, 1.0]]))
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for p in (None, 1, "fro"):
        with pytest.raises(zygotepy.ZygoteError, match="singular"):
            gradient(lambda a: np.linalg.cond(a, p), singular)
    (g,) = gradient(lambda a: np.linalg.cond(a), 2 * np.eye(3))  # cond's minimum: 0
    np.testing.assert_array_equal(g, np.zeros((3, 3)))


def test_slogdet_at_a_singular_matrix():
    """logabsdet's gradient is unbounded there: a ZygoteError (it crashed in the inverse); the sign alone, or a batch
    whose singular matrix gets no cotangent, is fine, and a regular matrix keeps its gradient."""
    singular = np.array([[1.0, 2.0], [0.0, 0.0]])
    with pytest.raises(zygotepy.ZygoteError, match="singular"):
        gradient(lambda a: np.linalg.slogdet(a)[1], singular)
    (g,) = gradient(lambda a: np.linalg.slogdet(a)[0] * 1.0 + np.sum(a), singular)
    np.testing.assert_array_equal(g, np.ones((2, 2)))
    batch = np.stack([singular, A[:2, :2]])
    _, back = registry.find_rule(np.linalg.slogdet)(batch)
    (g,) = back((None, np.array([0.0, 1.0])))
    np.testing.assert_array_equal(g[0], 0.0)
    np.testing.assert_allclose(g[1], np.linalg.inv(A[:2, :2]).T)
    check_grads(lambda a: np.linalg.slogdet(a)[1], A)


def largest_growth_rate(M):
    w, v = np.linalg.eig(M)  # (the eigenvalues only: a general matrix's eigenvectors have no rule)
    return np.max(np.real(w))


def eigenvectors_read(M):
    w, v = np.linalg.eig(M)
    return np.sum(np.abs(v[:, 0]))


def test_eig_differentiates_its_eigenvalues_and_refuses_its_eigenvectors(mode):
    M = np.array([[0.5, 0.2], [0.3, 0.4]])
    check_grads(largest_growth_rate, M)
    check_grads(lambda a: np.sum(np.linalg.eig(a).eigenvalues.real ** 2), np.arange(9.0).reshape(3, 3) / 5 + np.eye(3))  # (a MissingAdjoint naming NumPy's own line before)
    with pytest.raises(zygotepy.ZygoteError, match="eigenvalues only.*eigh"):
        gradient(eigenvectors_read, M)

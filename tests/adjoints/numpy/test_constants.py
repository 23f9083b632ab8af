"""Tests of `zygotepy/adjoints/numpy/constants.py` (the ndarray methods that run as constants (`x.argmax()`)): its rows
of the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of
tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import gradient  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("constants"))


def test_constant_method_calls_run_as_constants():
    x = np.array([1.0, 3.0, 2.0])
    np.testing.assert_allclose(gradient(lambda x: x[x.argmax()] * 2 + x[x.argsort()[0]], x)[0], [1, 2, 0])
    np.testing.assert_allclose(gradient(lambda x: x.sum() * x.round().sum() + x.all(), x)[0], [6, 6, 6])


def _noisy_kernel(K0, noise):
    K = K0 @ K0.T
    K[np.diag_indices_from(K)] += noise
    L = np.linalg.cholesky(K)
    i, j = np.tril_indices(3, -1)
    return np.sum(np.log(np.diag(L))) + np.sum(K[np.triu_indices_from(K, 1)]) + np.sum(K[i, j] * K[np.diag_indices(3)])


def test_index_helpers_run_as_constants():
    """`K[np.diag_indices_from(K)] += noise` (the Gaussian-process idiom) raised MissingAdjoint: the index helpers
    give integers only."""
    K0 = np.random.default_rng(0).standard_normal((3, 3))
    g = gradient(_noisy_kernel, K0, 0.5)
    h = 1e-6
    want = (_noisy_kernel(K0, 0.5 + h) - _noisy_kernel(K0, 0.5 - h)) / (2 * h)
    assert g[1] == pytest.approx(want, rel=1e-6)
    assert g[0].shape == (3, 3)


@pytest.mark.parametrize("f, want", [
    (lambda x: x.round(1) * x, 1.4),
    (lambda x: x.argmax() + x, 1.0),
    (lambda x: x.all() * x * x, 2 * 1.37),
    (lambda x: (x * 2.0).any() * x, 1.0)],
    ids=["round", "argmax", "all", "any"])
def test_constant_methods_of_a_numpy_scalar(mode, f, want):
    # a NumPy scalar shares these methods' names with ndarray, not their descriptors: the rule calls the object's own
    assert gradient(f, np.float64(1.37))[0] == pytest.approx(want, rel=1e-12)

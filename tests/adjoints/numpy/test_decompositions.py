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

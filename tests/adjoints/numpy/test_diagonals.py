"""Tests of `zygotepy/adjoints/numpy/diagonals.py` (diagonal, diag, diagflat, tril and triu): its rows of the rule table
against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # plain_checks
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("diagonals"))


def test_hessian_through_the_diagonal_of_a_matrix():
    """np.diag of a matrix a tangent rule made (cholesky's, under hessian): its reverse rule converted the dual matrix
    to a plain array (refused with every optimisation off, where that rule runs; found by a probe of ML programs)."""
    import numpy as np

    import zygotepy
    from plain_checks import central_hessian

    def gp(x):
        chol = np.linalg.cholesky(np.outer(x, x) + np.eye(2))
        return np.sum(np.log(np.diag(chol)))

    def offset(x):
        m = np.outer(x, x[:2]) + 1.0
        return np.sum(np.diag(m, -1) ** 3) + np.sum(np.diag(np.sin(m)) ** 2)

    for plain in (False, True):  # (the reverse rule runs with every optimisation off)
        with zygotepy.optimizations(not plain):
            for f, x in ((gp, np.array([0.4, 0.7])), (offset, np.array([0.4, 0.7, -0.3]))):
                np.testing.assert_allclose(zygotepy.hessian(f, x), central_hessian(f, x), rtol=1e-5, atol=1e-6)


def test_the_diagonal_of_a_nested_list(mode):
    """np.diagonal of a list of lists holding values with gradients: AttributeError ('list' has no `.size`)."""
    import numpy as np

    from plain_checks import agree_at
    agree_at(lambda x: np.sum(np.diagonal([[x[0], x[1]], [x[2], x[0] * x[1]]]) ** 2), np.array([0.31, -0.47, 0.83]))

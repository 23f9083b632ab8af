"""Tests of `zygotepy/adjoints/numpy/products.py` (dot, matmul, outer, inner and the contractions): its rows of the rule
table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py) and what
the random rows cannot reach."""
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
from zygotepy import gradient  # noqa: E402
from zygotepy.errors import ZygoteError  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("products"))


def test_einsum_operand_list_form_is_refused():
    with pytest.raises(zygotepy.ZygoteError, match="subscripts"):
        registry.find_rule(np.einsum)(np.ones(3), [0], [0])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (NumPy 2 deprecates 2-vectors in np.cross)
@pytest.mark.parametrize("optimized", [True, False])
def test_cross_with_moved_axes_and_2_vectors(optimized):
    rng = np.random.default_rng(9)
    with zygotepy.optimizations(optimized):
        check_grads(lambda a, b: np.cross(a, b, axisa=0), rng.normal(size=(3, 2)), rng.normal(size=(2, 3)))
        check_grads(lambda a, b: np.cross(a, b, axisc=0), rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))
        check_grads(lambda a, b: np.cross(a, b, axis=0, axisb=1), rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))
        # two 2-vectors: a0 b1 - a1 b0
        da, db = zygotepy.gradient(lambda a, b: np.cross(a, b), np.array([1.0, 2.0]), np.array([3.0, 5.0]))
        np.testing.assert_allclose(da, [5.0, -3.0])
        np.testing.assert_allclose(db, [-2.0, 1.0])
        check_grads(lambda a, b: np.cross(a, b), rng.normal(size=(4, 2)), rng.normal(size=(4, 2)))
        check_grads(lambda a, b: np.cross(a, b), rng.normal(size=(4, 2)), rng.normal(size=3))  # a 2- and a 3-vector
        check_grads(lambda a, b: np.cross(a, b, axisb=0), rng.normal(size=3), rng.normal(size=(2, 5)))


def test_matmul_with_axes_is_refused():
    """`np.matmul(a, b, axes=...)` reached the rule with a keyword it has no parameter for (a TypeError)."""
    t = np.arange(18.0).reshape(2, 3, 3)
    with pytest.raises(ZygoteError, match="axes="):
        gradient(lambda t: np.sum(np.matmul(t, t, axes=[(-2, -1), (-2, -1), (-2, -1)])), t)

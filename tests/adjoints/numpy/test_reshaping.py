"""Tests of `zygotepy/adjoints/numpy/reshaping.py` (reshapes, transposes, flips and broadcasting): its rows of the rule
table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("reshaping"))


_MIXED_AXES = [((2, 2), (-1, 0)), ((2, 3, 4), (-1, 0, 1)), ((2, 3, 4), (1, -1, 0)), ((2, 3, 4), (-2, -1, -3))]


def _mixed_sign_transposes(axes, w):
    """np.transpose, x.transpose(axes) and x.transpose(*axes) with negative axes beside non-negative ones."""
    return [lambda x: np.sum(np.transpose(x, axes) * w), lambda x: np.sum(x.transpose(axes) * w),
            lambda x: np.sum(x.transpose(*axes) * w)]


@pytest.mark.parametrize("shape, axes", _MIXED_AXES, ids=[str(a) for _, a in _MIXED_AXES])
def test_a_transpose_with_negative_axes_beside_others_sends_the_cotangent_back(mode, shape, axes):
    """NumPy reads -1 as the last axis; the back's inverse permutation once sorted the axes as written (W for W.T)."""
    from zygotepy import gradient
    from plain_checks import central
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(np.transpose(x, axes).shape)
    for f in _mixed_sign_transposes(axes, w):
        got, = gradient(f, x)
        assert got.shape == x.shape
        np.testing.assert_allclose(got, central(f, (x,), 0), rtol=1e-6, atol=1e-8)

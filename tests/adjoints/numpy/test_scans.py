"""Tests of `zygotepy/adjoints/numpy/scans.py` (cumsum, cumprod, cumulative_sum/_prod and diff): its rows of the rule
table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # tests/plain_checks.py
from plain_checks import central  # noqa: E402
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import gradient  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("scans"))


def test_cumprod_of_a_0d_array_over_axis_0(mode):
    """NumPy scans a 0-d array as the flat array; the back moved axis 0 of a 0-d array (AxisError)."""
    assert gradient(lambda x: np.sum(np.cumprod(x * 2.0, axis=0)), np.array(1.5))[0] == 2.0


@pytest.mark.parametrize("f, x", [
    (lambda x: np.sum(np.diff(x)) + np.sum(x), np.array([0.7])),
    (lambda x: np.sum(np.diff(x, axis=0)) + np.sum(x ** 2), np.array([[0.2, -0.5, 1.1, 0.4]])),
    (lambda x: np.sum(np.diff(x, n=4) ** 2) + x[0] * 2.0, np.array([0.3, -1.2, 0.5])),
    (lambda x: np.sum(np.diff(x, n=2)) + np.sum(x ** 2), np.array([0.3, -1.2])),
    (lambda x: np.sum(np.diff(x, prepend=0.5, n=3) ** 2) + np.sum(x), np.array([0.3, -1.2]))],
    ids=["one entry", "one row along axis 0", "n beyond the length", "n equal to the length", "with prepend"])
def test_diff_with_no_difference_left(mode, f, x):
    """np.diff whose result is empty (n at least the length along the axis): each entry's cotangent is 0, not an empty
    array (which broadcast the other terms' gradients away, or crashed their sum)."""
    (g,) = gradient(f, x.copy())
    assert g.shape == x.shape
    np.testing.assert_allclose(g, central(f, [x], 0), atol=1e-7)

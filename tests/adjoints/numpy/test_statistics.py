"""Tests of `zygotepy/adjoints/numpy/statistics.py` (ptp, median, average and the nan-ignoring reductions): its rows of
the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)
and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import gradient  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("statistics"))


def test_ptp_and_median_ties_and_even_counts():
    _, back = registry.find_rule(np.ptp)(np.array([1.0, 3.0, 3.0, 0.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.5, 0.5, -1.0])
    _, back = registry.find_rule(np.median)(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.0, 0.5, 0.5])
    _, back = registry.find_rule(np.median)(np.array([[4.0, 1.0, 3.0], [0.0, 5.0, 6.0]]), axis=1)
    np.testing.assert_allclose(back(np.array([1.0, 2.0]))[0], [[0, 0, 1], [0, 2, 0]])


def test_nan_reductions_skip_nans():
    x = np.array([1.0, np.nan, 3.0])
    _, back = registry.find_rule(np.nanmean)(x)
    np.testing.assert_allclose(back(1.0)[0], [0.5, 0.0, 0.5])
    _, back = registry.find_rule(np.nansum)(x)
    np.testing.assert_allclose(back(2.0)[0], [2.0, 0.0, 2.0])
    _, back = registry.find_rule(np.nanmax)(x)
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.0, 1.0])


def test_nansum_with_a_positional_where_mask():
    x = np.array([[1.0, np.nan, 2.0], [0.5, 1.5, np.nan]])
    mask = np.array([[True, True, False], [True, False, True]])
    (g,) = gradient(lambda x: np.nansum(x, None, None, None, False, 0.0, mask) * 3.0, x)
    want = np.where(mask & ~np.isnan(x), 3.0, 0.0)  # entries masked out or NaN get nothing
    assert np.array_equal(g, want)

"""Tests of `zygotepy/adjoints/numpy/scans.py` (cumsum, cumprod, cumulative_sum/_prod and diff): its rows of the rule
table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import gradient  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("scans"))


def test_cumprod_of_a_0d_array_over_axis_0(mode):
    """NumPy scans a 0-d array as the flat array; the back moved axis 0 of a 0-d array (AxisError)."""
    assert gradient(lambda x: np.sum(np.cumprod(x * 2.0, axis=0)), np.array(1.5))[0] == 2.0

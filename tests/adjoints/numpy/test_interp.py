"""Tests of `zygotepy/adjoints/numpy/interp.py` (np.interp): its rows of the rule table against finite differences
(tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import check_against_finite_differences, row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("interp"))


def test_interp_gradient_for_the_table_abscissae():
    x = np.array([-2.5, -1.0, 0.2, 0.7, 1.9, 3.0])
    xp, fp = np.array([-2.0, -0.5, 0.5, 2.0]), np.array([1.0, -1.0, 0.5, 2.0])
    check_against_finite_differences(np.interp, [x, xp, fp], [True, True, True])

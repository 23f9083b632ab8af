"""Tests of `zygotepy/adjoints/numpy/select.py` (where, clip, select and choose): its rows of the rule table against
finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

import zygotepy  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("select"))


def test_the_clip_method_with_one_bound():
    # (`x.clip(0.1)` went to np.clip(x, 0.1), which NumPy 2 refuses without a_max)
    def f(x):
        return np.sum(x.clip(0.1) ** 2) + np.sum(x.clip(-1.0, 0.7)) + np.sum(x.clip(max=0.2) * 3.0)
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(zygotepy.gradient(f, x)[0], [2.0 + 0.0 + 0.0, 0.0 + 0.0 + 3.0, 1.0 + 1.0 + 0.0])

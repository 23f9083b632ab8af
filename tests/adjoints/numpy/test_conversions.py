"""Tests of `zygotepy/adjoints/numpy/conversions.py` (np.array, casts and copies, atleast_nd, item and tolist): its rows
of the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of
tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy.adjoints import registry  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("conversions"))


def test_float_casts_return_the_argument_dtype():
    x = np.array([1.0, 2.0, 3.0])
    y, back = registry.find_rule(np.float32)(x)
    assert y.dtype == np.float32
    (g,) = back(np.ones(3, np.float32))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, np.ones(3))
    _, back = registry.find_rule(np.float64)(np.float32(2.0))
    assert back(np.float64(3.0))[0].dtype == np.float32
    _, back = registry.find_rule(np.float64)(2.0)
    assert type(back(np.float64(3.0))[0]) is float

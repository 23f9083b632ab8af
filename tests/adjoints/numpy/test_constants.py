"""Tests of `zygotepy/adjoints/numpy/constants.py` (the ndarray methods that run as constants (`x.argmax()`)): its rows
of the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of
tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import gradient  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("constants"))


def test_constant_method_calls_run_as_constants():
    x = np.array([1.0, 3.0, 2.0])
    np.testing.assert_allclose(gradient(lambda x: x[x.argmax()] * 2 + x[x.argsort()[0]], x)[0], [1, 2, 0])
    np.testing.assert_allclose(gradient(lambda x: x.sum() * x.round().sum() + x.all(), x)[0], [6, 6, 6])

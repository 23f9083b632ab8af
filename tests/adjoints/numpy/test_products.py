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

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("products"))


def test_einsum_operand_list_form_is_refused():
    with pytest.raises(zygotepy.ZygoteError, match="subscripts"):
        registry.find_rule(np.einsum)(np.ones(3), [0], [0])

"""Tests of `zygotepy/adjoints/numpy/sets.py` (unique, bincount and histogram): its rows of the rule table against
finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # tests/plain_checks.py
from plain_checks import central  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy import gradient  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("sets"))


@pytest.mark.parametrize("keywords", [{"range": (0.0, 4.0)}, {}], ids=["range", "edges-from-the-data"])
@pytest.mark.parametrize("by_keyword", [True, False], ids=["weights=", "positional"])
def test_histogram_weights_get_their_bins_cotangent(mode, keywords, by_keyword):
    """Weights add up per bin, so each weight's cotangent is its bin's; it was refused ("the edges move with the
    data") even with a fixed range, where the edges do not move at all."""
    data = np.array([0.2, 3.9, 4.0, 1.0, 2.5, -1.0])
    w = np.array([1.0, 2.0, 0.5, 3.0, 1.5, 2.0])
    scale = np.array([1.0, 10.0, 100.0])
    if by_keyword:
        f = lambda v: np.sum(np.histogram(data, 3, weights=v, **keywords)[0] * scale)  # noqa: E731
    else:
        f = lambda v: np.sum(np.histogram(data, 3, keywords.get("range"), None, v)[0] * scale)  # noqa: E731
    np.testing.assert_allclose(gradient(f, w)[0], central(f, [w], 0), rtol=1e-6, atol=1e-9)


def test_a_density_of_weights_is_refused(mode):
    f = lambda v: np.sum(np.histogram(np.arange(4.0), 2, (0.0, 4.0), True, v)[0] * np.array([1.0, 2.0]))  # noqa: E731
    with pytest.raises(zygotepy.ZygoteError, match="nor a density of weights"):
        gradient(f, np.ones(4))

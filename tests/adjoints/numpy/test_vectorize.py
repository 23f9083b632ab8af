"""Tests of `zygotepy/adjoints/numpy/vectorize.py` (`np.vectorize(f)(x)`): its rows of the rule table against finite
differences, the function inside user code, and its refusals."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

from zygotepy import ZygoteError, gradient  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("vectorize"))

X = np.array([0.3, -0.7, 1.1])


def branching(x):
    g = np.vectorize(lambda t: t ** 2 if t > 0 else math.sin(t))
    return np.sum(g(x) * 3.0)


def broadcast(x):
    return np.sum(np.vectorize(lambda a, b: a * b + 1.0)(x, x[:, None] * 0.5))


def of_one_entry(x):
    return float(np.vectorize(math.exp)(x[1]))


@pytest.mark.parametrize("f", [branching, broadcast, of_one_entry], ids=lambda f: f.__name__)
def test_vectorize_in_user_code(f):
    check_grads(f, X.copy())


def test_a_vectorized_closure_over_a_value_with_a_gradient_is_refused():
    def f(x):
        w = x[0] * 2.0
        return np.sum(np.vectorize(lambda t: t * w)(x))
    with pytest.raises(ZygoteError, match="np.vectorize of a function that closes over values carrying a gradient"):
        gradient(f, X.copy())


def test_vectorize_with_a_signature_is_refused():
    def f(x):
        return np.sum(np.vectorize(lambda r: r * 2.0, signature="(n)->(n)")(x))
    with pytest.raises(ZygoteError, match="without keywords, signature= or excluded="):
        gradient(f, X.copy())

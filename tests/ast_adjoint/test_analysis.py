"""Activity analysis (zygotepy/ast_adjoint/analysis.py): which values can carry a gradient, checked through the
gradients and refusals it leads to."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central  # noqa: E402

from zygotepy import gradient  # noqa: E402


def _inf_norm(x):
    xp = x.__array_namespace__()
    return xp.linalg.vector_norm(x, ord=xp.inf)


def _e_norm(x):
    xp = x.__array_namespace__()
    return xp.linalg.vector_norm(x, ord=xp.e)


@pytest.mark.parametrize("f", [_inf_norm, _e_norm], ids=["inf", "e"])
def test_a_constant_of_the_array_namespace_carries_no_gradient(mode, f):
    """`xp = x.__array_namespace__()` made `xp` a value derived from `x`, so `ord=xp.inf` was a keyword a gradient
    flows into, and the norm's rule (which gives `ord` no cotangent) refused it."""
    x = np.array([0.3, -1.5, 0.7])
    np.testing.assert_allclose(gradient(f, x)[0], central(f, [x], 0), rtol=1e-6, atol=1e-9)

"""Tests of `zygotepy/adjoints/numpy/reshaping.py` (reshapes, transposes, flips and broadcasting): its rows of the rule
table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("reshaping"))


_MIXED_AXES = [((2, 2), (-1, 0)), ((2, 3, 4), (-1, 0, 1)), ((2, 3, 4), (1, -1, 0)), ((2, 3, 4), (-2, -1, -3))]


def _mixed_sign_transposes(axes, w):
    """np.transpose, x.transpose(axes) and x.transpose(*axes) with negative axes beside non-negative ones."""
    return [lambda x: np.sum(np.transpose(x, axes) * w), lambda x: np.sum(x.transpose(axes) * w),
            lambda x: np.sum(x.transpose(*axes) * w)]


@pytest.mark.parametrize("shape, axes", _MIXED_AXES, ids=[str(a) for _, a in _MIXED_AXES])
def test_a_transpose_with_negative_axes_beside_others_sends_the_cotangent_back(mode, shape, axes):
    """NumPy reads -1 as the last axis; the back's inverse permutation once sorted the axes as written (W for W.T)."""
    from zygotepy import gradient
    from plain_checks import central
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(np.transpose(x, axes).shape)
    for f in _mixed_sign_transposes(axes, w):
        got, = gradient(f, x)
        assert got.shape == x.shape
        np.testing.assert_allclose(got, central(f, (x,), 0), rtol=1e-6, atol=1e-8)


def test_memory_order_of_broadcast_views_and_of_dual_arrays(mode):
    """`ravel(order="K")` of a broadcast view (NumPy leaves a stride-0 axis where it is: the cotangent went back in
    F order, [6, 15, 24, 33] for [15, 18, 21, 24]), and under hessian, where the reverse pass reads a dual array's
    layout (it took C order: a transposed or Fortran-ordered argument's Hessian lost its off-order entries)."""
    import numpy as np

    import zygotepy
    from plain_checks import agree_at, central_hessian
    w = np.arange(1.0, 13.0)
    agree_at(lambda x: np.sum(np.broadcast_to(x, (3, 4)).ravel("K") * w), np.array([0.3, -1.2, 0.8, 0.5]))
    agree_at(lambda x: np.sum(np.broadcast_to(x[:, None], (3, 4)).ravel("K") * w), np.array([0.3, -1.2, 0.8]))
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])
    for f in (lambda v: np.sum(v.reshape(2, 3).T.ravel("K") ** 3 * w[:6]),
              lambda v: np.sum(np.asfortranarray(v.reshape(2, 3)).ravel("A") ** 3 * w[:6])):
        np.testing.assert_allclose(zygotepy.hessian(f, x.ravel()), central_hessian(f, x.ravel()), rtol=1e-5, atol=1e-6)

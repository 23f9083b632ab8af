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


import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # tests/plain_checks.py
from plain_checks import central  # noqa: E402

from zygotepy import gradient  # noqa: E402

_FP = np.array([0.3 + 1.0j, -1.2 + 0.5j, 2.5 - 0.3j, 0.9 + 2.0j])
_W3 = np.array([1.0, -2.0, 0.5])


def _fp_central(f, args, k):
    """dL/dRe fp + 1j dL/dIm fp (docs/api.md's convention) of the real loss f, fp = args[k], by central differences."""
    z, rest = args[k], [*args[:k], *args[k + 1:]]
    re = central(lambda x, *r: f(*r[:k], x + 1j * z.imag, *r[k:]), [z.real, *rest], 0)
    im = central(lambda y, *r: f(*r[:k], z.real + 1j * y, *r[k:]), [z.imag, *rest], 0)
    return re + 1j * im


@pytest.mark.parametrize("loss", ["imag", "abs2", "real-and-imag"])
@pytest.mark.parametrize("period", [None, 3.5])
def test_interp_of_complex_values_for_real_x_and_table(mode, loss, period):
    """With complex fp, the cotangents of the real x and xp are Re(conj(dy) * slope) (the derivative of a real loss),
    not dy * slope; fp's is complex. Against central differences of a real loss."""
    part = {"imag": lambda y: np.imag(y) * _W3, "abs2": lambda y: np.abs(y) ** 2 * _W3,
            "real-and-imag": lambda y: np.real(y) * _W3 + 3.0 * np.imag(y)}[loss]

    def f(x, xp, fp):
        return np.sum(part(np.interp(x, xp, fp, period=period)))
    args = [np.array([-0.3, 1.3, 2.7]), np.array([0.0, 0.9, 2.1, 3.0]), _FP]
    grads = gradient(f, *[a.copy() for a in args])
    for k in (0, 1):
        assert not np.iscomplexobj(grads[k])
        np.testing.assert_allclose(grads[k], central(f, args, k), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grads[2], _fp_central(f, args, 2), rtol=1e-6, atol=1e-7)


def test_interp_of_complex_values_scalar_x(mode):
    f = lambda x: np.imag(np.interp(x, np.array([0.0, 1.0]), np.array([0.0, 1.0 + 2.0j])))  # = 2 x on [0, 1]
    assert gradient(f, 0.5)[0] == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("x, xp", [(np.array([0.5, 2.5]), np.array([0.0, 1.0, 2.0, 2.0])),
                                   (np.array([-0.5, 0.5, 1.5]), np.array([0.0, 0.0, 1.0, 2.0])),
                                   (np.array([0.3, -1.0, 4.0]), np.array([0.0]))],
                         ids=["repeated last knot", "repeated first knot", "one point"])
def test_interp_with_a_table_of_no_width_at_an_end(mode, x, xp):
    """A repeated end knot (an interval of no width) and a one-point table gave nan (0 * inf from t = (x - xp_i) / 0)
    for x outside the table, where y is an end value."""
    fp = np.linspace(1.0, 2.5, len(xp)) ** 2

    def f(x, fp):
        return np.sum(np.interp(x, xp, fp) * np.arange(1.0, len(x) + 1))
    dx, dfp = gradient(f, x.copy(), fp.copy())
    np.testing.assert_allclose(dfp, central(f, [x, fp], 1), atol=1e-7)
    np.testing.assert_allclose(dx, central(f, [x, fp], 0), atol=1e-7)

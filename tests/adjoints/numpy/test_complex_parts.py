"""Tests of `zygotepy/adjoints/numpy/complex_parts.py` (np.conjugate, np.real, np.imag, np.angle and
ndarray.conj/conjugate): its rows of the rule table against finite differences (tests/adjoints/numpy/rows_*.py,
`row_tests` of tests/adjoints/test_rules.py); the method of a real array, which NumPy gives as the array itself."""
import sys
from pathlib import Path

import numpy as np
import pytest

import zygotepy
from zygotepy.testing import check_grads

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("complex_parts"))


def doubled_through_the_conjugate(psi):
    bra = psi.conj()  # (a real array's own object, as NumPy's method gives it)
    bra *= 2.0
    return np.sum(psi * psi) + np.sum(psi.conjugate().T * 0.5)


def test_the_conjugate_method_of_a_real_array_is_the_array(mode):
    """`psi.conj() is psi` for a real array: an update of the result updates psi (the value, gradient, tangent and
    Hessian were those of a copy: 0.98 for 3.92, gradients a quarter of the true ones)."""
    psi = np.array([0.3, 0.5, 0.8])
    assert zygotepy.value_and_gradient(doubled_through_the_conjugate, psi.copy())[0] == pytest.approx(
        doubled_through_the_conjugate(psi.copy()))
    check_grads(doubled_through_the_conjugate, psi.copy())
    e0 = np.eye(3)[0]
    want = (doubled_through_the_conjugate(psi + 1e-6 * e0) - doubled_through_the_conjugate(psi - 1e-6 * e0)) / 2e-6
    assert zygotepy.jvp(doubled_through_the_conjugate, (psi.copy(),), (e0,))[1] == pytest.approx(want, rel=1e-6)
    assert np.allclose(zygotepy.hessian(doubled_through_the_conjugate, psi.copy()), 8 * np.eye(3))

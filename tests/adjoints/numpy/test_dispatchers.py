"""NumPy's Python functions that have no rule of ours, differentiated through their own source (adjoints/numpy/
dispatchers.py): NumPy wraps each in a dispatcher object, which is no Python function, so they raised MissingAdjoint.
Checked against one plain call and central differences in float64, with every optimisation on and with every one
off; a construct zygotepy cannot follow in NumPy's code is refused, naming it."""
import os
import sys

import numpy as np
import pytest

from zygotepy import MissingAdjoint, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

X = np.array([-0.5, 0.4, 1.3, 0.8])

CASES = {
    "piecewise": lambda x: np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, lambda t: 3 * t]) * x),
    "i0": lambda x: np.sum(np.i0(x) * x),
    "polyadd": lambda x: np.sum(np.polyadd(x, x[:2] ** 2) ** 2),
    "polysub": lambda x: np.sum(np.polysub(x[:3], x) * x),
    "unwrap": lambda x: np.sum(np.unwrap(x * 4.0) ** 2),
    "real_if_close": lambda x: np.sum(np.real_if_close(x + 0j) ** 2),
    "trim_zeros": lambda x: np.sum(np.trim_zeros(np.concatenate([[0.0], x, [0.0]])) ** 3),
}


@pytest.mark.parametrize("name", list(CASES))
def test_through_numpys_python(mode, name):
    f = CASES[name]
    value, (grad,) = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    np.testing.assert_allclose(grad, central(f, (X,), 0), rtol=1e-6, atol=1e-8)


def test_numpys_own_python_that_cannot_be_differentiated_is_refused_naming_numpy():
    """The error names the NumPy function the user called, at the user's line, and why (a C class of NumPy's that
    apply_along_axis's Python uses, with no rule)."""
    with pytest.raises(MissingAdjoint, match=r"test_dispatchers.py:\d+: no adjoint rule for \S*apply_along_axis .*"
                                             r"_array_converter"):
        value_and_gradient(lambda m: np.sum(np.apply_along_axis(lambda r: np.sum(r ** 2), 1, m)), np.ones((2, 3)))

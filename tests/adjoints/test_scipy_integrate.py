"""scipy.integrate (zygotepy/adjoints/scipy_integrate.py): `trapezoid` and `cumulative_trapezoid`, which were refused
(SciPy's array-API helpers), against central differences in float64 with every optimisation on and off, in the
samples and in the sample points, by position and by keyword."""
import sys
from pathlib import Path

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plain_checks import agree_at  # noqa: E402

T = np.cumsum(np.array([0.1, 0.2, 0.15, 0.3, 0.25, 0.2]))
Y = np.linspace(0.1, 1.3, 6)


@pytest.mark.parametrize("f, x", [
    (lambda y: si.trapezoid(y ** 2, T), Y),
    (lambda y: np.sum(si.trapezoid(np.exp(y), dx=0.3, axis=0) ** 2), np.linspace(-1, 1, 12).reshape(2, 6)),
    (lambda y: np.sum(si.cumulative_trapezoid(np.sin(y), T) ** 2), Y),
    (lambda y: np.sum(si.cumulative_trapezoid(y ** 2, dx=0.1, initial=0) ** 2), Y),
    (lambda t: np.sum(si.cumulative_trapezoid(Y ** 2, t)), T),
    (lambda y: np.sum(si.cumulative_trapezoid(y * y, x=T, axis=1) ** 2), np.linspace(-1, 1, 12).reshape(2, 6)),
], ids=["trapezoid", "trapezoid dx= axis=", "cumulative", "cumulative initial=", "in the points", "axis="])
def test_trapezoidal_rules(f, x, mode):
    agree_at(f, x)

"""zygotepy.testing.check_grads (testing.py): its finite differences are taken in float64 whatever the argument's
precision, as api.md says (a float32 argument's were taken in float32, and a right gradient failed), and it catches
a wrong gradient."""
import numpy as np
import pytest

from zygotepy import adjoint
from zygotepy.testing import check_grads


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_a_right_gradient_passes_in_any_precision(dtype):
    x = np.array([1.0, 2.0, 0.5], dtype=dtype)
    check_grads(lambda x: np.sum(np.abs(x) ** 2), x)
    check_grads(lambda p: p["w"] @ np.sin(p["b"]), {"w": x.real.astype(np.float32), "b": np.ones(3, np.float32)})


def _twice(x):
    return x * 2.0


@adjoint(_twice)
def _twice_wrong(x):
    return _twice(x), lambda dy: (dy * 3.0,)


def test_a_wrong_gradient_fails():
    with pytest.raises(AssertionError):
        check_grads(lambda x: np.sum(_twice(x)), np.ones(3, dtype=np.float32))

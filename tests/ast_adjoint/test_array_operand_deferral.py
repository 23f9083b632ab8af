"""`ndarray <op> obj` for a user class's `obj` (zygotepy/ast_adjoint/array_operands.py, asked by dispatch.py
`_user_operator`): NumPy's operator gives way to obj's reflected method only where obj's class sets
`__array_ufunc__ = None` or a higher `__array_priority__` (then the method is differentiated, checked against central
differences in float64); otherwise NumPy converts obj (a sequence: an array of its elements; anything else: an object
array), which is refused where obj carries a gradient (was obj.__rmul__(array): another value and gradient, or a
crash) and computed as NumPy does where obj holds data only."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import central, line_of  # noqa: E402


class _Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __rmul__(self, s):
        return _Vec(s * self.x, s * self.y)

    def __radd__(self, s):
        return _Vec(s + self.x, s + self.y)

    def __rmatmul__(self, m):
        return _Vec(m[0, 0] * self.x + m[0, 1] * self.y, m[1, 0] * self.x + m[1, 1] * self.y)


class _SeqVec(_Vec):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.x, self.y)[i]


class _Pair:  # a sequence without reflected methods
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.x, self.y)[i]


class _Priority(_SeqVec):
    __array_priority__ = 10.0


class _NoUfuncs(_SeqVec):
    __array_ufunc__ = None


W = np.array([0.5, 2.0])
M = np.array([[1.0, 2.0], [3.0, 4.0]])


def _sum(v):
    return np.sum(v.x * 1.5 + v.y * v.y) if not isinstance(v, np.ndarray) else np.sum(v)


WORKING = {
    "* priority": lambda a, b: _sum(W * _Priority(a, b)),
    "+ priority": lambda a, b: _sum(W + _Priority(a, b)),
    "* no ufuncs": lambda a, b: _sum(W * _NoUfuncs(a, b)),
    "@ no ufuncs": lambda a, b: _sum(M @ _NoUfuncs(a, b)),
    "float64 * object": lambda a, b: _sum(np.float64(3.0) * _Vec(a, b)),  # (NumPy's object loop: v.__rmul__)
    "0-d array * object": lambda a, b: _sum(np.array(3.0) * _Vec(a, b)),
    "array * constant sequence": lambda a, b: np.sum(np.array([a, b]) * _SeqVec(2, 3)),
    "array + constant sequence": lambda a, b: np.sum((np.array([a, b]) + _SeqVec(2, 3)) ** 2),
    "matrix @ constant sequence": lambda a, b: np.sum(np.array([[a, b], [b, a]]) @ _Pair(2, 3)),
}


@pytest.mark.parametrize("case", WORKING)
def test_numpy_gives_way_or_the_operand_is_data(mode, case):
    f = WORKING[case]
    args = (0.4, -1.1)
    value, grads = value_and_gradient(f, *args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    for k in range(2):
        want = central(f, args, k)
        np.testing.assert_allclose(0.0 if grads[k] is None else grads[k], want, rtol=1e-6, atol=1e-8)


def _times_sequence(a, b):
    w = W * _SeqVec(a, b)  # refused: converted
    return np.sum(w[0])


def _plus_sequence(a, b):
    w = W + _SeqVec(a, b)  # refused: converted
    return np.sum(w)


def _scalar_times_sequence(a, b):
    w = np.float64(2.0) * _SeqVec(a, b)  # refused: converted
    return np.sum(w)


def _matmul_sequence(a, b):
    return np.sum(M @ _Pair(a, b))  # refused: converted


def _object_array(a, b):
    arr = W * _Vec(a, b)  # refused: an object array
    return arr[0].x + arr[1].y


@pytest.mark.parametrize("f", [_times_sequence, _plus_sequence, _scalar_times_sequence, _matmul_sequence,
                               _object_array])
def test_a_converted_operand_carrying_a_gradient_is_refused(mode, f):
    with pytest.raises(ZygoteError, match="__array_ufunc__ = None") as e:
        gradient(f, 0.4, -1.1)
    assert f":{line_of(f, '# refused')}:" in str(e.value)

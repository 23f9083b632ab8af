"""NumPy's in-place functions on dual numbers (zygotepy/forward/in_place.py): `jvp` against central differences in
float64, the value against NumPy's own call, `hessian` and a gradient of a gradient where the reverse rule runs on dual
numbers too (np.copyto, x.fill, np.subtract.at), and the refusals (a plain array given a value carrying a derivative;
NumPy's own errors)."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ForwardModeError, gradient, hessian, jvp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central, central_hessian  # noqa: E402

_W = np.array([0.7, 1.3, -0.3, 0.45])
_DIRECTION = np.array([0.3, -1.1, 0.8, 0.5])


def copyto(w):
    v = np.zeros_like(w)
    np.copyto(v, w * w)
    return np.sum(np.sin(v) * w)


def copyto_where(w):
    v = w * 2.0
    np.copyto(v, w ** 3, where=w > 0)
    return np.sum(v * w)


def copyto_broadcast(w):
    m = np.outer(w, w)
    np.copyto(m, np.sin(w))
    return np.sum(m * m * w)


def putmask(w):
    v = w * 1.0
    np.putmask(v, w > 0, w[:3] ** 2)  # (values indexed by position in v, repeated)
    return np.sum(v * v * w)


def place(w):
    v = w * 1.0
    np.place(v, w < 0.5, np.sin(w[:1]))  # (values taken in turn, repeated)
    return np.sum(v * v * w)


def put(w):
    v = w * 1.0
    np.put(v, [0, 2, 0], w[1:] ** 2)  # (a repeated position: the last value)
    return np.sum(v * np.cos(w))


def put_wrap(w):
    v = w * 1.0
    np.put(v, [5, -1], w[:2] * w[3], mode="wrap")
    return np.sum(v * v)


def put_method(w):
    v = w * 1.0
    v.put([3, 1], np.exp(w[:2]))
    return np.sum(v * v * w)


def fill_diagonal(w):
    m = np.outer(w, w)
    np.fill_diagonal(m, w ** 3)
    return np.sum(m * m)


def fill_diagonal_wrap(w):
    m = np.outer(np.concatenate([w, w]), w)  # (8, 4): the diagonal starts again after a row of zeros
    np.fill_diagonal(m, w[0] * w[1], wrap=True)
    return np.sum(m * np.cos(m))


def put_along_axis(w):
    m = np.outer(w, w)
    np.put_along_axis(m, np.array([[0], [1], [2], [1]]), w.reshape(-1, 1) ** 2, axis=1)
    return np.sum(m ** 3)


def fill(w):
    v = w * 1.0
    v.fill(w[0] * w[1])
    return np.sum(v * w)


def multiply_at(w):
    v = w * 1.0
    np.multiply.at(v, [0, 1, 0], w[1:] ** 2)  # (position 0 twice: two products in turn)
    return np.sum(v * w)


def maximum_at(w):
    v = w * 1.0
    np.maximum.at(v, [0, 1, 0], w[1:] ** 2)
    return np.sum(v * v)


def subtract_at(w):
    v = w * 1.0
    np.subtract.at(v, [0, 1, 0], np.sin(w[1:]))
    return np.sum(v * v * w)


ALL = [copyto, copyto_where, copyto_broadcast, putmask, place, put, put_wrap, put_method, fill_diagonal, fill_diagonal_wrap,
       put_along_axis, fill, multiply_at, maximum_at, subtract_at]
REVERSE_ON_DUALS = [copyto, copyto_broadcast, fill, subtract_at]  # (the others' reverse rules refuse dual numbers)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_jvp_agrees_with_central_differences(f, mode):
    value, tangent = jvp(f, (_W,), (_DIRECTION,))
    assert value == pytest.approx(f(_W.copy()), rel=1e-12)
    assert tangent == pytest.approx(central(f, (_W,), 0) @ _DIRECTION, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("f", REVERSE_ON_DUALS, ids=lambda f: f.__name__)
def test_hessian_agrees_with_central_differences(f, mode):
    np.testing.assert_allclose(hessian(f, _W), central_hessian(f, _W), rtol=1e-5, atol=1e-5)


@pytest.mark.dual_route
@pytest.mark.parametrize("f", REVERSE_ON_DUALS, ids=lambda f: f.__name__)
def test_gradient_of_gradient(f, mode):
    def outer(w):
        g = gradient(f, w)[0]
        return np.sum(g * np.cos(w))
    np.testing.assert_allclose(gradient(outer, _W)[0], central(outer, (_W,), 0), rtol=1e-5, atol=1e-5)


def into_plain(w):
    v = np.zeros(4)
    np.put(v, [1, 2], w[:2])
    return np.sum(v * v)


def test_a_plain_array_refuses_a_value_carrying_a_derivative(mode):
    with pytest.raises(ForwardModeError, match="np.put updates"):
        jvp(into_plain, (_W,), (_DIRECTION,))


def put_outside(w):
    v = w * 1.0
    np.put(v, [4], w[0])
    return np.sum(v)


def copyto_int(w):
    v = np.zeros(4, dtype=int)
    np.copyto(v, w)
    return np.sum(w)


@pytest.mark.parametrize("f, error", [(put_outside, IndexError), (copyto_int, TypeError)],
                         ids=["put out of bounds", "copyto casting"])
def test_numpy_errors_stay_numpy_errors(f, error, mode):
    with pytest.raises(error):
        f(_W.copy())
    with pytest.raises(error):
        jvp(f, (_W,), (_DIRECTION,))

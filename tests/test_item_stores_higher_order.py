"""Second derivatives of functions that fill arrays in place: `hessian` (forward-over-reverse) and forward mode work
when the array is made from the perturbed input (`np.zeros_like(x)` carries a zero tangent, so stores keep the values'
tangents); an array made from constants, and a gradient of a gradient through a store, raise clear errors naming what
to do instead, never a wrong number."""
import math
import os
import re
import sys

import numpy as np
import pytest

from zygotepy import derivative, gradient, hessian, jacobian, pushforward
from zygotepy.errors import ForwardModeError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import central_hessian  # noqa: E402


def fill_zeros_like(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = math.sin(x[i]) * x[i]
    return out.sum()


def fill_empty_like_then_overwrite(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = x[i] ** 3
    out[0] = out[0] * x[1]
    return (out * x).sum()


def fill_full_like(x):
    out = np.full_like(x, 2.0)
    out[1] = x[0] * x[1]
    return (out * x).sum()


def fill_ones_like_slices(x):
    out = np.ones_like(x)
    out[1:] = x[:-1] * x[1:]
    return np.sum(out ** 2)


def _fd_hessian(f, x, eps=1e-5):
    n = x.size
    h = np.zeros((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = eps
        h[:, j] = (gradient(f, x + e)[0] - gradient(f, x - e)[0]) / (2 * eps)
    return h


@pytest.mark.parametrize("f", [fill_zeros_like, fill_empty_like_then_overwrite, fill_full_like,
                               fill_ones_like_slices], ids=lambda f: f.__name__)
def test_hessian_of_a_function_filling_an_array_in_place(f):
    x = np.array([0.3, -0.8, 1.1])
    np.testing.assert_allclose(hessian(f, x), _fd_hessian(f, x), rtol=1e-6, atol=1e-8)


def test_hessian_of_the_fill_loop_matches_its_closed_form():
    x = np.array([0.3, 0.8])
    expected = np.diag(2 * np.cos(x) - x * np.sin(x))
    np.testing.assert_allclose(hessian(fill_zeros_like, x), expected, rtol=1e-12)


def test_pushforward_of_a_fill_loop():
    x, v = np.array([0.3, 0.8, -1.2]), np.array([1.0, -2.0, 0.5])
    (tangent,) = np.atleast_1d(pushforward(fill_zeros_like, x)(v))
    assert tangent == pytest.approx(np.dot(np.cos(x) * x + np.sin(x), v), rel=1e-12)


def test_derivative_of_a_scalar_through_a_zeros_like_buffer():
    def f(a):
        x = np.array([a, 2 * a])
        out = np.zeros_like(x)
        out[1] = x[0] * x[1]
        return out.sum()
    assert derivative(f, 0.7) == pytest.approx(4 * 0.7, rel=1e-12)


def test_hessian_storing_into_an_array_made_from_constants_raises():
    def f(x):
        out = np.zeros(3)
        out[1] = x[0] * x[1]
        return out.sum()
    with pytest.raises(ForwardModeError, match="plain array made from constants .*np.zeros_like"):
        hessian(f, np.array([0.3, 0.8, 1.1]))


@pytest.mark.dual_route
def test_gradient_of_gradient_through_an_item_store_raises_naming_the_store():
    # the twins cannot transform the store; forward-over-reverse (nesting/deep.py) cannot store a dual number into
    # np.zeros(3): its error says so, and its notes give the twins' refusal with the store's line
    def f(a):
        x = np.array([a, 2 * a, 0.5])
        out = np.zeros(3)
        out[1] = x[0] * x[1]
        return out.sum()
    store_line = f.__code__.co_firstlineno + 3
    with pytest.raises(ForwardModeError, match="plain array made from constants") as caught:
        gradient(lambda t: gradient(f, t)[0], 0.7)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert re.search(r"transform route failed: nested differentiation .*cannot go through the rule setitem", notes)
    assert re.search(rf"test_item_stores_higher_order.py, line {store_line}\b", notes), notes


def _powers_into_zeros(t):
    out = np.zeros(3)
    for i in range(3):
        out[i] = t ** (i + 1)
    return out


def test_pushforward_into_a_plain_array_raises_a_forward_mode_error():
    with pytest.raises(ForwardModeError, match="plain array made from constants"):
        pushforward(_powers_into_zeros, 0.7)(1.0)


def test_jacobian_falls_back_to_reverse_mode_when_forward_mode_cannot_store():
    from zygotepy import jacobian
    (jac,) = jacobian(_powers_into_zeros, 0.7)
    np.testing.assert_allclose(jac, [1.0, 2 * 0.7, 3 * 0.7 ** 2], rtol=1e-12)


def test_forward_mode_over_a_gradient():
    """derivative/pushforward of a gradient (Hessian-vector products): the seed of the inner gradient was made with
    `.astype` on a dual number and raised a TypeError."""
    assert derivative(lambda t: gradient(lambda y: y ** 3, t)[0], 0.5) == pytest.approx(3.0)
    x, v = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    hv = pushforward(lambda t: gradient(lambda y: np.sum(y ** 3), t)[0], x)(v)
    np.testing.assert_allclose(hv, 6 * x * v, rtol=1e-12)


@pytest.mark.parametrize("call", [lambda x, buf: np.cumsum(x, out=buf),
                                  lambda x, buf: np.sum(x.reshape(3, 1) * np.ones(2), axis=1, out=buf)],
                         ids=["cumsum", "sum"])
def test_forward_mode_out_into_an_array_made_from_constants_raises(call):
    # (the tangent was dropped: a Jacobian of zeros)
    def f(x):
        buf = np.empty(3)
        call(x, buf)
        return buf
    with pytest.raises(ForwardModeError, match="plain array made from constants"):
        jacobian(f, np.array([1.0, 2.0, 3.0]), mode="forward")



def _sum_into(a):
    buf = np.zeros_like(a[:2])
    np.sum(a.reshape(2, 2) ** 2, axis=0, out=buf)
    return np.sum(buf ** 2)


def _cumsum_into(x):
    y = np.zeros_like(x)
    np.cumsum(x ** 2, out=y)
    return np.sum(y * y)


@pytest.mark.parametrize("f, x", [(_sum_into, np.array([1.0, 2.0, 3.0, 4.0])),
                                  (_cumsum_into, np.array([1.0, 2.0, 3.0]))], ids=["sum", "cumsum"])
def test_hessian_through_out_into_an_array_made_from_the_input(f, x):
    # (refused: "no forward-mode (tangent) rule for numpy.copyto")
    np.testing.assert_allclose(hessian(f, x), central_hessian(f, x), rtol=1e-5, atol=1e-5)


def test_hessian_through_out_into_an_array_made_from_constants_raises():
    def f(x):
        c = np.empty(3)
        np.multiply(x, x, out=c)
        return np.sum(c ** 2)
    with pytest.raises(ForwardModeError, match="plain array made from constants"):
        hessian(f, np.array([1.0, 2.0, 3.0]))


def test_hessian_of_a_rolled_copy_stored_back():
    # (refused: the gathering rule converted the dual array to a plain one)
    def f(x):
        y = x.copy()
        y[:] = np.roll(y, 1)
        return np.sum(y ** 3 * np.array([1.0, 2.0, 3.0]))
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(hessian(f, x), central_hessian(f, x), rtol=1e-5, atol=1e-5)


def _store_product(t):
    a = np.array([t, t])
    a[1] = a[0] * a[1]
    return a[0] + a[1]  # t + t**2


@pytest.mark.dual_route
def test_a_third_derivative_through_an_item_store():
    """A store of a value carrying an outer level's derivative into the inner level's plain tangent array: NumPy's
    ValueError, reported as a store into a plain array made from constants (the array was made from the input)."""
    assert derivative(_store_product, 0.7) == pytest.approx(2.4)
    assert derivative(lambda u: derivative(_store_product, u), 0.7) == pytest.approx(2.0)
    assert gradient(lambda v: gradient(lambda u: gradient(_store_product, u)[0], v)[0], 0.7)[0] == pytest.approx(0.0)
    assert hessian(lambda u: gradient(_store_product, u)[0], 0.7) == pytest.approx(0.0)

"""NumPy's iterator objects (adjoints/numpy/iterators.py): `np.ndindex` is data, `np.ndenumerate` is differentiated as
its comprehension, and `np.nditer` over arrays carrying gradients is refused, naming the line (a write through its
elements went unseen). Against central differences in float64."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, hessian
from plain_checks import central, central_hessian


def over_ndindex(a):
    t = 0.0
    for index in np.ndindex(a.shape):
        t = t + a[index] ** 2 * (index[1] + 1)
    return t


def over_ndenumerate(a):
    t = 0.0
    for index, v in np.ndenumerate(a):
        t = t + np.sin(v) * (index[0] + 2)
    return t


def store_by_ndindex(a):
    y = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        y[index] = a[index] * a[index]
    return np.sum(y * a)


@pytest.mark.parametrize("f", [over_ndindex, over_ndenumerate, store_by_ndindex], ids=lambda f: f.__name__)
def test_index_iterators_match_finite_differences(f):
    a = np.array([[0.3, -0.8, 1.1], [0.6, 0.2, -0.5]])
    (g,) = gradient(f, a)
    np.testing.assert_allclose(g, central(f, (a,), 0), rtol=1e-6, atol=1e-8)
    flat = lambda x: f(x.reshape(2, 3))  # noqa: E731
    h = hessian(flat, a.ravel())
    np.testing.assert_allclose(h, central_hessian(flat, a.ravel()), rtol=1e-5, atol=1e-6)


def nditer_written(x):
    y = x.copy()
    with np.nditer(y, op_flags=["readwrite"]) as it:
        for e in it:
            e[...] = e * e
    return np.sum(y)


def nditer_operands(x, z):
    out = np.empty(3)
    with np.nditer([x, z, out], op_flags=[["readonly"], ["readonly"], ["writeonly"]]) as it:
        for a, b, c in it:
            c[...] = a * b
    return np.sum(out)


def nditer_read(x):
    t = 0.0
    for e in np.nditer(x):
        t = t + e * e
    return t


@pytest.mark.parametrize("f, args", [(nditer_written, 1), (nditer_operands, 2), (nditer_read, 1)],
                         ids=["written", "operands", "read"])
def test_nditer_over_arrays_carrying_gradients_is_refused(f, args):
    x = np.array([1.0, 2.0, 3.0])
    refused = r"test_iterators.py:\d+: zygotepy cannot differentiate (a loop over )?np.nditer"
    with pytest.raises(ZygoteError, match=refused):
        gradient(f, *[x] * args)


def test_nditer_over_data_runs():
    def f(x):
        t = 0.0
        for e in np.nditer(np.arange(3.0)):
            t = t + float(e) * x
        return t
    assert gradient(f, 2.0) == (pytest.approx(3.0),)

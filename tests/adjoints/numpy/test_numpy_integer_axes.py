"""An axis given as a NumPy integer (`axis=np.argmax(x.shape)` is an np.int64, which is no `int` and not iterable):
the reductions (adjoints/numpy/common.py `as_axes`), the nan-reductions, order statistics, weighted averages,
np.gradient, np.linalg.norm, scipy.special's logsumexp and softmax, ufunc reductions, tensordot's and transpose's axes.
Each case's value and gradient, in both optimisation settings, against central differences in float64, for an
np.int64 and an np.int32 axis; and a hessian, whose forward pass has rules of its own."""
import numpy as np
import pytest
import scipy.special as sp
from plain_checks import central

from zygotepy import hessian, value_and_gradient

X0 = np.array([[0.3, -0.7, 1.1], [0.5, 0.9, -0.2]])
W = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.5]])
AXIS = {"int64": np.int64(1), "int32": np.int32(0)}

OPS = {
    "sum": lambda X, a: np.sum(X, axis=a),
    "sum keepdims": lambda X, a: np.sum(X, axis=a, keepdims=True),
    "max": lambda X, a: np.max(X, axis=a),
    "amin": lambda X, a: np.amin(X, axis=a),
    "mean": lambda X, a: np.mean(X, axis=a),
    "prod": lambda X, a: np.prod(X, axis=a),
    "var": lambda X, a: np.var(X, axis=a),
    "std": lambda X, a: np.std(X, axis=a),
    "nansum": lambda X, a: np.nansum(X, axis=a),
    "nanmean": lambda X, a: np.nanmean(X, axis=a),
    "nanmax": lambda X, a: np.nanmax(X, axis=a),
    "nanstd": lambda X, a: np.nanstd(X, axis=a),
    "ptp": lambda X, a: np.ptp(X, axis=a),
    "average": lambda X, a: np.average(X, axis=a, weights=W),
    "median": lambda X, a: np.median(X, axis=a),
    "quantile": lambda X, a: np.quantile(X, 0.3, axis=a),
    "gradient": lambda X, a: np.gradient(X, axis=a),
    "norm": lambda X, a: np.linalg.norm(X, axis=a),
    "norm ord 1": lambda X, a: np.linalg.norm(X, ord=1, axis=a),
    "logsumexp": lambda X, a: sp.logsumexp(X, axis=a),
    "softmax": lambda X, a: sp.softmax(X, axis=a),
    "log_softmax": lambda X, a: sp.log_softmax(X, axis=a),
    "method sum": lambda X, a: X.sum(a),
    "method max": lambda X, a: X.max(axis=a),
    "method std": lambda X, a: X.std(axis=a),
    "method prod": lambda X, a: X.prod(a),
    "add.reduce": lambda X, a: np.add.reduce(X, axis=a),
    "maximum.reduce": lambda X, a: np.maximum.reduce(X, axis=a),
    "logaddexp.reduce": lambda X, a: np.logaddexp.reduce(X, axis=a),
    "cumsum": lambda X, a: np.cumsum(X, axis=a),
    "tensordot": lambda X, a: np.tensordot(X, W.T, axes=a - a + 1),
    "transpose 1-d": lambda X, a: X[0].transpose(a - a),
}


def _loss(op, axis):
    def loss(X):
        return np.sum(np.sin(op(X, axis)) * 1.3)
    return loss


@pytest.mark.parametrize("axis", AXIS.values(), ids=AXIS.keys())
@pytest.mark.parametrize("name", OPS)
def test_a_numpy_integer_axis_against_central_differences(mode, name, axis):
    loss = _loss(OPS[name], axis)
    value, (grad,) = value_and_gradient(loss, X0.copy())
    np.testing.assert_allclose(value, loss(X0.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, central(loss, (X0,), 0), rtol=1e-6, atol=1e-6)


def test_a_numpy_integer_axis_in_a_hessian(mode):
    with_int, with_numpy_int = _loss(OPS["logsumexp"], 1), _loss(OPS["logsumexp"], np.int64(1))
    np.testing.assert_allclose(hessian(with_numpy_int, X0.copy()), hessian(with_int, X0.copy()), rtol=1e-12)

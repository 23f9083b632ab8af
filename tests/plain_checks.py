"""The check the mutation test files share: zygotepy against one plain call of the same function (its value, and the
state it leaves its argument in) and against central finite differences in float64, each evaluation on its own copy
(so functions that update their argument are fine)."""
import copy

import numpy as np

from zygotepy import value_and_gradient


def fd(f, x, eps=1e-6):
    """Central finite differences of the real scalar f at x, in every coordinate (float64)."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def agree_at(f, x):
    """zygotepy's value, gradient and final argument state for f(x) equal one plain call's and central differences."""
    plain = copy.deepcopy(x)
    want = f(plain)
    want_grad = fd(lambda v: f(v.copy()), x)
    arg = copy.deepcopy(x)
    value, (grad,) = value_and_gradient(f, arg)
    np.testing.assert_allclose(value, want, rtol=1e-9, err_msg="value")
    np.testing.assert_allclose(np.zeros_like(x) if grad is None else grad, want_grad, rtol=1e-6, atol=1e-6,
                               err_msg="gradient")
    np.testing.assert_array_equal(arg, plain, err_msg="argument state after the call")

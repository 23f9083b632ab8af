"""The checks the mutation test files share (tests/adjoints/mutation/): zygotepy against one plain call of the same
function (its value, and the state it leaves its argument in) and against central finite differences in float64, each
evaluation on its own copy (so functions that update their argument are fine), and the line an error must name."""
import copy
import inspect

import numpy as np

from zygotepy import gradient, value_and_gradient


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


def central(f, args, k, h=1e-6):
    """d f / d args[k] by central differences, the argument taken as a float (or float array) whatever its type."""
    x = np.asarray(args[k], dtype=float)
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = h
        up, down = list(args), list(args)
        up[k], down[k] = (x + e, x - e) if x.shape else (float(x + e), float(x - e))
        out[i] = (f(*[a.copy() if isinstance(a, np.ndarray) else a for a in up])
                  - f(*[a.copy() if isinstance(a, np.ndarray) else a for a in down])) / (2 * h)
    return out if x.shape else float(out)


def check_grads(f, x, eps=1e-6):
    """gradient(f, x) against central finite differences in every coordinate (float64)."""
    got = gradient(f, x.copy())[0]
    np.testing.assert_allclose(got, fd(f, x, eps), rtol=1e-6, atol=1e-6)


def line_of(fn, marker):
    """The line of `fn`'s source holding `marker` (once), for the file:line an error must name."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + k for k, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, hits
    return hits[0]


def central_hessian(f, x, h=1e-5):
    """Central differences of the gradient zygotepy gives (itself checked against central differences elsewhere):
    the Hessian of the real scalar f at the float vector x, column by column."""
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        cols.append((gradient(f, x + e)[0] - gradient(f, x - e)[0]) / (2 * h))
    return np.stack(cols, axis=1)

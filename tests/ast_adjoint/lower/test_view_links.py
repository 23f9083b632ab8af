"""Updates reaching an array's views by the links the mutation lowering keeps (ast_adjoint/lower/mutation.py): a view of
a view (`w = b[0]; v = w.reshape(3)`), a view used beside its base in an expression (`c = x * v`), a view made by a
NumPy function (`np.transpose(b)`) and a helper updating a view while a container holds the base. Each was silently
wrong: an update of one reached the other only through a holder that did not share its memory. Each function is
checked against one plain call (its value) and central differences in float64, in every argument."""
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

B = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])


def reshape_of_a_row_then_the_base_updated(b):
    y = b * 1.0
    w = y[0]
    v = w.reshape(3)
    y[0, 0] = 7.0
    return np.sum(v ** 2)


def ravel_of_a_row_then_the_argument_updated(b):
    w = b[1]
    v = np.ravel(w)
    b[1, 2] = b[0, 0] * 3.0
    return np.sum(v * v) + np.sum(b)


def view_beside_its_base_then_updated(b):
    x = b[0] * 1.0
    v = x.reshape(-1)
    c = x * v  # noqa: F841 - the expression links them; its result is unused
    v[1] = 3.0
    return np.sum(x * x)


def view_beside_its_base_into_out(b):
    x = b * 1.0
    v = x.reshape(-1)
    c = np.zeros(6)
    np.subtract(x.reshape(-1), v, out=c)  # (`x.reshape(-1)` a view too)
    v[1] *= 3.0
    return np.sum(x * x) + np.sum(c)


def put_into_a_transpose(b, s):
    y = b.copy()
    v = np.transpose(y)
    np.put(v, [1], y[0, 2])
    v[0, 0] = 2.0 * s
    return np.sum(y ** 2)


def _set_first(buf, v):
    buf[0] = buf[-1] * v


def helper_updating_a_view_while_a_tuple_holds_the_base(b, s):
    x = np.zeros(4)
    y = b.copy()
    v = y.ravel()
    pair = (x, b)  # noqa: F841 - never read again
    x[2] = s
    _set_first(v, s)
    v[1] = v[1] * 2.0
    return np.sum(y ** 2) + np.sum(x)


@pytest.mark.parametrize("f", [reshape_of_a_row_then_the_base_updated, ravel_of_a_row_then_the_argument_updated,
                               view_beside_its_base_then_updated, view_beside_its_base_into_out, put_into_a_transpose,
                               helper_updating_a_view_while_a_tuple_holds_the_base])
def test_an_update_reaches_every_view(mode, f):
    args = (B.copy(), 0.484)[:f.__code__.co_argcount]
    value, grads = value_and_gradient(f, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert value == pytest.approx(f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]), rel=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-6, atol=1e-8)

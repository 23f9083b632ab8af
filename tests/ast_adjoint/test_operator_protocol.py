"""Python's operator protocol for user classes (dispatch.py `_user_operator`, and the lowering of `x += v` as an
update that may or may not happen in place): a subclass's own reflected method is asked first, and an `__iadd__`
returning NotImplemented falls back to `__add__`, which makes a new object its aliases do not see. Both gave wrong
values and gradients before (found by a probe of user numeric classes); checked against central differences."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import hessian, value_and_gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plain_checks import central  # noqa: E402


class A:
    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return A(self.v + o.v)

    def __mul__(self, o):
        return A(self.v * o.v)


class B(A):
    def __radd__(self, o):
        return B(2.0 * o.v + self.v)

    def __rmul__(self, o):
        return NotImplemented  # (then A.__mul__ of the left operand, as in Python)


class N:
    def __init__(self, v):
        self.v = v

    def __iadd__(self, o):
        if isinstance(o, N):
            self.v = self.v + o.v
            return self
        return NotImplemented

    def __add__(self, o):
        return N(self.v + 100.0 * o)


def subclass_reflected_first(x, y):
    return (A(x) + B(y)).v


def subclass_reflected_declines(x, y):
    return (A(x) * B(y)).v + (B(y) + A(x)).v


def iadd_not_implemented_makes_a_new_object(x, y):
    a = N(x)
    b = a
    a += y  # __iadd__ declines: __add__ makes a new object, and b is still N(x)
    a += N(y)  # in place, on the new object only
    return b.v * 3.0 + a.v


@pytest.mark.parametrize("f", [subclass_reflected_first, subclass_reflected_declines,
                               iadd_not_implemented_makes_a_new_object], ids=lambda f: f.__name__)
def test_the_operator_protocol_of_user_classes(f, mode):
    args = (0.7, -1.3)
    value, grads = value_and_gradient(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-14)
    for k in range(2):
        assert grads[k] == pytest.approx(central(f, args, k), rel=1e-6, abs=1e-9)


def _doubled_through_the_real_view(x):
    a = x.copy()
    a.real[...] *= 2.0  # (an item of a view of hessian's dual array)
    return np.sum(a ** 3)


def test_an_item_of_a_dual_number_is_no_users_operator(mode):
    """hessian's dual numbers are zygotepy's own: `d[...]` of one took `Dual.__getitem__` for a user's method and
    tried to transform it (MissingAdjoint naming zygotepy's dual.py)."""
    x = np.array([0.2, 0.9, -0.4])
    assert np.allclose(hessian(_doubled_through_the_real_view, x), np.diag(48 * x))

"""`out=` is NumPy's output array only for library callees (lower/calls.py): given to a class (`dict(out=w)`, a
user's `Box(out=w)`) or to a user's Python function it is an argument like any other (it was taken as NumPy's and
crashed: "Cannot cast scalar from dtype('O')"). Each case against central differences and one plain call."""
import numpy as np
import pytest

from plain_checks import agree_at


class _Box:
    def __init__(self, inp, out):
        self.inp, self.out = inp, out


def _scaled(v, out=None):
    return v * 2.0 if out is None else v * out


def a_dict_made_with_an_out_keyword(x):
    d = dict(out=x * 1.0)
    return np.sum(d["out"] ** 2)


def a_class_made_with_an_out_keyword(x):
    b = _Box(inp=x, out=x * 3.0)
    return np.sum(b.out * b.inp)


def a_function_given_an_out_keyword(x):
    return np.sum(_scaled(x, out=x[::-1] * 1.0))


def numpys_own_out_still_writes(x):
    y = np.zeros(3)
    np.multiply(x, 2.0, out=y)
    return np.sum(y * x)


@pytest.mark.parametrize("f", [a_dict_made_with_an_out_keyword, a_class_made_with_an_out_keyword,
                               a_function_given_an_out_keyword, numpys_own_out_still_writes],
                         ids=lambda f: f.__name__)
def test_an_out_keyword(f, mode):
    agree_at(f, np.array([0.3, -0.7, 1.1]))

"""Stores into a NumPy object array (zygotepy/adjoints/mutation/stores.py `setitem`): a user object carrying a
gradient stored there is refused naming the line, as `np.array([...], dtype=object)` of them is (was a gradient None,
or a crash in the backward pass); an object array holding data only is differentiated as before."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central, line_of  # noqa: E402


class _Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __mul__(self, s):
        return _Vec(self.x * s, self.y * s)


def _filled_in_a_loop(a, b):
    v = _Vec(a, b)
    objs = np.empty(2, dtype=object)
    for i in range(2):
        objs[i] = v * float(i + 2)  # refused
    return sum(o.x + o.y for o in objs)


def _filled_one_by_one(a, b):
    v = _Vec(a, b)
    objs = np.empty(2, dtype=object)
    objs[0] = v * 2.0  # refused
    objs[1] = v * 3.0
    return objs[0].x + objs[1].y


def _filled_from_an_object_array(a, b):
    objs = np.empty(2, dtype=object)
    src = np.empty(2, dtype=object)
    src[0], src[1] = "p", "q"
    objs[:] = src
    objs[1] = _Vec(a, b)  # refused
    return objs[1].x


@pytest.mark.parametrize("f", [_filled_in_a_loop, _filled_one_by_one, _filled_from_an_object_array])
def test_storing_an_object_with_a_gradient_is_refused(mode, f):
    with pytest.raises(ZygoteError, match="NumPy array of _Vec objects") as e:
        gradient(f, 0.4, -1.1)
    assert f":{line_of(f, '# refused')}:" in str(e.value)


def _labels(a, b):
    names = np.empty(3, dtype=object)
    for i in range(3):
        names[i] = "n" * (i + 1)
    names[1:] = np.array(["xy", "z"], dtype=object)
    return a * len(names[0]) + b * len(names[1]) + a * b * len(names[2])


def _counts(a, b):
    held = np.empty(2, dtype=object)
    held[0], held[1] = 2, (3, 4)
    return a * held[0] + b * held[1][1]


@pytest.mark.parametrize("f", [_labels, _counts])
def test_object_arrays_of_data_still_work(mode, f):
    args = (0.4, -1.1)
    value, grads = value_and_gradient(f, *args)
    assert value == f(*args)
    for k in range(2):
        np.testing.assert_allclose(grads[k], central(f, args, k), rtol=1e-6)

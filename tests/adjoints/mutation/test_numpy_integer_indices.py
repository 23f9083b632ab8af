"""A list indexed by NumPy integers (an index array's items, `np.argsort(x)`, `np.int64(i)`), as Python's lists take
any object with `__index__`: stores, deletes, inserts, pops and slices. A store was refused as "a list update with an
extended slice" (adjoints/mutation/stores.py took only `int` and `slice` keys). Checked against one plain call and
central differences."""
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def swapped_in_place(x):
    y = list(x)
    i, j = np.int64(0), np.int64(2)
    if y[i] > y[j]:
        y[i], y[j] = y[j], y[i]
    return y[0] + 2.0 * y[1] + 3.0 * y[2]


def scaled_in_the_order_argsort_gives(x):
    y = list(x)
    for i in np.argsort(x):
        y[i] = y[i] * (1.0 + i)
    return sum(y)


def deleted_and_inserted(x):
    y = list(x)
    del y[np.int64(1)]
    y.insert(np.int32(0), x[2] * 2.0)
    return y[0] * y[1] + y[2]


def popped_and_added(x):
    y = list(x)
    v = y.pop(np.int64(1))
    y[np.intp(0)] += v
    return y[0] * y[1]


def a_slice_of_numpy_bounds(x):
    y = list(x)
    y[np.int64(1):np.int64(3)] = [x[0] * 2.0, x[1]]
    return sum(v * v for v in y)


def arrays_in_a_list(x):
    y = [x * 1.0, x * 2.0]
    y[np.int64(1)] *= 3.0
    y[np.int64(0)][np.int64(1)] = 5.0
    return np.sum(y[0] * y[1])


CASES = [swapped_in_place, scaled_in_the_order_argsort_gives, deleted_and_inserted, popped_and_added,
         a_slice_of_numpy_bounds, arrays_in_a_list]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_list_indexed_by_numpy_integers(f, mode):
    x = np.array([0.7, 0.3, 0.5])
    value, (g,) = value_and_gradient(f, x.copy())
    assert value == pytest.approx(f(x.copy()), rel=1e-12)
    np.testing.assert_allclose(g, central(f, (x,), 0), rtol=1e-6, atol=1e-8)

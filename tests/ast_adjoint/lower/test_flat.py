"""`x.flat[i]` read, stored and updated (`K.flat[::n + 1] += s`, jitter on a kernel's diagonal): the lowering indexes `x`
itself at the flat positions (`runtime.flat_index`), so the array's update and gradient are followed; it was refused
("reading through x.flat"). Checked against one plain call and central differences in float64, in every argument."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

X = np.array([[0.3, -0.7, 1.1], [0.4, 0.9, -0.2], [1.3, 0.1, 0.6]])


def jitter_on_the_diagonal(x, s):
    k = x @ x.T
    k.flat[::4] += s ** 2
    return np.linalg.slogdet(k)[1]


def read_items(x, s):
    return x.flat[4] * s + np.sum(x.flat[1:7:2] ** 2) + np.sum(x.flat[[0, 8, 8]])


def store_into_a_transpose(x, s):
    y = x * 1.0
    t = y.T
    t.flat[1] = s * 3.0  # (y[1, 0]: the transpose's C order)
    t.flat[np.arange(9) > 6] = x[0, 0]
    return np.sum(y * y)


def masked_by_a_flat_condition(x, s):
    y = x * s
    y.flat[(x > 0.5).ravel()] *= 2.0
    return np.sum(y)


@pytest.mark.parametrize("f", [jitter_on_the_diagonal, read_items, store_into_a_transpose, masked_by_a_flat_condition])
def test_flat_positions(mode, f):
    args = (X, 0.7)
    value, grads = value_and_gradient(f, X.copy(), 0.7)
    assert value == pytest.approx(f(X.copy(), 0.7), rel=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-6, atol=1e-8)


class _Flat:
    def __init__(self, v):
        self.flat = [v, 2.0 * v]


def test_flat_of_another_object_is_refused():
    with pytest.raises(ZygoteError, match="flat"):
        value_and_gradient(lambda v: _Flat(v).flat[1], 0.5)

"""`m &= c`, `m ^= c`, `idx <<= k`, `idx >>= k` on a bool or int array read earlier (a mask of `np.where`, an index):
the update is undone before the backward, which reads the values the earlier operation saw (mutation/operators.py
`_data_in_place`; `m &= c` gave [1, 0, 0] for [1, 2, 3], a shift moved an index's cotangent, a narrowed mask's count
crashed the backward). Sets keep their own in-place rules."""
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

W = np.array([1.0, 2.0, 3.0])
X = np.array([0.3, -0.7, 1.1])


def and_mask(x):
    m = np.array([True, True, True])
    y = np.where(m, x, 0.0)
    m &= np.array([True, False, False])
    return np.sum(y * W) + np.sum(np.where(m, x, 0.0))


def xor_mask(x):
    m = np.array([True, False, True])
    y = x[m]
    m ^= np.array([True, True, False])
    return np.sum(y * W[:2]) + np.sum(x[m])


def shifted_index(x):
    idx = np.array([1, 0, 0])
    y = x[idx]
    idx <<= 1
    z = x[idx]
    idx >>= 1
    return np.sum(y * W) + np.sum(z) + np.sum(x[idx])


def narrowed_in_a_loop(x):
    m = np.ones(3, dtype=bool)
    total = 0.0
    for t in (2.0, 1.0, 0.0):
        total = total + np.sum(np.where(m, x * x, 0.0))
        m &= x < t
    return total


@pytest.mark.parametrize("f", [and_mask, xor_mask, shifted_index, narrowed_in_a_loop])
def test_bitwise_updates_of_data_are_undone_for_the_backward(mode, f):
    for _ in range(2):
        got, = gradient(f, X.copy())
        np.testing.assert_allclose(got, central(f, (X,), 0), rtol=1e-7, atol=1e-9)


def test_sets_are_updated_in_place_as_before():
    def f(x):
        s = {1.0, 2.0}
        t = s
        s &= {2.0, 3.0}
        s ^= {5.0}
        return x * len(t)
    assert gradient(f, 2.0) == (2.0,)

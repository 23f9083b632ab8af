"""Arrays that share memory (zygotepy/adjoints/mutation/overlap.py): a view and its array updated in a loop, the view
carried through the loop with its array. Gradients against central finite differences in float64."""
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.testing import check_grads

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


# --- a loop's `x *= v` on an object a view is linked to: the view is carried through the loop -------------------------

def view_then_scaled_in_loop(x):
    y2 = x[::2]
    for i3 in range(2):
        x *= 0.5  # (the view kept its version from before the loop: a gradient 4x too large)
    return np.sum(y2 ** 2)


def copy_view_then_scaled_in_loop(x):
    x = x * 1.0
    y2 = x[::2]
    for i3 in range(2):
        x *= 0.5
    return np.prod(0.9 + 0.1 * y2)


def view_scaled_in_loop(x):
    y2 = x[::2]
    for i3 in range(2):
        y2 *= 0.5  # (the parent kept its version from before the loop)
    return np.sum(x ** 2)


def view_scaled_in_while_loop(x):
    y = x * 1.0
    v = y[1:]
    k = 0
    while k < 3:
        k += 1
        v += 0.1 * np.sin(y[0])
    return np.sum(y ** 3)


def alias_of_view_stale_after_loop(x):
    y1 = x[1:]
    z2 = y1  # (carried by the loop as a second variable, which the refresh after x[3] = 0.5 missed)
    for i in range(2):
        x[3] = 0.5
    z2[0] = 0.5
    return x @ x


LOOP_ROWS = [alias_of_view_stale_after_loop, view_then_scaled_in_loop, copy_view_then_scaled_in_loop, view_scaled_in_loop, view_scaled_in_while_loop]


@pytest.mark.parametrize("fn", LOOP_ROWS, ids=[f.__name__ for f in LOOP_ROWS])
def test_a_view_and_its_array_updated_in_a_loop(fn):
    x = np.array([0.3, -0.2, 0.5, 0.7, -0.4])
    np.testing.assert_allclose(gradient(fn, x.copy())[0], central(fn, (x,), 0), rtol=1e-6, atol=1e-9)
    check_grads(fn, x.copy(), rtol=1e-6, atol=1e-9)


def _broadcast_column(x):
    y = np.broadcast_to(x[:, None], (3, 2))  # each x[i] twice
    x *= 1.5
    return np.sum(y * np.array([1.0, 2.0]))


def _broadcast_arrays(x):
    y = np.broadcast_arrays(x, np.zeros((2, 3)))[0]
    x[0] = 3.0 * x[1]
    return np.sum(y * y)


def _grid_without_copies(x, t):
    grid_x, grid_t = np.meshgrid(x, t, copy=False)
    x *= 2.0
    return np.sum(grid_x * grid_t)


@pytest.mark.parametrize("f, args", [(_broadcast_column, (np.array([0.3, -1.2, 2.1]),)),
                                     (_broadcast_arrays, (np.array([0.3, -1.2, 2.1]),)),
                                     (_grid_without_copies, (np.array([0.3, -1.2, 2.1]), np.array([1.0, 2.0])))],
                         ids=["broadcast_to", "broadcast_arrays", "meshgrid copy=False"])
def test_a_broadcast_view_read_after_its_base_is_updated(f, args, mode):
    """A stride-0 view shows an element at several positions: its cotangent reached the base from one of them only
    (an assignment where the positions' cotangents are a sum) once the base was updated in place."""
    got = gradient(f, *[a.copy() for a in args])
    for k in range(len(args)):
        np.testing.assert_allclose(got[k], central(f, args, k), rtol=1e-6, atol=1e-8)

"""An object a loop's body puts into a container (`traj.append(x)`, `traj = traj + [x]`, `lst.extend([x])`, a tuple,
an object's list) and then updates in place in a later iteration (`x *= c`): the container holds the object itself, so
its entries read the final values, and their cotangents must reach the later updates (lower/control.py
`links_made`: the body is lowered again knowing those links; the gradient was 3 for 9, an Euler trajectory without
`.copy()` was wrong). Checked against central differences with every optimisation on and off."""
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

X = np.array([1.5, -2.0])


class State:
    def __init__(self, x):
        self.x = x


def appended(x):
    s = x.copy()
    lst = []
    for _ in range(2):
        s *= 3.0
        lst.append(s)
    return np.sum(lst[0])


def euler_trajectory(x0):
    x = x0.copy()
    traj = []
    for _ in range(3):
        x *= 0.5
        x += 0.1 * x0
        traj.append(x)
    return np.sum(np.array(traj) ** 2)


def item_updates(x0):
    s = x0.copy()
    hist = []
    for i in range(2):
        s[i] = s[i] ** 2
        hist.append(s)
    return np.sum(hist[0])


def object_history(x0):
    s = State(x0 * 1.0)
    hist = []
    for _ in range(2):
        s.x = s.x * 3.0
        hist.append(s)
    return np.sum(hist[0].x)


def extended(x):
    s = x.copy()
    lst = []
    for _ in range(2):
        s *= 3.0
        lst.extend([s])
    return np.sum(lst[0])


def concatenated(x):
    s = x.copy()
    lst = []
    for _ in range(2):
        s *= 3.0
        lst = lst + [s]
    return np.sum(lst[0] * lst[1])


def tupled(x):
    s = x.copy()
    t = ()
    for _ in range(2):
        s *= 3.0
        t = t + (s,)
    return np.sum(t[0])


def list_state(x):
    s = [x[0] * 1.0]
    out = []
    for _ in range(2):
        s[0] = s[0] * 3.0
        out.append(s)
    return out[0][0] * x[1]


def in_a_while_loop(x):
    s = x.copy()
    lst = []
    k = 0
    while k < 3:
        s += x
        lst.append(s)
        k += 1
    return np.sum(lst[0]) * np.sum(lst[1])


def copies_are_snapshots(x):
    s = x.copy()
    lst = []
    for _ in range(2):
        s *= 3.0
        lst.append(s.copy())
    return np.sum(lst[0]) + 2.0 * np.sum(lst[1])


@pytest.mark.parametrize("f", [appended, euler_trajectory, item_updates, object_history, extended, concatenated,
                               tupled, list_state, in_a_while_loop, copies_are_snapshots])
def test_an_object_held_then_updated_in_a_later_iteration(mode, f):
    for _ in range(2):
        got, = gradient(f, X.copy())
        np.testing.assert_allclose(got, central(f, (X,), 0), rtol=1e-7, atol=1e-8)

"""Objects that hold themselves (`a.me = a`, `a.nb = b` beside `b.nb = a`): a store into one of their fields, then a
read through the cycle, reads the stored value (adjoints/mutation/self_cycles.py); each gradient agrees with central
differences."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central  # noqa: E402


class Cell:
    def __init__(self, value):
        self.value = value


def held_by_itself(x, y):
    a = Cell(x)
    a.me = a
    a.value = a.value * 3.0
    return a.me.value ** 2 + y


def held_by_each_other(x, y):
    a, b = Cell(x), Cell(y)
    a.nb = b
    b.nb = a
    a.value = a.value + a.nb.value
    b.value = b.value * a.value
    return a.nb.nb.value + b.nb.nb.value * a.value


def a_dict_holding_itself(x, y):
    node = {"v": x}
    node["me"] = node
    node["v"] = node["v"] * 3.0
    return node["me"]["v"] ** 2 + y


def dicts_holding_each_other(x, y):
    a = {"v": x}
    b = {"v": y, "o": a}
    a["o"] = b
    a["v"] = a["v"] * 3.0
    b["v"] = b["v"] * a["o"]["o"]["v"]
    return b["o"]["v"] ** 2 + a["o"]["v"]


@pytest.mark.parametrize("f", [held_by_itself, held_by_each_other, a_dict_holding_itself, dicts_holding_each_other],
                         ids=lambda f: f.__name__)
def test_a_store_into_an_object_that_holds_itself_reaches_reads_around_the_cycle(f, mode):
    args = (0.7, 1.3)
    grads = gradient(f, *args)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(f, args, k), rtol=1e-6, atol=1e-8)

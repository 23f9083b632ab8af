"""zygotepy holds a captured variable `x` in a cell it names `x_cell` (the nested levels and the outer level's
cotangents read cells by that name). A user's own `x_cell` beside it was the cell or hid it: its reads got a cell
object (TypeError deep in the generated code) or nothing (UnboundLocalError). Refused now, naming the line and the
way out; the same names apart are followed."""
import numpy as np
import pytest

from plain_checks import central, line_of
from zygotepy import UnsupportedSyntax, value_and_gradient

x_cell = 3.0  # (a global of the name a cell would take)


def local_beside(x, y):
    x_cell = x * y

    def inner(t):
        return t * x
    return inner(y) + x_cell


def global_beside(x, y):
    def inner(t):
        return t * x
    return inner(y) * x_cell


def inner_local_beside(x, y):
    def inner(t):  # inner_local_beside's inner
        x_cell = t * y
        return x_cell * x
    return inner(y)


@pytest.mark.parametrize("f, marker", [(local_beside, "def local_beside"), (global_beside, "def global_beside"),
                                       (inner_local_beside, "inner_local_beside's inner")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_name_of_a_captured_variables_cell_is_refused(f, marker, mode):
    line = line_of(f, marker)
    with pytest.raises(UnsupportedSyntax, match=rf"test_cell_name_clash.py:{line}: .*a name 'x_cell' beside the "
                                                rf"captured variable 'x'.*rename 'x_cell'"):
        value_and_gradient(f, 0.7, 1.3)


def cell_of_another_name(x, y):
    y_cell = x * y

    def inner(t):
        return t * x
    return inner(y) + y_cell


class Holder:
    def __init__(self, v):
        self.x_cell = v


def attribute_of_the_name(x, y):
    box = Holder(x * y)

    def inner(t):
        return t * x
    return inner(y) + box.x_cell


@pytest.mark.parametrize("f", [cell_of_another_name, attribute_of_the_name], ids=lambda f: f.__name__)
def test_names_apart_from_the_cells_are_followed(f, mode):
    args = (0.7, 1.3)
    value, grads = value_and_gradient(f, *args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    for k in range(2):
        np.testing.assert_allclose(grads[k], central(f, args, k), rtol=1e-6, atol=1e-6)

"""Callable objects whose `__call__` updates the object (an RNN cell keeping its hidden state): `cell(x)` on a local
name, `cells[0](x)`, `self.cell(x)` (an attribute holding the object), in loops and comprehensions, and a helper given
the object. The lowering passes the callee as an argument (`runtime.callobject`, adjoints/mutation/calls.py), so the
call gives it a new version as a method call does its object; before, each was refused ("updates its argument 'self'
in place ... give the update a method of its own"). Given to a builtin that calls it (`map(cell, xs)`,
`sorted(xs, key=k)`), where nothing at the call site could follow the update, it raises naming the class; a statement
`list(map(cell, xs))` and a `key=` that records what it saw were silently wrong. Each function is checked against one
plain call (its value) and central differences in float64."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


class Cell:
    def __init__(self, w):
        self.w = w
        self.h = np.zeros(3)

    def __call__(self, v):
        self.h = np.tanh(self.w * v + self.h)
        return self.h


class Model:
    def __init__(self, w):
        self.cell = Cell(w)

    def forward(self, xs):
        s = 0.0
        for t in xs:
            s = s + np.sum(self.cell(t))
        return s


class Seen:
    def __init__(self):
        self.seen = []

    def __call__(self, v):
        self.seen.append(v)
        return float(np.sum(v))


def called_in_a_loop(x):
    cell = Cell(x[0])
    s = 0.0
    for t in x:
        s = s + np.sum(cell(t))
    return s + np.sum(cell.h ** 2)


def called_as_statements(x):
    cell = Cell(x[1])
    cell(x[0])
    cell(x[2])
    return np.sum(cell.h)


def _run(cell, v):
    out = cell(v)
    out = cell(v * 2.0)
    return np.sum(out) + np.sum(cell.h)


def given_to_a_helper(x):
    return _run(Cell(x[0]), x[1])


def held_in_an_attribute(x):
    m = Model(x[2])
    s = m.forward(x) * m.forward(x * 0.5)
    return s + np.sum(m.cell.h ** 2)


def held_in_a_list(x):
    cells = [Cell(x[0]), Cell(x[1] * 2)]
    s = 0.0
    for t in x:
        s = s + np.sum(cells[0](t)) + np.sum(cells[1](t))
    return s


def in_a_comprehension(x):
    cell = Cell(x[1])
    ys = [cell(t) for t in x]
    return np.sum(ys[0] * ys[2])


CASES = [called_in_a_loop, called_as_statements, given_to_a_helper, held_in_an_attribute, held_in_a_list,
         in_a_comprehension]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_callable_object_updating_itself(f):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())


def _mapped_as_a_statement(x):
    cell = Cell(x[0])
    list(map(cell, [x[1], x[2]]))
    return np.sum(cell.h ** 2)


def _a_key_that_records(x):
    k = Seen()
    sorted([x * x[0], x], key=k)
    return np.sum(k.seen[0]) * x[1]


def _a_key_of_max(x):
    k = Seen()
    max([x * x[0], x], key=k)
    return np.sum(k.seen[0])


@pytest.mark.parametrize("f", [_mapped_as_a_statement, _a_key_that_records, _a_key_of_max])
def test_given_to_a_builtin_that_calls_it_raises(f):
    with pytest.raises(ZygoteError, match=r"(Cell|Seen).__call__ updates its argument"):
        gradient(f, X.copy())

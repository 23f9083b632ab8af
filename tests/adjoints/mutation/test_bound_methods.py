"""A method of an array, list or dict kept in a name (`s = x.sum`, `f = y.sort`, `add = out.append`) or given to
another function (`map(out.append, xs)`). Read for its value, a bound method's cotangent is its object's (an array's
gave None: adjoints/structures/attributes.py); one that updates its object, where the lowering cannot give the object
its new version, raises naming the method (ast_adjoint/dispatch.py `_refuse_bound_update`, inactive.py): `f = y.sort;
f()` sorted a copy (np.sort's rule) or, run as written, sorted y unseen; `map(out.append, xs)` left out's gradient
None; `s = y.fill; s(v)` crashed. Each function is checked against one plain call and central differences."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


def a_sum_kept_in_a_name(x):
    s = (x * x[0]).sum
    return s() * 2.0


def a_copy_kept_in_a_name(x):
    upd = x.copy
    y = upd()
    y[0] = x[1] * 3.0
    return np.sum(y ** 2)


def append_kept_in_a_name_as_a_statement(x):
    out = []
    for v in [x * x[0], x]:
        out.append(v)
    add = out.append
    add(x * 2.0)
    return np.sum(out[0] * out[2])


@pytest.mark.parametrize("f", [a_sum_kept_in_a_name, a_copy_kept_in_a_name, append_kept_in_a_name_as_a_statement],
                         ids=lambda f: f.__name__)
def test_a_bound_method_kept_in_a_name(f):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())


def _sort_kept(x):
    y = np.array([x[1], x[0] * x[2]])
    f = y.sort
    f()
    return np.sum(y * np.arange(2))


def _fill_kept(x):
    y = x * x[0]
    s = y.fill
    s(x[1])
    return np.sum(y ** 2)


def _append_given_to_map(x):
    out = []
    list(map(out.append, [x * x[0], x]))
    return np.sum(out[0] * out[1])


@pytest.mark.parametrize("f, name", [(_sort_kept, "ndarray.sort"), (_fill_kept, "ndarray.fill"),
                                     (_append_given_to_map, "list.append")])
def test_an_updating_method_through_its_bound_method_raises(f, name):
    with pytest.raises(ZygoteError, match=rf"{name} called through a bound method kept in a name"):
        gradient(f, X.copy())


# --- a bound method kept in a name, called after its object was updated: it reads the object as it is then ----------
# (adjoints/mutation/links.py `refresh`: the method's cotangent goes to its object's new version; it went to the old
# one, a silently wrong gradient, when the object was updated between `m = o.f` and `m(...)`)

class Weights:
    def __init__(self, w):
        self.w = w

    def score(self, t):
        return np.sum(self.w * t)


def method_after_an_attribute_store(x):
    o = Weights(x * 1.0)
    m = o.score
    o.w = x * x[0]
    return m(2.0)


def method_after_an_item_store(x):
    o = Weights(x * 1.0)
    m = o.score
    o.w[0] = x[1] * 3.0
    return m(2.0) + np.sum(o.w)


def array_method_after_an_item_store(x):
    y = x * 1.0
    s = y.sum
    y[1] = x[0] ** 2
    return s() * x[2]


def method_called_in_a_loop_that_updates(x):
    o = Weights(x * 1.0)
    m = o.score
    total = 0.0
    for k in range(2):
        o.w = o.w * x[k]
        total = total + m(1.5)
    return total


@pytest.mark.parametrize("f", [method_after_an_attribute_store, method_after_an_item_store,
                               array_method_after_an_item_store, method_called_in_a_loop_that_updates],
                         ids=lambda f: f.__name__)
def test_a_bound_method_reads_its_object_as_it_is_when_called(f):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())

"""Where an updated object is held (zygotepy/adjoints/mutation/held.py): an array kept by a call (any call, not only a
constructor), by a lambda, in a list by a helper, in a holder inside a list, as a view of any making; the update made
through the holder and read through the array. A holder that cannot be followed (a closure, a `partial`) raises a
ZygoteError naming the user's line; every other case agrees with central finite differences."""
import functools
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import check_grads, line_of  # noqa: E402


THIS_FILE = os.path.abspath(__file__)




class Holder:
    def __init__(self, W):
        self.W = W


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


def make_holder(W):
    return Holder(W)


def make_pair(a, b):
    return Pair(a, b)


def make_list_holder(W):
    return Holder([W])


def store(lst, W):
    lst.append(W)


def put(d, k, W):
    d[k] = W


def make_scaler(W):
    return lambda v: W * v


# --- kept by a call, then updated: the gradient follows ------------------------------------------------------------

def k_function(x):
    W = x * 1.0
    h = make_holder(W)
    W[0] = 5.0
    return np.sum(h.W * x)


def k_lambda(x):
    W = x * 1.0
    h = (lambda W: Holder(W))(W)
    W[0] = 5.0
    return np.sum(h.W * x)


def k_list_by_helper(x):
    W = x * 1.0
    lst = []
    store(lst, W)
    W[0] = 5.0
    return np.sum(lst[0] * x)


def k_dict_by_helper(x):
    W = x * 1.0
    d = {}
    put(d, "w", W)
    W[1] = x[0] * 3.0
    return np.sum(d["w"] * x)


def k_holder_in_list(x):
    W = x * 1.0
    lst = [make_holder(W)]
    W[0] = 5.0
    return np.sum(lst[0].W * x)


def k_constructor_in_list(x):
    W = x * 1.0
    lst = [Holder(W)]
    W[0] = x[2] * x[1]
    return np.sum(lst[0].W * x)


def k_list_inside_holder(x):
    W = x * 1.0
    h = make_list_holder(W)
    W[0] = 5.0
    return np.sum(h.W[0] * x)


def k_augmented(x):
    W = x * 1.0
    h = make_holder(W)
    W += x * x
    return np.sum(h.W * x)


def k_other_field_read(x):
    W = x * 1.0
    h = make_pair(W, x * 2.0)
    W[0] = 5.0
    return np.sum(h.b * W)


def k_asarray(x):
    W = x * 1.0
    y = np.asarray(W)
    W[0] = 5.0
    return np.sum(y * x)


def k_copy_not_kept(x):
    W = x * 1.0
    y = np.sin(W)
    c = W.copy()
    W[0] = 5.0
    return np.sum(y * c * W)


def k_update_through_holder(x):
    W = x * 1.0
    h = make_holder(W)
    h.W[0] = 5.0
    return np.sum(W * x)


def k_update_through_display(x):
    W = x * 1.0
    lst = [W]
    lst[0][0] = x[1] * 4.0
    return np.sum(W * x)


def k_update_through_read_item(x):
    W = x * 1.0
    lst = [W]
    row = lst[0]
    row[2] = 5.0
    return np.sum(W * x)


def k_in_a_loop(x):
    W = x * 1.0
    s = 0.0
    for i in range(3):
        h = make_holder(W)
        W[i] = x[i] * x[i]
        s = s + np.sum(h.W * x)
    return s


def k_extend_by_helper(x):
    W = x * 1.0
    other = [W]
    lst = []
    lst.extend(other)
    W[1] = 7.0
    return np.sum(lst[0] * x) + np.sum(other[0] * x)


def k_attribute_view(x):
    W = np.outer(x, x)
    t = W.T
    W[0, 1] = 5.0
    return np.sum(t * np.outer(x, x * x))


KEPT = [k_attribute_view, k_function, k_lambda, k_list_by_helper, k_dict_by_helper, k_holder_in_list, k_constructor_in_list,
        k_list_inside_holder, k_augmented, k_other_field_read, k_asarray, k_copy_not_kept, k_update_through_holder,
        k_update_through_display, k_update_through_read_item, k_in_a_loop, k_extend_by_helper]


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_kept_then_updated_agrees_with_finite_differences(f):
    x = np.array([1.0, 2.0, 3.0])
    check_grads(f, x)


def test_the_reported_holder_program():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(gradient(k_function, x)[0], [5.0, 4.0, 6.0])


# --- kept where a gradient cannot be routed: raises, naming the update's line ---------------------------------------

def r_transpose(x):
    W = x * 1.0
    y = np.transpose(W)
    W[0] = 5.0  # update
    return np.sum(y * x)


def r_reshape(x):
    W = x * 1.0
    y = W.reshape(3)
    W[0] = 5.0  # update
    return np.sum(y * x)


def r_closure(x):
    W = x * 1.0
    sc = make_scaler(W)
    W[0] = 5.0
    return np.sum(sc(x))  # call


def r_partial(x):
    W = x * 1.0
    sc = functools.partial(np.multiply, W)
    W[0] = 5.0  # update
    return np.sum(sc(x))


def r_view_updated(x):
    W = x * 1.0
    y = W.reshape(3)
    y[0] = 5.0  # update
    return np.sum(W * x)


RAISES = [r_partial]


@pytest.mark.parametrize("f", [r_transpose, r_reshape, r_view_updated], ids=lambda f: f.__name__)
def test_kept_as_a_view_is_matched_by_address(f):
    check_grads(f, np.array([1.0, 2.0, 3.0]))  # a view of any making shares elements the cotangent follows





@pytest.mark.parametrize("f", RAISES, ids=lambda f: f.__name__)
def test_kept_where_it_cannot_be_followed_raises_naming_the_update(f):
    with pytest.raises(ZygoteError, match="cannot differentiate this update in place") as info:
        gradient(f, np.array([1.0, 2.0, 3.0]))
    assert f"{THIS_FILE}:{line_of(f, '# update')}:" in str(info.value)


def test_a_closure_called_after_what_it_captures_was_updated_raises_naming_the_call():
    """The closure's cell holds the object updated in place (call_checks.check_cells reads the journal's log): it is
    refused where it is called, naming what it captures (before, the update was refused later, in the backward)."""
    with pytest.raises(ZygoteError, match="after 'W', which it captures, was updated in place") as info:
        gradient(r_closure, np.array([1.0, 2.0, 3.0]))
    assert f"{THIS_FILE}:{line_of(r_closure, '# call')}:" in str(info.value)


def test_kept_view_not_read_after_the_update_does_not_raise():
    def f(x):
        W = x * 1.0
        y = W.reshape(3)
        s = np.sum(y * x)
        W[0] = 5.0
        return s + np.sum(W * x)
    check_grads(f, np.array([1.0, 2.0, 3.0]))


def test_a_helper_updating_its_argument_through_a_holder_names_that_in_the_error():
    def helper(W):
        Holder(W).W[0] = 5.0

    def f(W):
        W = W * 1.0
        helper(W)
        return np.sum(W * W)
    with pytest.raises(ZygoteError, match="through another object that holds it"):
        gradient(f, np.ones(3))

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
from plain_checks import check_grads, fd, line_of  # noqa: E402


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


def test_a_helper_updating_its_argument_through_a_holder_gives_the_caller_the_update():
    """The helper's parameter is refreshed from the holder it updated (refresh_held), so it is among the updated
    parameters whose final versions go back to the caller (it was refused at run time before)."""
    def helper(W):
        Holder(W).W[0] = 5.0

    def f(W):
        W = W * 1.0
        helper(W)
        return np.sum(W * W)
    check_grads(f, np.array([1.0, 2.0, 3.0]))


# --- a helper updating its argument through an object a call made from it ---------------------------------------------
# (the call's result is linked to the argument as its holder: refresh_held gives the parameter its new version, which
# the helper returns to the caller as a maybe-updated parameter; it was lost, the caller's reads silently got None)

class Buf:
    def __init__(self):
        self.buf = []

    def get_buf(self):
        return self.buf


class Graph:
    def __init__(self):
        self.edges = {"a": []}

    def connect(self, w):
        self.edges.get("a").append(w)


def _u_get(d, w):
    d.get("a").append(w)


def _u_get_default(d, w):
    d.get("a", []).append(w)


def _u_getattr(o, w):
    getattr(o, "buf").append(w)


def _u_max(lst, w):
    max(lst, key=len).append(w)


def _u_method(b, w):
    b.get_buf().append(w)


def _u_next(lst, w):
    next(iter(lst)).append(w)


def _u_vars(o, w):
    vars(o)["buf"].append(w)


def _u_list_copy(lst, w):
    list(lst)[0].append(w)


def _u_get_item(d, w):
    d.get("a")[0] *= w


def _u_reshape(a, w):
    a.reshape(-1)[0] = w


def _u_ravel(a, w):
    a.ravel()[0] += w


def _u_transpose(a, w):
    np.transpose(a)[0, 1] = w


def _u_view(a, w):
    v = a.view()
    v[0, 0] = w


def _u_asarray_item(d, w):
    np.asarray(d["a"])[0, 0] = w


def _u_reshape_item(d, w):
    d["a"].reshape(-1)[1] = w


def _on_list(helper, make):
    def f(x):
        obj = make()
        helper(obj, x[0] * x[1])
        out = obj.buf if isinstance(obj, Buf) else obj["a"] if isinstance(obj, dict) else obj[0]
        return out[-1] * 3.0 + x[1]
    return f


def _on_array(helper, boxed):
    def f(x):
        a = x.reshape(2, 2) * 1.0
        holder = {"a": a} if boxed else a
        helper(holder, x[0] * x[3])
        return float(np.sum(a * a)) + float(np.sum(x * x[::-1]))
    return f


def _graph(x):
    gr = Graph()
    gr.connect(x[0] * x[1])
    return gr.edges["a"][0] * 3.0 + x[1]


def _as_value(x):  # the helper's call used as a value (valuecall)
    d = {"a": [x[2]]}
    r = _u_get_item(d, x[0])
    return d["a"][0] * 3.0 + (r is None)


def _in_a_loop(x):
    d = {"a": []}
    for k in range(3):
        _u_get(d, x[k] * x[k + 1])
    return sum(v * (k + 1) for k, v in enumerate(d["a"]))


THROUGH_A_CALL = {
    "d.get(k).append(w)": _on_list(_u_get, lambda: {"a": []}),
    "d.get(k, []).append(w)": _on_list(_u_get_default, lambda: {"a": []}),
    "getattr(o, name).append(w)": _on_list(_u_getattr, Buf),
    "max(lst, key=len).append(w)": _on_list(_u_max, lambda: [[1.0, 2.0], [], [3.0]]),
    "b.get_buf().append(w)": _on_list(_u_method, Buf),
    "next(iter(lst)).append(w)": _on_list(_u_next, lambda: [[], []]),
    "vars(o)[name].append(w)": _on_list(_u_vars, Buf),
    "list(lst)[0].append(w)": _on_list(_u_list_copy, lambda: [[], []]),
    "d.get(k)[0] *= w": _on_list(_u_get_item, lambda: {"a": [2.0]}),
    "self.edges.get(k).append(w)": _graph,
    "a.reshape(-1)[0] = w": _on_array(_u_reshape, False),
    "a.ravel()[0] += w": _on_array(_u_ravel, False),
    "np.transpose(a)[0, 1] = w": _on_array(_u_transpose, False),
    "v = a.view(); v[0, 0] = w": _on_array(_u_view, False),
    "np.asarray(d[k])[0, 0] = w": _on_array(_u_asarray_item, True),
    "d[k].reshape(-1)[1] = w": _on_array(_u_reshape_item, True),
    "r = helper(d, w), used as a value": _as_value,
    "a helper called in a loop": _in_a_loop,
}


@pytest.mark.parametrize("f", THROUGH_A_CALL.values(), ids=THROUGH_A_CALL.keys())
def test_a_helper_updating_its_argument_through_an_object_a_call_made_from_it(f):
    x = np.array([0.7, 1.3, -0.4, 0.9])
    got = gradient(f, x.copy())[0]
    np.testing.assert_allclose(got, fd(f, x), rtol=1e-6, atol=1e-6)


def _collect(a, b, W=np.eye(2)):  # keeps its parameters in a list it builds: updates none of them
    hs = [a]
    hs.append(np.tanh(hs[-1]))
    hs.append(make_pair(hs[-1] @ W, b).a)
    return float(np.sum(hs[-1] * b))


def test_a_helper_keeping_its_arguments_in_a_list_it_builds_is_not_refused():
    """Its parameters are maybe updated (refresh_held from the list), which refuses nothing unless the run finds them
    updated: not a parameter left to its default, nor one given with a view of it beside it."""
    x = np.array([0.7, 1.3])
    for f in (lambda v: _collect(v, v[1:]), lambda v: _collect(v, v), lambda v: _collect(v, v * 2.0)):
        np.testing.assert_allclose(gradient(f, x.copy())[0], fd(f, x), rtol=1e-6, atol=1e-6)


def _u_reshape_then_read(a, b):
    a.reshape(-1)[0] = 5.0
    return float(np.sum(b))


def _u_get_then_read(d, e, w):
    d.get("a").append(w)
    return e["a"][-1] * 2.0


SHARED = {"a": []}


def _u_get_default_dict(w, d=SHARED):
    d.get("a").append(w)


def _given_a_view(x):
    a = x * 1.0
    return _u_reshape_then_read(a, a[:2])


def _given_twice(x):
    d = {"a": [1.0]}
    return _u_get_then_read(d, d, x[0]) + d["a"][-1]


def _left_to_its_default(x):
    _u_get_default_dict(x[0])
    return SHARED["a"][-1] * 3.0


@pytest.mark.parametrize("f, message", [
    (_given_a_view, "shares that array's memory"),
    (_given_twice, "is that same object"),
    (_left_to_its_default, "leaves it to its default value"),
], ids=["with a view of it", "twice", "left to its default"])
def test_a_parameter_a_helper_updated_through_an_object_a_call_made_from_it_is_refused_as_an_updated_one(f, message):
    """The run logged the parameter as updated (refresh_held), so the call checks refuse what they refuse for any
    updated parameter; these were silently wrong (the other argument's reads missed the update, or gave None)."""
    with pytest.raises(ZygoteError, match=message):
        gradient(f, np.array([0.7, 1.3, 2.0]))


# --- one object held in two places: an update through one place reaches the other's reads --------------------------

class _Cell:
    def __init__(self, v):
        self.v = v


def s_list_twice(x):
    b = _Cell(x * 1.0)
    c = [b, b]
    c[0].v[0] = 5.0  # (the read through c[1] kept the old element's gradient: 5.3 for 5)
    return np.sum(c[1].v * x)


def s_list_doubled(x):
    c = [_Cell(x * 1.0)]
    c = c + c
    c[1].v[2] = x[0] * x[1]
    return np.sum(c[0].v * x)


def s_dict_and_list(x):
    b = _Cell(x * 2.0)
    d = {"first": [b], "second": (b, 1.0)}
    d["first"][0].v[1] = 0.5
    return np.sum(d["second"][0].v ** 2)


def s_nested_shared(x):
    inner = _Cell(x * 1.0)
    outer = [_Cell(inner), _Cell(inner)]
    outer[0].v.v[0] = x[2] * 3.0
    return np.sum(outer[1].v.v * x)


@pytest.mark.parametrize("f", [s_list_twice, s_list_doubled, s_dict_and_list, s_nested_shared],
                         ids=lambda f: f.__name__)
def test_an_object_held_twice_is_updated_in_both_places(f):
    check_grads(f, np.array([0.3, -0.5, 0.8]))


# --- an object added to a container its own attribute leads to (a parent pointer set first) --------------------------

class _Node:
    def __init__(self, w, parent=None):
        self.w = w
        self.parent = parent
        self.children = []
        if self.parent is not None:
            self.parent.children.append(self)

    def attach(self, parent):
        self.parent = parent
        self.parent.children.append(self)


class _Plain:
    pass


def _pointer_first(a, b):
    r = _Plain()
    r.children, r.w = [], a
    k = _Plain()
    k.w = b
    k.parent = r
    r.children.append(k)
    return r.children[0].w * r.w


def _through_the_pointer(a, b):
    r = _Plain()
    r.children, r.w = [1.0], a
    k = _Plain()
    k.w = b
    k.parent = r
    k.parent.children.append(k)
    return r.children[1].w * r.w + k.parent.children[0]


def _by_a_method(a, b):
    r, k = _Node(a), _Node(b)
    k.attach(r)
    return r.children[0].w * r.w


def _by_the_constructor(a, b):
    r = _Node(a)
    _Node(b, r)
    kid = _Node(b * 2.0, r)
    return r.children[0].w * r.w + r.children[1].w


@pytest.mark.parametrize("f", [_pointer_first, _through_the_pointer, _by_a_method, _by_the_constructor],
                         ids=lambda f: f.__name__)
def test_a_child_holding_its_parent_gets_its_gradient_through_the_parents_list(f, mode):
    """`k.parent = r; r.children.append(k)`, then `r.children[0].w`: the appended object's gradient went into the
    parent pointer of `k` as it was before the append (whose `children` was still empty): None, silently. Through a
    method (`k.attach(r)`) or a constructor (`Node(b, r)`), the parent's new version did not reach the caller."""
    a, b = 0.7, 1.3
    h = 1e-6
    grads = gradient(f, a, b)
    assert grads[0] == pytest.approx((f(a + h, b) - f(a - h, b)) / (2 * h), rel=1e-6)
    assert grads[1] == pytest.approx((f(a, b + h) - f(a, b - h)) / (2 * h), rel=1e-6)

"""A shallow copy of a container (`list(W)`, `tuple(W)`, `sorted(W)`, `W[:]`, `[*W]`, `copy.copy(W)`, `W.copy()`,
`dict(d)`) holds the same item objects as the original: an item updated in place through one is updated for the other
too. These were silently wrong gradients (the copy was linked to the original, but the run-time search looked for the
original itself inside the copy, never for its items). Each case is checked against one plain call (value, and the state
it leaves its argument in) and central finite differences in float64. The items are found by
zygotepy/adjoints/mutation/held.py (`_where_items`)."""

import collections
import copy
import dataclasses

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient
from zygotepy.testing import check_grads


RNG = np.random.default_rng(7)
W0 = [RNG.normal(size=3) for _ in range(3)]


def _fd(f, W, eps=1e-6):
    grads = []
    for j, w in enumerate(W):
        g = np.zeros_like(w)
        for i in range(w.size):
            plus, minus = copy.deepcopy(W), copy.deepcopy(W)
            plus[j].flat[i] += eps
            minus[j].flat[i] -= eps
            g.flat[i] = (f(plus) - f(minus)) / (2 * eps)
        grads.append(g)
    return grads


def agree_on_list(f, W=W0):
    """zygotepy's value, gradient and the argument's final state for f(W), W a list of arrays, equal one plain
    call's and central differences (each evaluation on its own deep copy)."""
    plain = copy.deepcopy(W)
    want = f(plain)
    want_grad = _fd(f, W)
    arg = copy.deepcopy(W)
    value, (grad,) = value_and_gradient(f, arg)
    np.testing.assert_allclose(value, want, rtol=1e-9, err_msg="value")
    assert grad is not None
    for j in range(len(W)):
        got = np.zeros_like(W[j]) if grad[j] is None else grad[j]
        np.testing.assert_allclose(got, want_grad[j], rtol=1e-6, atol=1e-6, err_msg=f"gradient of item {j}")
    for a, b in zip(arg, plain, strict=True):
        np.testing.assert_array_equal(a, b, err_msg="argument state after the call")


# --- each way of copying, an update through the copy read through the original, and the reverse --------------------

def through_list(W):
    out = list(W)
    out[0] *= 3.0
    return np.sum(W[0] * W[0]) + np.sum(out[1])


def through_tuple(W):
    out = tuple(W)
    out[1][2] = W[0][0] * 2.0
    return np.sum(W[1] * W[2])


def through_sorted(W):
    out = sorted(W, key=lambda a: float(a[0]))
    out[-1] *= 2.0
    return np.sum(W[0] ** 2) + np.sum(W[1] ** 2) + np.sum(W[2] ** 2)


def through_slice(W):
    out = W[:]
    out[0] += W[1]
    return np.sum(W[0] ** 2)


def through_splat_list(W):
    out = [*W]
    out[1] *= W[0]
    return np.sum(W[1] ** 2)


def through_splat_tuple(W):
    out = (*W,)
    out[2][0] = out[1][1] * 5.0
    return np.sum(W[2] ** 2)


def through_copy_copy(W):
    out = copy.copy(W)
    out[0] *= 2.0
    return np.sum(W[0] ** 2)


def through_copy_method(W):
    out = W.copy()
    out[2] -= out[0]
    return np.sum(W[2] ** 3)


def through_reversed(W):
    out = list(reversed(W))
    out[0] *= 4.0  # W[2]
    return np.sum(W[2] * W[1])


def original_to_copy(W):
    out = list(W)
    W[0] *= 3.0
    return np.sum(out[0] * out[0]) + np.sum(out[1])


def original_to_slice(W):
    out = W[:]
    W[1][0] = W[2][1] ** 2
    return np.sum(out[1] ** 3)


def original_to_splat(W):
    out = [*W]
    W[2] *= W[0]
    return np.sum(out[2] ** 2)


def original_item_to_copy(W):
    a = W[0]  # a name for the item: its update shows through the copy too
    out = tuple(W)
    a *= 5.0
    return np.sum(out[0] ** 2)


# --- loops, item writes, views of items, calls and methods on items --------------------------------------------------

def loop_over_copy_by_index(W):
    out = list(W)
    for k in range(len(out)):
        out[k] += 1.0 * out[k] + k
    return np.sum(W[0] * W[1]) + np.sum(W[2])


def loop_over_original_by_index(W):
    out = W[:]
    for k in range(len(W)):
        W[k] *= (k + 2.0)
    return sum(np.sum(v ** 2) for v in out)


def loop_variable_over_a_copy(W):
    out = sorted(W, key=lambda a: float(a[0]))
    for a in out:  # the copy's items are W's
        a *= 2.0
    return np.sum(W[0] ** 2) + np.sum(W[2])


def loop_variable_over_the_original(W):
    out = list(W)
    for a in W:
        a += 1.0
    return np.sum(out[0] ** 2) + np.sum(out[2])


def element_write(W):
    out = list(W)
    out[1][2] = out[0][0] * 5.0
    return np.sum(W[1] * W[2])


def slice_of_item(W):
    out = list(W)
    out[0][1:] *= 2.0
    return np.sum(W[0] ** 2)


def out_argument(W):
    out = list(W)
    np.multiply(out[2], 3.0, out=out[2])
    return np.sum(W[2] ** 2)


def copyto_item(W):
    out = list(W)
    np.copyto(out[0], W[1] * 2.0)
    return np.sum(W[0] * W[2])


def copy_of_copy(W):
    a = W[:]
    b = list(a)
    b[0] *= 3.0
    return np.sum(W[0] ** 2) + np.sum(a[0])


def rebinding_is_not_in_place(W):
    out = list(W)
    out[0] = out[0] * 2.0  # a new array in the copy: W[0] is unchanged
    out[1] += 1.0          # in place: W[1] changes
    return np.sum(W[0] ** 2) + np.sum(W[1] ** 2) + np.sum(out[0])


def view_as_item(W):
    held = [W[0][1:], W[1]]  # a view of W[0]: found by address (the full search)
    out = list(held)
    out[0] *= 3.0
    return np.sum(W[0] ** 2) + np.sum(held[1])


class Box:
    def __init__(self, w):
        self.w = w


def objects_as_items(W):
    boxes = [Box(W[0]), Box(W[1])]
    out = list(boxes)
    out[0].w *= 2.0  # the array Box(W[0]) holds, so W[0] too
    return np.sum(boxes[0].w ** 2) + np.sum(W[0])


def dict_copy(W):
    d = {"a": W[0], "b": W[1]}
    e = dict(d)
    e["a"] *= 3.0
    return np.sum(d["a"] ** 2) + np.sum(W[0])


def dict_copy_method(W):
    d = {"a": W[0], "b": W[1]}
    e = d.copy()
    d["b"] *= W[2]
    return np.sum(e["b"] ** 2)


# --- copies made item by item, and holders of the items (not of the list) ------------------------------------------

def comprehension_copy(W):
    out = [a for a in W]
    out[0] *= 2.0
    return np.sum(W[0] ** 2)


def comprehension_copy_reverse(W):
    out = [a for a in W]
    W[0] *= 2.0
    return np.sum(out[0] ** 2)


def appended_copy(W):
    out = []
    for a in W:
        out.append(a)  # noqa: PERF402 (a copy made item by item, on purpose)
    out[1] *= 3.0
    return np.sum(W[1] ** 2)


def indexed_comprehension_copy(W):
    out = [W[k] for k in range(len(W))]
    out[1] *= 3.0
    return np.sum(W[1] ** 2)


def objects_holding_the_items(W):
    boxes = [Box(a) for a in W]  # holds W's items inside objects, not W
    W[0] *= 2.0
    return np.sum(boxes[0].w ** 2)


def objects_holding_the_items_reverse(W):
    boxes = [Box(a) for a in W]
    boxes[0].w *= 2.0
    return np.sum(W[0] ** 2)


def dict_holding_the_items(W):
    d = {"x": (W[0], 1.0), "y": [W[1]]}
    W[1] *= 3.0
    W[0][0] = 7.0
    return np.sum(d["y"][0] ** 2) + np.sum(d["x"][0])


CASES = [through_list, through_tuple, through_sorted, through_slice, through_splat_list, through_splat_tuple,
         through_copy_copy, through_copy_method, through_reversed, original_to_copy, original_to_slice,
         original_to_splat, original_item_to_copy, loop_over_copy_by_index, loop_over_original_by_index,
         loop_variable_over_a_copy, loop_variable_over_the_original,
         element_write, slice_of_item, out_argument, copyto_item, copy_of_copy, rebinding_is_not_in_place,
         view_as_item, objects_as_items, dict_copy, dict_copy_method,
         comprehension_copy, comprehension_copy_reverse, appended_copy, indexed_comprehension_copy,
         objects_holding_the_items, objects_holding_the_items_reverse, dict_holding_the_items]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_an_item_shared_with_a_copy_is_updated_for_both(f):
    agree_on_list(f)


def test_the_motivating_case_is_eighteen_w0():
    """The report's example: out[0] *= 3 triples W[0], so d/dW0 sum(W0*W0) is 2*3*3*W0 = 18*W0 (was 6*W0)."""
    W = [np.array([1.0, -2.0]), np.array([0.5, 0.5])]
    (g,) = gradient(through_list, [w.copy() for w in W])
    np.testing.assert_allclose(g[0], 18.0 * W[0])
    np.testing.assert_allclose(g[1], np.ones(2))


def test_a_long_copy_written_item_by_item():
    """Each write through the copy looks the original's items up in it: one quick pass over the copy (arrays that
    own their data), not a search per item (which made n = 1 000 take minutes). Its speed is not timed here (no timed
    unit tests): the gradient of every item is checked."""
    def f(W):
        out = list(W)
        for k in range(len(out)):
            out[k] *= 2.0
        return sum(np.sum(w) for w in W)
    W = [np.full(2, float(k)) for k in range(1000)]
    (g,) = gradient(f, W)
    assert all(np.array_equal(gk, np.full(2, 2.0)) for gk in g)


class Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


def test_items_kept_where_no_cotangent_can_go_raise_naming_the_update():
    """W's items kept in `__slots__` objects: the update cannot be routed there, so it raises (it was silently wrong:
    the gradient missed the doubling) and names the line of the update."""
    def f(W):
        held = [Slotted(a) for a in W]
        W[0] *= 2.0
        return np.sum(held[0].w ** 2)
    line = f.__code__.co_firstlineno + 2
    with pytest.raises(ZygoteError, match=rf"test_held_copies.py:{line}: .*cannot differentiate this update in place") \
            as caught:
        gradient(f, [np.ones(2), np.ones(2)])
    assert "'held'" in str(caught.value) and "_comp" not in str(caught.value)  # the user's name, not the lowering's


# --- copy.deepcopy of plain trees, copy.copy of arrays ------------------------------------------------------------------

def deep_list(x):
    ws = [x, x * 2.0]
    vs = copy.deepcopy(ws)
    vs[0] *= 3.0  # the copy's array: the original's is untouched
    return np.sum(vs[0] * ws[0]) + np.sum(vs[1])


def deep_dict_of_tuples(x):
    d = {"a": (x, 1.5), "b": [x * x]}
    e = copy.deepcopy(d)
    e["b"][0][0] = 0.0
    return np.sum(e["a"][0] * d["b"][0]) + np.sum(e["b"][0]) * e["a"][1]


def shallow_array(x):
    y = copy.copy(x)
    y *= 2.0
    return np.sum(y * x)


class _Box:
    def __init__(self, v):
        self.v = v


class _Pair:
    def __init__(self, v, w):
        self.v, self.w = v, w


_Named = collections.namedtuple("_Named", "a b")


@dataclasses.dataclass
class _Fields:
    a: np.ndarray
    b: list


def deep_object(x):
    o = _Pair(x, [x * 2.0, _Box(x[0])])
    c = copy.deepcopy(o)
    c.v *= 3.0  # the copy's array: the original's is untouched
    c.w[1].v = c.w[1].v * x[1]
    return np.sum(c.v * o.v) + np.sum(c.w[0]) + c.w[1].v


def deep_shared(x):
    b = _Box(x * 1.0)
    c = copy.deepcopy([b, b, _Named(x, x[0])])  # (one object twice: so is its copy)
    c[0].v[0] = 5.0
    return np.sum(c[1].v * x) + c[2].a[1] * c[2].b


def deep_dataclass(x):
    d = _Fields(x, [x[0], x[1] * x[2]])
    e = copy.deepcopy(d)
    e.a[2] = 0.0
    return np.sum(e.a * d.a) + e.b[0] * e.b[1]


@pytest.mark.parametrize("f", [deep_list, deep_dict_of_tuples, shallow_array, deep_object, deep_shared,
                               deep_dataclass])
def test_copies_of_arrays(f):
    # (deepcopy of plain objects, dataclasses and namedtuples was refused)
    x = RNG.normal(size=3)
    before = x.copy()
    check_grads(f, x)
    assert np.array_equal(x, before)


class _OwnDeep:
    def __init__(self, v):
        self.v = v

    def __deepcopy__(self, memo):
        return _OwnDeep(self.v * 2.0)


def test_deepcopy_of_an_object_with_its_own_protocol_raises():
    def f(x):
        return np.sum(copy.deepcopy(_OwnDeep(x)).v)
    with pytest.raises(ZygoteError, match="copy.deepcopy of a _OwnDeep"):
        gradient(f, np.ones(2))


class _Own:
    def __init__(self, w):
        self.w = w

    def __copy__(self):
        return _Own(self.w * 1.0)


class _Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


def _object_copy_shares_its_array(x):
    o = _Box(x * 1.0)
    c = copy.copy(o)
    c.v[0] = x[1] * x[2]  # the shared array: o sees it
    c.v *= x[0]
    return np.sum(o.v ** 2)


def _object_copy_rebinds_its_attribute(x):
    o = _Box(x * 1.0)
    c = copy.copy(o)
    c.v = c.v * x[0]  # a new array: o keeps its own
    return np.sum(o.v ** 2) + np.sum(c.v)


def _own_copy_method(x):
    o = _Own(x * x[0])
    c = copy.copy(o)
    c.w *= 2.0
    return np.sum(o.w) + np.sum(c.w * x)


@pytest.mark.parametrize("f", [_object_copy_shares_its_array, _object_copy_rebinds_its_attribute, _own_copy_method])
def test_shallow_copy_of_an_object(f):
    """`copy.copy(obj)` of a plain object shares its attributes, as Python's does (an update in place through the copy
    is the original's); a class's own `__copy__` runs as derived code. It raised MissingAdjoint naming copy.py's
    `__reduce_ex__` call, not the user's line (structures/sequences.py `shallow_copy`)."""
    x = RNG.normal(size=3)
    before = x.copy()
    check_grads(f, x)
    assert np.array_equal(x, before)


def test_shallow_copy_of_a_slotted_object_raises_naming_the_call():
    def f(x):
        return np.sum(copy.copy(_Slotted(x)).w)
    with pytest.raises(ZygoteError, match=r"test_held_copies.py:\d+: .*copy.copy of a _Slotted"):
        gradient(f, np.ones(2))

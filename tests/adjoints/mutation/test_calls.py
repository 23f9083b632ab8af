"""Calls that may update their arguments (zygotepy/adjoints/mutation/calls.py): helpers and methods that update their
arguments, called as statements or for their values, in loops, through aliases, to second order; closures updating
what they capture; calls into code zygotepy cannot read; library functions that update an argument with no rule.
Gradients against central finite differences in float64; what cannot be differentiated raises, naming the place.

Many of these gave a silently wrong gradient or a false refusal before: the comment above them says which.
"""
import bisect
import heapq
import os
import sys

import numpy as np
import pytest

from zygotepy import UnsupportedSyntax, ZygoteError, gradient, hessian, value_and_gradient
from zygotepy.testing import check_grads

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def test_call_statements_into_unreadable_code_run_as_before():
    import logging
    log = logging.getLogger("zygotepy.test")

    def f(x):
        a = x * 2.0
        log.info("a = %s", a)
        np.save  # noqa: B018
        print(end="")
        return np.sum(a * x)
    assert np.allclose(gradient(f, np.ones(2))[0], [4.0, 4.0])


# --- what raises ---------------------------------------------------------------------------------------------------------

def _updates_and_returns(out, x):
    out[0] = x
    return x * 2.0


def test_helper_that_updates_its_argument_and_is_used_as_a_value():
    # (this raised: the call, used as a value, now goes through mutcall like a call statement)
    def f(x):
        out = np.zeros(2)
        y = _updates_and_returns(out, x)
        return y * out[0] + out[0]
    check_grads(f, 1.3)
    assert gradient(f, 1.3) == (pytest.approx(4 * 1.3 + 1.0),)


def _step_state(state):
    state["x"] = state["x"] * 2.0 + state["v"]
    return state["x"] ** 2


def _fill_squares(out, x):
    for i in range(out.size):
        out[i] = x[i] ** 2
    return np.sum(out)


class _Body:
    def __init__(self, pos, vel):
        self.pos, self.vel = pos, vel


def _advance(bodies, dt):
    for b in bodies:
        b.pos = b.pos + dt * b.vel
        b.vel = b.vel * 0.9
    return bodies


def _state_loss(x, v):
    state = {"x": x, "v": v}
    loss = _step_state(state)
    return loss + state["x"] * state["v"]


def _fill_twice(x):
    out = np.zeros(3)
    return _fill_squares(out, x) * _fill_squares(out, x * 2.0) + np.sum(out * x)


def _simulate(v0, dt):
    bodies = [_Body(np.zeros(2), v0 * (i + 1)) for i in range(3)]
    for _ in range(3):
        bodies = _advance(bodies, dt)
    return sum(np.sum(b.pos ** 2) for b in bodies)


def _spring_step(state, k):
    state["v"] = state["v"] - k * state["x"]
    state["x"] = state["x"] + 0.1 * state["v"]
    return state["x"] * state["x"]


def _spring(x, v, k):
    # the helper, called for its value in a loop, updates the dict each time (the loop did not carry it: the second
    # call read the dict as it was before the loop, a silently wrong gradient)
    s = {"x": x, "v": v}
    total = 0.0
    for _ in range(5):
        total = total + _spring_step(s, k)
    return total + s["v"]


def _scale_first(buf, x):
    buf[0] = buf[0] * x
    buf[1] = buf[1] + buf[0]
    return np.sum(buf)


def _buffer_loop(x):
    buf = np.array([1.0, 0.0])
    s = 0.0
    for _ in range(3):
        s = s + _scale_first(buf, x) * x
    return s + buf[1]


class Clock:
    def __init__(self, k):
        self.k, self.t = k, 0.0

    def advance(self, x):
        self.t = self.t + 0.1
        return x * np.cos(self.k * self.t)


def _clock_loop(x, k):
    c = Clock(k)
    acc = 0.0
    for _ in range(4):
        acc = acc + c.advance(x)
    return acc * c.t


@pytest.mark.parametrize("f, args", [
    (_spring, (1.0, 0.3, 0.7)),
    (_buffer_loop, (1.1,)),
    (_clock_loop, (1.3, 0.8)),
    (_state_loss, (1.3, 0.4)),
    (lambda x, v: _step_state({"x": x, "v": v}), (1.3, 0.4)),  # the updated dict is a temporary
    (_fill_twice, (np.array([1.0, 2.0, 3.0]),)),
    (_simulate, (np.array([1.0, 0.5]), 0.1)),
], ids=["dict_state_in_a_loop", "array_in_a_loop", "method_in_a_loop", "dict_state", "temporary", "fill_twice",
        "objects_returned"])
def test_helpers_that_update_their_arguments_used_as_values(f, args):
    """`loss = step(state)`: a helper whose code updates its arguments, called for its value (which raised)."""
    check_grads(f, *args)


def _adds_in_place(acc, x):
    acc += x
    return 0.0


def test_helper_updating_its_argument_with_augmented_assignment_raises():
    def f(x):
        acc = np.zeros(3)
        _adds_in_place(acc, x)
        return np.sum(acc * x)
    with pytest.raises(ZygoteError, match="_adds_in_place updates its argument"):
        gradient(f, np.arange(3.0))


class Counter:
    def __init__(self, w):
        self.w = w

    def bump(self, x):
        self.w = self.w + x
        return self.w


def test_method_updating_its_object_used_as_a_value():
    # (this raised: a method of a class of the module's namespace, called for its value, now goes through valuecall,
    # like a call statement; a class defined inside the function is looked up too: tests/test_local_classes.py)
    def f(x):
        c = Counter(1.0)
        y = c.bump(x)
        return y * c.w * x
    check_grads(f, 2.0)
    assert gradient(f, 2.0) == (pytest.approx(3 * 2.0 ** 2 + 4 * 2.0 + 1.0),)


def test_a_helper_called_for_its_value_into_unsupported_code_raises():
    """A call statement into code zygotepy cannot read runs as is (its result is dropped); a call whose result is
    used must not: that result would carry no gradient."""
    def f(x):
        return _updates_in_unsupported_code([x], x) * 2.0
    with pytest.raises(UnsupportedSyntax, match="try"):
        gradient(f, 2.0)


def _updates_in_unsupported_code(lst, x):
    lst.append(x)
    try:
        return x * x
    finally:
        lst.pop()


def test_helper_updating_a_list_argument_as_a_statement():
    def push_square(lst, x):
        lst.append(x * x)

    def f(x):
        lst = [x]
        push_square(lst, x)
        push_square(lst, lst[1])
        return lst[0] + lst[1] + lst[2]
    check_grads(f, 1.5)
    assert gradient(f, 1.5) == (1 + 2 * 1.5 + 4 * 1.5 ** 3,)


def test_closure_updating_a_captured_list_then_read_by_its_owner_raises():
    def f(x):
        acc = []

        def add(v):
            acc.append(v)
        add(x)
        return acc[0] * x
    from zygotepy import UnsupportedSyntax
    with pytest.raises(UnsupportedSyntax, match="reading 'acc' after the nested function 'add'"):
        gradient(f, 2.0)


def test_function_updating_a_captured_list_reads_its_own_updates():
    def outer():
        seen = []

        def f(x):
            for i in range(2):
                seen.append(x * i)
            seen[0] = x
            return seen[-1] * x + seen[0]
        return f, seen
    f, seen = outer()
    assert gradient(f, 2.0) == (5.0,)
    assert seen == [2.0, 2.0]  # one call's updates, as a plain call leaves them


def test_an_update_of_a_numpy_function_without_a_rule_raises():
    def f(x):
        y = x * 1.0
        np.divide.at(y, [0, 1], 0.5)  # (np.maximum.at has a rule since: array_calls.py)
        return np.sum(y * x)
    with pytest.raises(ZygoteError, match="np.divide.at"):
        gradient(f, np.ones((2, 2)))


# --- helpers that update an argument in place ------------------------------------------------------------------

def bump(y, p):
    y[0] += p
    y *= 0.1  # (this update was lost: the gradient came out 10x too large)


def through_alias_helper(u):
    y6 = u[::2] ** 2
    y7 = y6
    bump(y7, y7[1])
    return np.sum(y6)


def scale_then_store(y, p):
    y *= 0.5
    y[1] = y[1] + p
    y *= 3.0


def helper_scales_then_stores(u):
    y = u * 1.0
    scale_then_store(y, u[0] * u[2])
    return np.sum(y ** 2)


def rescale_by_alias(y):
    z = y
    z *= 2.0
    y[0] = y[0] * y[1]


def helper_scales_through_own_alias(u):
    w = np.sin(u)
    rescale_by_alias(w)
    return np.sum(w * u)


def _fill(out, x):
    for i in range(x.shape[0]):
        out[i] = x[i] ** 2


def fill_helper_statement(x):
    out = np.zeros_like(x)
    _fill(out, x)
    return np.sum(out * x)


HELPER_ROWS = [
    (through_alias_helper, (np.array([-0.0697, 1.2767, 0.029]),)),
    (helper_scales_then_stores, (np.array([0.3, -0.7, 1.1]),)),
    (helper_scales_through_own_alias, (np.array([0.3, -0.7, 1.1]),)),
    (fill_helper_statement, (np.array([0.3, -0.6, 0.8]),)),
]


@pytest.mark.parametrize("fn, args", HELPER_ROWS, ids=[r[0].__name__ for r in HELPER_ROWS])
def test_a_helper_updating_its_argument_in_place(fn, args):
    before = [a.copy() for a in args]
    check_grads(fn, *args, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gradient(fn, *args)[0], central(fn, args, 0), rtol=1e-6, atol=1e-9)
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)


# --- second order through views and helpers (reverse passes over dual arrays) ------------------------------------

def write_through_view(x):
    y = x.copy()
    v = y[1:]
    v[0] = x[0] * x[1]
    return np.sum(y ** 2)


def write_through_view_of_zeros(x):
    y = np.zeros_like(x)
    v = y[1:]
    v[0] = x[0] * x[1]
    return np.sum(y ** 2)


def numerical_hessian(f, x, h=1e-5):
    return np.stack([(gradient(f, x + h * e)[0] - gradient(f, x - h * e)[0]) / (2 * h) for e in np.eye(x.size)], 1)


SECOND_ORDER = [(write_through_view, np.array([0.3, -0.6])), (write_through_view_of_zeros, np.array([0.3, -0.6])),
                (fill_helper_statement, np.array([0.3, -0.6, 0.45]))]


@pytest.mark.parametrize("fn, x", SECOND_ORDER, ids=[r[0].__name__ for r in SECOND_ORDER])
def test_hessian_through_views_and_helpers(fn, x):
    expected = numerical_hessian(fn, x)
    np.testing.assert_allclose(hessian(fn, x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(expected, expected.T, atol=1e-6)


@pytest.mark.dual_route
@pytest.mark.parametrize("fn, x", SECOND_ORDER, ids=[r[0].__name__ for r in SECOND_ORDER])
def test_nested_gradient_through_views_and_helpers(fn, x):
    nested = np.stack([gradient(lambda x: gradient(fn, x)[0][k], x)[0] for k in range(x.size)])
    np.testing.assert_allclose(nested, numerical_hessian(fn, x), rtol=1e-6, atol=1e-8)


# --- found by the long fuzz run ------------------------------------------------------------------------------------

def h_rebind(p1, p2):
    p1 *= 0.5


def h_apply(fn, v):
    return fn(v) * 0.5


def captured_then_held_by_a_call(a, b):
    f0 = 0.5
    c = h_apply(lambda u: u * f0 * b, a)
    s4 = h_rebind(f0, a)  # may update f0 (a float: it cannot) and a, then `a += 0.5` updates what s4 may hold
    a += 0.5
    return 1.0 * c + a


def swapped_then_scaled(a, b, c):
    f0 = 0.5
    Ln = [a, b * 0.5, 0.5]
    sn = 0.5
    if c > b:
        c = h_apply(lambda u: u * f0, Ln[0])
    else:
        sn, a = a, sn * 0.9
    sn *= 0.5  # (a dual number under hessian: no update in place, though equal numbers may be one object)
    return 0.5 * c + sn * a


def test_a_capture_a_call_may_hold_is_checked_when_it_runs():
    check_grads(captured_then_held_by_a_call, -1.0, 0.4, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("args", [(-0.87, -0.19, 1.14), (0.3, 0.9, -0.2)])
def test_hessian_of_a_maybe_update_of_a_dual_number(args):
    fn = lambda a: swapped_then_scaled(a, *args[1:])  # noqa: E731
    h = 1e-5
    expected = (gradient(fn, args[0] + h)[0] - gradient(fn, args[0] - h)[0]) / (2 * h)
    assert float(np.squeeze(hessian(fn, args[0]))) == pytest.approx(expected, rel=1e-6, abs=1e-9)


def _scale_all(arr, s):
    arr[0] = 0.5
    arr *= 0.5


def _view_passed_beside_its_base(x):
    _scale_all(x, x[4:5])
    return (x @ x) * 0.1


def test_a_helper_updating_an_argument_another_argument_views_is_refused():
    # the helper's code takes `arr` and `s` for separate objects: `s`'s gradient would miss `arr *= 0.5` (it was
    # silently twice too large); a copy of the view is differentiated
    from zygotepy import ZygoteError
    x = np.array([0.95, -0.85, 0.68, -0.077, 0.597, -0.154])
    with pytest.raises(ZygoteError, match=r"test_calls.py:\d+: .*_scale_all.*'arr'.*shares"):
        gradient(_view_passed_beside_its_base, x.copy())

    def copied(x):
        _scale_all(x, x[4:5].copy())
        return (x @ x) * 0.1
    expected = 0.05 * x
    expected[0] = 0.0
    assert np.allclose(gradient(copied, x.copy())[0], expected, rtol=1e-12)


def test_hessian_through_add_at_into_a_dual_array():
    """`np.add.at(np.zeros_like(x), ...)` under hessian: the array is forward mode's dual array, which the journal
    could not copy (an AttributeError on `None.undo`), and the rule's back converted the dual cotangent to a plain
    array (found by a probe of NumPy idioms)."""
    from plain_checks import central_hessian

    def f(x):
        y = np.zeros_like(x)
        np.add.at(y, [0, 0, 2], x ** 2)
        return np.sum(y ** 2)
    x = np.array([0.5, -0.4, 1.3])
    np.testing.assert_allclose(hessian(f, x), [[3.64, -1.6, 0.0], [-1.6, 2.92, 0.0], [0.0, 0.0, 20.28]], atol=1e-12)
    np.testing.assert_allclose(hessian(f, x), central_hessian(f, x), rtol=1e-5, atol=1e-6)


def _pushed(x, y):
    h = [3.0]
    heapq.heappush(h, x)
    heapq.heappush(h, y)
    return h[0] * 2 + h[1]


def _inserted(x, y):
    ys = [1.0, 5.0]
    bisect.insort(ys, x)
    return ys[1] * 3 + ys[0] * y


def _heap_of_data(x):
    h = [3, 1, 2]
    heapq.heapify(h)
    return x * h[0]


@pytest.mark.parametrize("f", [_pushed, _inserted], ids=["heappush", "insort"])
def test_the_standard_librarys_list_reordering_routines(f):
    """heapq's and bisect's C routines reorder a list in place, unseen (a gradient of None; found while reviewing the
    probes' fixes); refused since, and now followed as the permutation they make (mutation/reorders.py)."""
    got = [0.0 if g is None else g for g in gradient(f, 0.5, 2.0)]  # (None: no gradient, 0)
    assert got == [pytest.approx(central(f, (0.5, 2.0), k), abs=1e-9) for k in range(2)]
    assert gradient(_heap_of_data, 2.0) == (1.0,)


# --- updates of data by C routines, and np.add.at given a view of its target -------------------------------------

def _shuffled_index(x):
    idx = np.array([0, 1, 2, 3])
    y = x[idx]
    np.random.default_rng(5).shuffle(idx)
    return np.sum(y * np.array([1.0, 2.0, 3.0, 4.0])) + np.sum(x[idx] * x[idx])


def _heapified_list(x):
    import heapq
    order = [3, 1, 2, 0]
    y = x[order]
    heapq.heapify(order)
    return np.sum(y * np.array([1.0, 2.0, 3.0, 4.0]))


def _insorted_list(x):
    import bisect
    order = [0, 2, 3]
    y = x[order]
    bisect.insort(order, 1)
    return np.sum(y * np.array([1.0, 2.0, 3.0])) + np.sum(x[order])


def _random_shuffled_list(x):
    import random
    order = [0, 1, 2, 3]
    y = x[order]
    random.Random(4).shuffle(order)
    return np.sum(y * np.array([1.0, 2.0, 3.0, 4.0]))


@pytest.mark.parametrize("f", [_shuffled_index, _heapified_list, _insorted_list, _random_shuffled_list])
def test_data_reordered_in_place_is_restored_for_the_backward(f):
    """An index reordered in place after a gather read it (the gather's back read the new order: [4, 2, 3, 1] for
    [1, 2, 3, 4]; a length change crashed)."""
    x = np.array([0.3, -0.7, 1.1, 0.5])
    np.testing.assert_allclose(gradient(f, x)[0], central(f, (x,), 0), rtol=1e-7, atol=1e-9)


def test_add_at_of_a_view_of_its_target_is_refused():
    def f(x):
        a = x.copy()
        np.add.at(a, [0, 1], a[1:3])  # (gave [1, 3, 3] for [1, 3, 5])
        return np.sum(a * np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ZygoteError, match=r"np\.add\.at: zygotepy does not differentiate values that share memory"):
        gradient(f, np.array([0.3, -0.7, 1.1]))


def test_interleaved_views_share_no_memory():
    """`np.copyto(a[::2], a[1::2])` copies between elements no two views share: followed (it was refused as
    overlapping, by the arrays' memory bounds)."""
    def f(x):
        a = x * 1.0
        np.copyto(a[::2], a[1::2])
        return np.sum(a * np.arange(1.0, 5.0) * x)
    x = np.array([0.3, -0.7, 1.1, 0.5])
    np.testing.assert_allclose(gradient(f, x)[0], central(f, (x,), 0), rtol=1e-7, atol=1e-9)


def test_out_that_shares_memory_with_an_input_of_a_non_elementwise_function_is_refused():
    """`np.concatenate([a[:3], b], out=a)`: NumPy writes as it reads (zygotepy computed 3.16 where NumPy gave 9.39);
    a ufunc's `out=` may be its input (`np.add(y, x, out=y)`), as before."""
    def f(x):
        a = np.concatenate([x, x])
        np.concatenate([a[3:], a[:3]], out=a)
        return np.sum(a * a)
    with pytest.raises(ZygoteError, match=r"concatenate\(\.\.\., out=\.\.\.\) where out shares memory with an input"):
        gradient(f, np.array([0.3, -0.7, 1.1]))

    def g(x):
        y = x * 1.0
        np.add(y, x, out=y)
        return np.sum(y * y)
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(gradient(g, x)[0], 8.0 * x)


def _out_as_a_tuple(a, x):
    b = np.empty(3)
    np.multiply(a, x, out=(b,))
    np.add(b, a, out=(b,))
    return np.sum(b ** 2)


def test_out_given_as_a_tuple_of_one_array(mode):
    # a ufunc's `out=(b,)` is `out=b` (it was refused: "with this out or where")
    args = (np.array([0.3, -1.2, 0.7]), 0.8)
    grads = gradient(_out_as_a_tuple, *args)
    for k in range(2):
        np.testing.assert_allclose(grads[k], central(_out_as_a_tuple, args, k), rtol=1e-6)


def _truncated_into_ints(x):
    k = np.empty(3, dtype=np.int64)
    np.multiply(x, 2.0, out=k, casting="unsafe")  # k = trunc(2x): data, no gradient
    return np.sum(k * x)


def test_a_ufunc_into_an_int_array_with_unsafe_casting(mode):
    """NumPy's `casting="unsafe"` let it write floats into an int `out`; the rule wrote with `same_kind` (a TypeError)."""
    import zygotepy
    x = np.array([1.3, -2.7, 0.4])
    with zygotepy.optimizations(mode):
        (g,) = gradient(_truncated_into_ints, x.copy())
    np.testing.assert_array_equal(g, np.trunc(2 * x))


def _drawn_normal(x):
    rng = np.random.default_rng(0)
    buf = np.empty(5)
    rng.standard_normal(out=buf)
    return np.sum(x * buf)


def _drawn_uniform(x):
    rng = np.random.default_rng(0)
    buf = np.empty(5)
    rng.random(out=buf)
    return np.sum(x * buf)


def _drawn_exponential(x):
    rng = np.random.default_rng(0)
    buf = np.empty(5)
    rng.standard_exponential(out=buf)
    return np.sum(x * buf)


@pytest.mark.parametrize("f, method", [(_drawn_normal, "standard_normal"), (_drawn_uniform, "random"),
                                       (_drawn_exponential, "standard_exponential")], ids=lambda v: str(v)[:20])
def test_a_generator_drawing_into_out(f, method, mode):
    """`rng.standard_normal(out=buf)`: `out=` says how many numbers are drawn; computed without it, one number filled
    every entry (value and gradient wrong; found by a probe of random code). A draw is data: it runs as written."""
    x = np.array([0.3, -1.2, 0.7, 2.1, -0.4])
    value, (g,) = value_and_gradient(f, x)
    draw = getattr(np.random.default_rng(0), method)(5)
    assert value == pytest.approx(np.sum(x * draw), rel=1e-14)
    np.testing.assert_allclose(g, draw, rtol=1e-14)


def _permuted_in_place(x):
    rng = np.random.default_rng(0)
    y = x * 1.0
    rng.permuted(y, out=y)
    return np.sum(y * np.arange(len(x)))


def _gamma_drawn_into(x):
    rng = np.random.default_rng(0)
    buf = np.empty(len(x))
    rng.standard_gamma(x * 2.0, out=buf)
    return np.sum(buf)


@pytest.mark.parametrize("f", [_permuted_in_place, _gamma_drawn_into], ids=lambda f: f.__name__)
def test_a_draw_into_out_from_values_that_carry_a_gradient_is_refused(f, mode):
    """They were taken for draws of data: None for [1, 2, 0, 3] and for the gamma draws' shape derivative."""
    with pytest.raises(ZygoteError, match=r"test_calls.py:\d+: zygotepy cannot differentiate a random generator's "
                                          r"method given out="):
        gradient(f, np.array([0.3, 0.5, -0.2, 0.9]))

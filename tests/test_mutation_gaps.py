"""Updates in place that an object kept elsewhere sees: an array kept by a call (any call, not only a constructor),
by a lambda, in a list by a helper, in a holder inside a list; the update made through the holder and read through
the array; views and closures that cannot be followed; module global containers updated through a method and read
back. Each case either agrees with central finite differences or raises a ZygoteError naming the user's line."""
import functools
import inspect
import os

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient

THIS_FILE = os.path.abspath(__file__)


def check_grads(f, x, eps=1e-6):
    """gradient(f, x) against central finite differences in every coordinate (float64)."""
    got = gradient(f, x.copy())[0]
    want = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        want[i] = (f(x + e) - f(x - e)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


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
    W[0] = 5.0  # update
    return np.sum(sc(x))


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


RAISES = [r_closure, r_partial]


@pytest.mark.parametrize("f", [r_transpose, r_reshape, r_view_updated], ids=lambda f: f.__name__)
def test_kept_as_a_view_is_matched_by_address(f):
    check_grads(f, np.array([1.0, 2.0, 3.0]))  # a view of any making shares elements the cotangent follows



def _line(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    hits = [start + k for k, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, hits
    return hits[0]


@pytest.mark.parametrize("f", RAISES, ids=lambda f: f.__name__)
def test_kept_where_it_cannot_be_followed_raises_naming_the_update(f):
    with pytest.raises(ZygoteError, match="cannot differentiate this update in place") as info:
        gradient(f, np.array([1.0, 2.0, 3.0]))
    assert f"{THIS_FILE}:{_line(f, '# update')}:" in str(info.value)


def test_kept_view_not_read_after_the_update_does_not_raise():
    def f(x):
        W = x * 1.0
        y = W.reshape(3)
        s = np.sum(y * x)
        W[0] = 5.0
        return s + np.sum(W * x)
    check_grads(f, np.array([1.0, 2.0, 3.0]))


# --- module global containers updated through a method --------------------------------------------------------------

CACHE = []
TABLE = {}


def g_append(x):
    CACHE.clear()
    CACHE.append(x * 2.0)  # update
    return np.sum(CACHE[0] * x)  # read


def g_extend(x):
    CACHE.clear()
    CACHE.extend([x * 2.0])  # update
    return np.sum(CACHE[-1] * x)  # read


def g_update(x):
    TABLE.update(w=x * 2.0)  # update
    return np.sum(TABLE["w"] * x)  # read


def g_setdefault(x):
    TABLE.clear()
    TABLE.setdefault("w", x * 2.0)  # update
    return np.sum(TABLE["w"] * x)  # read


def _cache_reader(x):
    return np.sum(CACHE[0] * x)  # read


def g_read_by_a_helper(x):
    CACHE.clear()
    CACHE.append(x * 2.0)  # update
    return _cache_reader(x)


def g_in_a_loop(x):
    s = 0.0
    CACHE.clear()
    for i in range(2):
        CACHE.append(x * float(i))  # update
        s = s + np.sum(CACHE[i] * x)  # read
    return s


GLOBAL_CASES = [g_append, g_extend, g_update, g_setdefault, g_read_by_a_helper, g_in_a_loop]


@pytest.mark.parametrize("f", GLOBAL_CASES, ids=lambda f: f.__name__)
def test_global_container_updated_then_read_raises_naming_both_lines(f):
    with pytest.raises(ZygoteError, match="reading the global") as info:
        gradient(f, np.array([1.0, 2.0, 3.0]))
    reader = _cache_reader if f is g_read_by_a_helper else f
    assert f"{THIS_FILE}:{_line(reader, '# read')}:" in str(info.value)
    assert f"{THIS_FILE}:{_line(f, '# update')}" in str(info.value)


LOSSES = []


def g_logging_only(x):
    y = np.sum(x * x)
    LOSSES.append(y)
    LOSSES.append(float(y))
    return y


def g_read_before_update(x):
    scale = TABLE.get("scale", 1.0)
    TABLE["scale"] if "scale" in TABLE else None
    LOSSES.append(scale)
    return np.sum(x * x) * scale


@pytest.mark.parametrize("f", [g_logging_only, g_read_before_update], ids=lambda f: f.__name__)
def test_global_container_updated_but_not_read_back_is_fine(f):
    LOSSES.clear()
    TABLE["scale"] = 2.0
    x = np.array([1.0, 2.0, 3.0])
    check_grads(f, x)
    assert LOSSES  # the updates really ran
    np.testing.assert_allclose(gradient(f, x)[0], 2.0 * x * (2.0 if f is g_read_before_update else 1.0))


def test_global_container_read_in_a_later_call_is_fine():
    def fill(x):
        CACHE.clear()
        CACHE.append(x * 2.0)
        return np.sum(x)

    def use(x):
        return np.sum(CACHE[0] * x)
    x = np.array([1.0, 2.0, 3.0])
    gradient(fill, x)
    np.testing.assert_allclose(gradient(use, x)[0], 2.0 * x)


# --- a module global user object changed by its own method --------------------------------------------------------

class Tally:
    def __init__(self):
        self.total = 0.0
        self.seen = []

    def add(self, v):
        self.total = self.total + v
        self.seen.append(v)


TALLY = Tally()


def tally_then_read(x):
    TALLY.add(np.sum(x * x))
    return TALLY.total * 2.0 + np.sum(x)  # reads what the method stored: would get no gradient


def tally_only(x):
    TALLY.add(np.sum(x))  # logging: nothing reads it back in this call
    return np.sum(x * 3.0)


def read_then_tally(x):
    t = TALLY.total
    TALLY.add(np.sum(x))
    return t * np.sum(x * x)


def tally_passed(x, tally):
    tally.add(np.sum(x * x))
    return tally.total * 2.0 + np.sum(x)


def test_global_object_changed_by_its_method_then_read_raises_naming_the_read():
    TALLY.total = 0.0
    with pytest.raises(ZygoteError, match=rf"{THIS_FILE}:\d+: .*reading the global 'TALLY' after it was updated"):
        gradient(tally_then_read, np.array([0.5, -1.0]))


@pytest.mark.parametrize("f", [tally_only, read_then_tally])
def test_global_object_changed_by_its_method_but_not_read_back_matches_finite_differences(f):
    x, eps = np.array([0.5, -1.0, 2.0]), 1e-6

    def from_the_same_state(x):  # each call adds to TALLY: start every evaluation from the same total
        TALLY.total = 1.5
        return f(x)
    TALLY.total = 1.5
    got, = gradient(f, x)
    want = [(from_the_same_state(x + e) - from_the_same_state(x - e)) / (2 * eps) for e in np.eye(3) * eps]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_the_same_object_passed_as_an_argument_gets_its_gradient():
    x, tally = np.array([0.5, -1.0]), Tally()
    g, dtally = gradient(tally_passed, x, tally)
    np.testing.assert_allclose(g, 4.0 * x + 1.0)  # d/dx (2 (0 + |x|^2) + sum x)
    assert dtally.total == 2.0
    assert tally.total == pytest.approx(np.sum(x * x))  # left as one call of f leaves it


def test_a_helper_updating_its_argument_through_a_holder_names_that_in_the_error():
    def helper(W):
        Holder(W).W[0] = 5.0

    def f(W):
        W = W * 1.0
        helper(W)
        return np.sum(W * W)
    with pytest.raises(ZygoteError, match="through another object that holds it"):
        gradient(f, np.ones(3))


# --- an argument updated in place in one arm of a branch, then an object that may share it (found by the random array
# programs on 2026-11-27: the gradient skipped the first update, silently) ---------------------------------------------

def _updated_in_one_arm(a, b, c, d):
    if b.sum() > a.sum():
        a += 0.5 * np.tanh(a + a)
    else:
        c = a
    b, a = a, b * 0.9
    c += 0.5 * np.tanh(a + a)  # c is a's object in the else arm: the holders of a are refreshed (put_held)
    return (a + 2.0 * b - c * d).sum()


def _swapped_in_the_other_arm(a, b, c, d):
    if b.sum() > a.sum():
        a += 0.5 * np.tanh(a + a)
    else:
        c, a = a, c * 0.9
    b, a = a, b * 0.9
    c += 0.5 * np.tanh(a + a)
    return (a + 2.0 * b - c * d).sum()


def _along_a(f, args, eps=1e-6):
    def fresh(x):
        return f(x, *(y.copy() for y in args[1:]))
    want = np.array([(fresh(args[0] + eps * e) - fresh(args[0] - eps * e)) / (2 * eps) for e in np.eye(args[0].size)])
    return gradient(f, *(y.copy() for y in args))[0], want


_ARGS = tuple(np.random.default_rng(0).uniform(-1.5, 1.5, (4, 3)))  # b.sum() > a.sum(): the first arm runs


def test_an_argument_updated_in_one_arm_then_a_holder_refreshed():
    # the holder refresh read the parameter's entry (the version before `a += ...`), not the name `b` holding the
    # updated object: d/da was 2, without the tanh term
    got, want = _along_a(_updated_in_one_arm, _ARGS)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.xfail(strict=True, reason="known wrong gradient (2026-11-27): after the join no variable holds the updated "
                                       "argument's version, and the refresh reads the parameter's old one")
def test_an_argument_updated_in_one_arm_and_swapped_in_the_other():
    got, want = _along_a(_swapped_in_the_other_arm, _ARGS)
    np.testing.assert_allclose(got, want, rtol=1e-6)

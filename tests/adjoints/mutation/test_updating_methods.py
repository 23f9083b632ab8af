"""The methods of lists, dicts and arrays that update their object (zygotepy/adjoints/mutation/methods.py): on module
global containers and objects (updated then read back raises, naming both lines; updated and not read back is fine),
on the items of a copy of a list of lists, in a recursive walker; a method zygotepy cannot follow raises. Gradients
against central finite differences in float64. (Named test_updating_methods.py, not test_methods.py: test folders are
not packages here, and tests/adjoints/numpy/test_methods.py holds that name.)"""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import UnsupportedSyntax, ZygoteError, gradient, value_and_gradient
from zygotepy.testing import check_grads as check_all

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central, check_grads, line_of  # noqa: E402


THIS_FILE = os.path.abspath(__file__)






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


def g_popped(x):
    CACHE.clear()
    CACHE.append(x * 2.0)  # update
    return np.sum(CACHE.pop() * x)  # read (`pop` gives the item back: its gradient was lost, 2x for 4x)


def g_popped_from_a_dict(x):
    TABLE.clear()
    TABLE.update(w=x * 2.0)  # update
    return np.sum(TABLE.pop("w") * x)  # read


GLOBAL_CASES = [g_append, g_extend, g_update, g_read_by_a_helper, g_in_a_loop, g_popped, g_popped_from_a_dict]


@pytest.mark.parametrize("f", GLOBAL_CASES, ids=lambda f: f.__name__)
def test_global_container_updated_then_read_raises_naming_both_lines(f):
    with pytest.raises(ZygoteError, match="reading the global") as info:
        gradient(f, np.array([1.0, 2.0, 3.0]))
    reader = _cache_reader if f is g_read_by_a_helper else f
    assert f"{THIS_FILE}:{line_of(reader, '# read')}:" in str(info.value)
    assert f"{THIS_FILE}:{line_of(f, '# update')}" in str(info.value)


def test_global_setdefault_with_a_value_that_carries_a_gradient_raises_at_the_update():
    """What `setdefault` gives back (the value stored, or an entry made before) is taken as data: refused where it is
    called, before any read."""
    with pytest.raises(ZygoteError, match=rf"{THIS_FILE}:{line_of(g_setdefault, '# update')}: .*setdefault"):
        gradient(g_setdefault, np.array([1.0, 2.0, 3.0]))


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


# --- lists of lists (items updated by their own methods) --------------------------------------------------------------

ROWS = [[1.0, 2.0], [3.0, -1.5], [0.5, 0.25]]


def _nested_agree(f):
    shape = [len(r) for r in ROWS]
    x = np.array([t for r in ROWS for t in r])

    def unflat(v):
        out, i = [], 0
        for n in shape:
            out.append([float(t) for t in v[i:i + n]])
            i += n
        return out
    want = f(unflat(x))
    eps = 1e-6
    basis = np.eye(x.size)
    fd = np.array([(f(unflat(x + eps * basis[i])) - f(unflat(x - eps * basis[i]))) / (2 * eps) for i in range(x.size)])
    arg = unflat(x)
    plain = unflat(x)
    f(plain)
    value, (g,) = value_and_gradient(f, arg)
    assert np.isclose(value, want)
    got = np.array([0.0 if g is None or g[i] is None or g[i][j] is None else g[i][j]
                    for i in range(len(shape)) for j in range(shape[i])])
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6)
    assert arg == plain


def rows_element(W):
    out = list(W)
    out[0][1] *= 3.0
    return W[0][1] ** 2 + W[1][0]


def rows_append(W):
    out = W[:]
    out[1].append(out[0][0] * 2.0)
    return sum(v * v for v in W[1])


def rows_through_original(W):
    out = tuple(W)
    W[2][0] = W[2][1] * 7.0
    return out[2][0] * out[0][0]


def rows_loop(W):
    out = [*W]
    for k in range(len(out)):
        out[k][0] += out[k][1]
    return sum(r[0] ** 2 for r in W)


def rows_extend(W):
    out = sorted(W, key=lambda r: r[0])
    out[0].extend([out[1][1] * 3.0])
    return sum(v ** 3 for v in W[2])


def rows_reverse(W):
    out = W.copy()
    out[0].reverse()
    return W[0][0] * 2.0 + W[0][1]


@pytest.mark.parametrize("f", [rows_element, rows_append, rows_through_original, rows_loop, rows_extend,
                               rows_reverse], ids=lambda f: f.__name__)
def test_a_list_item_of_a_copy_updated_by_its_methods(f):
    _nested_agree(f)


def walk(value):
    items = []
    for item in value:
        sub = walk(item) if type(item) is tuple else 0
        items.append(sub)
    return items


def test_a_recursive_walker_appending_to_its_own_list():
    p = [(np.array([0.5, -1.5]),)]
    g = gradient(lambda p: (walk(p), np.sum(p[0][0] ** 2))[1], p)[0]
    np.testing.assert_allclose(g[0][0], 2 * p[0][0])


def test_untracked_array_method_raises():
    def f(x):
        y = x * 1.0
        y.partition(1)
        return np.sum(y * x)
    with pytest.raises(ZygoteError, match="ndarray.partition"):
        gradient(f, np.array([3.0, 1.0, 2.0]))


def rotate_left(a, b):
    lst = [a, b, a * b]
    lst.append(lst.pop(0))
    return lst[0] * 1.0 + lst[1] * 2.0 + lst[2] * 3.0


def rotate_right(a, b):
    lst = [a, b, a * b]
    lst.insert(0, lst.pop())
    return lst[0] * 1.0 + lst[1] * 2.0 + lst[2] * 3.0


@pytest.mark.parametrize("f", [rotate_left, rotate_right], ids=lambda f: f.__name__)
def test_a_method_whose_argument_updates_the_same_object(f):
    """`lst.append(lst.pop(0))`: the method's object is the list the argument updated (it crashed: the method was
    given the list's version before the pop, `zip() argument 2 is longer than argument 1`)."""
    value, _ = value_and_gradient(f, 0.7, 1.3)
    assert value == f(0.7, 1.3)
    check_all(f, 0.7, 1.3)


# --- the methods taken from their class (`list.append(ys, v)`): the bound method's rule (each gave a silently wrong ---
# --- gradient before, the update unseen; `list.insert` crashed in the generated backward) ----------------------------

def u_append(x, y):
    ys = [x]
    list.append(ys, y * 2.0)
    return ys[0] * ys[1]


def u_extend(x, y):
    ys = [1.0]
    list.extend(ys, [x, y])
    return sum(ys) * ys[2]


def u_insert(x, y):
    ys = [x]
    list.insert(ys, 0, y)
    return ys[0] * 3.0 + ys[1]


def u_reverse(x, y):
    ys = [x, y]
    list.reverse(ys)
    return ys[0] * 3.0 + ys[1]


def u_sort(x, y):
    ys = [x, y]
    list.sort(ys)
    return ys[0] * 3.0 + ys[1]


def u_pop_value(x, y):
    ys = [x, y]
    r = list.pop(ys)
    return r * 3.0 + sum(ys)


def u_setitem(x, y):
    ys = [x, 1.0]
    list.__setitem__(ys, 0, y)
    return ys[0] * 3.0 + ys[1]


def u_delitem(x, y):
    ys = [x, y]
    list.__delitem__(ys, 0)
    return ys[0] * 3.0


def u_dict_update(x, y):
    d = {"a": x}
    dict.update(d, {"a": y}, b=x)
    return d["a"] * 3.0 + d["b"]


def u_dict_setdefault(x, y):
    d = {}
    r = dict.setdefault(d, "a", y)
    return d["a"] * 3.0 + r * x


def u_dict_setitem(x, y):
    d = {"a": x}
    dict.__setitem__(d, "a", y)
    return d["a"] * 3.0


def u_dict_pop(x, y):
    d = {"a": x, "b": y}
    r = dict.pop(d, "a")
    return r * 3.0 + sum(d.values())


def u_set_add(x, y):
    s = {x}
    set.add(s, y)
    return sum(s)


def u_array_sort(x, y):
    a = np.array([x, y])
    np.ndarray.sort(a)
    return a[0] * 3.0 + a[1]


def u_in_a_loop(x, y):
    ys = []
    for v in (x, y, x * y):
        list.append(ys, v * 2.0)
    return ys[0] + ys[1] * 3.0 + ys[2]


def _u_add(ys, v):
    list.append(ys, v)


def u_by_a_helper(x, y):
    ys = [x]
    _u_add(ys, y * 2.0)
    return ys[1] * 3.0 + ys[0]


def u_kept_in_a_name(x, y):
    ys = [x, y]
    rev = list.reverse
    rev(ys)
    return ys[0] * 3.0 + ys[1]


UNBOUND = [(u_append, (0.5, 0.25), (0.5, 1.0)), (u_extend, (0.5, 0.25), (0.25, 2.0)),
           (u_insert, (0.5, 0.25), (1.0, 3.0)), (u_reverse, (0.5, 0.25), (1.0, 3.0)), (u_sort, (2.0, 1.0), (1.0, 3.0)),
           (u_pop_value, (0.5, 0.25), (1.0, 3.0)), (u_setitem, (0.5, 0.25), (0.0, 3.0)),
           (u_delitem, (0.5, 0.25), (0.0, 3.0)), (u_dict_update, (0.5, 0.25), (1.0, 3.0)),
           (u_dict_setdefault, (0.5, 0.25), (0.25, 3.5)), (u_dict_setitem, (0.5, 0.25), (0.0, 3.0)),
           (u_dict_pop, (0.5, 0.25), (3.0, 1.0)), (u_set_add, (0.5, 0.25), (1.0, 1.0)),
           (u_array_sort, (2.0, 1.0), (1.0, 3.0)), (u_in_a_loop, (0.5, 0.25), (2.5, 7.0)),
           (u_by_a_helper, (0.5, 0.25), (1.0, 6.0)), (u_kept_in_a_name, (0.5, 0.25), (1.0, 3.0))]


@pytest.mark.parametrize("f,args,want", UNBOUND, ids=[c[0].__name__ for c in UNBOUND])
def test_a_method_called_through_its_class_updates_its_first_argument(f, args, want):
    value, grads = value_and_gradient(f, *args)
    assert value == f(*args)
    got = [0.0 if g is None else float(g) for g in grads]
    assert got == pytest.approx(want, abs=1e-12)
    assert got == pytest.approx([central(f, args, k) for k in range(len(args))], abs=1e-6)


def u_in_a_closure(x, y):
    ys = [x]

    def add(v):
        list.append(ys, v)
    add(y)
    return ys[1] * 3.0 + ys[0]


def u_mapped(x, y):
    ys = [x, y]
    list(map(list.reverse, [ys]))
    return ys[0] * 3.0 + ys[1]


def u_refilled(x, y):
    ys = [x]
    list.__init__(ys, [y])
    return ys[0] * 3.0


@pytest.mark.parametrize("f,error,match", [
    (u_in_a_closure, UnsupportedSyntax, "reading 'ys' after the nested function 'add' may have updated it"),
    (u_mapped, ZygoteError, r"list\.reverse called through a method kept in a name or given to another function"),
    (u_refilled, ZygoteError, r"list\.__init__, which updates its object in place")], ids=lambda v: getattr(
        v, "__name__", "")[:12])
def test_a_method_called_through_its_class_that_cannot_be_followed_raises(f, error, match):
    # (a crash in the generated backward, and silently wrong gradients, before)
    with pytest.raises(error, match=match):
        gradient(f, 0.5, 0.25)


def test_a_method_without_a_rule_on_data_runs():
    def f(x):
        d = {"a": 1, "b": 2}
        d.popitem()  # (refused before, though no gradient flows through d)
        ys = [3, 4]
        list.__init__(ys, [5])
        return x * len(d) * ys[0]
    assert value_and_gradient(f, 0.5) == (2.5, (5.0,))


def _popped_then_stored(x):
    d = {"a": x * 2.0, "b": x ** 2}
    k, v = d.popitem()
    d["c"] = v * 3.0
    return np.sum(d["a"] * d["c"]) + np.sum(v)


def _emptied_by_popitem(x):
    d = {}
    d["p"] = x[0]
    d["q"] = x[1] * x[0]
    out = 0.0
    while d:
        k, v = d.popitem()
        out = out * 2.0 + v
    return out


@pytest.mark.parametrize("f", [_popped_then_stored, _emptied_by_popitem])
def test_dict_popitem_of_values_that_carry_gradients(mode, f):
    # (refused before: "dict.popitem, which updates its object in place")
    x = np.array([0.3, 1.2])
    value, (grad,) = value_and_gradient(f, x.copy())
    assert value == pytest.approx(f(x.copy()))
    np.testing.assert_allclose(grad, central(f, (x,), 0), rtol=1e-6, atol=1e-8)


def test_dict_popitem_of_a_key_that_carries_a_gradient_is_refused():
    def f(x):
        d = {x: 1.0}
        k, v = d.popitem()
        return k * v
    with pytest.raises(ZygoteError, match="popitem of a key"):
        gradient(f, 0.5)


# --- dict.update given pairs that repeat a key: the last pair's value is the one kept --------------------------------
def update_with_repeated_keys(x, y, z):
    d = {}
    d.update([("a", x), ("b", z), ("a", y)])  # keeps y for "a"
    e = {"a": 0.0}
    e.update(zip(["c", "c"], [x, z]), c=y * 2.0)  # the keyword overrides both pairs
    return d["a"] * 3.0 + d["b"] + e["c"] * x


def test_update_gives_the_cotangent_to_the_pair_it_keeps(mode):
    args = (0.5, 2.0, -1.5)  # (x's gradient was 3.0 too: every pair of a key took its cotangent)
    got = gradient(update_with_repeated_keys, *args)
    for k in range(3):
        assert (got[k] or 0.0) == pytest.approx(central(update_with_repeated_keys, args, k), rel=1e-6, abs=1e-8), k

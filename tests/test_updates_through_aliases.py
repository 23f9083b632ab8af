"""Updates in place seen through another name: aliases made by a join (if / else, `x if c else y`) or inside a loop
body, loop variables drawn from containers and array rows, views and aliases held in containers, views of kinds not
followed, the dtype of the destination, list items under two names, objects a call hands back (`d.setdefault(k,
[]).append(v)`, a method returning an attribute). Each case agrees with one plain call (value and the argument state it
leaves) and central finite differences (tests/plain_checks.py), or raises a ZygoteError naming the user's line."""
import math
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient
from zygotepy.testing import check_grads

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import agree_at  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


def test_alias_from_if_else_then_imul():
    def f(x):
        if x[0] > 0:
            y = x
        else:
            y = x.copy()
        y *= 2.0
        return np.sum(x)
    agree(f)


def test_alias_from_ifexp_then_imul():
    def f(x):
        a = x.copy()
        y = a if x[0] > 0 else a.copy()
        y *= 3.0
        return np.sum(a * x)
    agree(f)


def test_alias_from_ifexp_then_setitem():
    def f(x):
        y = x.copy()
        z = y if x[0] > 0 else x
        z[1] = 0.0
        return np.sum(y * x)
    agree(f)


def test_same_object_both_branches_then_setitem():
    def f(x):
        a = x.copy()
        b = a if x[0] > 0 else a
        b[2] = 0.0
        return np.sum(a * x)
    agree(f)


def test_view_from_ifexp_then_setitem():
    def f(x):
        a = x.copy()
        v = a[1:] if x[0] > 0 else a[:1]
        v[0] = 5.0
        return np.sum(a * x)
    agree(f)


def test_alias_indexed_out_of_tuple_display():
    def f(x):
        y = x.copy()
        z = (y, x)[0]
        z[1] = 0.0
        return np.sum(y * x)
    agree(f)


def test_loop_body_alias_iadd():
    def f(x):
        out = np.zeros(2)
        for _ in range(1):
            o = out
            o += x[:2]
        return np.sum(out * x[:2])
    agree(f)


def test_loop_body_row_view_iadd():
    def f(x):
        out = np.zeros((2, 2))
        for i in range(2):
            row = out[i]
            row += x[2 * i:2 * i + 2] ** 2
        return np.sum(out * np.arange(4).reshape(2, 2))
    agree(f)


def refused(f, line_text, x=X):
    """zygotepy refuses `f` with a ZygoteError naming the user's line that holds `line_text` (never a wrong number)."""
    import inspect
    lines, first = inspect.getsourcelines(f)
    line = first + next(k for k, t in enumerate(lines) if line_text in t)
    with pytest.raises(ZygoteError, match=rf"test_updates_through_aliases.py:{line}: .*view"):
        value_and_gradient(f, x.copy())


def test_view_chain_in_loop_then_setitem():
    """(a) `b = b[1:]` repeated in a loop, then `b[0] = 0`: was value 0.0 (plain 7.29) and a zero gradient; now
    refused at the update (a view of `a` the gradient cannot be routed through)."""
    def f(x):
        a = x.copy()
        b = a
        for _ in range(3):
            b = b[1:]
        b[0] = 0.0
        return np.sum(a * x)
    refused(f, "b[0] = 0.0")


def test_while_shrinking_view_imul():
    """(b) `while cur.size > 1: cur = cur[1:]; cur *= 2`: was a ValueError (broadcast) in the backward; now routed
    (the update reaches `a` through the memory the views share)."""
    def f(x):
        a = x.copy()
        cur = a
        while cur.size > 1:
            cur = cur[1:]
            cur *= 2.0
        return np.sum(a * x)
    agree(f)


def test_for_rows_of_array_imul():
    def f(x):
        Y = np.outer(x, x)
        for r in Y:
            r *= 2.0
        return np.sum(Y)
    agree(f)


def test_for_rows_of_array_setitem():
    def f(x):
        Y = np.outer(x, x)
        for r in Y:
            r[0] = 0.0
        return np.sum(Y)
    agree(f)


def test_enumerate_rows_fill():
    def f(x):
        out = np.zeros((2, 2))
        for i, o in enumerate(out):
            o[:] = x[2 * i:2 * i + 2] ** 2
        return np.sum(out * np.arange(4).reshape(2, 2))
    agree(f)


def test_zip_rows_iadd():
    def f(x):
        out = np.zeros((2, 2))
        for o, xi in zip(out, x.reshape(2, 2)):
            o += xi ** 2
        return np.sum(out * np.arange(4).reshape(2, 2))
    agree(f)


def test_for_over_list_imul():
    def f(x):
        a = x.copy()
        for v in [a]:
            v *= x
        return np.sum(a)
    agree(f)


def test_for_over_list_setitem():
    def f(x):
        arrs = [x.copy(), x.copy() * 2]
        for v in arrs:
            v[0] = 0.0
        return sum(np.sum(v * x) for v in arrs)
    agree(f)


def test_for_over_dict_values_setitem():
    def f(x):
        d = {"a": x.copy()}
        for v in d.values():
            v[1] = x[0]
        return np.sum(d["a"] * x)
    agree(f)


def test_for_over_objects_setitem():
    class P:
        def __init__(self, w, b):
            self.w, self.b = w, b

    def f(x):
        ps = [P(x.copy(), 0.0), P(x * 2, 1.0)]
        for p in ps:
            p.w[0] = p.b
        return sum(np.sum(p.w * x) for p in ps)
    agree(f)


def _fill(dst, src):
    dst[:] = src * 2


def test_fill_helper_loop_over_tuple():
    def f(x):
        a = np.zeros(4)
        b = np.zeros(4)
        for dst in (a, b):
            _fill(dst, x)
        return np.sum(a * b)
    agree(f)


def test_write_through_view_held_in_list():
    def f(x):
        y = x.copy()
        t = [y[1:]]
        t[0][0] = x[3]
        return np.sum(y * np.arange(4))
    agree(f)


def test_write_through_view_held_in_tuple():
    def f(x):
        y = x.copy()
        t = (y[1:],)
        v = t[0]
        v[0] = 0.0
        return np.sum(y * x)
    agree(f)


def test_list_holding_same_array_twice():
    def f(x):
        a = x.copy()
        lst = [a, a]
        lst[0][1] = 0.0
        return np.sum(lst[1] * x)
    agree(f)


def test_tuple_assign_overlapping_slices():
    def f(x):
        y = x.copy()
        y[1:], y[:-1] = y[:-1], y[1:]
        return np.sum(y * np.arange(4))
    agree(f)


def test_row_of_reshape_view_setitem():
    def f(x):
        y = x.copy()
        z = y.reshape(2, 2)[0]
        z[1] = 0.0
        return np.sum(y * x)
    agree(f)


def test_real_view_setitem():
    def f(x):
        y = x.copy()
        z = y.real
        z[0] = 1.0
        return np.sum(y * x)
    agree(f)


def test_squeeze_of_newaxis_view_of_argument():
    def f(x):
        y = np.squeeze(x[None])
        y[0] = 1.0
        return np.sum(x * x)
    agree(f)


def test_float_written_into_int_array():
    def f(x):
        y = np.zeros(4, dtype=int)
        y[:] = x * 3
        return np.sum(y * x)
    agree(f)


def test_write_through_transpose_view():
    def f(x):
        A = np.outer(x, x)
        A.T[0] = x
        return np.sum(A * np.arange(16).reshape(4, 4))
    agree(f)


def test_ufunc_out_where():
    def f(x):
        y = np.ones(4)
        np.add(y, x, out=y, where=x > 0)
        return np.sum(y * y)
    agree(f)


def test_method_clip_out():
    def f(x):
        y = x.copy()
        y.clip(0, 1, out=y)
        return np.sum(y * x)
    agree(f)


def test_list_item_named_twice_then_imul():
    """(a) `a = lst[0]; b = lst[0]; b *= 2`: an array read out of a list under two names; the gradient missed part of
    the update (3x instead of 4x)."""
    def f(x):
        lst = [x * 1.0]
        a = lst[0]
        b = lst[0]
        b *= 2.0
        return np.sum(a * x)
    agree(f)


def test_list_item_updated_through_the_list_read_through_a_name():
    """(a) `a = lst[0]; lst[0][...] *= 2`: the item updated through the list, read through `a`; the gradient was wrong."""
    def f(x):
        lst = [x * 1.0]
        a = lst[0]
        lst[0][...] *= 2.0
        return np.sum(a * x)
    agree(f)


def test_alias_then_imatmul():
    M = np.array([[1.0, 2.0], [0.5, -1.0]])

    def f(x):
        y = x * 1.0
        a = y
        y @= M
        return np.sum(a * x)
    agree(f, np.array([[0.3, -1.2], [0.7, 0.4]]))


def test_items_of_a_comprehension_list_updated_in_a_loop():
    """`ys = [np.zeros(2) for _ in ...]` then `ys[k][0] = x[k]` (or ys[k].fill, a helper updating ys[k]) in a loop:
    only the last iteration's item kept its gradient (silently wrong): the comprehension's accumulator still named
    the list, so each update's link went to the list as it was before the loop."""
    def upd(a, v):
        a[0] = v

    def f(x):
        ys = [np.zeros(2) for _ in range(4)]
        for k in range(4):
            ys[k][0] = x[k]
        zs = [np.zeros(2) for _ in range(2)]
        for k in range(2):
            zs[k].fill(x[k + 1])
            upd(zs[k], x[k] ** 2)
        return sum(np.sum(v ** 2) for v in ys) + sum(np.sum(v ** 3) for v in zs)
    agree(f)


# Updates in place through objects a call hands back (silently wrong: the update was not seen, or its gradient went
# to the wrong place; found by a red-team session).
class _Box:
    def __init__(self, W):
        self.w = W.copy()

    def get(self):
        return self.w


def _box_w(b):
    return b.w


def _get_d_a(d):
    return d["a"]


def _append_to_setdefault(x):
    d = {}
    d.setdefault("a", []).append(x * 3.0)
    return sum(d["a"]) * x


def _append_to_calls_results(x):
    d = {"a": [x]}
    d.get("a").append(x * 3.0)
    _get_d_a(d).append(x ** 2)
    d.get("a").extend([x, x ** 2])
    next(iter(d.values())).append(x * 2.0)
    list(d.values())[0].append(x * 3.0)
    return sum(d["a"]) * x


def _group_by_setdefault(x):
    groups = {}
    for k, v in enumerate([x, 2 * x, x * x]):
        groups.setdefault(k % 2, []).append(v)
    return sum(sum(g) * (i + 1) for i, g in groups.items())


def _fill_a_reshaped_view(x):
    y = np.zeros(4)
    y.reshape(2, 2).fill(x[0])
    np.add.at(y.reshape(2, 2), (0, 1), x[1] * 3)
    return np.sum(y * x)


def _copyto_and_out_into_call_results(x):
    y = np.zeros(4)
    np.copyto(np.asarray(y), x ** 2)
    np.add(x.reshape(2, 2), y.reshape(2, 2), out=y.reshape(2, 2))
    return np.sum(y * x)


def _method_returned_attribute_updated(W):
    b = _Box(W)
    p = b.get()
    p *= 0.5
    q = _box_w(b)
    q += W
    return np.sum(b.w * W)


def _getattr_and_vars_items_updated(W):
    o = _Box(np.zeros(2))
    getattr(o, "w")[0] = W[1] * 3
    vars(o)["w"][1] = W[0] * W[1]
    return np.sum(o.w * W)


def _repeated_list_walked(x):
    a = x.copy()
    for v in [a] * 2:
        v *= 2
    return np.sum(a * x)


def _concatenated_list_updated(x):
    a = [x.copy()]
    b = a + a
    b[0] *= 2
    return np.sum(a[0] * x)


@pytest.mark.parametrize("f, x", [
    (_append_to_setdefault, 0.7), (_append_to_calls_results, 0.7), (_group_by_setdefault, 0.7),
    (_fill_a_reshaped_view, np.array([0.3, -1.2, 2.4, 0.7])),
    (_copyto_and_out_into_call_results, np.array([0.3, -1.2, 2.4, 0.7])),
    (_method_returned_attribute_updated, np.array([0.3, -1.2])),
    (_getattr_and_vars_items_updated, np.array([0.3, -1.2])),
    (_repeated_list_walked, np.array([0.3, -1.2, 2.4])),
    (_concatenated_list_updated, np.array([0.3, -1.2, 2.4])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_updates_through_objects_a_call_hands_back(f, x):
    from zygotepy.testing import check_grads
    check_grads(f, x)


def _walks_the_array_it_updates(x):
    a = x.copy()
    for v in a:
        a[-1] += v  # the last item the loop reads is the sum of all before it
    return np.sum(a * x)


def _enumerates_the_array_it_updates(x):
    y = x * 2.0
    t = 0.0
    for k, e in enumerate(y):  # (enumerate's items are read when the loop reaches them, after the updates before)
        y[(k + 1) % len(y)] += e * e
        t = t + e
    return t + np.sum(y * y)


def _zips_two_arrays_it_updates(x):
    a, b = x * 1.0, np.sin(x)
    s = 0.0
    for u, w in zip(a, b):
        if u > 0:
            b[-1] = b[-1] * u
            continue
        a[0] -= w
        s = s + u * w
    return s + np.sum(a) + np.sum(b)


def _nested_walks(x):
    a = x.copy()
    s = 0.0
    for u in a:
        for w in a:
            a[0] = a[0] * 0.5 + w * 0.1
            s = s + u * w
    return s + np.sum(a)


@pytest.mark.parametrize("f", [_walks_the_array_it_updates, _enumerates_the_array_it_updates,
                               _zips_two_arrays_it_updates, _nested_walks], ids=lambda f: f.__name__)
def test_a_loop_over_an_array_its_body_updates(f):
    """A 1-d array's items are numbers read as the loop goes, after the body's earlier updates: each gets its
    gradient from the version it was read from (refresh_iter, by the iteration's position). This raised before."""
    from zygotepy.testing import check_grads
    x = np.array([0.3, -1.2, 2.4, 0.7])
    check_grads(f, x)
    y, _ = value_and_gradient(f, x)
    assert y == pytest.approx(f(x), rel=1e-15)


def _enumerates_a_constant_it_updates(x, y):
    y = y * 1.0
    t = 0.0
    for k, e in enumerate(y):
        y[(k + 1) % len(y)] += 1.0
        t = t + e * x
    return t


def test_a_loop_over_a_constant_array_its_body_updates_reads_the_items_of_now():
    """y passed by keyword is a constant, so no gradient flows through the loop's refresh of its items: the refresh
    runs as written, and gives the number of now (`enumerate(y)`'s were read when the loop began: the value was
    1.1, not 2.6, with a gradient to match, before)."""
    y = np.array([0.3, -1.2, 2.4, 0.7])
    value, (dx,) = value_and_gradient(_enumerates_a_constant_it_updates, 0.5, y=y)
    assert value == pytest.approx(_enumerates_a_constant_it_updates(0.5, y), rel=1e-15)
    assert value == pytest.approx(2.6) and dx == pytest.approx(5.2)


def _enumerates_a_list_it_rebinds(x):
    lst = [x, x * 2.0, x * 3.0]
    t = 0.0
    for k, e in enumerate(lst):
        if k + 1 < len(lst):
            lst[k + 1] = e * 2.0  # the next item the loop reads is this new one
        t = t + e
    return t


def test_a_loop_over_a_list_reads_the_items_an_earlier_iteration_put_there():
    """enumerate(lst)'s items are read as the loop goes, so the next one is the new object `lst[k + 1] = ...` put
    there (the value was 3.0, not 3.5, with a gradient to match, before)."""
    from zygotepy.testing import check_grads
    value, (dx,) = value_and_gradient(_enumerates_a_list_it_rebinds, 0.5)
    assert value == pytest.approx(_enumerates_a_list_it_rebinds(0.5), rel=1e-15) and dx == pytest.approx(7.0)
    check_grads(_enumerates_a_list_it_rebinds, 0.5)


def _over_reversed(x):
    y = x * 1.0
    t = 0.0
    for e in reversed(y):
        y[0] += 1.0
        t = t + e * x[1]
    return t


def _over_a_generator(x):
    y = x * 1.0
    t = 0.0
    for e in (v * 2.0 for v in y):
        y[-1] += e
        t = t + e
    return t


def _over_map(x):
    y = list(x * 1.0)
    t = 0.0
    for e in map(float, y):
        y[-1] = y[-1] + e
        t = t + e
    return t


def _over_the_items_of_the_start(x):
    y = x * 1.0
    t = 0.0
    for e in list(reversed(y)):  # the items as the loop began, by the user's choice
        y[0] += e
        t = t + e * y[0]
    return t


@pytest.mark.parametrize("f", [_over_reversed, _over_a_generator, _over_map], ids=lambda f: f.__name__)
def test_a_loop_over_a_lazy_iterator_of_what_its_body_updates_is_refused(f):
    """zygotepy takes a lazy iterator's items when the loop begins, Python as the loop reaches them: refused, naming
    the user's line, where it gave other values (and gradients) before."""
    line = f.__code__.co_firstlineno + 3
    with pytest.raises(ZygoteError, match=rf"test_updates_through_aliases.py:{line}: .*lazy iterator of 'y'"):
        value_and_gradient(f, np.array([0.3, -1.2, 2.4, 0.7]))


def test_a_loop_over_the_items_of_the_start_runs():
    from zygotepy.testing import check_grads
    x = np.array([0.3, -1.2, 2.4, 0.7])
    check_grads(_over_the_items_of_the_start, x)
    assert value_and_gradient(_over_the_items_of_the_start, x)[0] == pytest.approx(_over_the_items_of_the_start(x))


def _bump_first(y):
    y[0] += 1.0


def _over_reversed_bumped_by_a_helper(x, y=None):
    y = x * 1.0 if y is None else y
    t = 0.0
    for e in reversed(y):
        _bump_first(y)  # Python reads y[0] last, after the updates: zygotepy would have read it at the start
        t = t + e * x[1]
    return t


def _over_a_generator_bumped_by_a_helper(x, y=None):
    y = list(x * 1.0) if y is None else y
    t = 0.0
    for e in (v * 2.0 for v in reversed(y)):
        _bump_first(y)
        t = t + e * x[2]
    return t


def _over_map_of_a_view_bumped_by_a_helper(x):
    y = x * 1.0
    v = y[::-1]
    t = 0.0
    for e in map(np.tanh, v):  # (a view: y's updates are its)
        _bump_first(y)
        t = t + e * x[0]
    return t


@pytest.mark.parametrize("constant", [False, True], ids=["active", "constant"])
@pytest.mark.parametrize("f", [_over_reversed_bumped_by_a_helper, _over_a_generator_bumped_by_a_helper],
                         ids=lambda f: f.__name__)
def test_a_loop_over_a_lazy_iterator_of_what_a_helper_updates_is_refused(f, constant):
    """The update is in a helper, out of the lowering's sight: the loop checks the log of updates at each iteration
    and refuses, naming the loop's line (it returned 0.38 for a function whose value is 6.38, and a gradient to match,
    before). A source that carries no gradient (`y=` a constant) is refused too."""
    x = np.array([0.3, -1.2, 2.4, 0.7])
    line = f.__code__.co_firstlineno + 3
    kwargs = {"y": list(x) if "generator" in f.__name__ else x.copy()} if constant else {}
    with pytest.raises(ZygoteError, match=rf"test_updates_through_aliases.py:{line}: .*lazy iterator of 'y' .*call"):
        value_and_gradient(f, x, **kwargs)


def test_a_loop_over_a_lazy_iterator_of_a_view_a_helper_updates_is_refused():
    """`map(f, v)` walks a view of y, and the helper updates y: the update is the view's too."""
    f = _over_map_of_a_view_bumped_by_a_helper
    line = f.__code__.co_firstlineno + 4
    with pytest.raises(ZygoteError, match=rf"test_updates_through_aliases.py:{line}: .*lazy iterator of 'v' .*call"):
        value_and_gradient(f, np.array([0.3, -1.2, 2.4, 0.7]))


def _over_reversed_with_calls(x):
    y = x * 1.0
    out = []
    t = 0.0
    for e in reversed(y):
        out.append(np.sin(e))  # calls, and another object updated: y is not
        t = t + e * float(len(out))
    return t + sum(out)


def test_a_loop_over_a_lazy_iterator_whose_body_calls_but_does_not_update_it_runs():
    from zygotepy.testing import check_grads
    x = np.array([0.3, -1.2, 2.4, 0.7])
    assert value_and_gradient(_over_reversed_with_calls, x)[0] == pytest.approx(_over_reversed_with_calls(x), rel=1e-14)
    check_grads(_over_reversed_with_calls, x)


class _Scaled:
    def __init__(self, w):
        self.w = w

    def step(self, b):
        self.w *= b
        return self


class _Layer:
    def __init__(self, W):
        self.W = W

    def step(self, lr):
        self.W -= lr * np.sin(self.W)


def test_an_update_through_the_object_a_method_handed_back():
    """`p = o.step(b)` is `o` itself: `p.step(b)` updates `o` too. The update reached `p` only (silently wrong: one
    factor of b missing from o's gradient); now `o` is refreshed from `p`'s update before the call's arguments' holders
    (lower/mutation.py)."""
    def chained(x):
        b = x[0] * 1.0
        o = _Scaled(x * 1.0)
        o.step(b).step(b)
        return np.sum(o.w ** 2)

    def named(x):
        b = x[3]
        o = _Scaled(x * 1.0)
        p = o.step(b)
        p.step(b)
        return np.sum(o.w * x)

    agree(chained)
    agree(named)


def test_arrays_of_objects_in_a_list_kept_in_a_nested_structure():
    """`params` keeps the layers' arrays at two depths (`"first"` and inside `"all"`); the loop updates each layer:
    the nested list's arrays were not linked (silently wrong); held.py `_where_items` now looks inside items that are
    not themselves in the other object."""
    def f(x):
        layers = [_Layer(x * 1.0), _Layer(x * 2.0)]
        params = {"first": layers[0].W, "all": [layer.W for layer in layers]}
        for layer in layers:
            layer.step(x[3])
        return np.sum(params["first"] * params["all"][1])

    agree(f)


# Two running numbers taken from the parameters (`x = x0`), both passed to a helper (whose result may be either, so
# either may alias the other), then updated with `+=` in a loop: the loop began with `x` naming `x0`'s object, and
# after the first `x += v` (a new number) the lowering still read `x0`'s version for `x` (value and gradient wrong:
# 4.0 for 5.0; found by a probe of research-style programs). A `+=` in the body now marks the names' object as one
# that may have split (lower/control.py `loop_carries`).
def _h(x, v):
    return x


def euler_for(x0):
    x = x0
    v = 0.0
    for _ in range(2):
        a = _h(x, v)
        v += a
        x += v
    return x


def euler_while(x0, v0):
    x, v, k = x0, v0, 0
    while k < 3:
        a = -_h(x, v) * 0.5
        v *= 1.0 + a * 0.1
        x += 0.1 * v
        k += 1
    return x * v


def pendulum(theta0, omega0):
    theta, omega = theta0, omega0
    for _ in range(4):
        acc, _drag = math.sin(theta) * -9.8, omega
        omega += 0.05 * acc
        theta += 0.05 * omega
    return theta + 0.1 * omega


@pytest.mark.parametrize("f, args", [(euler_for, (1.0,)), (euler_while, (0.8, 0.3)), (pendulum, (0.4, 0.1))],
                         ids=["for", "while", "pendulum"])
def test_numbers_updated_with_augmented_assignment_in_a_loop(f, args):
    value, _ = value_and_gradient(f, *args)
    assert value == f(*args)
    check_grads(f, *args)

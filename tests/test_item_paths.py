"""The item paths (zygotepy/ast_adjoint/items.py): `x[i]` and `out[i] = v` in loops on 1-d float64 arrays and int
indices skip the rules, and anything else falls back to them inside the same loop. Each row is checked against
central finite differences, with the item paths on and off (the same cotangents), and every array argument must end
as one plain call of `f` leaves it, also after `back` ran twice."""
import math

import numpy as np
import pytest

import zygotepy
from zygotepy import gradient, optimizations, pullback
from zygotepy.testing import check_grads


# --- loop shapes ------------------------------------------------------------------------------------------------------

def fill(x, n):
    out = np.zeros_like(x)
    for i in range(n):
        out[i] = math.sin(x[i]) * x[i]
    return out.sum()


def read_after_overwrite(x):
    out = np.ones_like(x)
    s = 0.0
    for i in range(len(x)):
        out[i] = x[i] * 2.0
        s += out[i] * x[i]
    return s + (out * out).sum()


def same_index_twice(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i]
        out[i] = out[i] * 3.0 + x[0]
    return (out * x).sum()


def one_slot_every_iteration(x):
    out = np.zeros(3)
    for i in range(len(x)):
        out[1] = out[1] * 0.5 + x[i] ** 2
    return out[1] + out.sum()


def into_a_view(x):
    base = np.ones(len(x) + 2)
    v = base[1:]
    for i in range(len(x)):
        v[i] = x[i] * v[i]
    return (base * base).sum()


def into_an_argument(x, y):
    for i in range(len(x)):
        y[i] = y[i] * x[i] + 1.0
    return (y * y).sum()


def into_an_argument_read_later(x, y):
    for i in range(len(x)):
        y[i] = math.cos(x[i])
    return (y * x).sum()


def recurrence(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = out[i - 1] * x[i] + math.sin(out[i - 1])
    return out[-1] + out.sum()


def negative_indices(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[-i - 1] = x[i] * x[-1]
    return (out * np.arange(len(x))).sum()


def numpy_int_indices(x):
    out = np.zeros_like(x)
    for i in np.arange(len(x)):  # np.int64 indices: the rules
        out[i] = x[i] ** 2
    return out.sum()


def mixed_indices(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        j = i if i % 2 else np.int64(i)  # every other store and read takes the general path
        out[j] = x[j] * x[i]
    return (out * out).sum()


def int_values(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = 2 if i % 2 else x[i]  # an int written: no cotangent
    return (out * x).sum()


def into_an_int_array(x):
    out = np.zeros(len(x), dtype=np.int64)
    s = 0.0
    for i in range(len(x)):
        out[i] = x[i] * 10.0 + 0.5  # truncated: data (no integer within a finite difference's step)
        s += out[i] * x[i]
    return s


def float32_arrays(x):
    out = np.zeros(len(x), dtype=np.float32)
    x32 = x.astype(np.float32)
    for i in range(len(x)):
        out[i] = x32[i] * 2.0
    return float((out * x).sum())


def two_d(A):
    out = np.zeros_like(A)
    for i in range(A.shape[0]):
        out[i] = A[i] * 2.0  # rows
        out[i, 0] = A[i, 1] * A[i, 0]  # a tuple index
    return (out * out).sum()


def complex_arrays(x):
    z = x * (1 + 1j)
    out = np.zeros_like(z)
    for i in range(len(x)):
        out[i] = z[i] * z[i]
    return (out * out.conj()).real.sum()


def nested_loops(x):
    out = np.zeros_like(x)
    for k in range(3):
        for i in range(len(x)):
            out[i] += x[i] * (k + 1.0) + out[i] * 0.1
    return (out * out).sum()


def early_exit(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        if i == 3:
            break
        out[i] = x[i] ** 3
    return (out * x).sum()


def with_slice_stores(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] * 2.0
        out[i:i + 1] = out[i] + x[i]  # a general store of the same slot, after the fast one
        out[i] = out[i] * x[i]
    return (out * out).sum()


def two_arrays(x):
    a = np.zeros_like(x)
    b = np.zeros_like(x)
    for i in range(len(x)):
        a[i] = x[i] * 2.0
        b[i] = a[i] * x[i]
        a[i] = b[i] + 1.0
    return (a * b).sum()


def list_reads(x):
    xs = list(x)
    out = np.zeros(len(xs))
    for i in range(len(xs)):
        out[i] = xs[i] * xs[i]
    return out.sum()


def saved_array(x):
    out = np.ones_like(x)
    s = 0.0
    for i in range(len(x)):
        s = s + (out * x).sum()  # mul's back reads out as it was here
        out[i] = x[i] * 3.0
    return s + out.sum()


def store_in_a_branch(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        if i % 2:  # (the loop carries a join of out's versions: the run's own guard, per store)
            out[i] = x[i] * out[i - 1] + 1.0
        else:
            out[i] = x[i] * 2.0
    return (out * x).sum()


def a_new_array_per_iteration(x):
    s = 0.0
    for i in range(len(x)):
        buf = np.zeros(2)  # the run takes the first one; the others take the general path
        buf[0] = x[i]
        buf[1] = x[i] * buf[0]
        s += buf.sum() * x[i]
    return s


def through_a_view_of_the_read_array(x):
    y = x * 1.0
    v = y[1:]
    s = 0.0
    for i in range(len(x) - 1):
        v[i] = y[i] * 2.0  # writes y[i + 1] through the view
        s += y[i + 1] * x[i]  # reads it through y
    return s + (y * y).sum()


def through_a_reshaped_view(x):
    y = x * 1.0
    m = y.reshape(2, -1)
    s = 0.0
    for i in range(len(x) // 2):
        m[1, i] = y[i] * 3.0  # writes the second half of y
        s += y[i + len(x) // 2] * x[i]
    return s + (y * x).sum()


def while_loop(x):
    out = np.zeros_like(x)
    i = 0
    while i < len(x):
        out[i] = x[i] * x[i] + out[i - 1]
        i += 1
    return out.sum()


def with_continue(x):
    out = np.ones_like(x)
    for i in range(len(x)):
        if i % 3 == 1:
            continue
        out[(2 * i) % len(x)] = x[i] * out[i]
    return (out * x).sum()


def _fill_row(row, x, k):
    for j in range(len(row)):
        row[j] = x[j] * k + row[j]


def through_a_helper(x):
    out = np.zeros_like(x)
    for k in range(3):
        _fill_row(out, x, k + 1.0)  # the helper's loop stores into the caller's array
    return (out * out).sum()


def stored_then_scaled_after(x):
    # the loop's store into x[4] is undone by the backward, the last `x *= 0.5` is not (nothing reads x after it):
    # the redo put back what the loop left, x[4] = 0.5, instead of 0.0625 (a changed argument the fuzzer found)
    for _ in range(1):
        x[4] = 0.5
    a = 0.0
    for i in range(3):
        a = x[0] * 0.1 * i
        x *= 0.5
    return 0.5 * a


def _x(n=6):
    return np.linspace(0.3, 1.4, n)


ROWS = [
    ("fill", fill, lambda: (_x(), 6)),
    ("fill_on_a_list", fill, lambda: (list(_x()), 6)),  # the loop's general copy (optimize/loop_copies.py)
    ("fill_on_float32", fill, lambda: (_x().astype(np.float32), 6)),
    ("read_after_overwrite", read_after_overwrite, lambda: (_x(),)),
    ("same_index_twice", same_index_twice, lambda: (_x(),)),
    ("one_slot_every_iteration", one_slot_every_iteration, lambda: (_x(),)),
    ("into_a_view", into_a_view, lambda: (_x(),)),
    ("into_an_argument", into_an_argument, lambda: (_x(), np.linspace(-1.0, 2.0, 6))),
    ("into_an_argument_read_later", into_an_argument_read_later, lambda: (_x(), np.linspace(-1.0, 2.0, 6))),
    ("recurrence", recurrence, lambda: (_x(),)),
    ("negative_indices", negative_indices, lambda: (_x(),)),
    ("numpy_int_indices", numpy_int_indices, lambda: (_x(),)),
    ("mixed_indices", mixed_indices, lambda: (_x(),)),
    ("int_values", int_values, lambda: (_x(),)),
    ("into_an_int_array", into_an_int_array, lambda: (_x(),)),
    ("float32_arrays", float32_arrays, lambda: (_x(),)),  # (quadratic: exact differences at a step float32 sees)
    ("two_d", two_d, lambda: (np.linspace(0.1, 1.2, 12).reshape(4, 3),)),
    ("complex_arrays", complex_arrays, lambda: (_x(),)),
    ("nested_loops", nested_loops, lambda: (_x(),)),
    ("early_exit", early_exit, lambda: (_x(),)),
    ("with_slice_stores", with_slice_stores, lambda: (_x(),)),
    ("two_arrays", two_arrays, lambda: (_x(),)),
    ("list_reads", list_reads, lambda: (_x(),)),
    ("saved_array", saved_array, lambda: (_x(),)),
    ("store_in_a_branch", store_in_a_branch, lambda: (_x(),)),
    ("a_new_array_per_iteration", a_new_array_per_iteration, lambda: (_x(),)),
    ("through_a_view_of_the_read_array", through_a_view_of_the_read_array, lambda: (_x(),)),
    ("through_a_reshaped_view", through_a_reshaped_view, lambda: (_x(),)),
    ("while_loop", while_loop, lambda: (_x(),)),
    ("with_continue", with_continue, lambda: (_x(),)),
    ("through_a_helper", through_a_helper, lambda: (_x(),)),
    ("stored_then_scaled_after", stored_then_scaled_after, lambda: (_x(),)),
]
IDS = [r[0] for r in ROWS]


def _switched(enabled, run):
    with optimizations(item_paths=enabled):  # every adjoint is transformed again under the setting
        return run()


def _seed(y):
    return 1.0


@pytest.mark.parametrize("name, f, make", ROWS, ids=IDS)
def test_finite_differences(name, f, make):
    if name in ("float32_arrays", "fill_on_float32"):
        check_grads(f, *make(), rtol=1e-4, eps=1e-2)
    else:
        check_grads(f, *make(), rtol=1e-6)


@pytest.mark.parametrize("name, f, make", ROWS, ids=IDS)
def test_the_same_with_the_item_paths_off(name, f, make):
    on = gradient(f, *make())
    off = _switched(False, lambda: gradient(f, *make()))
    assert len(on) == len(off)
    for a, b in zip(on, off):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)


@pytest.mark.parametrize("name, f, make", ROWS, ids=IDS)
def test_arguments_end_as_one_call_leaves_them(name, f, make):
    plain = make()
    expected = f(*plain)
    args = make()
    y, back = pullback(f, *args)
    assert y == pytest.approx(expected, rel=1e-12)
    first = back(1.0)
    second = back(1.0)  # a second call: the same cotangents, from the same saved values
    for a, b in zip(first, second):
        if a is not None:
            np.testing.assert_array_equal(a, b)
    for a, p in zip(args, plain):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, p)


@pytest.mark.optimizations
def test_a_store_the_loop_cannot_check_before_it_checks_itself():
    text = zygotepy.show_adjoint(store_in_a_branch, optimized=True)
    assert "out_items.put(" in text and "_item_back(" in text


@pytest.mark.optimizations
def test_the_item_paths_run_on_the_fill_loop():
    text = zygotepy.show_adjoint(fill, optimized=True)
    assert "out_items_note(i)" in text and "_item_back(" in text and "dx_items[" in text
    assert "stack_fast = " in text  # a copy of the loop without guards, chosen before it
    off = _switched(False, lambda: zygotepy.show_adjoint(fill, optimized=True))
    assert "_items" not in off


def test_a_view_and_its_base_see_each_store():
    seen = []

    def f(x):
        base = np.zeros(len(x) + 1)
        v = base[1:]
        for i in range(len(x)):
            v[i] = x[i] * x[i]
            seen.append(base[i + 1])  # the base sees the store through the view at once
        return (base * x.sum()).sum()

    x = _x(4)
    check_grads(f, x)
    seen.clear()
    gradient(f, x)
    assert seen == pytest.approx(list(x * x))


@pytest.mark.optimizations
def test_the_general_path_builds_one_dense_cotangent(monkeypatch):
    """With the item paths off, the rules' own in-place accumulation still makes one array for 2n reads."""
    from zygotepy.adjoints.structures import indexing
    built = []
    original = indexing.scatter_array
    monkeypatch.setattr(indexing, "scatter_array", lambda *a: built.append(1) or original(*a))
    x = np.linspace(0.1, 1.0, 50)
    g = _switched(False, lambda: gradient(fill, x, 50))[0]
    assert np.allclose(g, np.cos(x) * x + np.sin(x))
    assert len(built) == 1
    built.clear()
    gradient(fill, x, 50)
    assert not built  # the item paths add into a buffer of their own


def test_an_index_out_of_range_raises_as_python_does():
    def f(x):
        out = np.zeros(2)
        for i in range(len(x)):
            out[i] = x[i]
        return out.sum()
    with pytest.raises(IndexError):
        gradient(f, _x(3))


def test_a_read_only_array_raises_as_python_does():
    def f(x):
        out = np.broadcast_to(np.zeros(1), x.shape)  # a read-only view
        for i in range(len(x)):
            out[i] = x[i]
        return out.sum()
    with pytest.raises(ValueError):
        gradient(f, _x(3))


# --- second order -----------------------------------------------------------------------------------------------------

def dual_fill(x):
    out = x * 0.0  # (np.zeros_like would drop forward mode's duals: an array of them, not of floats)
    for i in range(len(x)):
        out[i] = math.sin(x[i]) * x[i]
    return out.sum()


def test_hessian_through_the_item_paths():
    x = _x(4)
    h = zygotepy.hessian(dual_fill, x)
    expected = np.diag(2 * np.cos(x) - x * np.sin(x))
    np.testing.assert_allclose(h, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.dual_route  # the twins refuse the item stores: forward-over-reverse takes the inner gradient
def test_gradient_of_gradient_through_item_stores():
    x = _x(4)

    def g(x):
        return gradient(fill, x, 4)[0].sum()
    np.testing.assert_allclose(gradient(g, x)[0], 2 * np.cos(x) - x * np.sin(x), rtol=1e-9)


@pytest.mark.optimizations
def test_runs_let_go_of_the_cotangent_when_their_stores_are_undone():
    """An inner loop's run lives on the tape: holding its last cotangent array would keep one array per run."""
    from zygotepy.ast_adjoint import items
    runs = []
    original = items.ItemRun.__init__

    def spy(self, *a):
        original(self, *a)
        runs.append(self)
    items.ItemRun.__init__ = spy
    try:
        y, back = pullback(nested_loops, _x())
        back(1.0)
    finally:
        items.ItemRun.__init__ = original
    assert len(runs) == 3 and all(r.grad is None and r.left == r.count == 6 for r in runs)

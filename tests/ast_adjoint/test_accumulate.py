"""Rules that add to the running cotangents generated code hands them (`registry.accumulates`: `x[i]` reads and
`x[i] = v` writes) give the gradients of central finite differences, update in place only what the backward pass alone
holds, and make a loop over an array's items cost O(1) per item instead of a dense array per item."""
import math

import numpy as np
import pytest

from zygotepy import gradient, pullback, show_adjoint
from zygotepy.ast_adjoint import accumulate, runtime as rt
from zygotepy.options import OPTIONS
from zygotepy.testing import check_grads


def fill(x, n):
    out = np.zeros_like(x)
    for i in range(n):
        out[i] = math.sin(x[i]) * x[i]
    return out.sum()


def read_twice(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i - 1]
    return s


def rows(W, v):
    total = 0.0
    for k in range(W.shape[0]):
        total = total + np.dot(W[k], v) ** 2
    return total


def fancy_repeats(x):
    idx = np.array([0, 2, 2, 1, 0])
    s = 0.0
    for _ in range(3):
        s = s + np.sum(x[idx] * x[idx])
    return s


def masked(x):
    s = 0.0
    for k in range(2):
        s = s + np.sum(x[x > 0.0] ** (k + 2))
    return s


def list_items(xs):
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * xs[i] * (i + 1)
    return s


def list_writes(x):
    out = [0.0] * 4
    for i in range(4):
        out[i] = x * (i + 1)
    return out[0] * out[1] + out[2] * out[3]


def slices(x):
    out = np.zeros(6)
    for i in range(3):
        out[2 * i:2 * i + 2] = x[i:i + 2] * x[i]
    return np.sum(out * out)


def overwrite(x):
    out = x * 1.0
    for i in range(3):
        out[i] = out[i + 1] * out[i]
    return np.sum(out ** 2)


def float32_reads(x):
    s = np.float32(0.0)
    for i in range(3):
        s = s + x[i] * x[i]
    return s


CASES = [
    ("fill", fill, (np.array([0.3, -1.2, 0.7, 2.0]), 4)),
    ("read twice", read_twice, (np.array([0.5, -0.4, 1.1]),)),
    ("rows of a matrix", rows, (np.array([[0.2, 1.0], [-0.5, 0.3], [0.9, -1.4]]), np.array([0.7, -0.2]))),
    ("repeated fancy indices", fancy_repeats, (np.array([0.4, -1.0, 0.8]),)),
    ("boolean masks", masked, (np.array([0.4, -1.0, 0.8, 1.5]),)),
    ("list items", list_items, ([0.5, -1.5, 2.0],)),
    ("list writes", list_writes, (0.7,)),
    ("slices", slices, (np.array([0.3, -0.6, 1.2, 0.4]),)),
    ("overwritten in place", overwrite, (np.array([0.3, -0.6, 1.2, 0.4]),)),
]


@pytest.mark.parametrize("fn, args", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences(fn, args):
    check_grads(fn, *args)


def test_float32_stays_float32():
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    (g,) = gradient(float32_reads, x)
    assert g.dtype == np.float32
    assert np.allclose(g, [1.0, -2.0, 4.0])


@pytest.mark.optimizations
def test_generated_code_hands_over_the_running_cotangent():
    text = show_adjoint(fill, optimized=True)
    assert "dx_2, _ = " in text and ", dx_2, None)" in text  # the read's back gets dx_2 and returns it
    assert "out_3_back(dout_3, " in text


def test_a_cotangent_the_user_holds_is_never_updated_in_place():
    def writes(x):
        out = np.zeros(3)
        for i in range(3):
            out[i] = x[i] * 2.0
        return out

    x = np.array([1.0, 2.0, 3.0])
    dy = np.array([1.0, 10.0, 100.0])
    kept = dy.copy()
    _, back = pullback(writes, x)
    assert np.array_equal(back(dy)[0], [2.0, 20.0, 200.0])
    assert np.array_equal(dy, kept)
    assert np.array_equal(back(dy)[0], [2.0, 20.0, 200.0])  # and a second pullback sees the same cotangent


def test_a_cotangent_two_variables_share_is_copied_first():
    def shared(x):
        a = x * 1.0
        b = a + 0.0  # the backward of `+` gives a and b the same cotangent object
        s = 0.0
        for i in range(3):
            s = s + a[i] * 3.0 + b[i] * 5.0
        return s + np.sum(a * b)

    check_grads(shared, np.array([0.4, -1.0, 2.0]))


def test_sole_counts_every_other_holder():
    def back(dy, need=None, *into):  # the call shape of generated code
        return rt.sole(dy), rt.sole(into[0])

    def caller():
        a, b = np.zeros(3), np.zeros(3)
        alone = back(a, None, b)
        alias = b
        aliased = back(a, None, b)
        view = back(a[1:], None, b[1:])
        return alone, aliased, view, alias is b

    assert caller() == ((True, True), (True, False), (False, False), True)
    assert not rt.sole(np.zeros(3)) or accumulate._SOLE > 0  # a bare temporary: fewer holders than the call shape
    assert not rt.sole((1.0,)) and not rt.sole(np.zeros(2).view(np.matrix))


@pytest.mark.optimizations
def test_each_item_costs_constant_work(monkeypatch):
    """Not a timing: the backward of the fill loop builds a dense cotangent for the first read only, then adds into it
    (before, every one of the 2n reads built an array of x's size: quadratic work)."""
    from zygotepy.adjoints.structures import indexing
    built = []
    original = indexing.scatter_array
    monkeypatch.setattr(indexing, "scatter_array", lambda *a: built.append(1) or original(*a))
    x = np.linspace(0.1, 1.0, 500)
    g, _ = gradient(fill, x, 500)
    assert np.allclose(g, np.cos(x) * x + np.sin(x))
    assert len(built) <= 1  # (the item paths build none: tests/test_item_paths.py checks the general path's one)


def cubes_and_neighbours(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] ** 3 + x[i] * x[(i + 1) % 3]
    return s


def test_second_order_through_handed_over_cotangents():
    """Forward over reverse pushes dual numbers through the backs, reverse over reverse transforms them: neither may
    take the in-place arm (`sole` is False for duals, and an outer level's rule for `sole` answers False)."""
    from zygotepy import hessian
    x = np.array([0.5, -1.0, 2.0])
    want = np.diag(6 * x) + np.array([[0.0, 1, 1], [1, 0, 1], [1, 1, 0]])
    assert np.allclose(hessian(cubes_and_neighbours, x), want)
    (row,) = gradient(lambda x: gradient(cubes_and_neighbours, x)[0][1], x)
    assert np.allclose(row, want[1])


# --- the item fast paths: `x[i]` and `x[i] = v` for an int i and a 1-d real array (adjoints/structures/indexing.py,
# adjoints/mutation/stores.py `_set_number`, mutate.ItemEntry) ---------------------------------------------------------

def recurrence_in_place(x):
    y = x * 1.0
    for i in range(1, y.shape[0]):
        y[i] = y[i] * y[i - 1] + 0.5  # reads an item the previous step wrote
    return np.sum(y * y)


def ints_and_floats(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = 3 if i % 2 else x[i] * x[i]  # an int written is data
    return np.sum(out * x)


def overwritten_twice(x):
    out = np.ones(3)
    s = 0.0
    for i in range(3):
        out[i] = x[i] * 2.0
        s = s + out[i] * out[(i + 1) % 3]  # reads an entry before and after it is written
        out[i] = math.sin(x[i])
    return s + np.sum(out)


@pytest.mark.parametrize("f", [recurrence_in_place, ints_and_floats, overwritten_twice, fill])
def test_item_fast_paths_match_finite_differences(f):
    x = np.array([0.3, -0.7, 1.1])
    args = (x, 3) if f is fill else (x,)
    before = x.copy()
    check_grads(f, *args)
    assert np.array_equal(x, before)  # the caller's array is unchanged


def test_item_fast_paths_keep_float32_and_repeat_their_pullback():
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    y, back = pullback(recurrence_in_place, x)
    first, = back(1.0)
    second, = back(1.0)
    assert first.dtype == np.float32 and np.array_equal(first, second)
    want, = gradient(recurrence_in_place, x.astype(np.float64))
    np.testing.assert_allclose(first, want, rtol=1e-5)


# --- generated code's `dx = _acc(dx, g)` adds into the array only that variable holds (runtime.acc_var) -----------

def rnn(W, h, xs):
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h * h)


@pytest.mark.optimizations
def test_a_weight_cotangent_accumulates_in_place_over_a_loop(monkeypatch):
    rng = np.random.default_rng(3)
    W, h, xs = rng.normal(size=(64, 64)) * 0.1, rng.normal(size=64), list(rng.normal(size=(6, 64)))  # (REUSE_BYTES)
    check_grads(rnn, W, h, xs)
    out_of_place = []  # acc_var falls back to acc when it cannot add in place (counting there adds no holder)
    original = accumulate.acc
    monkeypatch.setattr(accumulate, "acc", lambda a, b: out_of_place.append(1) or original(a, b))
    g_on = gradient(rnn, W, h, xs)
    on = len(out_of_place)
    monkeypatch.setattr(OPTIONS, "acc_in_place", False)
    g_off = gradient(rnn, W, h, xs)
    assert len(out_of_place) - on >= on + 5  # dW: the five steps after the first add in place
    assert all(np.array_equal(a, b) for a, b in zip(g_on[:2], g_off[:2]))


def shares_its_cotangent(x, W):
    y = W @ x
    z = y + y  # y's cotangent reaches it twice: the second sum must not write into the first's array
    return np.sum(z * np.arange(3.0)) + np.sum(W @ y)


def test_acc_never_writes_into_an_array_someone_else_holds():
    x, W = np.array([0.5, -1.0, 2.0]), np.eye(3) + 0.1
    check_grads(shares_its_cotangent, x, W)
    y, back = pullback(lambda v: v * 1.0 + v, x)
    dy = np.ones(3)
    first, = back(dy)
    second, = back(dy)
    assert np.array_equal(dy, np.ones(3)) and np.array_equal(first, second)
    d = np.ones(3)
    keep = d
    assert rt.acc_var(d, np.ones(3)) is not keep and np.array_equal(keep, np.ones(3))  # two holders: out of place


def _rows_product(r0, r1):
    return np.sum(r0 * r1)


@pytest.mark.parametrize("f", [lambda X: _rows_product(*X), lambda X: _rows_product(*(2.0 * X)),
                               lambda X: max(*X[0]) + np.add(*X).sum()],
                         ids=["argument", "intermediate", "builtin"])
def test_an_array_unpacked_into_a_call_gets_an_array(f, mode):
    """`g(*X)`: X's gradient was a tuple of rows (None for a row with none), which crashed the rule before it."""
    X = np.array([[1.0, 2.0], [3.0, 4.5]])
    g, = gradient(f, X)
    assert type(g) is np.ndarray and g.shape == X.shape
    check_grads(f, X)

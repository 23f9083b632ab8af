"""`np.maximum.at`, `np.minimum.at` and `np.multiply.at` (adjoints/mutation/array_calls.py): unbuffered updates in
place, repeated indices applied one after another, as segment max and product pooling writes them. Each case against
central finite differences in float64 (tests/plain_checks.py), with respect to both the array updated and the values:
repeated indices, ties between two candidates (where the central difference is the even split), zeros among the
factors, 2-d arrays with a tuple of index arrays, a slice, a boolean mask, values broadcast or a number, the array a
copy made inside the function or the argument itself. Then what differences cannot show: ties among three candidates
share evenly, values sharing memory with the array are refused, and so is the `at` of a ufunc without a rule, naming
the user's line."""
import numpy as np
import pytest
from plain_checks import central, line_of

from zygotepy import ZygoteError, gradient, value_and_gradient

IDX = np.array([0, 2, 0, 0, 3])
ROWS, COLS = np.array([0, 0, 2, 1, 0]), np.array([1, 1, 0, 1, 1])
W1, W2 = np.array([1.5, -0.5, 2.0, 0.7]), np.array([[1.0, -2.0], [0.5, 1.5], [-1.0, 0.3]])


def max_repeated(x, v):
    y = x.copy()
    np.maximum.at(y, IDX, v)
    return np.sum(y * W1)


def min_repeated(x, v):
    y = x.copy()
    np.minimum.at(y, IDX, v)
    return np.sum(y * W1)


def product_repeated(x, v):
    y = x.copy()
    np.multiply.at(y, IDX, v)
    return np.sum(y * W1)


def max_pairs(x, v):
    y = x.copy()
    np.maximum.at(y, (ROWS, COLS), v)
    return np.sum(y * W2)


def min_pairs(x, v):
    y = x * 1.0
    np.minimum.at(y, (ROWS, COLS), v)
    return np.sum(y ** 2 * W2)


def product_pairs(x, v):
    y = x.copy()
    np.multiply.at(y, (ROWS, COLS), v)
    return np.sum(y * W2)


def max_rows(x, v):  # (an index into the first axis: each value a row, broadcast over (4, 2))
    y = x.copy()
    np.maximum.at(y, np.array([0, 2, 0, 0]), v)
    return np.sum(y * W2)


def product_rows_broadcast(x, v):  # (v of shape (4, 1) against x[idx] of shape (4, 2))
    y = x.copy()
    np.multiply.at(y, np.array([1, 1, 2, 1]), v)
    return np.sum(y * W2)


def max_number(x, s):
    y = x.copy()
    np.maximum.at(y, [0, 0, 3], s)
    return np.sum(y * W1)


def product_number(x, s):
    y = x.copy()
    np.multiply.at(y, [0, 0, 3], s)
    return np.sum(y * W1)


def max_slice(x, v):
    y = x.copy()
    np.maximum.at(y, slice(1, 4), v)
    return np.sum(y * W1)


def product_mask(x, v):
    y = x.copy()
    np.multiply.at(y, np.array([True, False, True, True]), v)
    return np.sum(y * W1)


def min_mask_2d(x, v):
    y = x.copy()
    np.minimum.at(y, np.array([[True, False], [False, False], [True, True]]), v)
    return np.sum(y * W2)


def max_of_the_argument(x, v):  # (the argument itself updated: the gradient is the one of the array passed)
    np.maximum.at(x, IDX, v)
    return np.sum(x * W1)


def product_of_computed_values(x, v):  # (the values computed from x, the update read before and after)
    y = np.sin(x)
    before = np.sum(y * W1)
    np.multiply.at(y, IDX, v * x[IDX])
    return np.sum(y * W1) * before


def graph_max_pool(x, v):  # (messages along edges src -> dst, each node's maximum, in a loop of two layers)
    src, dst = np.array([0, 1, 2, 3, 3]), np.array([1, 0, 1, 2, 1])
    h = x
    for _ in range(2):
        agg = np.full(h.shape, -10.0)
        np.maximum.at(agg, dst, np.tanh(h[src] * v))
        h = h + agg
    return np.sum(h * W1)


X1 = np.array([0.3, -1.2, 0.9, 0.4])
X2 = np.array([[0.3, -1.2], [0.9, 0.4], [-0.5, 1.1]])
CASES = {  # (f, x, v)
    "maximum, repeated": (max_repeated, X1, np.array([0.8, 0.2, -0.3, 1.4, -2.0])),
    "minimum, repeated": (min_repeated, X1, np.array([0.8, 0.2, -0.3, 1.4, -2.0])),
    "multiply, repeated": (product_repeated, X1, np.array([0.8, 0.2, -0.3, 1.4, -2.0])),
    "maximum, a tie of two": (max_repeated, X1, np.array([0.3, 0.2, -0.3, 0.1, -2.0])),  # (x[0] = v[0])
    "minimum, a tie of two": (min_repeated, X1, np.array([0.8, 0.9, -0.3, 1.4, 0.4])),  # (x[2] = v[1], x[3] = v[4])
    "multiply, zeros in x and v": (product_repeated, np.array([0.0, -1.2, 0.9, 0.0]),
                                   np.array([0.0, 0.5, 0.0, 1.4, 2.0])),
    "multiply, one zero": (product_repeated, X1, np.array([0.8, 0.5, 0.0, 1.4, 2.0])),
    "maximum, 2-d pairs": (max_pairs, X2, np.array([0.1, -0.4, 0.2, 1.0, -0.9])),
    "minimum, 2-d pairs": (min_pairs, X2, np.array([0.1, -0.4, 0.2, 1.0, -0.9])),
    "multiply, 2-d pairs": (product_pairs, X2, np.array([0.1, -0.4, 0.2, 1.0, -0.9])),
    "maximum, rows": (max_rows, X2, np.array([[0.1, 2.0], [-0.2, 1.5], [0.6, -0.4], [1.3, -3.0]])),
    "multiply, rows broadcast": (product_rows_broadcast, X2, np.array([[0.5], [-1.5], [2.0], [0.7]])),
    "maximum, a number": (max_number, X1, 0.5),
    "multiply, a number": (product_number, X1, -1.5),
    "maximum, a slice": (max_slice, X1, np.array([-0.4, 0.1, 0.8])),
    "multiply, a mask": (product_mask, X1, np.array([0.5, -1.5, 2.0])),
    "minimum, a 2-d mask": (min_mask_2d, X2, np.array([0.0, -0.7, 1.5])),
    "maximum, of the argument": (max_of_the_argument, X1, np.array([0.8, 0.2, -0.3, 1.4, -2.0])),
    "multiply, of computed values": (product_of_computed_values, X1, np.array([0.8, 0.2, -0.3, 1.4, -2.0])),
    "maximum, graph pooling": (graph_max_pool, X1, 1.3),
}


@pytest.mark.parametrize("case", CASES)
def test_against_central_differences(mode, case):
    f, x, v = CASES[case]
    value, grads = value_and_gradient(f, x.copy(), v if np.isscalar(v) else v.copy())
    assert value == pytest.approx(f(x.copy(), v if np.isscalar(v) else v.copy()), rel=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(0.0 if g is None else g, central(f, (x, v), k), rtol=1e-6, atol=1e-8,
                                   err_msg=f"argument {k}")


def test_the_update_happens_as_numpy_does_it(mode):
    """The array after the call is NumPy's (and the argument updated in place stays updated)."""
    x, v = X1.copy(), np.array([0.8, 0.2, -0.3, 1.4, -2.0])
    value_and_gradient(max_of_the_argument, x, v)
    want = X1.copy()
    np.maximum.at(want, IDX, v)
    np.testing.assert_array_equal(x, want)


def test_ties_among_more_candidates_share_evenly(mode):
    """Position 0: the old 1.0 and two values 1.0 (three candidates, a third each, as np.max's rule shares a tie);
    position 1: the old 5.0 and a value 5.0 (a half each)."""
    def f(x, v):
        y = x.copy()
        np.maximum.at(y, np.array([0, 0, 1, 0]), v)
        return np.sum(y * np.array([1.0, 2.0]))
    gx, gv = gradient(f, np.array([1.0, 5.0]), np.array([1.0, 1.0, 5.0, -3.0]))
    np.testing.assert_allclose(gx, [1 / 3, 1.0])
    np.testing.assert_allclose(gv, [1 / 3, 1 / 3, 1.0, 0.0])


def test_a_product_with_several_zeros_at_one_entry(mode):
    """Two zero factors at an entry: every factor's derivative is 0 (no NaN from a division by the product)."""
    gx, gv = gradient(product_repeated, np.array([2.0, 1.0, 3.0, 1.0]), np.array([0.0, 1.0, 0.0, 5.0, 1.0]))
    np.testing.assert_array_equal(gx, [0.0, -0.5, 2.0, 0.7])
    np.testing.assert_array_equal(gv, [0.0, 6.0, 0.0, 0.0, 0.7])


def test_float32_and_a_list_of_values(mode):
    def f(x, v):
        y, z = x.copy(), x.copy()
        np.minimum.at(y, [0, 0, 2], v)
        np.multiply.at(z, [0, 0, 2], v)
        return np.sum(y) + np.sum(z)
    gx, gv = gradient(f, np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, 1.5, -1.0], np.float32))
    assert gx.dtype == gv.dtype == np.float32
    np.testing.assert_array_equal(gx, [0.75, 2.0, -1.0])
    np.testing.assert_array_equal(gv, [2.5, 0.5, 4.0])

    def g(x):
        y = x.copy()
        np.maximum.at(y, [0, 0], [x[1] * 2.0, x[2]])
        return np.sum(y * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(gradient(g, np.array([0.1, 0.5, 0.3]))[0], [0.0, 4.0, 3.0])


def test_an_update_of_data_runs_as_written(mode):
    def f(x):
        counts = np.zeros(4, dtype=int)
        np.maximum.at(counts, np.array([0, 2, 2]), np.array([3, 1, 2]))
        return np.sum(x * counts)
    np.testing.assert_allclose(gradient(f, X1)[0], [3.0, 0.0, 2.0, 0.0])


def _shared(x):
    a = x.copy()
    np.maximum.at(a, [0, 1], a[1:3])
    return np.sum(a * W1[:3])


def _divided(x):
    y = x.copy()
    np.divide.at(y, [0, 0], x[:2])
    return np.sum(y)


@pytest.mark.parametrize("f, text", [(_shared, r"np\.maximum\.at: zygotepy does not differentiate values that share "
                                               r"memory"),
                                     (_divided, r"zygotepy cannot differentiate np\.divide\.at, which updates its "
                                                r"argument in place")])
def test_refusals_name_the_users_line(f, text):
    line = line_of(f, ".at(")
    with pytest.raises(ZygoteError, match=rf"test_ufunc_at\.py:{line}: {text}"):
        gradient(f, np.array([0.3, -0.7, 1.1, 0.5]))

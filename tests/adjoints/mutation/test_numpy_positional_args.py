"""NumPy's optional arguments in calls that write into an array (adjoints/mutation/calls.py `_with_out`,
adjoints/mutation/positionals.py): a reduction's `where=` given with `out=` masks the reduction's input (np.sum,
`np.add.reduce`, `X.max(...)`, with `initial=` and keepdims), while an elementwise ufunc's masks out; an ndarray method
given its out array by position as a call statement (`X.sum(1, None, o)`, `X.max(1, o)`, `Y.clip(lo, hi, Y)`), and
the other optional parameters NumPy takes by position (`X.dot(Y, o)`, `np.copyto(x, w, "same_kind", mask)`,
`y.put(i, v, "clip")`). Each case's value and gradients, in both optimisation settings, against central differences in
float64; then the refusals: an out given by position where the method's result is used, and an out that overlaps
another argument without being it."""
import numpy as np
import pytest
from plain_checks import central, line_of

from zygotepy import ForwardModeError, ZygoteError, gradient, hessian, value_and_gradient

COLS = np.array([True, False, True])
MASK = np.array([[True, True, False], [True, False, True], [False, True, True]])
WEIGHTS = np.array([1.0, 2.0, 3.0])
IDS = np.array([0, 4, 8, 5])


# --- a reduction's where= masks its input, also when it writes into out= -----------------------------------------------
def add_reduce_columns(X, v):
    out = np.zeros(3)
    np.add.reduce(X, axis=1, where=COLS, out=out)
    return np.sum(out * v)


def add_reduce_mask(X, v):
    out = np.zeros(3)
    np.add.reduce(X, axis=1, where=MASK, out=out)
    return np.sum(np.sin(out) * v)


def sum_method_mask(X, v):
    out = np.full(3, 7.0)
    X.sum(axis=1, where=MASK, out=out)
    return np.sum(out * v)


def sum_kept_dims(X, v):
    out = np.zeros((3, 1))
    np.sum(X, axis=1, keepdims=True, where=MASK, out=out)
    return np.sum(out * X * v)


def mean_mask(X, v):
    out = np.zeros(3)
    np.mean(X, axis=1, where=MASK, out=out)
    return np.sum(out * v)


def max_initial_mask(X, v):
    out = np.zeros(3)
    np.max(X, axis=0, initial=-5.0, where=MASK, out=out)
    return np.sum(out * v)


def max_method_initial(X, v):
    out = np.zeros(3)
    X.max(axis=0, initial=0.2, out=out)
    return np.sum(out * v)


def prod_mask(X, v):
    out = np.zeros(3)
    np.prod(X, axis=1, where=MASK, out=out)
    return np.sum(out * v)


def amin_initial_mask(X, v):
    out = np.zeros(3)
    np.amin(X, axis=1, initial=5.0, where=MASK, out=out)
    return np.sum(out * v)


def add_reduce_initial(X, v):
    out = np.zeros(3)
    np.add.reduce(X, axis=0, initial=1.5, where=MASK, out=out)
    return np.sum(out * out * v)


def elementwise_where_masks_out(X, v):  # (an elementwise ufunc's where= keeps out's other entries)
    out = X * v
    np.multiply(X, X, out=out, where=MASK)
    return np.sum(np.sin(out))


# --- an ndarray method given its out array by position, as a call statement -------------------------------------------
def sum_positional_out(X, v):
    o = np.zeros(3)
    X.sum(1, None, o)
    return np.sum(o * v)


def mean_positional_out(X, v):
    o = np.zeros(3)
    X.mean(0, None, o)
    return np.sum(o * v)


def max_positional_out(X, v):
    o = np.zeros(3)
    X.max(1, o)
    return np.sum(o * v)


def min_positional_out(X, v):
    o = np.zeros(3)
    X.min(0, o)
    return np.sum(o * v)


def prod_positional_out(X, v):
    o = np.zeros(3)
    X.prod(1, None, o)
    return np.sum(o * v)


def std_positional_out(X, v):
    o = np.zeros(3)
    X.std(1, None, o)
    return np.sum(o * v)


def var_positional_out_and_ddof(X, v):
    o = np.zeros(3)
    X.var(1, None, o, 1)
    return np.sum(o * v)


def cumsum_positional_out(X, v):
    o = np.zeros((3, 3))
    X.cumsum(1, None, o)
    return np.sum(o * X * v)


def cumprod_positional_out(X, v):
    o = np.zeros((3, 3))
    X.cumprod(0, None, o)
    return np.sum(o * v)


def take_positional_out(X, v):
    o = np.zeros(4)
    X.take(IDS, None, o)
    return np.sum(o * np.arange(1.0, 5.0)) + np.sum(v)


def take_positional_out_and_mode(X, v):
    o = np.zeros(4)
    X.take(IDS + 7, None, o, "clip")
    return np.sum(o * np.arange(1.0, 5.0) * v[0])


def trace_positional_out(X, v):
    o = np.zeros(())
    X.trace(0, 0, 1, None, o)
    return o * v[1]


def clip_into_itself(X, v):
    Y = X * v
    Y.clip(-0.5, 0.5, Y)
    return np.sum(Y * X)


def cumsum_into_itself(X, v):
    Y = X * v
    Y.cumsum(1, None, Y)
    return np.sum(Y * Y * X)


def clip_into_another(X, v):
    Y = X * v
    X.clip(-0.5, 0.5, Y)
    return np.sum(Y * X * X)


# --- other optional parameters NumPy takes by position ------------------------------------------------------------------
def dot_positional_out(X, v):
    o = np.zeros((3, 3))
    X.dot(X.T * v, o)
    return np.sum(o * X)


def clip_positional_out(X, v):
    o = np.zeros((3, 3))
    X.clip(-0.5, v[0], o)
    return np.sum(o * X)


def copyto_positional_where(X, v):
    y = X[0] * 1.0
    np.copyto(y, v, "same_kind", COLS)
    return np.sum(np.sin(y) * X[1])


def put_positional_mode(X, v):
    y = X[0] * 1.0
    y.put([0, 20], [v[1] * 2, 3.0], "clip")
    return np.sum(y * WEIGHTS)


def sum_positional_out_result_used(X, v):
    o = np.zeros(3)
    r = X.sum(1, None, o)  # positional out, result used (lower/calls.py: a call that may update its arguments)
    return np.sum(r * o) + np.sum(v)


def max_positional_out_result_used(X, v):
    o = np.zeros(3)
    return np.sum(X.max(1, o) * WEIGHTS * v)  # positional out, result used


def sum_positional_out_result_discarded(X, v):
    o = np.zeros(3)
    _ = X.sum(1, None, o)
    return np.sum(o * v)


CASES = [sum_positional_out_result_used, max_positional_out_result_used, sum_positional_out_result_discarded,
         add_reduce_columns, add_reduce_mask, sum_method_mask, sum_kept_dims, mean_mask, max_initial_mask,
         max_method_initial, prod_mask, amin_initial_mask, add_reduce_initial, elementwise_where_masks_out,
         sum_positional_out, mean_positional_out, max_positional_out, min_positional_out, prod_positional_out,
         std_positional_out, var_positional_out_and_ddof, cumsum_positional_out, cumprod_positional_out,
         take_positional_out, take_positional_out_and_mode, trace_positional_out, clip_into_itself, cumsum_into_itself,
         clip_into_another, dot_positional_out, clip_positional_out, copyto_positional_where, put_positional_mode]

X0 = np.array([[0.3, -0.7, 1.1], [0.4, 0.9, -0.2], [1.5, -0.4, 0.8]])
V0 = np.array([0.7, -1.3, 0.45])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_and_gradients_against_central_differences(mode, f):
    args = (X0.copy(), V0.copy())
    want = f(X0.copy(), V0.copy())
    value, grads = value_and_gradient(f, *args)
    np.testing.assert_allclose(value, want, rtol=1e-12, err_msg="value")
    for k, got in enumerate(grads):
        expected = central(f, (X0, V0), k)
        np.testing.assert_allclose(np.zeros_like(expected) if got is None else got, expected, rtol=1e-6, atol=1e-6,
                                   err_msg=f"gradient {k}")


# --- refusals ---------------------------------------------------------------------------------------------------------
def clip_into_a_view_of_itself(X):
    Y = X * 1.0
    Y.clip(-0.5, 0.5, Y[::1])  # positional out, a view of the object
    return np.sum(Y)


@pytest.mark.parametrize("f, what", [(clip_into_a_view_of_itself, "clip")], ids=lambda v: getattr(v, "__name__", v))
def test_an_out_array_given_by_position_that_cannot_be_followed_is_refused(mode, f, what):
    line = line_of(f, "positional out")
    with pytest.raises(ZygoteError, match=rf"test_numpy_positional_args\.py:{line}: .*{what}.*pass it as out="):
        gradient(f, X0.copy())


def sum_positional_out_squashed(X):
    o = np.zeros(3)
    X.sum(1, None, o)
    return np.sum(np.sin(o) * WEIGHTS)


def test_a_hessian_through_an_out_given_by_position_is_refused_as_out_is(mode):
    """Forward mode cannot keep a tangent in an array made from constants: refused as `out=o` is (it was all zeros)."""
    with pytest.raises(ForwardModeError, match="plain array made from constants"):
        hessian(sum_positional_out_squashed, X0.copy())

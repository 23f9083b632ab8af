"""An ndarray method given an out array through its bound method, kept in a name or handed to another function
(`s = X.sum; s(1, None, o)`, `s(1, out=o)`, `m = X.max; r = m(1, o)`): the lowering follows the write into `o` only on a
call written on its array, so these are refused, naming the line (they gave a gradient of None, or a wrong one, or a
crash inside NumPy's unpacking). The same methods through a name without `out`, and with `out` written on the array,
still differentiate: checked against central differences in float64, in both optimisation settings."""
import numpy as np
import pytest
from plain_checks import central, line_of

from zygotepy import ZygoteError, value_and_gradient

X0 = np.array([[0.3, 0.5, 0.7], [0.25, 0.45, 0.65]])


def sum_out_by_position(X):
    o = np.zeros(2)
    s = X.sum
    s(1, None, o)  # refused
    return np.sum(o * o)


def sum_out_by_keyword(X):
    o = np.zeros(2)
    s = X.sum
    s(1, out=o)  # refused
    return np.sum(o * o)


def max_out_result_used(X):
    o = np.zeros(2)
    m = X.max
    r = m(1, o)  # refused
    return np.sum(o * o) + r.sum()


def clip_out_by_position(X):
    o = np.zeros((2, 3))
    c = X.clip
    c(0.2, 0.8, o)  # refused
    return np.sum(o * o)


def cumsum_handed_to_a_helper(X):
    o = np.zeros((2, 3))

    def run(method, *args):
        return method(*args)  # refused: the call is made here
    run(X.cumsum, 1, None, o)
    return np.sum(o * o)


@pytest.mark.parametrize("f", [sum_out_by_position, sum_out_by_keyword, max_out_result_used, clip_out_by_position,
                               cumsum_handed_to_a_helper], ids=lambda f: f.__name__)
def test_an_out_given_through_a_bound_method_is_refused_naming_the_line(mode, f):
    line = line_of(f, "refused")
    with pytest.raises(ZygoteError, match=rf"test_bound_method_out\.py:{line}: .*out array through its bound method"):
        value_and_gradient(f, X0.copy())


def sum_through_a_name(X):
    s = X.sum
    return np.sum(s(1) ** 2)


def max_through_a_name_out_none(X):
    m = X.max
    return np.sum(m(1, None) ** 2)


def methods_mapped(X):
    return sum(np.sum(r ** 2) for r in map(np.sin, X))


def sum_out_on_its_array(X):
    o = np.zeros(2)
    X.sum(1, out=o)
    return np.sum(o * o)


def sum_out_by_position_on_its_array(X):
    o = np.zeros(2)
    X.sum(1, None, o)
    return np.sum(o * o)


@pytest.mark.parametrize("f", [sum_through_a_name, max_through_a_name_out_none, methods_mapped, sum_out_on_its_array,
                               sum_out_by_position_on_its_array], ids=lambda f: f.__name__)
def test_bound_methods_without_a_hidden_out_agree_with_central_differences(mode, f):
    value, (grad,) = value_and_gradient(f, X0.copy())
    np.testing.assert_allclose(value, f(X0.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, central(f, (X0,), 0), rtol=1e-6, atol=1e-7)

"""Forward mode's arguments (zygotepy/forward/dual.py `_split`): a list or tuple holding dual numbers among constants
reaches the tangent rules as the array NumPy makes of it, with zero tangents for the constants (the rules computed
with the list and None: TypeErrors, and for `np.linalg.inv` of a nested list a corrupted heap in NumPy)."""
import math

import numpy as np
import pytest

from zygotepy import ForwardModeError, derivative, gradient, hessian, jacobian, jvp


def _central_jacobian(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


@pytest.mark.parametrize("f", [
    lambda x: np.linalg.inv([[x[0], 1.0], [x[1], 2.0]]).ravel(),
    lambda x: np.sort([x[0], x[1], 1.0]),
    lambda x: np.atleast_1d(np.prod([x[0], x[1]])),
    lambda x: np.atleast_1d(np.std([x[0], x[1], 1.0])),
    lambda x: np.atleast_1d(np.median([x[0], x[1], 1.0])),
    lambda x: np.power([x[0], 2.0], 3.0) * x[1],
], ids=["inv", "sort", "prod", "std", "median", "power"])
def test_lists_of_dual_numbers_and_constants(f):
    x = np.array([1.5, -0.2])
    np.testing.assert_allclose(jacobian(f, x, mode="forward")[0], _central_jacobian(f, x), rtol=1e-6, atol=1e-8)


def test_hessian_and_derivative_through_such_lists():
    assert derivative(lambda t: np.max([t, 0.0]), 0.5) == pytest.approx(1.0)
    np.testing.assert_allclose(hessian(lambda x: np.sum(np.linalg.inv([[x[0], 1.0], [0.0, 2.0]])), np.array([1.5])),
                               [[1 / 1.5 ** 3]], rtol=1e-9)  # (sum = 1/(2a) + 1/2)


@pytest.mark.parametrize("f", [
    lambda x: np.power([1.5, 2.0], x),
    lambda x: np.arctan2([1.0, -2.0], x) + np.arctan2(x, [3.0, 4.0]),
    lambda x: np.interp(x, [-1.0, 0.0, 1.0], [0.0, 2.0, 1.0]),
], ids=["power", "arctan2", "interp"])
def test_constant_lists_beside_dual_numbers(f):
    # (the tangent rules computed with the list: `list > int`, `-list`, a list indexed by an array)
    x = np.array([0.3, -0.6])
    np.testing.assert_allclose(jacobian(f, x, mode="forward")[0], _central_jacobian(f, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian(lambda v: np.sum(f(v) ** 2), x),
                               _central_jacobian(lambda v: jacobian(lambda w: np.sum(f(w) ** 2), v,
                                                                    mode="forward")[0], x), rtol=1e-5, atol=1e-6)


# --- a ufunc given its output array -----------------------------------------------------------------------------------

def _into_given(x):
    y = x * 1.0  # (made from the input: it holds a tangent)
    np.multiply(x, x, y)
    return y * 2.0


def _into_given_by_keyword(x):
    y = x * 1.0
    np.multiply(x, np.sin(x), out=y)
    return y


def _into_zeros(x):
    y = np.zeros(2)
    np.multiply(x, x, y)
    return y


@pytest.mark.parametrize("f, want", [
    (_into_given, lambda x: 4.0 * x),
    (_into_given_by_keyword, lambda x: np.sin(x) + x * np.cos(x)),
], ids=["positional", "keyword"])
def test_a_ufunc_writes_primal_and_tangent_into_its_output_array(f, want):
    """`np.multiply(x, x, y)` took `y` as a third operand: primal x, tangent 1 (both wrong); `out=y` was refused as
    a keyword carrying a derivative, with advice to pass it positionally."""
    from zygotepy import forwarddiff, gradient, jvp
    x = np.array([1.5, -2.0])
    y, t = jvp(f, (x,), (np.ones(2),))
    np.testing.assert_allclose(y, f(x.copy()))
    np.testing.assert_allclose(t, want(x))
    np.testing.assert_allclose(gradient(lambda v: np.sum(forwarddiff(f, v)), x)[0], want(x))


def test_a_ufunc_output_array_made_from_constants_is_refused():
    from zygotepy import jvp
    with pytest.raises(ForwardModeError, match="plain array made from constants.*output array of multiply"):
        jvp(_into_zeros, (np.array([1.5, 2.0]),), (np.ones(2),))


def test_the_array_methods_of_a_dual_number():
    """`x.prod()`, `x.std()`, `x.argmax()`, `x.take(...)` and others raised AttributeError on a dual number (jvp,
    derivative, a forward jacobian), where gradient took them: each is its NumPy function now."""
    x = np.array([[0.3, 1.2, -0.7], [1.5, 0.4, 2.0]])
    cases = [lambda v: v.prod(axis=0), lambda v: v.std(axis=1), lambda v: v.var(), lambda v: v.round(2) * v,
             lambda v: v.ravel()[v.argmax()] * v.sum(), lambda v: v.take([0, 2], axis=1), lambda v: v.cumprod(axis=1),
             lambda v: v * v.any() + v.min(axis=0, keepdims=True)]
    for f in cases:
        np.testing.assert_allclose(jacobian(f, x, mode="forward")[0], jacobian(f, x, mode="reverse")[0], atol=1e-12)


def _viewed_then_summed(x):
    y = x * 2.0
    z = y.view()
    return np.sum(z * x)


def test_an_ndarray_attribute_without_a_rule_is_a_forward_mode_error():
    """`.view`, `.base`, `.flags` of a dual number were a bare AttributeError; now a ForwardModeError that is also an
    AttributeError, so `hasattr` and `getattr(x, name, default)` still answer as for a missing attribute. (`.fill` and
    `.put` have their own: forward/in_place.py.)"""
    import zygotepy
    from zygotepy.errors import ForwardModeError
    from zygotepy.forward.dual import Dual
    with pytest.raises(ForwardModeError, match="no `.view`"):
        zygotepy.jvp(_viewed_then_summed, (np.ones(3),), (np.ones(3),))
    d = Dual(1, np.ones(2), np.zeros(2))
    assert not hasattr(d, "base") and getattr(d, "flags", None) is None
    with pytest.raises(AttributeError):
        d.no_such_attribute


def _truncated_power_sum(t):
    return sum(t ** k for k in range(math.trunc(t * 3))) + math.floor(t) * t + math.ceil(t) * t


def _branch_on_is_integer(t):
    return t ** 3 if not t.is_integer() else t


def test_a_float_s_integer_part_and_questions_are_data():
    """`math.trunc/floor/ceil` of a dual number (a TypeError: no __trunc__) and `t.is_integer()` (an AttributeError):
    piecewise constant, so the primal's."""
    t = 1.13
    assert hessian(_truncated_power_sum, t) == pytest.approx(2.0)
    assert derivative(_truncated_power_sum, t) == pytest.approx(1 + 2 * t + 1 + 2)
    assert derivative(_branch_on_is_integer, t) == pytest.approx(3 * t * t)
    assert hessian(_branch_on_is_integer, t) == pytest.approx(6 * t)


def _shifted_then_doubled(x):
    z = x + 1.0
    z *= 2.0
    return x * 1.0 + z


def _kept_before_update(x):
    y = x * 1.0
    z = y - 0.5
    y *= 3.0
    return z + y


def _relu_in_place(x):
    z = x + np.array([-1.0, 0.5, -2.0])
    z[z < 0] = 0.0
    return np.concatenate([z ** 2, x ** 3])


def _flattened(x):
    m = np.reshape(x * 1.0, (1, 3))
    v = m.flatten()
    m[0, 0] = 0.0
    return v ** 2 + m.ravel()


def _swapped_slices(x):
    y = x.copy()
    y[::2], y[1::2] = y[1::2] * 2, y[::2] + 1
    return y


@pytest.mark.parametrize("f", [_shifted_then_doubled, _kept_before_update, _relu_in_place, _flattened],
                         ids=lambda f: f.__name__)
def test_a_tangent_is_never_shared_by_a_new_array(mode, f):
    """`x + 1.0`'s tangent was `x`'s own array (and `.flatten()` a view): an update in place of either changed the
    other's derivative (jacobian diag 4 for 3, Hessians of a ReLU layer 0 for 3). Against central differences."""
    x = np.array([0.7, 1.1, 1.6])
    want = _central_jacobian(f, x)
    np.testing.assert_allclose(jacobian(f, x.copy(), mode="forward")[0], want, atol=1e-6)
    np.testing.assert_allclose(f(x.copy()), f(x.copy()))


def test_a_tangent_shared_by_a_view_follows_its_update():
    """A view's tangent stays a view (its update reaches its array's derivative), as its primal does."""
    def f(x):
        y = x * 2.0
        v = y[1:]
        v *= 3.0
        return y
    x = np.array([0.7, 1.1, 1.6])
    np.testing.assert_allclose(jacobian(f, x, mode="forward")[0], np.diag([2.0, 6.0, 6.0]))
    np.testing.assert_allclose(jacobian(_swapped_slices, np.arange(1.0, 5.0), mode="forward")[0],
                               _central_jacobian(_swapped_slices, np.arange(1.0, 5.0)), atol=1e-6)


def test_an_output_array_of_clip_and_a_shape_assignment_are_refused():
    """`np.clip(z, a, b, z)` (ValueError from the rule) and `z.shape = ...` (AttributeError) crashed forward mode."""
    def clipped(x):
        z = x * 1.0
        np.clip(z, -0.5, 0.5, z)
        return z * x

    def reshaped(x):
        z = x * 1.0
        z.shape = (2, 2)
        return z
    x = np.array([0.3, -0.9, 1.2, 0.1])
    with pytest.raises(ForwardModeError, match="np.clip"):
        jacobian(clipped, x, mode="forward")
    with pytest.raises(ForwardModeError, match="x.shape"):
        jacobian(reshaped, x, mode="forward")


class _Param:
    """A wrapper whose reflected operators are its own code: `x * p` is `p.__rmul__(x)` (NumPy's too)."""
    __array_ufunc__ = None

    def __init__(self, v):
        self.v = v

    def __rmul__(self, s):
        return s * self.v

    def __radd__(self, s):
        return s + self.v * self.v

    def __rmatmul__(self, s):
        return s @ self.v @ s

    def __truediv__(self, s):
        return _Param(self.v / s)


def _times_a_wrapper(x):
    return x * _Param(x)


def _plus_a_wrapper(x):
    y = x * 1.0
    y += _Param(x * 3.0)
    return y


def _quadratic_form(x):
    return x[0] * (x @ _Param(np.array([[2.0, 0.5], [0.5, 1.0]])))


def _operator_function_of_a_wrapper(x):
    import operator
    return operator.truediv(_Param(x[0] * x[1]), x[1] ** 2).v + x[0]


@pytest.mark.parametrize("f, x", [(_times_a_wrapper, 0.7), (_plus_a_wrapper, -0.4),
                                  (_quadratic_form, np.array([0.3, -0.8])),
                                  (_operator_function_of_a_wrapper, np.array([0.6, 1.3]))],
                         ids=["rmul", "radd in place", "rmatmul", "operator.truediv"])
def test_a_dual_number_beside_a_user_class_runs_its_operator(f, x):
    """The dual's own `__mul__` took the object for a constant: a plain float (1.0 for 2.4) or a leaked dual number came
    back, vᵀAv for xᵀAx's derivative; `operator.truediv(obj, x)` raised TypeError."""
    v = np.linspace(0.5, -1.0, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.9
    h = 1e-6
    want = (f(x + h * v) - f(x - h * v)) / (2 * h)
    value, got = jvp(f, (x,), (v,))
    assert value == pytest.approx(f(x))
    assert got == pytest.approx(want, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("f", [lambda x: x.clip(min=-0.3), lambda x: np.clip(x, min=-0.3, max=0.5),
                               lambda x: np.clip(x, None, a_max=0.5), lambda x: np.clip(x, -0.3, a_max=0.5),
                               lambda x: np.clip(x, None, 0.5)],
                         ids=["method min=", "min= max=", "a_max=", "a_min by position, a_max=", "None"])
def test_clip_bounds_given_by_keyword(f):
    """NumPy 2.1's `min=`/`max=` were not read (every entry took the tangent: [1, 1, 1, 1, 1]), and a positional
    lower bound with `a_max=` took `a_min` for the upper one."""
    x = np.array([0.9, -0.1, -0.7, 0.2, 1.3])
    np.testing.assert_allclose(jacobian(f, x, mode="forward")[0], _central_jacobian(f, x), atol=1e-8)


@pytest.mark.parametrize("f", [lambda x: np.ravel(np.asfortranarray(x.reshape(2, 3)), order="K"),
                               lambda x: x.reshape(2, 3).T.ravel("K"),
                               lambda x: np.reshape(np.asfortranarray(np.sin(x.reshape(2, 3))), -1, order="A"),
                               lambda x: x.reshape(2, 3).flatten("F") * 2.0,
                               lambda x: x.reshape(2, 3).copy(order="F").ravel()],
                         ids=["ravel K, Fortran", "ravel K, transposed", "reshape A", "flatten F", "copy F"])
def test_orders_that_follow_memory(f):
    """The tangent was read in its own (C) layout where the value was read in the argument's memory order, and
    `x.flatten("F")` on a dual array raised TypeError."""
    x = np.array([0.5, -1.0, 2.0, 1.5, 0.3, -0.7])
    np.testing.assert_allclose(jacobian(f, x, mode="forward")[0], _central_jacobian(f, x), atol=1e-8)


def _clipped_in_place(x):
    h = x * 2.0
    np.clip(h, -0.5, 0.5, out=h)  # (out= is where the result goes, not an argument carrying a tangent)
    np.cumsum(h, out=h)
    return np.sum(h ** 2)


def test_out_keyword_of_a_dual_array_takes_the_result():
    """`out=` naming an array that carries a tangent was refused as "a keyword argument carries a derivative"."""
    x, t = np.array([0.1, 0.2, 0.9]), np.array([1.0, -0.5, 2.0])
    _, got = jvp(_clipped_in_place, (x,), (t,))
    assert np.isclose(got, np.dot(gradient(_clipped_in_place, x)[0], t))

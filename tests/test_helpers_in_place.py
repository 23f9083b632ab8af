"""Helpers that update their arguments in place, ints in float roles, and the links between objects that updates in
place follow (lower_mutation, adjoints/mutation*.py), each checked against central finite differences in float64.

Every function here gave a silently wrong gradient or a false refusal before: the comment above each says which.
"""
import numpy as np
import pytest

from zygotepy import gradient, hessian, pullback
from zygotepy.testing import check_grads


def central(f, args, k, h=1e-6):
    """d f / d args[k] by central differences, the argument taken as a float (or float array) whatever its type."""
    x = np.asarray(args[k], dtype=float)
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = h
        up, down = list(args), list(args)
        up[k], down[k] = (x + e, x - e) if x.shape else (float(x + e), float(x - e))
        out[i] = (f(*[a.copy() if isinstance(a, np.ndarray) else a for a in up])
                  - f(*[a.copy() if isinstance(a, np.ndarray) else a for a in down])) / (2 * h)
    return out if x.shape else float(out)


# --- an int written into a float array is a real number there (it was data: d/da None, or the augmented part) -----

def int_stored_through_alias(v, a):
    y = v.copy()
    z = y
    z[0] = a
    return np.mean(z)


def int_stored_then_augmented(u, b):
    z = u ** 2
    z[0] = b
    z[2] += b * u[2]
    return np.mean(z)


def int_stored_into_list_then_array(v, a):
    y = np.zeros(3)
    y[1] = a
    y[2] = a * v[0]
    return np.sum(y * v)


def int_used_as_index_and_value(v, n):
    y = v.copy()
    y[n] = n  # an index and a value: the gradient is the value's part
    return np.sum(y ** 2)


INT_ROWS = [
    (int_stored_through_alias, (np.array([1.0, 2.0, 3.0]), 1)),
    (int_stored_then_augmented, (np.array([0.5, -1.0, 2.0]), 2)),
    (int_stored_into_list_then_array, (np.array([0.5, -1.0, 2.0]), 3)),
]


@pytest.mark.parametrize("fn, args", INT_ROWS, ids=[r[0].__name__ for r in INT_ROWS])
def test_an_int_stored_into_a_float_array_gets_its_gradient(fn, args):
    grads = gradient(fn, *args)
    for k, g in enumerate(grads):
        assert g is not None, f"argument {k} got no gradient"
        np.testing.assert_allclose(g, central(fn, args, k), rtol=1e-6, atol=1e-8)


def test_an_int_used_as_index_and_value_gets_the_value_part():
    v, n = np.array([0.5, -1.0, 2.0]), 1
    dv, dn = gradient(int_used_as_index_and_value, v, n)
    assert dn == pytest.approx(2.0 * n)
    np.testing.assert_allclose(dv, [1.0, 0.0, 4.0])


def test_an_int_stored_into_an_int_array_is_data():
    def f(v, a):
        idx = np.zeros(2, dtype=int)
        idx[0] = a
        return v[idx[0]] * 2.0
    assert gradient(f, np.array([1.0, 2.0]), 1)[1] is None


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


# --- helpers that rebind a float parameter with *=: equal floats are one object by chance -------------------------

def g1(p1, p2):
    p1 *= 1.0
    return p2


def g3(p1, p2, p3):
    t4, t5 = (g1(p3, p3), g1(p3, g1(g1(p2, p3), p1)))
    t4 -= 0.5
    return p1


def rebinding_helpers(a, n):
    L = [a for j in range(3)]
    t12 = g3(L[n], g3(a, 2.0, g1(g3(a, L[n], a), a)), a)
    return t12 + sum(L)


def c3(p1, p2, p3):
    t4 = p3
    t4 -= 0.5
    return p1


def alias_rebound_in_helper(a):
    return c3(a, 2.0, a) + 3 * a


@pytest.mark.parametrize("fn, args, expected", [(rebinding_helpers, (-0.9019, 2), 4.0),
                                                (alias_rebound_in_helper, (0.3,), 4.0)])
def test_helpers_rebinding_float_parameters(fn, args, expected):
    y, back = pullback(fn, *args)
    first = back(1.0)
    assert first[0] == pytest.approx(expected, rel=1e-12)
    assert back(1.0) == first  # a second backward pass gives the same
    assert first[0] == pytest.approx(central(fn, args, 0), rel=1e-6)


# --- refusals that were false: nothing updated an argument --------------------------------------------------------

def pool(inputs):
    new_shape = inputs.shape[:1]
    for i in [1]:
        new_shape += (inputs.shape[i],)  # a tuple: never in place
    return inputs * 1.0


def predictions(inputs):
    cur = inputs
    for k in range(1):
        cur = pool(cur)
    return cur


def walk(value):
    items = []
    for item in value:
        sub = walk(item) if type(item) is tuple else 0
        items.append(sub)
    return items


def test_a_tuple_grown_by_plus_equals_is_not_an_update_of_its_source():
    X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    g = gradient(lambda X: np.sum(predictions(X) ** 2), X)[0]
    np.testing.assert_allclose(g, 2 * X)


def test_a_recursive_walker_appending_to_its_own_list():
    p = [(np.array([0.5, -1.5]),)]
    g = gradient(lambda p: (walk(p), np.sum(p[0][0] ** 2))[1], p)[0]
    np.testing.assert_allclose(g[0][0], 2 * p[0][0])


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


# --- a loop's `x *= v` on an object a view is linked to: the view is carried through the loop -------------------------

def view_then_scaled_in_loop(x):
    y2 = x[::2]
    for i3 in range(2):
        x *= 0.5  # (the view kept its version from before the loop: a gradient 4x too large)
    return np.sum(y2 ** 2)


def copy_view_then_scaled_in_loop(x):
    x = x * 1.0
    y2 = x[::2]
    for i3 in range(2):
        x *= 0.5
    return np.prod(0.9 + 0.1 * y2)


def view_scaled_in_loop(x):
    y2 = x[::2]
    for i3 in range(2):
        y2 *= 0.5  # (the parent kept its version from before the loop)
    return np.sum(x ** 2)


def view_scaled_in_while_loop(x):
    y = x * 1.0
    v = y[1:]
    k = 0
    while k < 3:
        k += 1
        v += 0.1 * np.sin(y[0])
    return np.sum(y ** 3)


def alias_of_view_stale_after_loop(x):
    y1 = x[1:]
    z2 = y1  # (carried by the loop as a second variable, which the refresh after x[3] = 0.5 missed)
    for i in range(2):
        x[3] = 0.5
    z2[0] = 0.5
    return x @ x


LOOP_ROWS = [alias_of_view_stale_after_loop, view_then_scaled_in_loop, copy_view_then_scaled_in_loop, view_scaled_in_loop, view_scaled_in_while_loop]


@pytest.mark.parametrize("fn", LOOP_ROWS, ids=[f.__name__ for f in LOOP_ROWS])
def test_a_view_and_its_array_updated_in_a_loop(fn):
    x = np.array([0.3, -0.2, 0.5, 0.7, -0.4])
    np.testing.assert_allclose(gradient(fn, x.copy())[0], central(fn, (x,), 0), rtol=1e-6, atol=1e-9)
    check_grads(fn, x.copy(), rtol=1e-6, atol=1e-9)


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
    with pytest.raises(ZygoteError, match=r"test_helpers_in_place.py:\d+: .*_scale_all.*'arr'.*shares"):
        gradient(_view_passed_beside_its_base, x.copy())

    def copied(x):
        _scale_all(x, x[4:5].copy())
        return (x @ x) * 0.1
    expected = 0.05 * x
    expected[0] = 0.0
    assert np.allclose(gradient(copied, x.copy())[0], expected, rtol=1e-12)


def test_names_a_maybe_in_place_update_split_apart_are_not_refreshed_together():
    # on JAX `z2 *= 0.5` makes a new array and `x` keeps the old one; a later update of what may hold `x` (f5, made
    # from z2) refreshed x and gave its version to z2 too: the returned sum lost the factor 0.5
    jnp = pytest.importorskip("jax.numpy")
    import jax
    jax.config.update("jax_enable_x64", True)

    class Box:
        def __init__(self, v):
            self.v = v

    def program(x, b):
        B1 = Box(b)
        z2 = x
        z2 *= 0.5
        f5 = 0.1 * jnp.tanh(z2) + B1.v
        B1.v = b
        return jnp.sum(z2)
    g = gradient(program, jnp.asarray([0.3, 0.6, -0.4]), 0.2)[0]
    assert np.allclose(np.asarray(g), 0.5, rtol=1e-12)

"""jacobian (both modes), hessian (forward-over-reverse) and forwarddiff (mixed mode).

Jacobians are checked against central finite differences of `f`, Hessians against central finite differences of
`zygotepy.gradient` and against closed forms, forwarddiff against plain reverse mode and finite differences.
"""
import copy
import dataclasses
import math
import os
import sys

import numpy as np
import pytest

import zygotepy
import zygotepy.testing
from zygotepy import ZygoteError, forwarddiff, gradient, hessian, jacobian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import central  # noqa: E402

RNG = np.random.default_rng(11)


def _arr(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape)


def numerical_jacobian(f, args, i, eps=1e-6):
    """d f / d args[i] by central differences, shape y.shape + x.shape."""
    x = np.asarray(args[i], dtype=float)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.shape)
        e.flat[k] = eps
        moved = [list(args), list(args)]
        moved[0][i] = x + e if x.shape else float(x + e)
        moved[1][i] = x - e if x.shape else float(x - e)
        cols.append((np.asarray(f(*moved[0]), float) - np.asarray(f(*moved[1]), float)) / (2 * eps))
    y_shape = np.shape(cols[0])
    return np.stack(cols, axis=-1).reshape(y_shape + x.shape)


def numerical_hessian(f, x, eps=1e-5):
    """Central differences of the reverse-mode gradient."""
    return numerical_jacobian(lambda x: np.asarray(gradient(f, x)[0], float), (x,), 0, eps)


def poly_loop(x, n=3):
    acc = x
    for _ in range(n):
        acc = acc * x - np.sin(acc)
    return acc


def piecewise(x):
    if np.sum(x) > 0:
        return np.exp(x[::-1]) * x[0]
    return x ** 2


A = _arr(3, 3)
JACOBIAN_CASES = [
    ("elementwise", lambda x: np.sin(x) * x ** 2, (_arr(4),)),
    ("wide_to_scalar", lambda x: np.sum(np.tanh(x)) * x[0], (_arr(5),)),
    ("scalar_to_wide", lambda t: np.array([math.sin(t), math.cos(t), t ** 3, math.exp(t)]), (0.4,)),
    ("matrix_in", lambda m: m @ np.arange(3.0) + np.sum(m ** 2, axis=0), (_arr(3, 3),)),
    ("matrix_out", lambda x: np.outer(x, np.sin(x)), (_arr(3),)),
    ("two_args", lambda x, y: A @ x * y + np.sum(y), (_arr(3), _arr(3))),
    ("scalar_and_array", lambda s, x: s * np.exp(x) + s ** 2, (0.7, _arr(3))),
    ("loop", poly_loop, (_arr(3),)),
    ("branch", piecewise, (np.abs(_arr(3)),)),
    ("softmax", lambda x: np.exp(x) / np.sum(np.exp(x)), (_arr(4),)),
]


@pytest.mark.parametrize("mode", [None, "forward", "reverse"])
@pytest.mark.parametrize("name,f,args", JACOBIAN_CASES, ids=[c[0] for c in JACOBIAN_CASES])
def test_jacobian_matches_finite_differences(name, f, args, mode):
    jacs = jacobian(f, *args, mode=mode)
    assert len(jacs) == len(args)
    y = f(*args)
    for i, (a, jac) in enumerate(zip(args, jacs, strict=True)):
        assert jac.shape == np.shape(y) + np.shape(a), (name, i)
        np.testing.assert_allclose(jac, numerical_jacobian(f, args, i), rtol=1e-6, atol=1e-7, err_msg=name)


def test_jacobian_modes_agree_exactly_enough():
    x = _arr(6)
    fwd, = jacobian(lambda x: np.sin(x) * x[2] + x[::-1] ** 2, x, mode="forward")
    rev, = jacobian(lambda x: np.sin(x) * x[2] + x[::-1] ** 2, x, mode="reverse")
    np.testing.assert_allclose(fwd, rev, rtol=1e-13, atol=1e-15)


def test_jacobian_data_arguments_get_none():
    jac_x, jac_n = jacobian(lambda x, n: x ** n, np.array([1.0, 2.0]), 3)
    assert jac_n is None
    np.testing.assert_allclose(jac_x, np.diag([3.0, 12.0]))


def test_jacobian_errors():
    with pytest.raises(ZygoteError, match="mode"):
        jacobian(np.sin, _arr(2), mode="sideways")
    with pytest.raises(ZygoteError, match="real"):
        jacobian(lambda x: (x, "label"), _arr(2))


def test_jacobian_of_a_tuple_result_follows_its_structure():
    x = _arr(2)
    J = jacobian(lambda x: (x, np.sin(x)), x)  # one tuple of per-argument Jacobians at each leaf of the result
    np.testing.assert_allclose(J[0][0], np.eye(2))
    np.testing.assert_allclose(J[1][0], np.diag(np.cos(x)))
    with pytest.raises(ZygoteError, match="real"):
        jacobian(np.sin, _arr(2) + 1j)


B = _arr(4, 4)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def scalar_math(x):
    return math.sin(x) * math.exp(x / 2) + math.log(x + 2.0) + float(x) ** 3


def with_helper(x):
    total = 0.0
    for k in range(x.shape[0]):
        total = total + poly_loop(x[k], 2)
    return total


def stacked_rows_unpacked(x):
    """The rows of an array stacked from values carrying a gradient, unpacked: in hessian's reverse pass the rows'
    cotangents are dual numbers, which the unpacking's back stacks as they are."""
    a, b = np.stack([x * 2.0, x ** 2])
    return np.sum(a * b)


def stacked_rows_one_unused(x):
    a, b, c = np.stack([x * 2.0, x ** 2, np.sin(x)])  # (b gets no cotangent: a zero row among dual ones)
    return np.sum(a * c)


def stacked_rows_walked(x):
    t = 0.0
    for r in np.stack([x * 2.0, x ** 2]):
        t = t + np.sum(r * r * x)
    return t


HESSIAN_CASES = [
    ("benchmark_form", lambda x: np.sum(np.sin(x) * x ** 2) + x @ B @ x, _arr(4)),
    ("rosenbrock", rosenbrock, _arr(5)),
    ("matrix_argument", lambda m: np.sum(np.tanh(m @ m)), _arr(2, 2)),
    ("scalar_math", scalar_math, 0.6),
    ("loop_and_helper", with_helper, _arr(3)),
    ("branch", lambda x: np.sum(x ** 3) if x[0] > 0 else np.sum(np.cos(x)), np.abs(_arr(3))),
    ("logsumexp", lambda x: np.log(np.sum(np.exp(x))), _arr(4)),
    ("norm_and_div", lambda x: np.sum(x / (1.0 + x @ x)) + np.max(x) ** 2, _arr(3)),
    ("stacked_rows_unpacked", stacked_rows_unpacked, _arr(3)),
    ("stacked_rows_one_unused", stacked_rows_one_unused, _arr(3)),
    ("stacked_rows_walked", stacked_rows_walked, _arr(2)),
    # NumPy functions with no tangent rule (in f, or in their reverse rules): by reverse-over-reverse
    ("solve", lambda x: np.sum(np.linalg.solve(np.outer(x, x) + np.eye(3), x)), _arr(3)),
    ("cumprod", lambda x: np.sum(np.cumprod(x) * np.cumsum(x[::-1])), _arr(4)),
    ("sort", lambda x: np.sort(x)[0] * np.sort(x)[-1] + np.sum(np.abs(x) ** 1.5), _arr(4)),
    ("inverse_of_a_matrix", lambda m: np.sum(np.linalg.inv(m @ m.T + np.eye(2)) ** 2), _arr(2, 2)),
]


def _log_det(x):
    return np.log(np.linalg.det(np.outer(x, x) + np.eye(3)))


def test_hessian_through_a_determinant():
    """np.linalg.det had no tangent rule: hessian took it by reverse-over-reverse, which with every optimisation off
    failed (det's back routed a call through `mutcall`, which nesting cannot transform a second time). With det's
    tangent rule (forward/linalg_rules.py) it goes forward-over-reverse in both modes."""
    x = _arr(3)
    np.testing.assert_allclose(hessian(_log_det, x), numerical_hessian(_log_det, x), rtol=1e-5, atol=1e-6)


def _numerical_block(f, args, i, j, eps=1e-5):
    """d gradient_i / d args[j] by central differences of the reverse-mode gradient."""
    return numerical_jacobian(lambda *a: np.asarray(gradient(f, *a)[i], float), args, j, eps)


def _scans(x, y):
    return np.sum(np.cumprod(x) * np.cumsum(x)) * np.sum(np.cumprod(y) * y)


def test_hessian_blocks_of_several_arguments_by_reverse_over_reverse():
    """Several plain arguments, through functions with no tangent rule: every block by reverse-over-reverse (a
    ForwardModeError before)."""
    args = (np.array([0.3, -0.6, 0.8]), np.array([0.7, -0.4]))
    H = hessian(_scans, *args)
    for i in range(2):
        for j in range(2):
            assert H[i][j].shape == args[i].shape + args[j].shape
            np.testing.assert_allclose(H[i][j], _numerical_block(_scans, args, i, j), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hessian(_scans, *args, argnums=1), H[1][1], rtol=1e-12, atol=1e-12)


def _nested_list_of_numbers(a, b):
    return np.sum(np.array([[a, b], [b, 2.0]]) ** 2) + np.sum(np.array([[3.0, 1.0], [a * b, 0.5]]))


def test_hessian_through_a_nested_list_made_into_an_array():
    """np.array of a list of rows holding values that carry a gradient and constants (a row of constants too): the
    tangents of the constants are zeros at every depth (a ValueError or a TypeError before). f = a^2 + 2 b^2 + 4 +
    4.5 + a b."""
    assert hessian(_nested_list_of_numbers, 0.5, 0.3) == ((2.0, 1.0), (1.0, 4.0))
    v = np.array([0.5, 0.3])
    np.testing.assert_allclose(hessian(lambda v: _nested_list_of_numbers(v[0], v[1]), v), [[2.0, 1.0], [1.0, 4.0]])


@pytest.mark.parametrize("name,f,x", HESSIAN_CASES, ids=[c[0] for c in HESSIAN_CASES])
def test_hessian_matches_finite_differences_of_the_gradient(name, f, x):
    hess = hessian(f, x)
    assert hess.shape == np.shape(x) + np.shape(x)
    np.testing.assert_allclose(hess, numerical_hessian(f, x), rtol=1e-5, atol=1e-6, err_msg=name)
    flat = hess.reshape(np.size(x), np.size(x))
    np.testing.assert_allclose(flat, flat.T, rtol=1e-9, atol=1e-10, err_msg=name)


def test_hessian_closed_forms():
    x = _arr(4)
    want = np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x)) + B + B.T
    np.testing.assert_allclose(hessian(lambda x: np.sum(np.sin(x) * x ** 2) + x @ B @ x, x), want, rtol=1e-12)
    assert hessian(lambda x: x ** 3, 2.0) == pytest.approx(12.0)
    assert hessian(lambda x: math.sin(x) * x, 2.0) == pytest.approx(2 * math.cos(2.0) - 2 * math.sin(2.0))
    np.testing.assert_allclose(hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 2.0])), [[4.0, 2.0], [2.0, 0.0]])


def test_hessian_of_linear_function_is_zero():
    np.testing.assert_array_equal(hessian(lambda x: np.sum(3.0 * x), _arr(3)), np.zeros((3, 3)))


def test_hessian_through_dot_and_matmul():
    """np.dot's and np.matmul's reverse rules keep array-like arguments (dual numbers) as they are."""
    A = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, -1.0], [0.0, 2.0, 1.0]])
    x = _arr(3)
    np.testing.assert_allclose(hessian(lambda x: np.dot(x, np.matmul(A, x)), x), A + A.T, rtol=1e-12)
    t = np.dot(x, x)
    want = (1 - np.tanh(t) ** 2) * 2 * np.eye(3) - 8 * np.tanh(t) * (1 - np.tanh(t) ** 2) * np.outer(x, x)
    np.testing.assert_allclose(hessian(lambda x: np.tanh(np.dot(x, x)), x), want, rtol=1e-10)


def test_hessian_needs_scalar_output():
    with pytest.raises(ZygoteError, match="scalar"):
        hessian(np.sin, _arr(3))


# --- forwarddiff ----------------------------------------------------------------------------------------------------------
def expensive_inner(x):
    y = x
    for _ in range(4):
        y = np.sin(y) * 1.5 + x
    return y


FORWARDDIFF_CASES = [
    ("scalar", lambda x: forwarddiff(lambda t: t ** 3 + math.sin(t), x) * 2.0, lambda x: (x ** 3 + math.sin(x)) * 2.0,
     (0.8,)),
    ("vector", lambda x: np.sum(forwarddiff(expensive_inner, x) ** 2), lambda x: np.sum(expensive_inner(x) ** 2),
     (_arr(3),)),
    ("vector_to_scalar", lambda x: forwarddiff(lambda v: np.sum(np.exp(v)) * v[0], x) + x[1],
     lambda x: np.sum(np.exp(x)) * x[0] + x[1], (_arr(3),)),
    ("closure_over_constant", lambda x: np.sum(forwarddiff(lambda v: B[:3, :3] @ v, x) ** 2),
     lambda x: np.sum((B[:3, :3] @ x) ** 2), (_arr(3),)),
]


@pytest.mark.parametrize("name,f,plain,args", FORWARDDIFF_CASES, ids=[c[0] for c in FORWARDDIFF_CASES])
def test_forwarddiff_gives_the_reverse_mode_gradient(name, f, plain, args):
    assert np.allclose(f(*args), plain(*args))
    got = gradient(f, *args)[0]
    want = gradient(plain, *args)[0]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)
    zygotepy.testing.check_grads(f, *args)


def test_forwarddiff_uses_forward_mode():
    """The pullback is built from pushforwards: a function with a tangent rule but no reverse rule works inside it."""
    from zygotepy.forward import tangent_rule

    def opaque(v):  # stands for code only forward mode can run
        return np.exp(v)
    tangent_rule(opaque)(lambda fn, p, t, kw: (np.exp(p[0]), np.exp(p[0]) * t[0]))

    @zygotepy.adjoint(opaque)
    def _(v):
        raise AssertionError("reverse mode must not differentiate opaque inside forwarddiff")
    x = _arr(3)
    np.testing.assert_allclose(gradient(lambda x: np.sum(forwarddiff(opaque, x)), x)[0], np.exp(x), rtol=1e-12)


def test_forwarddiff_gives_captured_numbers_and_arrays_their_gradient(mode):
    """A captured value whose gradient is needed was refused ("forwarddiff differentiates with respect to x only"),
    even a closure's constant whose cotangent nobody reads (`lambda t: np.sum(t ** 2) * scale` in a function made by
    a factory). Captured floats and float arrays now get theirs, by more forward-mode passes."""
    def f(x, c, s):
        return np.sum(forwarddiff(lambda v: np.sin(v * c) * s, x) ** 2)
    x, c = _arr(3), _arr(3)
    got = gradient(f, x, c, 1.5)
    for k, want in enumerate((central(f, (x, c, 1.5), 0), central(f, (x, c, 1.5), 1), central(f, (x, c, 1.5), 2))):
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-9)

    def make(scale):
        return lambda x: forwarddiff(lambda t: np.sum(t ** 2) * scale, x)
    np.testing.assert_allclose(gradient(make(3.0), x)[0], 6.0 * x)


@pytest.mark.parametrize("jmode", ["forward", "reverse", None])
def test_derivative_of_a_function_that_takes_a_jacobian_or_hessian(jmode, mode):
    """`derivative`/`jvp` of a function calling `jacobian` or `hessian` (a sensitivity of a curvature) refused: the
    inner derivative converted the outer level's dual numbers to floats. Both the point and a captured value carry
    the outer perturbation here."""
    def of_jacobian(t):
        return np.sum(jacobian(lambda x: np.sin(t * x) ** 2, np.array([t, 2.0 * t, 0.3]), mode=jmode)[0])

    def of_hessian(t):
        return np.sum(hessian(lambda x: np.sum(x ** 3) * t + np.sum(np.sin(x * t)), np.array([t, 1.0, 2.0 * t])))
    for g in (of_jacobian, of_hessian):
        np.testing.assert_allclose(zygotepy.derivative(g, 0.7), central(g, (0.7,), 0), rtol=1e-6)


def test_forwarddiff_refuses_to_drop_the_gradient_of_a_captured_container():
    """f's captured values other than floats and float arrays: when their gradient is needed it raises, never None."""
    def f(x, c):
        pair = [c, c]
        return np.sum(forwarddiff(lambda v: v * pair[0], x) ** 2)
    with pytest.raises(ZygoteError, match="captures values \\(pair\\) whose gradient is needed"):
        gradient(f, _arr(3), 2.0)


# --- updates in place of arrays held in lists: forward-over-reverse must see them as the arrays do ---------------------

def _items_scaled_in_place(v0):
    vs = [v0 * 1.0, v0 * 2.0]
    for v in vs:
        v *= v0
    return sum(np.sum(v ** 2) for v in vs)


def _comprehension_items_updated(v0):
    vs = [v0 * (i + 1) for i in range(2)]
    for v in vs:
        v += np.sin(v0)
    return sum(np.sum(v * v0) for v in vs)


@pytest.mark.parametrize("f", [_items_scaled_in_place, _comprehension_items_updated], ids=lambda f: f.__name__)
def test_hessian_through_list_items_updated_in_place(f):
    """The reverse code runs on forward mode's dual numbers here; `v *= c` on a dual number of an array made a new one
    and left the list unchanged, so the Hessian was another function's (silently wrong)."""
    x = np.array([0.3, 1.2])
    H = hessian(f, x)
    h = 1e-5
    numeric = np.array([(gradient(f, x + h * e)[0] - gradient(f, x - h * e)[0]) / (2 * h) for e in np.eye(2)])
    assert np.allclose(H, numeric, rtol=1e-5, atol=1e-6)


def test_hessian_through_an_array_built_from_scalars():
    # np.array([a, 2 a, 0.5]) in the reverse pass on dual numbers: NumPy cannot hold them, forward mode's rule builds
    # the array (a ForwardModeError until 2026-11-27); f = a^2 + 4 a^2 + 0.25 + b^2 a
    def f(x):
        a, b = x[0], x[1]
        y = np.array([a, 2 * a, 0.5, b * np.sqrt(a)])
        return np.sum(y * y)
    x0 = np.array([1.3, 0.4])
    a, b = x0
    np.testing.assert_allclose(hessian(f, x0), [[10.0, 2 * b], [2 * b, 2 * a]], rtol=1e-12)


def test_float32_inputs_give_float32_jacobians_and_hessians():
    # gradients kept float32; the Jacobians and Hessians came back float64
    import zygotepy as zg
    x32 = np.array([0.3, -1.2, 0.7], dtype=np.float32)
    x64 = x32.astype(np.float64)

    def cube(x):
        return np.sum(x ** 3 * np.sin(x))

    def squash(x):
        return np.tanh(x) * x
    for mode in (None, "forward", "reverse"):
        (j32,), (j64,) = zg.jacobian(squash, x32, mode=mode), zg.jacobian(squash, x64, mode=mode)
        assert j32.dtype == np.float32 and j64.dtype == np.float64
        np.testing.assert_allclose(j32, j64, rtol=1e-5, atol=1e-6)
    h32, h64 = zg.hessian(cube, x32), zg.hessian(cube, x64)
    assert h32.dtype == np.float32 and h64.dtype == np.float64
    np.testing.assert_allclose(h32, h64, rtol=1e-5, atol=1e-6)
    blocks = zg.hessian(lambda x, p: np.sum(x ** 2 * p["w"]), x32, {"w": x32})
    assert blocks[0][1]["w"].dtype == np.float32
    np.testing.assert_allclose(blocks[0][1]["w"], np.diag(2 * x64), rtol=1e-6)


def test_hessian_through_a_full_reduction_with_every_optimisation_off():
    """The reduction rule's back filled its cotangent with np.full, which cannot hold forward mode's dual numbers
    (`numpy.copyto` has no tangent rule): with the optimisations on, the array path's template took it instead."""
    import zygotepy

    def f(w, b):
        return np.sum(w ** 2) * b
    w = np.array([1.0, 2.0])
    on = hessian(f, w, 3.0)
    with zygotepy.optimizations(False):
        off = hessian(f, w, 3.0)
    np.testing.assert_allclose(off[0][0], [[6.0, 0.0], [0.0, 6.0]])
    np.testing.assert_allclose(off[0][1], 2 * w)
    for a, b in zip(on, off):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y)


# --- several passes of a function that updates its argument in place ------------------------------------------------
def _updates_its_argument(x):
    x[1] = x[1] * x[0]
    return np.sum(x ** 2)


def _updates_its_argument_twice(x):
    x[1] = x[1] * x[0]
    x[2] = x[2] * x[1]
    return x * 1.0


def test_hessian_passes_each_start_from_the_input():
    """One pass per entry of x: each pass must see x as given, not as the pass before left it (the second column was
    48 where 24 is exact); x ends as one call of f leaves it, as with gradient."""
    x = np.array([2.0, 3.0])
    H = hessian(_updates_its_argument, x)
    assert np.allclose(H, [[20.0, 24.0], [24.0, 8.0]])
    assert np.allclose(x, [2.0, 6.0])


def test_forward_jacobian_passes_each_start_from_the_input():
    x = np.array([2.0, 3.0, 5.0])
    (J,) = jacobian(_updates_its_argument_twice, x, mode="forward")
    assert np.allclose(J, [[1.0, 0.0, 0.0], [3.0, 2.0, 0.0], [15.0, 10.0, 6.0]])
    assert np.allclose(x, [2.0, 6.0, 30.0])


def test_hessian_of_a_tree_argument_updated_in_place():
    def f(p):
        p["w"][1] = p["w"][1] * p["w"][0] * 1.5
        return np.sum(p["w"] ** 2) * 1.5
    p = {"w": np.array([2.0, 3.0])}
    H = hessian(f, p)
    assert np.allclose(H["w"]["w"], [[63.75, 81.0], [81.0, 27.0]])
    assert np.allclose(p["w"], [2.0, 9.0])


def test_a_pushforward_called_twice_starts_from_the_input_each_time():
    def h(x):
        x[0] = x[0] * x[1]
        return x * 2.0
    x = np.array([1.0, 2.0])
    push = zygotepy.pushforward(h, x)
    assert np.allclose(push(np.array([1.0, 0.0])), [4.0, 0.0])
    assert np.allclose(push(np.array([0.0, 1.0])), [2.0, 2.0])


# --- hessian runs the reverse program on dual numbers: type tests and methods see the numbers they carry ------------
def _branches_on_its_type(t):
    return t ** 3 if isinstance(t, float) else t ** 2


def _branches_on_an_array(x):
    if isinstance(x, np.ndarray) and type(x) is np.ndarray:
        return np.sum(x ** 3)
    return 0.0


def test_hessian_through_isinstance_and_type():
    """`isinstance(t, float)` was False for the dual number, so hessian took the other branch (2.0 for 12.0, and a
    zero Hessian for the array test)."""
    assert hessian(_branches_on_its_type, 2.0) == pytest.approx(12.0)
    x = np.array([1.0, 2.0])
    assert np.allclose(hessian(_branches_on_an_array, x), np.diag(6 * x))


@pytest.mark.parametrize("f, expected", [
    (lambda x: np.sum(x.astype(float) ** 3), lambda x: np.diag(6 * x)),  # (a dual's method: the array method's rule)
    (lambda x: np.trapezoid(x ** 3), lambda x: np.diag(6 * x * [0.5, 1.0, 0.5])),  # (a NumPy scalar's .reshape)
], ids=["astype", "trapezoid"])
def test_hessians_that_were_refused(f, expected):
    x = np.array([0.3, 0.7, 1.2])
    assert np.allclose(hessian(f, x), expected(x))


def test_hessian_with_a_tuple_argnums_of_one_argument_gives_the_blocks():
    x = np.array([1.0, 2.0])
    H = hessian(lambda x: np.sum(x ** 3), x, argnums=(0,))
    assert type(H) is tuple and len(H) == 1 and len(H[0]) == 1
    assert np.allclose(H[0][0], [[6.0, 0.0], [0.0, 12.0]])
    assert np.allclose(hessian(lambda x: np.sum(x ** 3), x, argnums=0), [[6.0, 0.0], [0.0, 12.0]])


def test_jacobian_picking_forward_mode_after_its_pullback_starts_from_the_input():
    """With fewer inputs than outputs, jacobian runs the pullback once, then forward mode: its passes must see the
    input as it was before the pullback's call updated it (the second row was [6, 2] for [3, 2])."""
    def g(x):
        x[1] = x[1] * x[0]
        return np.concatenate([x, x * x])
    x = np.array([2.0, 3.0])
    (J,) = jacobian(g, x)
    assert np.allclose(J, [[1.0, 0.0], [3.0, 2.0], [4.0, 0.0], [36.0, 24.0]])
    assert np.allclose(x, [2.0, 6.0])


@dataclasses.dataclass
class _Pair:
    a: float
    b: float = 1.0


_COPIES = {
    "deepcopy_list": lambda x: copy.deepcopy([x, 2.0])[0] ** 3,
    "deepcopy_dict": lambda x: copy.deepcopy({"a": x, "b": (x, 1.0)})["b"][0] ** 3,
    "asdict": lambda x: dataclasses.asdict(_Pair(x))["a"] ** 3,
    "astuple": lambda x: dataclasses.astuple(_Pair(x, x))[1] ** 3,
    "copy": lambda x: copy.copy(x) ** 3,
}


@pytest.mark.parametrize("name", _COPIES)
def test_hessian_through_copies(name):
    # (a dual number could not be copied: refused as "copy.deepcopy of a Dual")
    assert hessian(_COPIES[name], 1.3) == pytest.approx(6 * 1.3)


def test_hessian_through_a_copy_of_an_array():
    np.testing.assert_allclose(hessian(lambda x: np.sum(copy.copy(x) ** 3), np.array([1.0, 2.0])),
                               np.diag([6.0, 12.0]))


def test_hessian_of_a_function_calling_pullback_on_an_array():
    # (AttributeError: a dual array had no `nbytes`, which an elementwise rule's back reads)
    def f(x):
        _, back = zygotepy.pullback(np.sin, x)
        return np.sum(back(np.ones(3))[0] * x)
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_allclose(hessian(f, x), np.diag(-2 * np.sin(x) - x * np.cos(x)), atol=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_the_jacobian_of_numbers_is_a_float(mode):
    # (docs/api.md: "a Python float where both are scalars"; it was a 0-d array)
    assert jacobian(lambda x, y: x * y, 2.0, 3.0, mode=mode) == (3.0, 2.0)
    assert all(type(j) is float for j in jacobian(lambda x, y: x * y, 2.0, 3.0, mode=mode))
    assert isinstance(jacobian(lambda x: x * x, np.array(3.0), mode=mode)[0], np.ndarray)


def test_a_zero_size_argument():
    """A forward Jacobian of a zero-size argument had the shape (0,) for (0, 0) (the output's shape was unknown: no
    pass ran); `hessian` raised NumPy's "need at least one array to stack"."""
    x = np.zeros(0)
    for mode in ("forward", "reverse"):
        assert jacobian(lambda x: x * 2, x, mode=mode)[0].shape == (0, 0)
        assert jacobian(lambda x: np.concatenate([x, np.ones(1)]), x, mode=mode)[0].shape == (1, 0)
    assert hessian(lambda x: np.sum(x ** 2), x).shape == (0, 0)


@pytest.mark.dual_route
def test_forwarddiff_under_a_second_order_transform(mode):
    """forwarddiff's rule handed forward mode's dual numbers to its own Jacobian: "jacobian/hessian take real numbers",
    naming functions the user never called."""
    assert hessian(lambda y: forwarddiff(lambda t: t ** 4, y), 1.5) == pytest.approx(27.0)
    assert gradient(lambda x: gradient(lambda y: forwarddiff(lambda t: t ** 4, y), x)[0], 1.5)[0] == pytest.approx(27.0)
    np.testing.assert_allclose(hessian(lambda y: forwarddiff(lambda t: np.sum(t ** 3), y), np.array([1.0, 2.0])),
                               [[6.0, 0.0], [0.0, 12.0]])


def test_an_int_argument_computed_with_is_a_real_number_in_every_hessian(mode):
    """`hessian(f, 1, 2.0)` gave None blocks for the int (and `hvp` None), where gradient, jvp and the one-argument
    hessian take an int in arithmetic as a real number; an int used as data (`range(n)`, `x[:n]`) still gets None."""
    def f(x, y):
        return x * x * y
    assert hessian(f, 1, 2.0) == ((4.0, 2.0), (2.0, 0.0))
    assert hessian(f, 1, 2.0, argnums=0) == 4.0
    assert zygotepy.hvp(f, (1, 2.0), (1.0, 0.0)) == (4.0, 2.0)
    blocks = hessian(lambda x, n: np.sum(x[:n] ** 3) + sum(np.sum(x) ** k for k in range(n + 1)),
                     np.array([1.0, 2.0]), 2)
    np.testing.assert_allclose(blocks[0][0], np.diag([6.0, 12.0]) + 2.0)
    assert blocks[0][1] is None and blocks[1][1] is None


def _n_squared_sum(x, n):
    return np.sum(x) * n ** 2


def _summed_n_times_times_n(x, n):
    s = 0.0
    for _ in range(n):
        s = s + np.sum(x ** 3)
    return s * n  # (the loop's n is a count, data; the product's a number)


def _indexed_times_index(x, k):
    return x[k] ** 2 * k


def test_an_int_argument_of_hessian_and_hvp(mode):
    """With optimisations on, the full sum's cotangent `np.full(shape, dual)` failed (np.copyto), so hessian fell back to
    reverse over reverse, which crashed on the int; hvp made an int that counts a loop a float (a TypeError)."""
    x = np.array([0.7, 1.3, 0.4])
    with zygotepy.optimizations(mode):
        H = zygotepy.hessian(_n_squared_sum, x, 2)
        np.testing.assert_allclose(H[0][1], [4.0, 4.0, 4.0])
        assert H[1][1] == pytest.approx(2 * np.sum(x))
        hx, hn = zygotepy.hvp(_summed_n_times_times_n, (x, 2), (np.ones(3), None))
        np.testing.assert_allclose(hx, 24 * x)  # (n^2 * sum(x^3): 6 n^2 x)
        assert hn == pytest.approx(6 * np.sum(x ** 2))  # (the product's n only: 3 n x^2 . v)
        hx, hk = zygotepy.hvp(_indexed_times_index, (x, 2), (np.zeros(3), 1.0))
        np.testing.assert_allclose(hx, [0.0, 0.0, 2 * x[2]])
        assert hk == 0.0
        with pytest.raises(zygotepy.ForwardModeError, match="hessian"):
            zygotepy.hessian(_indexed_times_index, x, 2)


@dataclasses.dataclass
class _Checked:
    w: np.ndarray
    s: float
    n: int = dataclasses.field(init=False)

    def __post_init__(self):  # (a user's check of the fields, which Jacobian blocks would fail)
        self.n = len(self.w)


def test_jacobian_and_hessian_of_a_dataclass_with_post_init(mode):
    """The result containers were made by calling the dataclass, which ran __post_init__ on blocks and None."""
    q = _Checked(np.array([1.0, 2.0]), 0.5)
    with zygotepy.optimizations(mode):
        (J,) = jacobian(lambda p: p.w * p.s, q)
        H = hessian(lambda p: np.sum(p.w ** 2) * p.s, q)
    np.testing.assert_allclose(J.w, 0.5 * np.eye(2))
    np.testing.assert_allclose(J.s, [1.0, 2.0])
    np.testing.assert_allclose(H.w.w, np.eye(2))
    np.testing.assert_allclose(H.w.s, [2.0, 4.0])
    assert H.s.s == 0.0


def _shifted_in_place(A, b):
    z = A * 1.0
    z += b
    z **= 2
    return z.sum(axis=0)


def test_forward_jacobian_of_an_update_mixing_two_arguments(mode):
    """A forward Jacobian perturbs one argument per pass; the others were left plain, so `z = A * 1.0; z += b` stored
    b's dual numbers into a plain array (refused). They are perturbed by zero now, as one jvp would."""
    A, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -0.5])
    forward = jacobian(_shifted_in_place, A, b, mode="forward")
    reverse = jacobian(_shifted_in_place, A, b, mode="reverse")
    for got, want in zip(forward, reverse, strict=True):
        np.testing.assert_allclose(got, want)

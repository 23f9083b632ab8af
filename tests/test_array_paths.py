"""The array fast path (ast_adjoint/optimize/array_paths.py, formulas in adjoints/numpy/array_inline.py):
in functions that compute with NumPy, `+ - * / ** @`, unary minus, NumPy's elementwise functions of one argument
(exp, log, sqrt, sin, tanh, ...) and whole-array `np.sum`/`np.mean` on real arrays inline their derivative; anything
else (complex arrays, lists, 1-d `@`, float exponents, ...) takes the rules, in the same function. Each row is checked
against central finite differences and gives the same cotangents, to the bit, with the array path on and off."""
import numpy as np
import pytest

import zygotepy
from plain_checks import central_hessian
from zygotepy import gradient, hessian, optimizations, pullback, show_adjoint
from zygotepy.adjoints import registry
from zygotepy.testing import check_grads

RNG = np.random.default_rng(7)
M = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 5))
B = RNG.standard_normal(5)
V = RNG.standard_normal(3) + 2.0  # positive entries: log and sqrt


def mlp_layer(x, W, b):
    h = np.tanh(x @ W + b)
    return np.mean((h - 0.5) ** 2)


def bias_broadcast_both_ways(a, col, row):
    return np.sum(a * col + row - col / (row * row + 1.0))


def scalars_mixed_in(x, s):
    y = s * x - x / s + 2.0 * x ** 3 - -x
    return np.sum(y * y) + s


def elementwise_chain(v):
    return np.sum(np.exp(-v) * np.log(v) + np.sqrt(v) * np.sin(v) - np.cos(v) ** 2)


def reused_operand(x):
    y = x * x + x
    return np.sum(y * x @ np.ones(3))


def int_and_bool_data(x, n, mask):
    return np.sum(x * n + x * mask - n)


def float32_arrays(x):
    return float(np.sum(np.tanh(x * x)))


def complex_falls_back(x):
    z = x * (1.0 + 2.0j)
    return np.sum(np.abs(z * z))


def matrix_times_vector(x, w):
    return np.tanh(x @ w) * 2.0


def vector_dot(v):
    return 0.3 * (v @ v) * 0.1  # (the second array form: two vectors, a number's cotangent)


def batched_matmul(a, b):
    return np.sum(np.tanh(a @ b) * (a[0, 0] @ b))  # (the second array form: a 3-d operand, then a vector)


def float_exponent(x):
    return np.sum(x ** 1.5 + x ** 0 + x ** 1 + x ** 3)


def zero_d_arrays(x):
    a = np.asarray(x * 2.0)
    return float(np.tanh(a) * a)


def in_a_loop(x, W):
    for _ in range(3):
        x = np.tanh(x @ W) + x
    return np.sum(x * x)


def numpy_scalars(x):
    s = x.sum()
    return s * s + np.sum(x * s)


def reductions(x, big):
    empty = x[:0]
    return np.sum(x * x) + np.mean(np.tanh(x)) + np.mean(big * big) + np.sum(big) + np.sum(empty) + np.sum(
        np.mean(x) * x)


def numpy_numbers_in_unary_functions(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m))) + np.tanh(np.sqrt(np.sum(x * x)))


def updated_after_use(x):
    x = x * 1.0
    y = np.tanh(x) * x
    x += 1.0  # the backward of `np.tanh(x) * x` must see x as it was
    v = x[1:]
    w = v * v
    x[1] = 5.0  # a view's update: v changes too
    return np.sum(y * x) + np.sum(w * v)


def uniform_cotangents(x, W):
    s = x * x  # reduced whole and used again: its cotangent is a number plus an array
    return np.sum(s) + np.mean(2.0 * x) + np.sum(np.exp(x) + 1.0) + np.sum(s @ W) + np.mean((x - 0.5) ** 2)


def kept_axes_cotangents(x, W):
    e = np.exp(x)  # reduced along an axis and used again: its cotangent is a kept-axes array plus a full one
    s = np.sum(e, axis=1, keepdims=True) * 2.0 + np.mean(np.tanh(x), axis=0, keepdims=True)
    t = np.sum(np.sin(x), axis=0) + np.mean(x * x, axis=1)[:3]  # (keepdims False: the axis put back to broadcast)
    return np.sum(s * s) + np.sum(e) + np.sum(t * t) + np.sum(np.sum(-x, axis=1, keepdims=True) ** 2)


def kept_axes_in_a_loop(x):
    total = 0.0
    for k in range(3):
        c = np.exp(x * (k + 1.0))
        total = total + np.sum(np.log(np.sum(c, axis=1, keepdims=True)))
    return total


def kept_axes_through_a_constant_factor(x, w):
    v = 0.5 * x  # (its derivative never meets an array of x's shape: the kept-axes cotangent is spread by `_unb`)
    c = x - 1.0
    return np.sum(np.sum(v, axis=1, keepdims=True) * w[:, None]) + np.sum(np.sum(c, axis=0) * c[0]) + np.sum(v)


def shapeless_formulas_then_reduced(x, b):
    return np.sum(-b) + np.mean(x ** 0)  # (-dy and dy * 0.0 keep a number's shape: the full array is needed)


def broadcast_then_reduced(a, b):
    return np.sum(a * b) + np.mean(a + b) + np.sum(b / a)  # (two operands: the full cotangent array is needed)


def number_first(x, dt):
    return np.sum(dt * x + dt / (x * x + 1.0) - dt ** 2 * x)


def more_elementwise(v):
    return np.sum(np.expm1(v) * np.log1p(v) + np.log2(v) - np.log10(v) * np.square(v) + np.reciprocal(v)
                  + np.tan(v * 0.3) + np.sinh(v) * np.cosh(v) + np.arctan(v))


def lists_fall_back(x):
    xs = [x, x * 2.0]
    return np.sum(np.asarray(xs) * x)


def keyword_reductions(x):
    z = x - np.max(x, axis=1, keepdims=True)  # a log-softmax, then reductions along axes with and without keepdims
    logp = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    return np.sum(logp * x) + np.sum(np.mean(x * x, axis=0) * np.min(x, axis=0)) + np.sum(x * x, axis=(0, 1)) \
        + np.mean(np.amax(x, axis=0, keepdims=False) * np.amin(x, axis=-1, keepdims=True)) \
        + np.sum(np.mean(x, axis=(1,), keepdims=True) * x, axis=None)


def keyword_reductions_with_ties(x):
    return np.sum(np.max(x, axis=1) * np.array([1.0, 2.0])) + np.sum(np.min(x, axis=0, keepdims=True) * x)


def matrix_vector_products(W, v):
    u = np.tanh(W @ v)  # a matrix times a vector, then a vector times a matrix
    return np.sum((u @ W) * v)


def recurrent_steps(Wx, Wh, xs, h):
    for x in xs:  # matrix-vector products in a loop, one operand (x) a constant
        h = np.tanh(Wx @ x + Wh @ h)
    return 0.5 * np.dot(h, h)


def mixed_rank_products(W, v, S):
    u = W @ v  # then a vector times a matrix of another dtype, and a stack of matrices times a vector
    C = np.arange(16, dtype=np.float32).reshape(4, 4) / 8.0
    return np.sum((u @ C) ** 2) + np.sum(C[:3] @ u) + np.sum(np.sin(S @ u[:3]))


ROWS = [
    ("mlp_layer", mlp_layer, (M, W, B)),
    ("bias_broadcast_both_ways", bias_broadcast_both_ways, (M, M[:, :1].copy(), M[0].copy())),
    ("scalars_mixed_in", scalars_mixed_in, (V, 1.7)),
    ("elementwise_chain", elementwise_chain, (V,)),
    ("reused_operand", reused_operand, (M,)),
    ("int_and_bool_data", int_and_bool_data, (M, np.arange(3), M[0] > 0)),
    ("float32_arrays", float32_arrays, (V.astype(np.float32),)),
    ("complex_falls_back", complex_falls_back, (V,)),
    ("matrix_times_vector", lambda x, w: np.sum(matrix_times_vector(x, w)), (M, V)),
    ("vector_dot", vector_dot, (V,)),
    ("batched_matmul", batched_matmul, (RNG.standard_normal((2, 4, 3)), RNG.standard_normal((3, 4)))),
    ("float_exponent", float_exponent, (V,)),
    ("zero_d_arrays", zero_d_arrays, (np.array(0.3),)),
    ("in_a_loop", in_a_loop, (M[:, :3].copy() * 0.3, W[:, :3].copy())),
    ("numpy_scalars", numpy_scalars, (V,)),
    ("lists_fall_back", lists_fall_back, (V,)),
    ("more_elementwise", more_elementwise, (V,)),
    ("number_first", number_first, (V, 0.3)),
    ("uniform_cotangents", uniform_cotangents, (M, W)),
    ("broadcast_then_reduced", broadcast_then_reduced, (V, M + 3.0)),
    ("kept_axes_cotangents", kept_axes_cotangents, (M[:, :3].copy(), W)),
    ("kept_axes_in_a_loop", kept_axes_in_a_loop, (M[:, :3].copy() * 0.3,)),
    ("kept_axes_through_a_constant_factor", kept_axes_through_a_constant_factor, (M, M[:, 0].copy())),
    ("shapeless_formulas_then_reduced", shapeless_formulas_then_reduced, (V, M)),
    ("updated_after_use", updated_after_use, (V,)),
    ("numpy_numbers_in_unary_functions", numpy_numbers_in_unary_functions, (V,)),
    ("reductions", reductions, (V, RNG.standard_normal(70_000))),  # (a large one's cotangent is a broadcast view)
    ("keyword_reductions", keyword_reductions, (M,)),
    ("keyword_reductions_float32", keyword_reductions, (M.astype(np.float32),)),
    ("matrix_vector_products", matrix_vector_products, (M, V)),
    ("recurrent_steps", lambda Wx, Wh, h: recurrent_steps(Wx, Wh, list(M * 0.5), h),
     (RNG.standard_normal((4, 3)) * 0.4, RNG.standard_normal((4, 4)) * 0.4, RNG.standard_normal(4))),
    ("mixed_rank_products", mixed_rank_products, (RNG.standard_normal((4, 4)), RNG.standard_normal(4),
                                                  RNG.standard_normal((2, 5, 3)))),
]
TIES = np.array([[1.0, 3.0, 3.0], [1.0, 2.0, 0.0]])  # the first row's maxima and the first column's minima tie


def _with_array_paths(enabled, run):
    with optimizations(array_paths=enabled):  # every compiled adjoint is rebuilt under the new setting
        return run()


@pytest.mark.parametrize("fn, args", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_matches_finite_differences(fn, args):
    if any(getattr(a, "dtype", None) == np.float32 for a in args):  # finite differences in float32 are noise:
        wide = tuple(a.astype(np.float64) for a in args)              # the same function on float64 is checked,
        check_grads(fn, *wide)                                        # and float32 agrees with it, as float32
        got, want = gradient(fn, *args)[0], gradient(fn, *wide)[0]
        assert got.dtype == np.float32 and np.allclose(got, want, rtol=1e-5, atol=1e-5)  # (1 - tanh² cancels)
    else:
        check_grads(fn, *args)


def _same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    return np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype


@pytest.mark.parametrize("fn, args", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_same_cotangents_with_and_without(fn, args):
    on = _with_array_paths(True, lambda: gradient(fn, *args))
    off = _with_array_paths(False, lambda: gradient(fn, *args))
    assert _same(on, off), (on, off)


def test_tied_extrema_along_an_axis_share_the_cotangent():
    """Finite differences are undefined at ties: the shares are checked directly, array paths on and off. Row 1's
    maxima (3, 3) share 1, column 1's minima (1, 1) share the column's sum 2; the rest is the product rule."""
    want = np.array([[0.0, 0.5, 0.5], [0.0, 2.0, 0.0]]) + np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0]]) \
        + np.array([[1.0, 0.0, 0.0], [1.0, 5.0, 3.0]])
    for enabled in (True, False):
        got = _with_array_paths(enabled, lambda: gradient(keyword_reductions_with_ties, TIES)[0])
        assert np.array_equal(got, want), (enabled, got, want)


@pytest.mark.optimizations
def test_products_with_vectors_take_their_own_array_forms():
    text = show_adjoint(matrix_vector_products, optimized=True)  # W @ v, v @ W: an outer product, no rule call
    assert "_back = _ARRAY_2" in text and "_back = _ARRAY_3" in text and "[:, None] * v" in text
    assert "_matmul_cotangent(" in text  # (other ranks: the fourth form)


@pytest.mark.optimizations
def test_keyword_reductions_take_the_array_path():
    text = show_adjoint(keyword_reductions, optimized=True)
    assert "_spread(" in text and "extremum_share(" in text and "_J_kw" in text  # (the general path behind the guard)
    assert "(x.max(axis=1, keepdims=True))" in text


@pytest.mark.optimizations
def test_the_backward_reads_like_numpy_backprop():
    text = show_adjoint(mlp_layer, optimized=True)
    assert "_ARRAY" in text
    for line in ("dt_2 = (dh * (1 - h * h))", "dx = (dt @ W.T)", "dW = (x.T @ dt)", "db = (_unb(dt_2, b))"):
        assert line in text  # the derivatives, pasted in


@pytest.mark.optimizations
def test_a_reductions_cotangent_is_a_number_for_an_elementwise_array_path():
    assert " if s_back is _ARRAY else (_full(s, " in show_adjoint(uniform_cotangents, optimized=True)  # np.sum(s), s = x * x
    assert " is _ARRAY else (_full(" not in show_adjoint(broadcast_then_reduced, optimized=True)  # two operands may broadcast
    text = show_adjoint(kept_axes_cotangents, optimized=True)  # along axes: the reduced axes kept, not spread
    assert " if e_back is _ARRAY else (_spread(" in text and "(_kept(" in text


def test_scalar_code_gets_no_array_arm():
    def pow_loop(x, n):
        r = 1.0
        for _ in range(n):
            r = r * x
        return r
    assert "_ARRAY" not in show_adjoint(pow_loop, optimized=True)
    assert gradient(pow_loop, 1.5, 3) == (3 * 1.5 ** 2, None)


@pytest.mark.optimizations
def test_functions_that_use_numpy_only_through_attributes_get_it():
    def loss(pred, y):
        return ((pred - y) ** 2).mean()
    assert "_ARRAY" in show_adjoint(loss, optimized=True)
    check_grads(loss, M, M * 0.5)


def test_a_users_rule_replaces_the_inline_derivative():
    calls = []

    def f(x):
        return np.sum(np.tanh(x))
    before, tangent = registry.find_rule(np.tanh), registry.FORWARD[np.tanh]
    try:
        @zygotepy.adjoint(np.tanh)
        def _(x):
            calls.append(1)
            return np.tanh(x), lambda dy: (dy * 0.0,)
        assert registry.find_array(np.tanh) is None
        assert np.array_equal(gradient(f, V)[0], np.zeros(3))
        assert calls
    finally:
        registry.RULES[np.tanh], registry.FORWARD[np.tanh] = before, tangent
        registry.array_rule(np.tanh, fastpath_formula_of_tanh())


def fastpath_formula_of_tanh():
    from zygotepy.adjoints.numpy import array_inline
    return array_inline.ArrayDerivative(array_inline.UNARY[np.tanh])


def test_pullback_twice_and_argument_untouched():
    x = M.copy()
    y, back = pullback(mlp_layer, x, W, B)
    first, second = back(1.0), back(1.0)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert np.array_equal(x, M)


# --- random expressions over broadcasting shapes, reduced: finite differences, and the same bits on and off ----------

_UNARY = ["np.tanh", "np.exp", "np.sin", "np.cos", "np.square", "np.arctan", "-"]


def _expr(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(["a", "b", "c", "s", "0.7", "1.3"])
    if rng.random() < 0.3:
        u, inner = rng.choice(_UNARY), _expr(rng, depth - 1)
        return f"(-{inner})" if u == "-" else f"({u}({inner}))"
    op, x = rng.choice(["+", "-", "*", "/", "**2", "**0", "**3", "same"]), _expr(rng, depth - 1)
    if op.startswith("**"):
        return f"({x} {op})"
    if op == "same":
        return f"({x} * {x})"
    y = _expr(rng, depth - 1)
    return f"({x} / (1.5 + np.square({y})))" if op == "/" else f"({x} {op} {y})"


def _random_programs(seed, count):
    import random
    rng = random.Random(seed)
    source = "import numpy as np\n"
    for i in range(count):
        terms = [f"    t{j} = {_expr(rng, 3)}" for j in range(rng.randint(1, 3))]
        total = " + ".join(f"{rng.choice(['np.sum', 'np.mean'])}(t{j})" for j in range(len(terms)))
        source += f"\ndef f{i}(a, b, c, s):\n" + "\n".join(terms) + f"\n    return {total} + np.sum(a * 0.0)\n"
    return source


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_array_programs(seed, tmp_path):
    import importlib.util
    path = tmp_path / f"array_programs_{seed}.py"
    path.write_text(_random_programs(seed, 40))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = (V * 0.2, M[:2] * 0.2, M[:2, :1] * 0.2, 0.8)  # shapes (3,), (2, 3), (2, 1) and a number broadcast
    checked = 0
    for i in range(40):
        f = getattr(module, f"f{i}")
        if not np.isfinite(f(*args)):
            continue
        check_grads(f, *args)
        on = _with_array_paths(True, lambda: gradient(f, *args))
        off = _with_array_paths(False, lambda: gradient(f, *args))
        assert _same(on, off), (i, on, off)
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("f, scale", [
    (lambda x: float(np.sum(x + 1.0)), 1.0),
    (lambda x: np.sum(x - 1.0).astype(np.float64), 1.0),
    (lambda x: np.float64(np.sum(x + x)), 2.0),
    (lambda x: float(np.sum(x * 3.0 + 1.0)), 3.0),
], ids=["float", "astype", "np.float64", "two-ops"])
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_a_float32_total_cast_to_float64_spreads_over_the_array(mode, f, scale, shape):
    """The sum's cotangent, a 0-d float32 array (the cast's back gives one), reached the add's unbroadcast, which
    tried to reshape it to the operand's shape (ValueError) with optimisations on."""
    x = np.linspace(-1.0, 1.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    got = gradient(f, x)[0]
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_array_equal(got, np.full(shape, scale, np.float32))


def reduced_along_an_axis_after_zeros(R):
    Q = np.zeros((2, 3))  # (the first iteration's reduction is of a real array, the second's of hessian's duals)
    for _ in range(2):
        V = np.sum(Q ** 2, axis=1)
        M = np.mean(Q * Q, axis=0)
        Q = R * V[:, None] + R + M
    return np.sum(Q)


def test_hessian_of_a_loop_whose_first_reduction_took_the_array_path(mode):
    """A reduction's cotangent along an axis, handed to the array path of `Q ** 2` unspread, is a dual array under
    `hessian`: its reduced axis is kept too (it was not: a ValueError, shapes (2,) and (2, 3))."""
    R = np.array([[0.1, 0.5, -0.3], [0.2, -0.1, 0.4]])
    want = central_hessian(lambda r: reduced_along_an_axis_after_zeros(r.reshape(2, 3)), R.ravel())
    assert np.allclose(hessian(reduced_along_an_axis_after_zeros, R).reshape(6, 6), want, rtol=1e-5, atol=1e-6)

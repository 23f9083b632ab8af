"""Gradients stay in their input's library and on its device (issue case 11: torch tensors on `cuda` got cotangents
made on the CPU; CuPy arrays had no rule for `.T`).

There is no GPU here, so the test double is `array_api_strict` arrays placed on its second device, `Device("device1")`:
that library refuses to combine arrays of two devices and to convert a device1 array to NumPy, exactly as torch's
`cuda` tensors and CuPy arrays do. A rule that makes a cotangent with `xp.zeros(shape)` (no `device=`) or through NumPy
fails here as it fails on a GPU. Each row checks that every gradient is a strict array on device1, of the input's
dtype, and equal to central finite differences in float64.
"""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, pullback

xp = pytest.importorskip("array_api_strict")
Strict = type(xp.asarray(0.0))
DEV = xp.Device("device1")
CPU = xp.asarray(0.0).device


def on_dev(a):
    return xp.asarray(np.asarray(a, dtype=np.float64), device=DEV)


def to_numpy(a):
    return np.asarray(a.to_device(CPU)) if isinstance(a, Strict) else np.asarray(a)


def fd_gradient(f, args, k, h=1e-6):
    """Central differences of f (a strict 0-d array or a number) in its k-th argument, a device1 array."""
    base = to_numpy(args[k])
    g = np.zeros_like(base)
    for i in range(base.size):
        e = np.zeros_like(base)
        e.flat[i] = h
        moved = [list(args), list(args)]
        moved[0][k], moved[1][k] = on_dev(base + e), on_dev(base - e)
        g.flat[i] = (float(f(*moved[0])) - float(f(*moved[1]))) / (2 * h)
    return g


RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4))
SQ = RNG.standard_normal((3, 3))
SPD = SQ @ SQ.T + 3 * np.eye(3)
P = np.abs(X) + 0.5
V = RNG.standard_normal(4)
XS = RNG.standard_normal((5, 3))
W1, B1, W2 = RNG.standard_normal((4, 6)) * 0.5, RNG.standard_normal(6) * 0.1, RNG.standard_normal((6, 3)) * 0.5


def idx():
    return xp.asarray([2, 0, 2], device=DEV)


def rnn(xs):
    """A loop reading xs[t] and accumulating (issue case 11's RNN returned a CPU gradient)."""
    h = xp.zeros((3,), dtype=xp.float64, device=DEV)
    total = 0.0
    for t in range(xs.shape[0]):
        h = xp.tanh(0.5 * h + xs[t, :])
        total = total + xp.sum(h * h)
    return total


def rnn_1d(v):
    s = 0.0
    for t in range(v.shape[0]):
        s = s * 0.9 + xp.sin(v[t]) * v[t]
    return s


def mlp(x, w1, b1, w2):
    """Two layers and a logsumexp readout."""
    z = xp.tanh(x @ w1 + b1) @ w2
    m = xp.max(z, axis=1, keepdims=True)
    lse = m + xp.log(xp.sum(xp.exp(z - m), axis=1, keepdims=True))
    return xp.mean(lse - z[:, 0:1])


# (name, f, arguments as NumPy arrays, placed on device1 by the test)
ROWS = [
    ("slice", lambda x: xp.sum(x[1:, :2] ** 2), [X]),
    ("int_rows", lambda x: xp.sum(x[0, ...] * x[-1, ...]), [X]),
    ("int_1d", lambda v: v[1] * v[-1] + v[0], [V]),
    ("tuple_index", lambda x: x[1, 2] * x[0, 1] + x[2, -1], [X]),
    ("step_slice", lambda x: xp.sum(x[::2, 1::2] * 3.0), [X]),
    ("ellipsis_none", lambda x: xp.sum(x[..., None, 1] ** 2), [X]),
    ("T_matmul", lambda x: xp.sum(x.T @ x), [X]),
    ("mT", lambda x: xp.sum(x.mT * x.T * 2.0), [SQ]),
    ("matmul_vec", lambda x, v: xp.sum((x @ v) ** 2), [X, V]),
    ("matrix_transpose", lambda x: xp.sum(xp.matrix_transpose(x) @ x), [X]),
    ("elementwise", lambda x: xp.sum(xp.exp(x) * xp.sin(x) / (1.0 + x * x) - xp.sqrt(xp.abs(x) + 1.0)), [X]),
    ("tanh_log", lambda x: xp.sum(xp.log(1.0 + xp.tanh(x) ** 2) + xp.maximum(x, 0.1)), [X]),
    ("broadcast", lambda x, v: xp.sum((x * v + v) ** 2), [X, V]),
    ("sum_axis_keepdims", lambda x: xp.sum(xp.sum(x, axis=0, keepdims=True) ** 2), [X]),
    ("mean_axis", lambda x: xp.sum(xp.mean(x, axis=1) ** 2), [X]),
    ("max_axis", lambda x: xp.sum(xp.max(x, axis=1)), [X]),
    ("min_keepdims", lambda x: xp.sum(xp.min(x, axis=0, keepdims=True) * 2.0), [X]),
    ("prod", lambda x: xp.prod(x[0, :]), [X]),
    ("var_std", lambda x: xp.sum(xp.var(x, axis=0)) + xp.std(x), [X]),
    ("cumsum", lambda x: xp.sum(xp.cumulative_sum(x, axis=1) ** 2), [X]),
    ("reshape", lambda x: xp.sum(xp.reshape(x, (2, 6))[1, :] ** 2), [X]),
    ("permute_dims", lambda x: xp.sum(xp.permute_dims(x, (1, 0))[0, :] ** 3), [X]),
    ("expand_squeeze", lambda x: xp.sum(xp.squeeze(xp.expand_dims(x, axis=0), axis=0) ** 2), [X]),
    ("flip_roll", lambda x: xp.sum(xp.roll(xp.flip(x, axis=1), 1, axis=0) * x), [X]),
    ("concat", lambda x: xp.sum(xp.concat([x, x * x], axis=0) ** 2), [X]),
    ("stack", lambda x: xp.sum(xp.stack([x[0, :], x[1, :] * 2.0], axis=1) ** 2), [X]),
    ("where", lambda x: xp.sum(xp.where(x > 0, x, x * x)), [X]),
    ("where_scalar", lambda x: xp.sum(xp.where(x > 0, x, 0.0) ** 2), [X]),
    ("clip", lambda x: xp.sum(xp.clip(x, -0.5, 0.5) * x), [X]),
    ("linalg_norm", lambda x: xp.linalg.vector_norm(x) + xp.linalg.matrix_norm(x), [X]),
    ("tensordot_vecdot", lambda x: xp.sum(xp.vecdot(x, x)) + xp.tensordot(x, x, axes=2), [X]),
    ("inv", lambda a: xp.sum(xp.linalg.inv(a)), [SPD]),
    ("det", lambda a: xp.linalg.det(a), [SQ]),
    ("slogdet", lambda a: xp.linalg.slogdet(a)[1], [SPD]),
    ("solve", lambda a, b: xp.sum(xp.linalg.solve(a, b)), [SPD, SQ]),
    ("cholesky", lambda a: xp.sum(xp.linalg.cholesky(a)), [SPD]),
    ("eigh", lambda a: xp.sum(xp.linalg.eigh(a + a.T)[0] ** 3), [SQ]),
    ("svdvals", lambda a: xp.sum(xp.linalg.svdvals(a)), [X]),
    ("svd", lambda a: xp.sum(xp.linalg.svd(a, full_matrices=False)[1]), [X]),
    ("qr", lambda a: xp.sum(xp.linalg.qr(a)[1]), [SQ]),
    ("matrix_power", lambda a: xp.sum(xp.linalg.matrix_power(a, 3)), [SQ]),
    ("trace", lambda a: xp.linalg.trace(a), [SQ]),
    ("diagonal", lambda a: xp.sum(xp.linalg.diagonal(a) ** 2), [SQ]),
    ("outer", lambda v: xp.sum(xp.linalg.outer(v, v) ** 2), [V]),
    ("cross", lambda a: xp.sum(xp.linalg.cross(a, a[::-1, :] * 2.0)), [SQ]),
    ("take", lambda x: xp.sum(xp.take(x, idx(), axis=1) ** 2), [X]),
    ("take_along", lambda x: xp.sum(xp.take_along_axis(x, xp.asarray([[0], [1], [3]], device=DEV), axis=1) ** 2), [X]),
    ("sort", lambda x: xp.sum(xp.sort(x, axis=1)[:, 0] * 2.0), [X]),
    ("pow", lambda x: xp.sum(xp.pow(x, 3.0) + x ** 2), [X]),
    ("pow_xy", lambda p: xp.sum(p ** p), [P]),
    ("atan2_hypot", lambda x: xp.sum(xp.atan2(x, 2.0) + xp.hypot(x, 1.5) + xp.logaddexp(x, 0.3)), [X]),
    ("tile_repeat", lambda x: xp.sum(xp.tile(x, (2, 1)) ** 2) + xp.sum(xp.repeat(x, 2, axis=0) ** 3), [X]),
    ("broadcast_to", lambda v: xp.sum(xp.broadcast_to(v, (3, 4)) * on_dev(X)), [V]),
    ("moveaxis_unstack", lambda x: xp.sum(xp.moveaxis(x, 0, 1) ** 2) + xp.sum(xp.unstack(x)[1] ** 3), [X]),
    ("mask", lambda x: xp.sum(x[x > 0] ** 2), [X]),
    ("cumprod", lambda x: xp.sum(xp.cumulative_prod(x, axis=0)), [X]),
    ("exp_minus_max", lambda x: xp.sum(xp.exp(x - xp.max(x))), [X]),
    ("minimum_fmod", lambda x: xp.sum(xp.minimum(x, 0.2) + xp.remainder(x, 0.7)), [X]),
    ("copysign_expm1", lambda x: xp.sum(xp.copysign(x, -1.0) + xp.expm1(x) + xp.log1p(xp.abs(x))), [X]),
    ("builtin_max", lambda v: max(v[0], v[1]) + min(v), [V]),
    ("builtin_sum_rows", lambda x: xp.sum(sum(xp.unstack(x)) ** 2), [X]),
    ("builtin_max_rows", lambda x: xp.sum(max(xp.unstack(x), key=lambda r: float(xp.sum(r)))), [X]),
    ("float", lambda v: float(v[0]) * v[1], [V]),
    ("rnn", rnn, [XS]),
    ("rnn_1d", rnn_1d, [V]),
    ("mlp_logsumexp", mlp, [X, W1, B1, W2]),
    # NumPy's functions on device1 arrays: zygotepy computes them in the arrays' namespace (NumPy itself refuses to
    # run them: their finite differences are of the forward pass zygotepy runs)
    ("np_median", lambda x: xp.sum(np.median(x, axis=1) ** 2), [X]),
    ("np_einsum", lambda a: xp.sum(np.einsum("ij,jk->ik", a, a)), [SQ]),
    ("np_trace_diag", lambda a: np.trace(a) + xp.sum(np.diag(a) ** 2) + xp.sum(np.diag(a[0, :])), [SQ]),
    ("np_pad", lambda x: xp.sum(np.pad(x, 1) ** 2 * 1.5), [X]),
    ("np_convolve", lambda v: xp.sum(np.convolve(v, v) ** 2), [V]),
    ("np_polyval", lambda v: xp.sum(np.polyval(v, v)), [V]),
    ("np_triu_tril", lambda a: xp.sum(np.triu(a) + np.tril(a, -1) * 2.0), [SQ]),
    ("np_cumsum_diff", lambda v: xp.sum(np.cumsum(v) * np.diff(v, prepend=0.0)), [V]),
    ("np_std_var", lambda x: np.std(x) + xp.sum(np.var(x, axis=0, ddof=1)), [X]),
    ("np_where_clip", lambda x: xp.sum(np.where(x > 0, x, 0.1 * x) + np.clip(x, -0.3, 0.3)), [X]),
    ("np_split_stack", lambda x: xp.sum(np.stack(np.split(x, 2, axis=1))[1, ...] ** 2), [X]),
    ("np_kron_outer", lambda v: xp.sum(np.outer(v, v) + np.kron(v, v)[:4]), [V]),
    ("np_norm", lambda x: np.linalg.norm(x) + xp.sum(np.linalg.norm(x, axis=1)), [X]),
    ("np_average", lambda x: xp.sum(np.average(x, axis=0, weights=on_dev([1., 2., 3.]))), [X]),
    ("np_prod_nansum", lambda x: np.prod(x[0, :]) + np.nansum(x), [X]),
    ("np_sort_max", lambda x: np.max(np.sort(x, axis=0)) + np.amin(x), [X]),
    ("np_matmul_T", lambda x: np.sum(np.matmul(x, x.T)), [X]),
    ("np_ptp", lambda x: xp.sum(np.ptp(x, axis=1)), [X]),
    ("np_vdot_list", lambda v: np.vdot(v, [1.0, 2.0, -3.0, 4.0]) * np.vdot([0.5, 1.0, 1.5, 2.0], v), [V]),
    ("np_kron_list", lambda v: xp.sum(np.kron(v, [1.0, -2.0]) ** 2), [V]),
    ("np_einsum_number", lambda v: xp.sum(np.einsum("i,->i", v, 2.0) ** 2), [V]),
    ("np_average_list", lambda x: xp.sum(np.average(x, axis=0, weights=[1.0, 2.0, 3.0]) ** 2), [X]),
    ("np_broadcast_arrays", lambda v: xp.sum(np.broadcast_arrays(v, [[1.0], [2.0]])[0] ** 3), [V]),
    ("np_cross_list", lambda a: xp.sum(np.cross(a, [1.0, 2.0, 3.0]) ** 2), [SQ]),
    ("np_convolve_list", lambda v: xp.sum(np.convolve(v, [1.0, -1.0]) ** 2), [V]),
    ("np_polyval_list", lambda v: xp.sum(np.polyval([1.0, 2.0, 3.0], v)), [V]),
    ("np_outer_inner_list", lambda v: xp.sum(np.outer(v, [1.0, 2.0]) ** 2) + np.inner(v, [1.0, 0.0, 2.0, 1.0]), [V]),
    ("np_vecdot", lambda x: xp.sum(np.vecdot(x, x)), [X]),
    ("number_base_pow", lambda x: xp.sum(2.0 ** x + x ** 3.0), [X]),
    ("number_mod", lambda x: xp.sum(3.0 % (x * x + 1.0)), [X]),
    ("python_loop_accumulate", lambda x: sum(xp.sum(x[i, :] * x[i, :]) for i in range(x.shape[0])), [X]),
]


def _primal(f):
    """f's value as zygotepy's forward pass computes it (NumPy refuses device1 arrays)."""
    return lambda *args: pullback(f, *args)[0]


@pytest.mark.parametrize("name, f, args", ROWS, ids=[r[0] for r in ROWS])
def test_gradients_stay_on_device(name, f, args):
    args = [on_dev(a) for a in args]
    grads = gradient(f, *args)
    assert len(grads) == len(args)
    for k, (g, a) in enumerate(zip(grads, args, strict=True)):
        assert isinstance(g, Strict), f"{name}: gradient {k} is a {type(g).__name__}, not an array_api_strict array"
        assert g.device == a.device, f"{name}: gradient {k} on {g.device}, its argument on {a.device}"
        assert g.dtype == a.dtype and g.shape == a.shape, f"{name}: gradient {k} is {g.dtype} {g.shape}"
        num = fd_gradient(_primal(f) if name.startswith("np_") else f, args, k)
        np.testing.assert_allclose(to_numpy(g), num, rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float32_stays_float32_on_device(dtype):
    x = xp.asarray(X, dtype=getattr(xp, dtype), device=DEV)
    g, = gradient(lambda x: xp.sum(x[1:, :2] * x.T[:2, 1:]) + xp.sum(x[0, ...] ** 2), x)
    assert g.dtype == x.dtype and g.device == DEV


def test_torch_cpu_tensors_keep_their_device_and_dtype():
    """The rows on torch CPU tensors: the `device=` the rules now pass must be torch's own."""
    torch = pytest.importorskip("torch")
    x = torch.tensor(X)
    for f in (lambda x: (x[1:, :2] ** 2).sum(), lambda x: (x[0] * x[-1]).sum(), lambda x: (x.T @ x).sum(),
              lambda x: (x.mT * x.T).sum()):
        g, = gradient(f, x)
        assert isinstance(g, torch.Tensor) and g.device == x.device and g.dtype == x.dtype
        num = fd_gradient(lambda a: f(torch.tensor(to_numpy(a))), [on_dev(X)], 0)
        np.testing.assert_allclose(g.numpy(), num, rtol=1e-6, atol=1e-8)


def test_torch_rnn_indexing_keeps_dtype():
    torch = pytest.importorskip("torch")
    xs = torch.tensor(XS, dtype=torch.float32)

    def f(xs):
        h = torch.zeros(3, dtype=xs.dtype)
        for t in range(xs.shape[0]):
            h = torch.tanh(h + xs[t])
        return h.sum()
    g, = gradient(f, xs)
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float32 and g.device == xs.device


class DeviceArray:
    """A stand-in for an array class of a library zygotepy has no table for (CuPy's `ndarray`): it has
    `__array_namespace__`, a device, and `.T` / `.mT`. Issue case 11: `.T` on a CuPy array raised MissingAdjoint."""

    def __init__(self, data, device="gpu:0"):
        self.data, self.device = np.asarray(data), device

    def __array_namespace__(self, api_version=None):
        return xp

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    T = property(lambda self: DeviceArray(self.data.T, self.device))
    mT = property(lambda self: DeviceArray(np.swapaxes(self.data, -1, -2), self.device))


@pytest.mark.parametrize("attr", ["T", "mT"])
def test_transpose_attribute_of_an_unknown_array_library(attr):
    x = DeviceArray(X)
    y, back = pullback(lambda a: getattr(a, attr) if attr == "mT" else a.T, x)
    assert isinstance(y, DeviceArray) and y.shape == (4, 3)
    dy = DeviceArray(RNG.standard_normal((4, 3)), device="gpu:0")
    dx, = back(dy)
    assert isinstance(dx, DeviceArray) and dx.device == "gpu:0"
    np.testing.assert_array_equal(dx.data, dy.data.T)


@pytest.mark.parametrize("name", ["slice", "int_rows", "T_matmul", "mask", "np_std_var"])
def test_second_order_stays_on_device(name):
    """A gradient of a gradient runs the rules' own code at the outer level (the device keywords are constants)."""
    _, f, args = next(r for r in ROWS if r[0] == name)
    x = on_dev(args[0])
    g, = gradient(lambda x: xp.sum(gradient(f, x)[0] ** 2), x)
    assert isinstance(g, Strict) and g.device == DEV and g.dtype == x.dtype
    num = fd_gradient(lambda x: xp.sum(gradient(f, x)[0] ** 2), [x], 0)
    np.testing.assert_allclose(to_numpy(g), num, rtol=1e-5, atol=1e-7)


def test_torch_iterating_rows_keeps_dtype():
    """`for row in xs` on a tensor: the rows' cotangents are stacked back in torch, in xs's dtype and device."""
    torch = pytest.importorskip("torch")
    xs = torch.tensor(XS, dtype=torch.float32)

    def f(xs):
        h = torch.zeros(3, dtype=xs.dtype)
        for row in xs:
            h = torch.tanh(h * 0.5 + row)
        return h.sum()
    g, = gradient(f, xs)
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float32 and g.device == xs.device
    num = fd_gradient(lambda a: float(f(torch.tensor(to_numpy(a)))), [on_dev(XS)], 0, h=1e-6)
    np.testing.assert_allclose(g.numpy(), num, rtol=1e-4, atol=1e-6)


# --- item stores into arrays of another library, in the function and in a helper ------------------------------------

def _scale_first(arr, s):
    arr[0] = arr[0] * 0.5 + 0.1 * s
    arr *= 0.9


def _stores(x, b):
    y = x * 1.0
    _scale_first(y, -b)
    y[1] = y[2] * b
    y[1:] += 0.5 * y[0]
    return y @ y


def test_item_stores_into_device_arrays_stay_on_the_device():
    x = on_dev([0.3, -0.2, 0.5])
    dx, db = gradient(_stores, x, 0.7)
    assert isinstance(dx, Strict) and dx.device == DEV
    np.testing.assert_allclose(to_numpy(dx), fd_gradient(lambda x: _stores(x, 0.7), (x,), 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(to_numpy(dx), gradient(_stores, np.array([0.3, -0.2, 0.5]), 0.7)[0], rtol=1e-12)
    assert float(to_numpy(db)) == pytest.approx(gradient(_stores, np.array([0.3, -0.2, 0.5]), 0.7)[1], rel=1e-12)
    np.testing.assert_array_equal(to_numpy(x), [0.3, -0.2, 0.5])  # the argument as one plain call leaves it


def test_item_stores_into_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64)
    dx, _ = gradient(_stores, x, 0.7)
    assert isinstance(dx, torch.Tensor) and dx.dtype == torch.float64
    np.testing.assert_allclose(dx.numpy(), gradient(_stores, np.array([0.3, -0.2, 0.5]), 0.7)[0], rtol=1e-12)


def test_a_number_broadcast_against_a_torch_float64_tensor_keeps_its_dtype():
    """unbroadcast made a Python float cotangent a float32 tensor (torch's default), which `@` then refused."""
    import math
    torch = pytest.importorskip("torch")

    def f(a, x, b):
        return 0.5 * a + 0.4 * (b + a / (1.5 + math.tanh((x @ x) * 0.1)))
    x = torch.tensor([-0.01, -0.69, -0.64], dtype=torch.float64)
    dx = gradient(f, 0.28, x, -0.47)[1]
    assert dx.dtype == torch.float64
    np.testing.assert_allclose(dx.numpy(), gradient(f, 0.28, x.numpy(), -0.47)[1], rtol=1e-12)


def test_another_librarys_index_trick_with_a_gradient_is_refused():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from zygotepy import MissingAdjoint

    def f(x):
        return jnp.sum(jnp.r_[x, 0.5] * 0.3)
    with pytest.raises(MissingAdjoint, match=r"test_devices.py:\d+: .*r_|RClass"):
        gradient(f, jnp.asarray(np.ones(3)))


_OPEN_STRICT_PROGRAM = '''import numpy as np
def h_apply(fn, v):
    return fn(v) * 0.5
def program(a, x, b, k):
    f0 = 0.5
    b = h_apply(lambda u: (u) * f0, ((x)))
    y1 = x[1:]
    if a > 0.8:
        return 0.3 * b + 1.0 * (np.sin(y1))
    x[2] = 0.5
    return 0.3 * (y1 @ y1) * 0.1
'''


def test_a_store_into_an_argument_refreshes_its_view_before_an_object_that_may_hold_the_view():
    # with `np` bound to array_api_strict, `0.3 * b + np.sin(y1)` in an untaken branch may hold y1 and b: the store
    # x[2] = 0.5 refreshed y1 through b (found nowhere there) instead of as x's view, keeping x[2]'s cotangent
    from zygotepy.fuzz.check import load
    fn = load(_OPEN_STRICT_PROGRAM, "<open strict program>")
    fn.__globals__["np"] = xp
    v = np.array([0.57, 0.50, -0.34, 0.53, 0.71, 0.06])
    g = gradient(fn, 0.6567, xp.asarray(v.copy()), -0.579, 2)[1]
    expected = 0.06 * v  # d/dx of 0.3 * (y1 @ y1) * 0.1, y1 = x[1:] after x[2] = 0.5
    expected[[0, 2]] = 0.0
    assert np.allclose(to_numpy(g), expected, rtol=1e-12, atol=1e-15)


def _filled(c, x):
    return xp.sum(xp.full((2,), c, dtype=x.dtype, device=x.device) * x) + xp.sum(xp.full_like(x, c) * x * x)


def _spaced(a, b, x):
    return xp.sum(xp.linspace(a, b, 2, dtype=x.dtype, device=x.device) * xp.sin(x))


def _ranged(a, s, x):
    return xp.sum(xp.arange(a, 2.5, s, dtype=x.dtype, device=x.device) * x)


@pytest.mark.parametrize("f, numbers", [(_filled, (0.7,)), (_spaced, (0.5, 1.5)), (_ranged, (0.5, 1.2))],
                         ids=["full_and_full_like", "linspace", "arange"])
def test_fill_values_get_gradients_on_the_device(f, numbers):
    # the fills' rules for other libraries computed the numbers' cotangents on NumPy copies, which a device refuses
    x = on_dev([1.0, -2.0])
    grads = gradient(f, *numbers, x)
    h = 1e-6
    for k, g in enumerate(grads[:-1]):
        assert type(g) is float  # (computed on the device; a Python float's gradient is a float: docs/api.md)
        up, down = list(numbers), list(numbers)
        up[k] += h
        down[k] -= h
        expected = (float(f(*up, x)) - float(f(*down, x))) / (2 * h)
        assert float(to_numpy(g)) == pytest.approx(expected, rel=1e-6)
    assert grads[-1].device == DEV
    np.testing.assert_allclose(to_numpy(grads[-1]), fd_gradient(f, (*numbers, x), len(numbers)), rtol=1e-6)


def _solve_with_an_eye_on_the_device(M):
    return xp.sum(xp.linalg.solve(M[:, :2] + xp.eye(2, device=M.device), M[:, 2]))


def _cast_then_square(x):
    return xp.sum(xp.astype(x, xp.float64) ** 2) * xp.astype(x[0], xp.float64)


def test_an_arrays_device_given_to_a_call_and_a_cast():
    # (crashed: `M.device` handed to xp.eye was taken as an attribute of M the call may update, `'Array' object has no
    # attribute 'items'` in the backward; xp.astype ran array_api_strict's own code, whose object stores crashed)
    M = on_dev([[3.0, 1.0, 1.0], [0.5, 2.0, 2.0]])
    (g,) = gradient(_solve_with_an_eye_on_the_device, M)
    assert g.device == DEV
    np.testing.assert_allclose(to_numpy(g), fd_gradient(_solve_with_an_eye_on_the_device, (M,), 0), rtol=1e-6)
    x = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32, device=DEV)
    (g,) = gradient(_cast_then_square, x)
    assert g.device == DEV and g.dtype == xp.float32
    np.testing.assert_allclose(to_numpy(g), [2.0 + 14.0, 4.0, 6.0], rtol=1e-6)


def _written_through_a_slice(x):
    v = x[1:4]
    v[0] = 7.0
    return xp.sum(x ** 2)


def _read_through_a_slice(x):
    v = x[1:3]
    x[1] = 5.0 * x[0]
    return xp.sum(v ** 2)


@pytest.mark.parametrize("f", [_written_through_a_slice, _read_through_a_slice], ids=lambda f: f.__name__)
def test_an_update_through_a_view_on_a_device_is_refused(mode, f):
    """A device array cannot show where its elements live, nor whether it is a view (array_api_strict's have no
    `base`): an update through a view of it gave the gradient of the update unseen ([0.6, 14, ...] for [0.6, 0, ...]).
    Refused; on the CPU device, NumPy's view of the memory tells, and the gradient is right."""
    with pytest.raises(ZygoteError, match="on a device"):
        gradient(f, on_dev([0.3, -1.2, 0.7, 2.0, -0.4]))
    cpu = xp.asarray([0.3, -1.2, 0.7, 2.0, -0.4])
    np.testing.assert_allclose(np.asarray(gradient(f, cpu)[0]), gradient(f, np.array([0.3, -1.2, 0.7, 2.0, -0.4]))[0])

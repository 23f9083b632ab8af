"""The rules made namespace-generic in issue 3 (einsum, tensordot, trace, diff, sort, take, take_along_axis, pad,
median, the nan-reductions, qr, eigh/eigvalsh, svd/svdvals, pinv, lstsq, and the foreign methods prod, var, std,
cumsum, cumprod): user functions written against jax.numpy and torch, against jax.grad and torch autograd (float64; one
float32 case per library keeps float32), and against central finite differences on array_api_strict arrays in float32.
Where a library cannot do it, a ZygoteError names the function.

Each case is (name, shape, domain, jax function, torch function or None where torch has no function of NumPy's
meaning): the functions take x and return the array whose weighted sum is differentiated, so that every entry of the
cotangent differs. Shapes are tiny: JAX compiles every operation once per shape.
"""
import numpy as np
import pytest

import zygotepy

ANY, POS, WELL = "any", "pos", "well"
IDX = np.array([2, 0, 2, 1])  # a repeated index: its cotangents accumulate
# (index arrays are made once, as default arguments: a call inside the differentiated function would be np.asarray's
# NumPy-only rule)


def _draw(shape, domain, seed):
    rng = np.random.default_rng(seed)
    if domain == POS:
        return rng.uniform(0.5, 1.5, shape)
    x = rng.uniform(-1.0, 1.0, shape)
    if domain == WELL:  # far from singular, distinct singular values
        x = x * 0.3 + np.eye(*shape[-2:]) * np.arange(2.0, 2.0 + shape[-1])
    return x


def _flat(lib, *parts):
    """The factors of a decomposition as one vector."""
    join = getattr(lib, "concat", None) or lib.concatenate
    return join([lib.reshape(p, (-1,)) for p in parts])


def _sym(x):
    return x + x.T


def _nans(lib, x):
    """x with its entries above 0.5 replaced by NaN (constants: they carry no gradient)."""
    return lib.where(x > 0.5, float("nan"), x)


CASES = [
    ("einsum matmul", (2, 3), ANY, lambda j: lambda x: j.einsum("ij,kj->ik", x, x * x),
     lambda t: lambda x: t.einsum("ij,kj->ik", x, x * x)),
    ("einsum diagonal", (3, 3), ANY, lambda j: lambda x: j.einsum("ii->i", x) * j.einsum("ij->", x),
     lambda t: lambda x: t.einsum("ii->i", x) * t.einsum("ij->", x)),
    ("einsum ellipsis", (2, 2, 3), ANY, lambda j: lambda x: j.einsum("...ij,...kj->...ik", x, x),
     lambda t: lambda x: t.einsum("...ij,...kj->...ik", x, x)),
    ("tensordot axes=1", (2, 3), ANY, lambda j: lambda x: j.tensordot(x, x.T * x.T, 1),
     lambda t: lambda x: t.tensordot(x, x.T * x.T, 1)),
    ("tensordot axes pairs", (2, 3), ANY, lambda j: lambda x: j.tensordot(x, x * x, axes=([0], [0])),
     lambda t: lambda x: t.tensordot(x, x * x, dims=([0], [0]))),
    ("trace", (3, 3), ANY, lambda j: lambda x: j.trace(x * x), lambda t: lambda x: t.trace(x * x)),
    ("trace offset axes", (2, 3, 4), ANY, lambda j: lambda x: j.trace(x, 1, 0, 2), None),
    ("diff", (2, 4), ANY, lambda j: lambda x: j.diff(x * x), lambda t: lambda x: t.diff(x * x)),
    ("diff n=2 axis 0 prepend", (3, 2), ANY, lambda j: lambda x: j.diff(x, 2, axis=0, prepend=0.5),
     lambda t: lambda x: t.diff(x, 2, dim=0, prepend=t.full((1, 2), 0.5, dtype=x.dtype))),
    ("sort", (2, 3), ANY, lambda j: lambda x: j.sort(x), lambda t: lambda x: t.sort(x)[0]),
    ("sort axis 0 descending", (3, 2), ANY, lambda j: lambda x: j.sort(x, axis=0, descending=True),
     lambda t: lambda x: t.sort(x, 0, descending=True).values),
    ("take flat", (2, 3), ANY, lambda j: lambda x, i=j.asarray(IDX): j.take(x, i),  # noqa: B008
     lambda t: lambda x, i=t.tensor(IDX): t.take(x, i)),  # noqa: B008
    ("take axis", (2, 3), ANY, lambda j: lambda x, i=j.asarray(IDX): j.take(x, i, axis=1), None),  # noqa: B008
    ("take_along_axis", (2, 3), ANY, lambda j: lambda x, i=j.asarray([[2, 2], [0, 1]]): j.take_along_axis(x, i, axis=1),  # noqa: B008
     None),
    ("pad constant", (2, 3), ANY, lambda j: lambda x: j.pad(x, ((1, 0), (0, 2)), constant_values=0.5), None),
    ("pad reflect", (2, 3), ANY, lambda j: lambda x: j.pad(x, 1, mode="reflect"), None),
    ("median", (3, 3), ANY, lambda j: lambda x: j.median(x * x), lambda t: lambda x: t.median(x * x)),
    ("median axis", (2, 3), ANY, lambda j: lambda x: j.median(x, axis=1), lambda t: lambda x: t.median(x, 1).values),
    ("median even", (2, 4), ANY, lambda j: lambda x: j.median(x, axis=1, keepdims=True), None),
    ("nansum", (3, 4), ANY, lambda j: lambda x: j.nansum(_nans(j, x * x)), lambda t: lambda x: t.nansum(_nans(t, x * x))),
    ("nanmean axis keepdims", (3, 4), ANY, lambda j: lambda x: j.nanmean(_nans(j, x), axis=0, keepdims=True),
     lambda t: lambda x: t.nanmean(_nans(t, x), dim=0, keepdim=True)),
    ("nanmax", (3, 4), ANY, lambda j: lambda x: j.nanmax(_nans(j, x), axis=1), None),
    ("nanmin", (3, 4), ANY, lambda j: lambda x: j.nanmin(_nans(j, x)), None),
    ("qr", (4, 3), WELL, lambda j: lambda x: _flat(j, *j.linalg.qr(x)), lambda t: lambda x: _flat(t, *t.linalg.qr(x))),
    ("qr r", (4, 3), WELL, lambda j: lambda x: j.linalg.qr(x, mode="r"), None),
    ("eigh", (3, 3), WELL, lambda j: lambda x: _flat(j, *j.linalg.eigh(_sym(x))),
     lambda t: lambda x: _flat(t, *t.linalg.eigh(_sym(x)))),
    ("eigvalsh", (3, 3), WELL, lambda j: lambda x: j.linalg.eigvalsh(x @ x.T),
     lambda t: lambda x: t.linalg.eigvalsh(x @ x.T)),
    ("svd", (4, 3), WELL, lambda j: lambda x: _flat(j, *j.linalg.svd(x, full_matrices=False)),
     lambda t: lambda x: _flat(t, *t.linalg.svd(x, full_matrices=False))),
    ("svdvals", (3, 4), WELL, lambda j: lambda x: j.linalg.svdvals(x), lambda t: lambda x: t.linalg.svdvals(x)),
    ("pinv", (4, 3), WELL, lambda j: lambda x: j.linalg.pinv(x), lambda t: lambda x: t.linalg.pinv(x)),
    ("lstsq", (4, 3), WELL, lambda j: lambda x: j.linalg.lstsq(x, x[:, :2] + 1.0)[0],
     lambda t: lambda x: t.linalg.lstsq(x, x[:, :2] + 1.0).solution),
    ("x.prod", (2, 3), POS, lambda j: lambda x: x.prod(axis=1), lambda t: lambda x: x.prod(1)),
    ("x.var", (3, 4), ANY, lambda j: lambda x: x.var(0, ddof=1), lambda t: lambda x: x.var(0)),
    ("x.std", (3, 4), ANY, lambda j: lambda x: x.std(axis=1, keepdims=True),
     lambda t: lambda x: x.std(dim=1, keepdim=True, unbiased=False)),
    ("x.cumsum", (2, 3), ANY, lambda j: lambda x: x.cumsum(axis=1), lambda t: lambda x: x.cumsum(1)),
    ("x.cumprod", (3, 2), POS, lambda j: lambda x: x.cumprod(0), lambda t: lambda x: x.cumprod(dim=0)),
    # issue 4: assembling, cutting, gathering, products, logaddexp
    ("hstack vstack", (2, 3), ANY, lambda j: lambda x: j.vstack([j.hstack([x, x * x]), j.hstack([x[:1], x[1:]])]),
     lambda t: lambda x: t.vstack([t.hstack([x, x * x]), t.hstack([x[:1], x[1:]])])),
    ("split", (4, 3), ANY, lambda j: lambda x: j.split(x, [1, 3])[1] * j.split(x, 3, axis=1)[2][:2], None),
    ("tile repeat", (2, 3), ANY, lambda j: lambda x: j.tile(x, (2, 1)) * j.repeat(x, 2, axis=0), None),
    ("outer kron", (2, 2), ANY, lambda j: lambda x: j.kron(x, x * x)[1:3, 1:3] + j.outer(x[0], x[1] * x[1]),
     lambda t: lambda x: t.kron(x, x * x)[1:3, 1:3] + t.outer(x[0], x[1] * x[1])),
    ("logaddexp", (2, 3), ANY, lambda j: lambda x: j.logaddexp(x, x * x), lambda t: lambda x: t.logaddexp(x, x * x)),
    # generic5: grids, linalg.diagonal, selections, ldexp, polynomials, 1-d convolutions, interpolation
    ("meshgrid", (5,), ANY, lambda j: lambda x: j.stack(j.meshgrid(x[:3], x[3:] ** 2), axis=0),
     lambda t: lambda x: t.stack(t.meshgrid(x[:3], x[3:] ** 2, indexing="xy"), dim=0)),
    ("meshgrid ij", (5,), ANY, lambda j: lambda x: j.stack(j.meshgrid(x[:3], x[2:] ** 2, indexing="ij"), axis=0),
     lambda t: lambda x: t.stack(t.meshgrid(x[:3], x[2:] ** 2, indexing="ij"), dim=0)),
    ("linalg.diagonal", (2, 3, 3), ANY, lambda j: lambda x: j.linalg.diagonal(x, offset=1),
     lambda t: lambda x: t.linalg.diagonal(x, offset=1)),
    ("compress extract", (2, 3), ANY, lambda j: lambda x: j.compress(np.array([True, False, True]), x, axis=1)
     * j.extract(np.array([[True, False, True], [False, True, False]]), x)[:2], None),
    ("ldexp", (2, 3), ANY, lambda j: lambda x: j.ldexp(x * x, 3), lambda t: lambda x: t.ldexp(x * x, t.tensor(3))),
    ("polyval", (4,), ANY, lambda j: lambda x: j.polyval(x[:3], x * x), None),
    ("convolve same", (5,), ANY, lambda j: lambda x: j.convolve(x, x[:3] * x[:3], "same"), None),
    ("correlate full valid", (5,), ANY, lambda j: lambda x: j.correlate(x, x[1:4] * 2.0, "full")[:4]
     * j.correlate(x[:2], x * x), None),
    ("interp", (4,), ANY, lambda j: lambda x, t=j.asarray([-2.0, -0.5, 0.5, 2.0]): j.interp(x * 1.2, t, x * x,  # noqa: B008
                                                                                           right=0.5), None),
]
IDS = [c[0] for c in CASES]
TORCH_CASES = [c for c in CASES if c[4] is not None]


def _weighted(lib, g, dtype):
    """x -> sum(g(x) * w) with fixed weights w (of g's output shape), so that every cotangent entry differs."""
    def f(x):
        y = g(x)
        w = lib.reshape(lib.cos(lib.arange(float(np.prod(y.shape)), dtype=dtype)), tuple(y.shape))
        return lib.sum(y * w)
    return f


@pytest.fixture(scope="module")
def jax_x64():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name, shape, domain, jax_fn, torch_fn", CASES, ids=IDS)
def test_against_jax_grad(jax_x64, name, shape, domain, jax_fn, torch_fn):
    jnp = jax_x64.numpy
    x = jnp.asarray(_draw(shape, domain, len(name)))
    f = _weighted(jnp, jax_fn(jnp), jnp.float64)
    (g,) = zygotepy.gradient(f, x)
    expected = jax_x64.grad(f)(x)
    assert isinstance(g, jax_x64.Array) and g.dtype == jnp.float64 and g.shape == x.shape
    np.testing.assert_allclose(np.asarray(g), np.asarray(expected), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name, shape, domain, jax_fn, torch_fn", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_against_torch_autograd(name, shape, domain, jax_fn, torch_fn):
    torch = pytest.importorskip("torch")
    x = torch.tensor(_draw(shape, domain, len(name)), dtype=torch.float64)
    f = _weighted(torch, torch_fn(torch), torch.float64)
    (g,) = zygotepy.gradient(f, x)
    xt = x.clone().requires_grad_()
    f(xt).backward()
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64 and g.shape == x.shape
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["einsum diagonal", "median axis", "eigvalsh"])
def test_float32_stays_float32(jax_x64, name):
    torch = pytest.importorskip("torch")
    jnp = jax_x64.numpy
    _, shape, domain, jax_fn, torch_fn = CASES[IDS.index(name)]
    x = _draw(shape, domain, len(name))
    expected = jax_x64.grad(_weighted(jnp, jax_fn(jnp), jnp.float64))(jnp.asarray(x))
    (gj,) = zygotepy.gradient(_weighted(jnp, jax_fn(jnp), jnp.float32), jnp.asarray(x, dtype=jnp.float32))
    (gt,) = zygotepy.gradient(_weighted(torch, torch_fn(torch), torch.float32), torch.tensor(x, dtype=torch.float32))
    assert gj.dtype == jnp.float32 and gt.dtype == torch.float32
    np.testing.assert_allclose(np.asarray(gj), np.asarray(expected), rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(gt.numpy(), np.asarray(expected), rtol=2e-3, atol=2e-4)


# --- array_api_strict arrays in float32: the array API's names, and NumPy functions whose rule computes in x's namespace.
# Each case is (name, shape, domain, function of a strict array, reference): a NumPy function (NumPy's own functions
# refuse strict arrays) whose central differences in float64 are the expected gradient, or None to difference the
# function itself on float64 strict arrays.
def _numpy_too(g):
    """A function of np.* calls only: it is its own NumPy reference."""
    return g


def _strict_cases():
    xps = pytest.importorskip("array_api_strict")
    einsum = _numpy_too(lambda x: np.einsum("ij,kj->ik", x, x * x))
    diagonal = _numpy_too(lambda x: np.einsum("ii->i", x) * np.einsum("ij,ij->", x, x))
    ellipsis = _numpy_too(lambda x: np.einsum("...ij,...kj->...ik", x, x))
    trace = _numpy_too(lambda x: np.trace(x, -1, 2, 1))
    pad = _numpy_too(lambda x: np.pad(x, ((0, 1), (2, 1)), constant_values=0.5))
    wrap = _numpy_too(lambda x: np.pad(x, 2, mode="wrap"))
    median = _numpy_too(lambda x: np.median(x, axis=1))
    return [
        ("np.einsum (composed)", (2, 3), ANY, einsum, einsum),
        ("np.einsum diagonal", (3, 3), ANY, diagonal, diagonal),
        ("np.einsum ellipsis", (2, 2, 3), ANY, ellipsis, ellipsis),
        ("tensordot", (2, 3), ANY, lambda x: xps.tensordot(x, x * x, axes=([0], [0])), None),
        ("linalg.trace", (2, 3, 3), ANY, lambda x: xps.linalg.trace(x * x, offset=1), None),
        ("np.trace axes", (2, 3, 4), ANY, trace, trace),
        ("diff", (3, 2), ANY, lambda x: xps.diff(x * x, axis=0, n=2), None),
        ("sort", (2, 3), ANY, lambda x: xps.sort(x, axis=0, descending=True), None),
        ("take", (2, 3), ANY, lambda x, i=xps.asarray(IDX): xps.take(x, i, axis=1), None),  # noqa: B008
        ("take_along_axis", (2, 3), ANY, lambda x, i=xps.asarray([[2, 2], [0, 1]]): xps.take_along_axis(x, i, axis=1),  # noqa: B008
         None),
        ("np.pad constant", (2, 3), ANY, pad, pad),
        ("np.pad wrap", (2, 3), ANY, wrap, wrap),
        ("np.median", (2, 4), ANY, median, median),
        ("np.nansum", (3, 4), ANY, lambda x: np.nansum(_nans(xps, x * x), axis=1),
         lambda x: np.nansum(_nans(np, x * x), axis=1)),
        ("np.nanmean", (3, 4), ANY, lambda x: np.nanmean(_nans(xps, x), axis=0, keepdims=True),
         lambda x: np.nanmean(_nans(np, x), axis=0, keepdims=True)),
        ("np.nanmax", (3, 4), ANY, lambda x: np.nanmax(_nans(xps, x), axis=1), lambda x: np.nanmax(_nans(np, x), axis=1)),
        ("qr", (4, 3), WELL, lambda x: _flat(xps, *xps.linalg.qr(x)), None),
        ("eigh", (3, 3), WELL, lambda x: _flat(xps, *xps.linalg.eigh(x + xps.matrix_transpose(x))), None),
        ("eigvalsh", (3, 3), WELL, lambda x: xps.linalg.eigvalsh(x @ xps.matrix_transpose(x)), None),
        ("svd", (4, 3), WELL, lambda x: _flat(xps, *xps.linalg.svd(x, full_matrices=False)), None),
        ("svdvals", (3, 4), WELL, lambda x: xps.linalg.svdvals(x), None),
        ("pinv", (4, 3), WELL, lambda x: xps.linalg.pinv(x), None),
    ]


N_STRICT = 22


def _weighted_sum(lib, g):
    def f(x):
        y = g(x)
        w = lib.reshape(lib.cos(lib.arange(float(np.prod(y.shape)), dtype=x.dtype)), tuple(y.shape))
        return lib.sum(y * w)
    return f


@pytest.mark.parametrize("k", range(N_STRICT))
def test_strict_float32_against_finite_differences(k):
    xps = pytest.importorskip("array_api_strict")
    name, shape, domain, g, reference = _strict_cases()[k]
    x = _draw(shape, domain, len(name))
    (grad,) = zygotepy.gradient(_weighted_sum(xps, g), xps.asarray(x, dtype=xps.float32))
    assert type(grad) is type(xps.asarray(0.0)) and grad.dtype == xps.float32 and grad.shape == shape, name
    if reference is None:
        strict = _weighted_sum(xps, g)

        def value(x):
            return float(strict(xps.asarray(x)))
    else:
        value = _weighted_sum(np, reference)
    eps, numeric = 1e-6, np.zeros(shape)
    for i in np.ndindex(shape):
        e = np.zeros(shape)
        e[i] = eps
        numeric[i] = (float(value(x + e)) - float(value(x - e))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(grad), numeric, rtol=2e-3, atol=2e-4, err_msg=name)


def test_the_strict_cases_are_all_run():
    pytest.importorskip("array_api_strict")
    assert len(_strict_cases()) == N_STRICT


# --- what a library cannot do raises a ZygoteError naming it ------------------------------------------------------------
def test_lstsq_of_strict_arrays_names_the_missing_function():
    xps = pytest.importorskip("array_api_strict")
    a = xps.asarray(_draw((4, 3), WELL, 0))
    with pytest.raises(zygotepy.ZygoteError, match="no lstsq"):
        zygotepy.gradient(lambda a: xps.sum(np.linalg.lstsq(a, a[:, 0])[0]), a)


def test_pad_modes_that_compute_raise():
    xps = pytest.importorskip("array_api_strict")
    with pytest.raises(zygotepy.ZygoteError, match="linear_ramp"):
        zygotepy.gradient(lambda a: xps.sum(np.pad(a, 1, mode="linear_ramp")), xps.asarray(_draw((3,), ANY, 0)))


def test_torch_qr_mode_r_refuses():
    torch = pytest.importorskip("torch")
    with pytest.raises(zygotepy.ZygoteError, match="mode='r'"):
        zygotepy.gradient(lambda a: torch.sum(torch.linalg.qr(a, mode="r")[1]), torch.eye(3, dtype=torch.float64))


def test_an_out_of_bounds_take_raises(jax_x64):
    jnp = jax_x64.numpy
    with pytest.raises(zygotepy.ZygoteError, match="out of bounds"):
        zygotepy.gradient(lambda a, i=jnp.asarray([0, 3]): jnp.sum(jnp.take(a, i)), jnp.ones(3))  # noqa: B008


def test_a_field_read_under_another_name_raises():
    """A torch result's field read by attribute reaches the rule under torch's name (solution, not NumPy's x)."""
    torch = pytest.importorskip("torch")
    a = torch.tensor(_draw((4, 3), WELL, 1))
    (g,) = zygotepy.gradient(lambda a: torch.sum(torch.linalg.lstsq(a, a[:, :1] + 1.0).solution), a)
    at = a.clone().requires_grad_()
    torch.sum(torch.linalg.lstsq(at, at[:, :1] + 1.0).solution).backward()
    np.testing.assert_allclose(g.numpy(), at.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_torch_split_and_cross_refuse():
    """torch.split(x, n) and torch.cross mean other things than np.split and np.cross: a ZygoteError, not a number."""
    torch = pytest.importorskip("torch")
    x = torch.ones((4, 3), dtype=torch.float64)
    with pytest.raises(zygotepy.ZygoteError, match="torch.split"):
        zygotepy.gradient(lambda x: torch.split(x, 2)[0].sum(), x)
    with pytest.raises(zygotepy.ZygoteError, match="torch.linalg.cross"):
        zygotepy.gradient(lambda x: torch.cross(x[:2], x[2:]).sum(), x)


@pytest.mark.parametrize("device", ["default", "device1"])
def test_integer_array_indexing_of_strict_arrays_accumulates(mode, device):
    """The array API has no scatter: an index array raised 'no namespace-generic gradient'. Repeated indices add."""
    xps = pytest.importorskip("array_api_strict")
    on = {} if device == "default" else {"device": xps.Device(device)}
    x = xps.asarray([1.0, 2.0, 3.0], **on)
    i = xps.asarray([2, 0, 2], **on)
    (g,) = zygotepy.gradient(lambda v: xps.sum(v[i] ** 2), x)
    assert g.device == x.device
    np.testing.assert_array_equal(np.asarray(xps.asarray(g, device=xps.Device("CPU_DEVICE"))), [2.0, 0.0, 12.0])
    m = xps.reshape(xps.arange(6, dtype=xps.float64, **on), (2, 3))
    rows, cols = xps.asarray([1, 1, 0], **on), xps.asarray([0, 0, 2], **on)
    (g,) = zygotepy.gradient(lambda v: xps.sum(v[rows, cols] * 2.0), m)
    np.testing.assert_array_equal(np.asarray(xps.asarray(g, device=xps.Device("CPU_DEVICE"))),
                                  [[0.0, 0.0, 2.0], [4.0, 0.0, 0.0]])

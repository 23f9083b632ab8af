"""The rules made namespace-generic beyond the starter set (prod, var/std, scans, flips, triangles, axis moves, linalg
inverses, determinants, norms, cholesky): user functions written against jax.numpy and torch, against jax.grad and
torch autograd (float64 values; a float32 input keeps a float32 gradient), and against central finite differences on
array_api_strict arrays in float32 (the float64 rows run in test_array_api_table.py).

Each case is (name, shape, domain, jax function, torch function): the functions take x and return the
array whose weighted sum is differentiated, so that every entry of the cotangent differs.
"""
import numpy as np
import pytest

import zygotepy

ANY, POS, WELL, SPD = "any", "pos", "well", "spd"


def _draw(shape, domain, seed):
    rng = np.random.default_rng(seed)
    if domain == POS:
        return rng.uniform(0.5, 1.5, shape)
    x = rng.uniform(-1.0, 1.0, shape)
    if domain in (WELL, SPD):  # far from singular
        x = x * 0.3 + 2.0 * np.eye(shape[-1])
    return x


def _spd(lib):
    """x -> x x^T + I (symmetric positive definite), in the library's own functions."""
    def make(x):
        return x @ lib.swapaxes(x, -1, -2) + lib.eye(x.shape[-1], dtype=x.dtype)
    return make


CASES = [
    ("prod axis", (2, 3), POS, lambda j: lambda x: j.prod(x, axis=1), lambda t: lambda x: t.prod(x, dim=1)),
    ("prod all", (2, 3), POS, lambda j: lambda x: j.prod(x), lambda t: lambda x: t.prod(x)),
    ("prod keepdims", (2, 3, 2), POS, lambda j: lambda x: j.prod(x, axis=-1, keepdims=True),
     lambda t: lambda x: t.prod(x, -1, True)),
    ("var ddof=1", (3, 4), ANY, lambda j: lambda x: j.var(x, axis=0, ddof=1), lambda t: lambda x: t.var(x, dim=0)),
    ("var all ddof=0", (3, 4), ANY, lambda j: lambda x: j.var(x), lambda t: lambda x: t.var(x, correction=0)),
    ("std keepdims", (3, 4), ANY, lambda j: lambda x: j.std(x, axis=1, keepdims=True),
     lambda t: lambda x: t.std(x, dim=1, keepdim=True, unbiased=False)),
    ("std positional", (3, 4), ANY, lambda j: lambda x: j.std(x, 1, None, None, 1),
     lambda t: lambda x: t.std(x, 1, True)),
    ("cumsum axis", (2, 4), ANY, lambda j: lambda x: j.cumsum(x, axis=1), lambda t: lambda x: t.cumsum(x, dim=1)),
    ("cumsum flat", (2, 3), ANY, lambda j: lambda x: j.cumsum(x), lambda t: lambda x: t.cumsum(x.reshape(-1), 0)),
    ("cumprod", (3, 2), POS, lambda j: lambda x: j.cumprod(x, axis=0), lambda t: lambda x: t.cumprod(x, 0)),
    ("flip", (2, 3), ANY, lambda j: lambda x: j.flip(x, axis=1) * j.arange(3.0),
     lambda t: lambda x: t.flip(x, dims=(1,)) * t.arange(3.0, dtype=x.dtype)),
    ("fliplr", (2, 3), ANY, lambda j: lambda x: j.fliplr(x) * j.arange(3.0),
     lambda t: lambda x: t.fliplr(x) * t.arange(3.0, dtype=x.dtype)),
    ("tril", (3, 3), ANY, lambda j: lambda x: j.tril(x, -1), lambda t: lambda x: t.tril(x, diagonal=-1)),
    ("triu", (2, 3, 3), ANY, lambda j: lambda x: j.triu(x), lambda t: lambda x: t.triu(x)),
    ("moveaxis", (2, 3, 4), ANY, lambda j: lambda x: j.moveaxis(x, 0, -1), lambda t: lambda x: t.moveaxis(x, 0, -1)),
    ("swapaxes", (2, 3, 4), ANY, lambda j: lambda x: j.swapaxes(x, 0, 2), lambda t: lambda x: t.swapaxes(x, 0, 2)),
    ("roll", (2, 3), ANY, lambda j: lambda x: j.roll(x, 1, axis=1) * j.arange(3.0),
     lambda t: lambda x: t.roll(x, 1, 1) * t.arange(3.0, dtype=x.dtype)),
    ("broadcast_to", (2, 1), ANY, lambda j: lambda x: j.broadcast_to(x, (3, 2, 4)),
     lambda t: lambda x: t.broadcast_to(x, (3, 2, 4))),
    ("concatenate / cat", (2, 3), ANY, lambda j: lambda x: j.concatenate([x, x * x], axis=1),
     lambda t: lambda x: t.cat([x, x * x], dim=1)),
    ("concatenate / cat axis 0", (2, 3), ANY, lambda j: lambda x: j.concatenate((x, 2 * x)),
     lambda t: lambda x: t.cat((x, 2 * x))),
    ("stack", (2, 3), ANY, lambda j: lambda x: j.stack([x, x * x], axis=1), lambda t: lambda x: t.stack([x, x * x], dim=1)),
    ("inv", (3, 3), WELL, lambda j: lambda x: j.linalg.inv(x), lambda t: lambda x: t.linalg.inv(x)),
    ("inv batched", (2, 3, 3), WELL, lambda j: lambda x: j.linalg.inv(x), lambda t: lambda x: t.linalg.inv(x)),
    ("solve matrix", (3, 3), WELL, lambda j: lambda x: j.linalg.solve(x, j.swapaxes(x[:2], 0, 1) + 1.0),
     lambda t: lambda x: t.linalg.solve(x, t.swapaxes(x[:2], 0, 1) + 1.0)),
    ("solve vector", (3, 3), WELL, lambda j: lambda x: j.linalg.solve(x, x[0] * x[1]),
     lambda t: lambda x: t.linalg.solve(x, x[0] * x[1])),
    ("det", (2, 3, 3), WELL, lambda j: lambda x: j.linalg.det(x), lambda t: lambda x: t.linalg.det(x)),
    ("slogdet", (3, 3), WELL, lambda j: lambda x: j.linalg.slogdet(x)[1], lambda t: lambda x: t.linalg.slogdet(x)[1]),
    ("matrix_power", (3, 3), WELL, lambda j: lambda x: j.linalg.matrix_power(x, 3),
     lambda t: lambda x: t.linalg.matrix_power(x, 3)),
    ("matrix_power negative", (3, 3), WELL, lambda j: lambda x: j.linalg.matrix_power(x, -2),
     lambda t: lambda x: t.linalg.matrix_power(x, -2)),
    ("norm", (3, 4), ANY, lambda j: lambda x: j.linalg.norm(x), lambda t: lambda x: t.linalg.norm(x)),
    ("norm axis", (3, 4), ANY, lambda j: lambda x: j.linalg.norm(x, axis=1), lambda t: lambda x: t.linalg.norm(x, dim=1)),
    ("norm ord=1 axis keepdims", (3, 4), ANY, lambda j: lambda x: j.linalg.norm(x, 1, 0, True),
     lambda t: lambda x: t.linalg.norm(x, 1, 0, True)),
    ("norm nuc", (3, 4), ANY, lambda j: lambda x: j.linalg.norm(x, "nuc"), lambda t: lambda x: t.linalg.norm(x, "nuc")),
    ("norm matrix inf", (3, 4), ANY, lambda j: lambda x: j.linalg.norm(x, np.inf),
     lambda t: lambda x: t.linalg.norm(x, float("inf"))),
    ("norm axes 2", (2, 3, 4), ANY, lambda j: lambda x: j.linalg.norm(x, 2, (0, 2)),
     lambda t: lambda x: t.linalg.norm(x, 2, (0, 2))),
    ("vector_norm ord=3", (3, 4), ANY, lambda j: lambda x: j.linalg.vector_norm(x, ord=3, axis=0),
     lambda t: lambda x: t.linalg.vector_norm(x, 3, dim=0)),
    ("matrix_norm", (2, 3, 4), ANY, lambda j: lambda x: j.linalg.matrix_norm(x),
     lambda t: lambda x: t.linalg.matrix_norm(x)),
    ("matrix_norm nuc", (3, 4), ANY, lambda j: lambda x: j.linalg.matrix_norm(x, ord="nuc"),
     lambda t: lambda x: t.linalg.matrix_norm(x, "nuc")),
    ("cholesky", (3, 3), SPD, lambda j: lambda x: j.linalg.cholesky(_spd(j)(x)),
     lambda t: lambda x: t.linalg.cholesky(_spd(t)(x))),
    ("cholesky upper", (2, 3, 3), SPD, lambda j: lambda x: j.linalg.cholesky(_spd(j)(x), upper=True),
     lambda t: lambda x: t.linalg.cholesky(_spd(t)(x), upper=True)),
]
IDS = [c[0] for c in CASES]


def _weighted(lib, g, shape, dtype):
    """x -> sum(g(x) * w) with fixed weights w (of g's output shape), so that every cotangent entry differs."""
    def f(x):
        y = g(x)
        w = lib.reshape(lib.cos(lib.arange(float(np.prod(y.shape)), dtype=dtype)), tuple(y.shape))
        return lib.sum(y * w)
    return f


@pytest.fixture
def jax_x64():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name, shape, domain, jax_fn, torch_fn", CASES, ids=IDS)
def test_against_jax_grad(jax_x64, name, shape, domain, jax_fn, torch_fn):
    jnp = jax_x64.numpy
    x = jnp.asarray(_draw(shape, domain, len(name)))
    f = _weighted(jnp, jax_fn(jnp), shape, jnp.float64)
    (g,) = zygotepy.gradient(f, x)
    expected = jax_x64.grad(f)(x)
    assert isinstance(g, jax_x64.Array) and g.dtype == jnp.float64 and g.shape == x.shape
    np.testing.assert_allclose(np.asarray(g), np.asarray(expected), rtol=1e-9, atol=1e-11)
    # float32 stays float32
    x32 = x.astype(jnp.float32)
    f32 = _weighted(jnp, jax_fn(jnp), shape, jnp.float32)
    (g32,) = zygotepy.gradient(f32, x32)
    assert g32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(g32), np.asarray(expected), rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("name, shape, domain, jax_fn, torch_fn", CASES, ids=IDS)
def test_against_torch_autograd(name, shape, domain, jax_fn, torch_fn):
    torch = pytest.importorskip("torch")
    x = torch.tensor(_draw(shape, domain, len(name)), dtype=torch.float64)
    f = _weighted(torch, torch_fn(torch), shape, torch.float64)
    (g,) = zygotepy.gradient(f, x)
    xt = x.clone().requires_grad_()
    f(xt).backward()
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64 and g.shape == x.shape
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-11)
    x32 = x.to(torch.float32)
    (g32,) = zygotepy.gradient(_weighted(torch, torch_fn(torch), shape, torch.float32), x32)
    assert g32.dtype == torch.float32
    np.testing.assert_allclose(g32.numpy(), xt.grad.numpy(), rtol=2e-3, atol=2e-4)


# --- array_api_strict arrays in float32: the array API's names, and NumPy functions whose rule computes in x's namespace
def _strict_cases():
    xps = pytest.importorskip("array_api_strict")
    return [
        ("prod", (2, 3), POS, lambda x: xps.prod(x, axis=1)),
        ("var correction", (3, 4), ANY, lambda x: xps.var(x, axis=0, correction=1)),
        ("std", (3, 4), ANY, lambda x: xps.std(x, keepdims=True)),
        ("cumulative_sum", (2, 4), ANY, lambda x: xps.cumulative_sum(x, axis=1)),
        ("cumulative_prod", (3, 2), POS, lambda x: xps.cumulative_prod(x, axis=0, include_initial=True)),
        ("triu", (2, 3, 3), ANY, lambda x: xps.triu(x, k=-1)),
        ("flip", (2, 3), ANY, lambda x: xps.flip(x, axis=0)),
        ("tril", (3, 3), ANY, lambda x: xps.tril(x, k=1)),
        ("moveaxis", (2, 3, 4), ANY, lambda x: xps.moveaxis(x, 0, 1)),
        ("broadcast_to", (3, 1), ANY, lambda x: xps.broadcast_to(x, (2, 3, 4))),
        ("roll", (2, 3), ANY, lambda x: xps.roll(x, 2, axis=1)),
        ("inv", (3, 3), WELL, lambda x: xps.linalg.inv(x)),
        ("solve", (3, 3), WELL, lambda x: xps.linalg.solve(x, x[:, 0] + 1.0)),
        ("det", (2, 3, 3), WELL, lambda x: xps.linalg.det(x)),
        ("slogdet", (3, 3), WELL, lambda x: xps.linalg.slogdet(x)[1]),
        ("matrix_power", (3, 3), WELL, lambda x: xps.linalg.matrix_power(x, 2)),
        ("matrix_norm fro", (2, 3, 4), ANY, lambda x: xps.linalg.matrix_norm(x, keepdims=True)),
        ("vector_norm", (3, 4), ANY, lambda x: xps.linalg.vector_norm(x, ord=np.inf, axis=1)),
        ("matrix_norm", (3, 4), ANY, lambda x: xps.linalg.matrix_norm(x, ord=1)),
        ("cholesky", (3, 3), SPD, lambda x: xps.linalg.cholesky(x @ xps.matrix_transpose(x))),
    ]


@pytest.mark.parametrize("k", range(20))
def test_strict_float32_against_finite_differences(k):
    xps = pytest.importorskip("array_api_strict")
    name, shape, domain, g = _strict_cases()[k]
    x = _draw(shape, domain, len(name))

    def f(x):
        y = g(x)
        w = xps.reshape(xps.cos(xps.arange(float(np.prod(y.shape)), dtype=x.dtype)), tuple(y.shape))
        return xps.sum(y * w)
    (grad,) = zygotepy.gradient(f, xps.asarray(x, dtype=xps.float32))
    assert type(grad) is type(xps.asarray(0.0)) and grad.dtype == xps.float32 and grad.shape == shape, name
    eps, numeric = 1e-6, np.zeros(shape)
    for i in np.ndindex(shape):
        e = np.zeros(shape)
        e[i] = eps
        numeric[i] = (float(f(xps.asarray(x + e))) - float(f(xps.asarray(x - e)))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(grad), numeric, rtol=2e-3, atol=2e-4, err_msg=name)


def test_the_strict_cases_are_all_run():
    pytest.importorskip("array_api_strict")
    assert len(_strict_cases()) == 20

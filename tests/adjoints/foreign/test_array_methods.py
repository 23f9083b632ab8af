"""Array methods and attributes on JAX arrays, torch tensors and array-API-strict arrays (`x.sum()`, `x.mean(axis=0)`,
`x.reshape(...)`, `x.T`, `x.mT`, `x.transpose()`, `x.max()`, `x.astype(...)`, `x.to_device(...)`), and torch's
`dim`/`keepdim` keywords (adjoints/foreign/array_methods.py): against jax.grad, torch.autograd, and finite differences / a
NumPy twin for array-api-strict."""
import numpy as np
import pytest

import zygotepy


# --- JAX ----------------------------------------------------------------------------------------------------------------
@pytest.fixture
def jax64():
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)


def _jax_methods(jnp):
    def f(x, w):
        h = jnp.tanh(x @ w)                         # (3, 2)
        a = h.sum() + (h * h).mean(axis=0).sum()
        b = (x.reshape(4, 3) ** 2).max() + x.reshape((2, 6)).mean(axis=1, keepdims=True).sum()
        c = (x.T @ x).sum() + (x.transpose() * x.mT).sum() + x.transpose((1, 0)).min(axis=0).sum()
        d = x.astype(jnp.float32).astype(jnp.float64).sum() * 0.5 + w.dot(w.T).sum()
        e = x.max(axis=1).sum() + jnp.sum(x.squeeze().ravel() * 0.1) + x.clip(-0.5, 0.5).sum()
        return a + b + c + d + e
    return f


def test_jax_methods_match_jax_grad_in_float64(jax64):
    jnp = jax64.numpy
    f = _jax_methods(jnp)
    x = jnp.linspace(-1.0, 1.3, 12).reshape(3, 4)
    w = jnp.linspace(0.5, -0.7, 8).reshape(4, 2)
    gx, gw = zygotepy.gradient(f, x, w)
    ex, ew = jax64.grad(f, argnums=(0, 1))(x, w)
    assert isinstance(gx, jax64.Array) and gx.dtype == jnp.float64 and gw.dtype == jnp.float64
    np.testing.assert_allclose(gx, ex, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw, ew, rtol=1e-12, atol=1e-12)


def test_jax_methods_under_jit_use_the_tracers_methods(jax64):
    jnp = jax64.numpy
    f = _jax_methods(jnp)
    x = jnp.linspace(-1.0, 1.3, 12).reshape(3, 4)
    w = jnp.linspace(0.5, -0.7, 8).reshape(4, 2)
    jitted = jax64.jit(lambda x, w: zygotepy.gradient(f, x, w))(x, w)
    for a, b in zip(jitted, jax64.grad(f, argnums=(0, 1))(x, w), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_jax_method_rules_do_not_derive_jax_source():
    """The methods resolve to rules (registry), not to a transform of JAX's own method source."""
    jax = pytest.importorskip("jax")
    from zygotepy.adjoints import registry
    x = jax.numpy.ones((2, 3))
    zygotepy.gradient(lambda x: x.sum(), x)
    for name in ("sum", "mean", "reshape", "transpose", "max", "astype"):
        assert registry.find_rule(getattr(type(x), name)) is not None, name


def test_jax_methods_pass_check_grads(jax64):
    from zygotepy.testing import check_grads
    jnp = jax64.numpy

    def f(x, w):  # smooth (no float32 round trip, no max or clip kinks): finite differences are accurate
        h = jnp.tanh(x @ w)
        return h.sum() + (x.T @ x).mean(axis=0).sum() + (x.reshape(2, 6) ** 2).mean() + (x.mT * x.transpose()).sum() \
            + w.dot(w.T).sum()
    (g, _) = check_grads(f, jnp.linspace(-1.0, 1.3, 12).reshape(3, 4), jnp.linspace(0.5, -0.7, 8).reshape(4, 2))
    assert isinstance(g, jax64.Array) and g.dtype == jnp.float64


def test_jax_astype_to_an_integer_drops_the_gradient(jax64):
    jnp = jax64.numpy

    def f(x):
        return (x * x).sum() + x.astype(jnp.int32).sum()
    (g,) = zygotepy.gradient(f, jnp.arange(3.0))
    np.testing.assert_allclose(g, [0.0, 2.0, 4.0])


# --- torch --------------------------------------------------------------------------------------------------------------
def _torch_methods(torch):
    def f(x, w):
        h = torch.tanh(x @ w)
        a = h.sum() + (h * h).mean(dim=0).sum() + x.mean(dim=1, keepdim=True).sum() * 0.3
        b = (x.reshape(4, 3) ** 2).max() + x.view(2, 6).amax(dim=1).sum() + x.reshape((6, 2)).sum(0).sum()
        c = (x.T @ x).sum() + (x.transpose(0, 1) * x.mT).sum() + x.t().min() + x.permute(1, 0).exp().sum()
        d = x.float().double().sum() * 0.5 + x.to(torch.float64).sum() + x.sum(1, True).sum()
        e = torch.sum(x * x, dim=1).sum() + torch.mean(x, dim=0, keepdim=True).sum() + torch.sum(x, 0).sum()
        g = torch.transpose(x, 0, 1).sum(dim=0).pow(2).sum() + torch.amax(x, dim=1).sum() + torch.max(x)
        return a + b + c + d + e + g
    return f


def test_torch_methods_and_dim_keywords_match_autograd():
    torch = pytest.importorskip("torch")
    f = _torch_methods(torch)
    x = torch.linspace(-1.0, 1.3, 12, dtype=torch.float64).reshape(3, 4)
    w = torch.linspace(0.5, -0.7, 8, dtype=torch.float64).reshape(4, 2)
    gx, gw = zygotepy.gradient(f, x, w)
    assert isinstance(gx, torch.Tensor) and gx.dtype == torch.float64 and gw.dtype == torch.float64
    xt, wt = x.clone().requires_grad_(), w.clone().requires_grad_()
    f(xt, wt).backward()
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), wt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_jax_positional_reduction_arguments(jax64):
    jnp = jax64.numpy

    def f(x):
        return x.max(0, None, True).sum() + x.sum(1, None, None, True).mean() + x.min(1).sum()
    x = jnp.linspace(-1.0, 1.3, 6).reshape(2, 3)
    np.testing.assert_allclose(zygotepy.gradient(f, x)[0], jax64.grad(f)(x), rtol=1e-12)


def test_jax_item_at_a_position(jax64):
    # (`x.item(1)` crashed with a TypeError: the rule took no position; found by the program generator, seed 902)
    jnp = jax64.numpy

    def f(x, b):
        return x.item(1) * b + x.item(-1) ** 2 + x.reshape(2, 3).item(1, 2) * 3.0
    x = jnp.linspace(-1.0, 1.3, 6)
    gx, gb = zygotepy.gradient(f, x, 0.7)
    np.testing.assert_allclose(gx, [0.0, 0.7, 0.0, 0.0, 0.0, 2 * 1.3 + 3.0], rtol=1e-12)
    assert gb == pytest.approx(float(x[1]), rel=1e-12)


def test_torch_float32_stays_float32():
    torch = pytest.importorskip("torch")

    def f(x):
        return x.sum(dim=0).tanh().mean() + x.T.max()
    x = torch.linspace(-1.0, 1.0, 6, dtype=torch.float32).reshape(2, 3)
    (g,) = zygotepy.gradient(f, x)
    xt = x.clone().requires_grad_()
    f(xt).backward()
    assert g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-6)


torch_max = None  # torch.max, once the test has imported torch


@pytest.mark.parametrize("body, message", [
    (lambda x: x.max(dim=1).values.sum(), r"Tensor\.max\(dim\) returns \(values, indices\)"),
    (lambda x: x.max(1)[0].sum(), r"Tensor\.max\(dim\) returns \(values, indices\)"),
    (lambda x: x.diagonal().sum(), r"torch\.Tensor\.diagonal"),
    (lambda x: x.repeat(2, 1).sum(), r"torch\.Tensor\.repeat"),
    (lambda x: torch_max(x, dim=1).values.sum(), r"max\(dim\) returns \(values, indices\)"),
])
def test_torch_unmapped_methods_raise_a_zygote_error_naming_them(body, message):
    torch = pytest.importorskip("torch")
    global torch_max
    torch_max = torch.max
    with pytest.raises(zygotepy.ZygoteError, match=message):
        zygotepy.gradient(body, torch.ones(2, 3, dtype=torch.float64))


def test_torch_item_carries_the_gradient():
    torch = pytest.importorskip("torch")

    def f(x):
        return x.sum().item() * x[0].item()
    (g,) = zygotepy.gradient(f, torch.tensor([2.0, 3.0], dtype=torch.float64))
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64
    np.testing.assert_allclose(g.numpy(), [2.0 + 5.0, 2.0])  # d(s * x0) with s = x0 + x1


def test_torch_constant_methods_run_as_constants():
    torch = pytest.importorskip("torch")

    def f(x):
        n = x.numel() + x.dim() + x.size(0)
        return (x * x).sum() * n + x.detach().sum() + x.argmax().double()
    (g,) = zygotepy.gradient(f, torch.ones(2, 3, dtype=torch.float64))
    np.testing.assert_allclose(g.numpy(), np.full((2, 3), 2.0 * (6 + 2 + 2)))


# --- array-api-strict: the attributes (its arrays have no reduction methods) -------------------------------------------
def _strict_and_numpy_twin():
    xps = pytest.importorskip("array_api_strict")

    def f(x):
        return xps.sum(xps.tanh(x.T @ x)) + xps.sum(x.mT * xps.reshape(xps.arange(6.0), (3, 2)))

    def f_np(x):
        return np.sum(np.tanh(x.T @ x)) + np.sum(x.mT * np.arange(6.0).reshape(3, 2))
    return xps, f, f_np


def test_strict_attributes_match_the_numpy_twin_and_finite_differences():
    xps, f, f_np = _strict_and_numpy_twin()
    x0 = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    (g,) = zygotepy.gradient(f, xps.asarray(x0))
    assert type(g) is type(xps.asarray(x0)) and g.dtype == xps.float64
    (e,) = zygotepy.gradient(f_np, x0)
    np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12)
    eps, fd = 1e-6, np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[i] = eps
        fd[i] = (f_np(x0 + d) - f_np(x0 - d)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-8)


def test_strict_attributes_pass_check_grads():
    xps, f, _ = _strict_and_numpy_twin()
    from zygotepy.testing import check_grads
    (g,) = check_grads(f, xps.asarray(np.linspace(-1.0, 1.0, 6).reshape(2, 3)))
    assert g.dtype == xps.float64 and tuple(g.shape) == (2, 3)


def test_torch_methods_pass_check_grads():
    torch = pytest.importorskip("torch")
    from zygotepy.testing import check_grads

    def f(x):
        return (x.mT @ x).sum(dim=1).tanh().mean() + x.reshape(-1).max() + torch.mean(x, dim=0, keepdim=True).sum()
    check_grads(f, torch.linspace(-1.0, 1.0, 6, dtype=torch.float64).reshape(2, 3))


def test_array_api_to_device_passes_the_gradient():
    """x.to_device(d) of an array-API array was declared constant: the gradient was silently None."""
    xps = pytest.importorskip("array_api_strict")
    from zygotepy import gradient

    def f(x):
        return xps.sum(x.to_device(x.device) ** 2)
    (g,) = gradient(f, xps.asarray([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(g), [2.0, 4.0])


def test_torch_to_with_a_dtype_keyword_and_trace(mode):
    """`x.to(dtype=torch.float64)` was refused (the positional form only), `x.trace()` had no rule."""
    torch = pytest.importorskip("torch")
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float32)
    (g,) = zygotepy.gradient(lambda v: (v.to(dtype=torch.float64) ** 2).sum(), t)
    assert g.dtype == torch.float32
    torch.testing.assert_close(g, 2 * t)
    (g,) = zygotepy.gradient(lambda v: (v * v).trace(), t.double())
    torch.testing.assert_close(g, torch.diag(2 * torch.diagonal(t.double())))

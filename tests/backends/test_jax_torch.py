"""User functions written against jax.numpy and torch (through array_api_compat): gradients are arrays of the input's
library and dtype, equal to jax.grad / finite differences; jax.jit runs the derived forward and pullback."""
import re

import numpy as np
import pytest

import zygotepy


def _mlp(xp):
    def f(x, w):
        h = xp.tanh(x @ w)
        return xp.sum(xp.maximum(h, 0.0) ** 2) + xp.mean(xp.exp(-(x * x)))
    return f


def test_jax_gradient_matches_jax_grad_float32_stays_float32():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    f = _mlp(jnp)
    x = jnp.linspace(-1.0, 1.0, 12, dtype=jnp.float32).reshape(3, 4)
    w = jnp.linspace(0.5, -0.5, 8, dtype=jnp.float32).reshape(4, 2)
    gx, gw = zygotepy.gradient(f, x, w)
    ex, ew = jax.grad(f, argnums=(0, 1))(x, w)
    assert isinstance(gx, jax.Array) and gx.dtype == jnp.float32 and gw.dtype == jnp.float32
    np.testing.assert_allclose(gx, ex, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, ew, rtol=1e-5, atol=1e-6)


def test_jax_example_of_the_issue_in_float64():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        jnp = jax.numpy

        def f(x, w):
            return jnp.sum(jnp.tanh(x @ w) ** 2)
        x, w = jnp.ones((3, 4)), jnp.ones((4, 2)) * 0.1
        g = zygotepy.gradient(f, x, w)
        e = jax.grad(f, argnums=(0, 1))(x, w)
        assert g[0].dtype == jnp.float64
        for a, b in zip(g, e, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_jax_jit_of_the_gradient_equals_the_eager_one():
    jax = pytest.importorskip("jax")
    f = _mlp(jax.numpy)
    x = jax.numpy.ones((3, 4)) * 0.3
    w = jax.numpy.ones((4, 2)) * 0.1
    grad = jax.jit(lambda x, w: zygotepy.gradient(f, x, w))
    for a, b in zip(grad(x, w), zygotepy.gradient(f, x, w), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert "func" in grad.lower(x, w).as_text()


def test_jax_jit_with_control_flow_on_a_traced_value_names_the_users_line():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def f(x):
        if jnp.sum(x) > 0:  # the branch depends on a traced value
            return jnp.sum(x * x)
        return jnp.sum(x)
    if_line = f.__code__.co_firstlineno + 1
    with pytest.raises(Exception) as info:
        jax.jit(lambda x: zygotepy.gradient(f, x))(jnp.ones(3))
    notes = [n for n in getattr(info.value, "__notes__", []) if n.startswith("zygotepy:")]
    assert len(notes) == 1, getattr(info.value, "__notes__", None)
    # the note names the user's file and the line of the `if`, not merely the generated code
    assert re.search(rf"from {re.escape(__file__)}, line {if_line}\b", notes[0]), notes[0]


def test_torch_through_array_api_compat_matches_finite_differences():
    torch = pytest.importorskip("torch")
    compat = pytest.importorskip("array_api_compat")
    x = torch.linspace(-1.0, 1.0, 12, dtype=torch.float64).reshape(3, 4)
    w = torch.linspace(0.5, -0.5, 8, dtype=torch.float64).reshape(4, 2)
    f = _mlp(compat.array_namespace(x))
    gx, gw = zygotepy.gradient(f, x, w)
    assert isinstance(gx, torch.Tensor) and gx.dtype == torch.float64
    xt, wt = x.clone().requires_grad_(), w.clone().requires_grad_()
    f(xt, wt).backward()
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gw.numpy(), wt.grad.numpy(), rtol=1e-6)


def test_torch_functions_directly():
    torch = pytest.importorskip("torch")

    def f(x):
        return torch.sum(torch.tanh(x)) * 2.0
    x = torch.linspace(-1.0, 1.0, 5, dtype=torch.float32)
    (g,) = zygotepy.gradient(f, x)
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), 2 * (1 - np.tanh(x.numpy()) ** 2), rtol=1e-5)


def test_a_numpy_only_rule_refuses_foreign_arrays():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def f(x):
        return jnp.sum(jnp.copy(x))  # np.copy's rule is NumPy-only (convolve is generic now)
    with pytest.raises(zygotepy.ZygoteError, match="NumPy arrays only"):
        zygotepy.gradient(f, jnp.arange(3.0))


def test_torch_lstsq_keeps_torchs_result_and_np_lstsq_on_tensors_gives_numpys():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(5, 3, dtype=torch.float64, generator=gen)
    b = torch.randn(5, dtype=torch.float64, generator=gen)

    def direct(a, b):
        return torch.sum(torch.linalg.lstsq(a, b[:, None]).solution ** 2)
    ga, gb = zygotepy.gradient(direct, a, b)
    a2, b2 = a.clone().requires_grad_(), b.clone().requires_grad_()
    direct(a2, b2).backward()
    assert torch.allclose(ga, a2.grad) and torch.allclose(gb, b2.grad)
    kept, _ = zygotepy.pullback(lambda a, b: torch.linalg.lstsq(a, b[:, None]), a, b)
    assert type(kept).__name__ == "linalg_lstsq"  # torch's own result type and meaning
    x, res, rank, s = zygotepy.pullback(lambda a, b: np.linalg.lstsq(a, b), a, b)[0]
    want = np.linalg.lstsq(a.numpy(), b.numpy(), rcond=None)
    np.testing.assert_allclose(res.numpy(), want[1])
    np.testing.assert_allclose(s.numpy(), want[3])
    assert int(rank) == want[2]


def test_take_with_a_traced_index_under_jit():
    # the bounds check of an index array read its value, which a tracer has not (TracerBoolConversionError under jit)
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def take_along(w, y):
        return jnp.sum(jnp.take_along_axis(w, y[:, None], axis=1) ** 2)

    def take(w, y):
        return jnp.sum(jnp.take(w, y, axis=1) ** 2)
    w, y = jnp.arange(12.0).reshape(4, 3), jnp.array([0, 2, 1, 0])
    for f in (take_along, take):
        jitted = jax.jit(lambda a, b: zygotepy.gradient(f, a, b)[0])(w, y)
        np.testing.assert_allclose(np.asarray(jitted), np.asarray(jax.grad(f)(w, y)), rtol=1e-6)


@pytest.mark.parametrize("name", ["std", "cumprod", "eigh", "svd", "slogdet", "det"])
def test_jax_jit_of_rules_that_look_at_their_data(name):
    """Rules that pick an exact formula by the data (`if any(y == 0)`, a refusal at repeated values) raised JAX's
    TracerBoolConversionError under `jax.jit`; traced, they take their general formula."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        m = jnp.asarray(np.array([[2.0, 0.3, 0.1], [0.4, 1.5, -0.2], [0.1, 0.2, 1.1]]))
        f = {"std": lambda a: jnp.std(a) * jnp.sum(a), "cumprod": lambda a: jnp.sum(jnp.cumprod(a, axis=1)),
             "eigh": lambda a: jnp.sum(jnp.linalg.eigh(a + a.T)[1][:, 0] ** 4),
             "svd": lambda a: jnp.sum(jnp.linalg.svd(a)[0][:, 0] ** 4),
             "slogdet": lambda a: jnp.linalg.slogdet(a)[1], "det": lambda a: jnp.linalg.det(a)}[name]
        jitted = jax.jit(lambda a: zygotepy.gradient(f, a)[0])(m)
        np.testing.assert_allclose(jitted, zygotepy.gradient(f, m)[0], rtol=1e-9, atol=1e-12)
    finally:
        jax.config.update("jax_enable_x64", was)


def _tensor_times_numpy_scalar(t, s):
    import torch
    return torch.sum(t * np.float64(s)) + torch.sum(np.float32(s) * t * t)


def test_a_tensor_times_a_numpy_scalar_of_a_differentiated_float(mode):
    """The NumPy scalar's cotangent was summed by NumPy's sum, which passes torch `axis=` (TypeError)."""
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    dt, ds = zygotepy.gradient(_tensor_times_numpy_scalar, t, 0.3)
    np.testing.assert_allclose(dt.numpy(), 0.3 + 2 * 0.3 * t.numpy())
    assert ds == pytest.approx(3.0 + 5.0)

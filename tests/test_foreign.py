"""Cross-language AD (adjoints/foreign.py): torch and JAX functions inside zygotepy-differentiated code, checked
against central finite differences of the whole function."""
import numpy as np
import pytest

from zygotepy import (
    ZygoteError,
    foreign,
    gradient,
    jax_function,
    pullback,
    torch_function,
)


def fd_gradient(f, x, h=1e-6):
    """Central differences; JAX computes in float32 (unless jax_enable_x64), so its tests pass a larger h."""
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


X = np.array([[0.3, -1.2, 0.7], [1.5, 0.1, -0.4]])
W = np.array([0.5, -0.25, 2.0])


def mixed_loss(wrap, lib):
    """A torch/JAX layer between zygotepy NumPy code on both sides."""
    layer = wrap(lambda x, w: lib.tanh(x * w).sum(1))

    def loss(x):
        h = np.sin(x) + 0.5 * x
        return np.sum(layer(h, W) ** 2)
    return loss


def _tolerance(mod):
    """(tolerance, finite-difference step): torch runs in float64 here, JAX in float32 (its default)."""
    return (1e-7, 1e-6) if mod.__name__ == "torch" else (3e-3, 1e-3)


@pytest.fixture(params=["torch", "jax"])
def lib(request):
    if request.param == "torch":
        torch = pytest.importorskip("torch")
        return torch_function, torch
    pytest.importorskip("jax")
    import jax.numpy as jnp
    return jax_function, jnp


def test_gradient_flows_through_a_foreign_layer(lib):
    wrap, mod = lib
    loss = mixed_loss(wrap, mod)
    g = gradient(loss, X)[0]
    tol, h = _tolerance(mod)
    np.testing.assert_allclose(g, fd_gradient(loss, X, h), rtol=tol, atol=tol)
    assert g.shape == X.shape and g.dtype == X.dtype


def test_several_arguments_outputs_and_scalars(lib):
    wrap, mod = lib
    f = wrap(lambda a, b, s: (a * b * s, (a - b).sum()))

    def loss(a, b, s):
        p, q = f(a, b, s)
        return np.sum(p) + 3.0 * q
    a, b = np.array([1.0, 2.0]), np.array([-0.5, 0.25])
    ga, gb, gs = gradient(loss, a, b, 1.5)
    tol, h = _tolerance(mod)
    np.testing.assert_allclose(ga, fd_gradient(lambda v: loss(v, b, 1.5), a, h), rtol=tol, atol=tol)
    np.testing.assert_allclose(gb, fd_gradient(lambda v: loss(a, v, 1.5), b, h), rtol=tol, atol=tol)
    assert isinstance(gs, float) and gs == pytest.approx(float(np.sum(a * b)), rel=tol)


def test_an_output_without_gradient_and_a_data_argument(lib):
    wrap, _ = lib
    f = wrap(lambda x, n: (x ** n, x * 0 + 1))
    y, back = pullback(lambda x: f(x, 3)[0], np.array([2.0]))
    np.testing.assert_allclose(y, [8.0])
    np.testing.assert_allclose(back(np.array([1.0]))[0], [12.0], rtol=1e-6)


def test_foreign_detects_the_library():
    torch = pytest.importorskip("torch")
    assert gradient(lambda x: foreign(torch.sin)(x) * 2.0, 0.0) == pytest.approx((2.0,))
    pytest.importorskip("jax")
    import jax.numpy as jnp
    assert gradient(lambda x: foreign(jnp.sin)(x) * 2.0, 0.0) == pytest.approx((2.0,))
    with pytest.raises(ZygoteError, match="torch_function"):
        foreign(np.sin)

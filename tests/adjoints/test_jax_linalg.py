"""JAX's symmetrizing factorizations (zygotepy/adjoints/jax_linalg.py) against `jax.grad` and central differences of
the JAX function, on symmetric and non-symmetric inputs, with every optimisation on and off: their gradients were
NumPy's lower-triangular ones (entry [0, 1]: 0.0 for 0.140)."""
import numpy as np
import pytest

from zygotepy import gradient, value_and_gradient

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

CASES = {
    "cholesky": lambda a: jnp.sum(jnp.linalg.cholesky(a) * jnp.arange(1.0, 10.0).reshape(3, 3)),
    "eigh values": lambda a: jnp.sum(jnp.linalg.eigh(a)[0] * jnp.arange(3.0)),
    "eigh vectors": lambda a: jnp.sum(jnp.abs(jnp.linalg.eigh(a)[1][:, 2]) ** 3),
    "eigvalsh": lambda a: jnp.sum(jnp.linalg.eigvalsh(a) ** 2 * jnp.arange(1.0, 4.0)),
}
SYMMETRIC = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


@pytest.mark.parametrize("a", [SYMMETRIC, SYMMETRIC + np.triu(np.full((3, 3), 0.3), 1)], ids=["symmetric", "not"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax_and_central_differences(name, a, mode):
    f = CASES[name]
    a = jnp.asarray(a)
    g, = gradient(f, a)
    assert isinstance(g, jax.Array)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(f)(a)), rtol=1e-8, atol=1e-10)
    e = np.zeros((3, 3))
    e[0, 1] = 1e-6
    central = (f(a + e) - f(a - e)) / 2e-6
    assert float(g[0, 1]) == pytest.approx(float(central), rel=1e-5, abs=1e-8)
    value, _ = value_and_gradient(f, a)
    assert float(value) == pytest.approx(float(f(a)), rel=1e-12)

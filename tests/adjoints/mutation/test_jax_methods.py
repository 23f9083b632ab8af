"""NumPy's in-place methods on JAX's arrays are refused (adjoints/mutation/jax_methods.py): `y = np.exp(x); y.sort()`
sorted nothing (NumPy's functions of JAX arrays give JAX arrays here, and JAX's `sort` returns a copy): value 7.04 for
9.65, silently."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient


def _sorted_in_place(x):
    y = np.exp(x)
    y.sort()
    return np.sum(y * np.arange(4.0))


def test_sorting_a_jax_array_in_place_is_refused():
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(ZygoteError, match="on a JAX array leaves it as it is"):
        gradient(_sorted_in_place, jnp.asarray([0.3, -1.2, 0.7, -0.1]))
    (g,) = gradient(_sorted_in_place, np.array([0.3, -1.2, 0.7, -0.1]))  # (NumPy's: sorted in place)
    np.testing.assert_allclose(g, np.exp([0.3, -1.2, 0.7, -0.1]) * np.array([2.0, 0.0, 3.0, 1.0]))

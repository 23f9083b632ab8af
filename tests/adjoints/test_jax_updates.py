"""JAX's indexed updates `x.at[index].set(v)` and siblings (zygotepy/adjoints/jax_updates.py) inside user functions:
each row against central finite differences in float64 and against jax.grad (which decides which of several updates
of one index wins, and the ties of min/max); the gradients stay JAX arrays; `apply` and a `fill_value` that carries a
gradient are refused. (Every call raised before: `x.at`'s methods reach a `jnp.asarray` with no rule.)"""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import zygotepy  # noqa: E402
from zygotepy.errors import ZygoteError  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


def _carried(x):
    """A recurrence written with `.at[i].set` in a loop, the way JAX code fills an array."""
    y = jnp.zeros(4)
    for i in range(4):
        y = y.at[i].set(jnp.sin(x[i]) * (y[i - 1] if i else 1.0) + x[3 - i])
    return jnp.sum(y * y)


X = [0.3, -0.8, 1.2, 0.5]
M = [[0.3, -0.8], [1.2, 0.5], [0.7, 0.1]]
DUPLICATES = [0, 0, 1]
OUTSIDE = [1, 9]

ROWS = [  # (id, the user's function, its arguments)
    ("set", lambda x: jnp.sum(x.at[1].set(x[0] * x[2]) ** 2), (X,)),
    ("set_a_python_number", lambda x: jnp.sum(x.at[0].set(1.5) * x), (X,)),
    ("set_duplicate_indices", lambda x: jnp.sum(x.at[jnp.array([0, 0])].set(x[2:]) ** 2 * jnp.arange(4.0)), (X,)),
    ("add_duplicate_indices", lambda x: jnp.sum(x.at[jnp.array(DUPLICATES)].add(x[:3]) ** 2), (X,)),
    ("subtract", lambda x: jnp.sum(x.at[1:].subtract(x[:3] ** 2) ** 2), (X,)),
    ("multiply_then_divide", lambda x: jnp.sum(x.at[1:3].multiply(x[:2]).at[0].divide(x[3] + 2.0) ** 2), (X,)),
    ("mul", lambda x: jnp.sum(x.at[2].mul(x[0]) * x), (X,)),
    ("min_and_max", lambda x: jnp.sum(x.at[0].min(x[1]).at[2].max(0.9) * x), (X,)),
    ("power", lambda x: jnp.sum(x.at[2].power(2.0) * x), (X,)),
    ("drop_outside", lambda x: jnp.sum(x.at[jnp.array(OUTSIDE)].add(x[:2], mode="drop") ** 2), (X,)),
    ("get_fill", lambda x: jnp.sum(x.at[jnp.array(OUTSIDE)].get(mode="fill", fill_value=0.7) ** 2), (X,)),
    ("get", lambda x: jnp.sum(x.at[1:3].get() * x[:2]), (X,)),
    ("column_of_a_matrix", lambda m: jnp.sum(m.at[:, 0].set(m[:, 1] * 2.0) ** 2), (M,)),
    ("values_from_a_second_argument", lambda x, v: jnp.sum(x.at[1:3].set(v * x[0]) ** 2), (X, [0.4, -1.1])),
    ("a_recurrence_in_a_loop", _carried, (X,)),
]


@pytest.mark.parametrize("f,args", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_indexed_update_matches_finite_differences_and_jax(f, args):
    args = tuple(jnp.array(a, dtype=jnp.float64) for a in args)
    got = zygotepy.gradient(f, *args)
    want = jax.grad(f, argnums=tuple(range(len(args))))(*args)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, jax.Array) and g.dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)
    check_grads(f, *args)


def test_a_gradient_under_jax_jit():
    f = lambda x: jnp.sum(x.at[1].set(x[0] * 2.0) ** 2)  # noqa: E731
    x = jnp.array(X)
    np.testing.assert_allclose(jax.jit(lambda x: zygotepy.gradient(f, x)[0])(x), jax.grad(f)(x), rtol=1e-12)


def test_a_fill_value_that_carries_a_gradient_is_refused():
    """JAX takes fill_value as a static constant (a constant one runs: the row `get_fill`)."""
    f = lambda x, c: jnp.sum(x.at[jnp.array(OUTSIDE)].get(mode="fill", fill_value=c * 1.0))  # noqa: E731
    with pytest.raises(ZygoteError, match="fill_value"):
        zygotepy.gradient(f, jnp.array(X), 0.7)


def test_apply_is_refused():
    with pytest.raises(ZygoteError, match="apply"):
        zygotepy.gradient(lambda x: jnp.sum(x.at[0].apply(jnp.sin)), jnp.array(X))


def test_a_numpy_array_has_no_at():
    """`at` is read as JAX's only on JAX arrays: elsewhere getattr means what it means (an AttributeError here)."""
    with pytest.raises(AttributeError):
        zygotepy.gradient(lambda x: np.sum(x.at[0].set(1.0)), np.array(X))

"""NumPy functions (and their JAX and torch twins) whose gradients were missing, wrong or crashing: constructors of
a differentiated value (`np.full`, `np.linspace`, `np.arange`), random draws (reparameterized, choices, gamma),
`np.unique`, `np.bincount` and `np.histogram`, reductions of Python numbers, `np.std` at 0, `initial=`, orders other
than C, `np.select` and `np.choose`, objects converted by library functions. Each case agrees with one plain call and
central finite differences (tests/plain_checks.py), or raises a ZygoteError."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import agree_at  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


def test_full_of_a_differentiated_value():
    """np.full(3, c) gave None (np.full was declared non-differentiable): each entry is c."""
    agree(lambda x: np.sum(np.full(3, x[0]) * x[1:]))
    agree(lambda x: np.sum(np.full((2, 4), x) ** 2))
    agree(lambda x: np.sum(np.full_like(np.ones((2, 4)), x[1]) * x))


def test_linspace_and_arange_of_differentiated_ends():
    """np.linspace(a, b, n) and np.arange(start, stop, step) gave None for their differentiated ends and step."""
    agree(lambda x: np.sum(np.linspace(x[0], x[2], 5) ** 2))
    agree(lambda x: np.sum(np.linspace(x[0], x[2], 5, False) ** 2))
    agree(lambda x: np.sum(np.linspace(x[:2], x[2:], 3) ** 2))
    agree(lambda x: np.sum(np.arange(x[0], 4.0, x[3]) ** 2))
    agree(lambda x: np.sum(np.arange(x[1], 2.0) ** 3))


def test_reparameterized_draws_with_a_seed_fixed_per_call():
    """rng.normal(loc, scale, size), np.random.normal, rng.uniform(low, high) gave None; now the pathwise gradient at
    the drawn value (finite differences re-create the generator on each evaluation)."""
    def f(x):
        rng = np.random.default_rng(3)
        z = rng.normal(x[0], x[3], 5) + rng.uniform(x[1], x[2], 5)
        return np.sum(z ** 2) + np.sum(rng.laplace(x[:2], x[2:]))
    agree(f)

    def g(x):
        np.random.seed(4)
        return np.sum(np.random.normal(x, 2.0) ** 2) + np.sum(np.random.exponential(x[2:] ** 2))
    agree(g)


def test_draw_at_zero_scale_refuses():
    def f(x):
        rng = np.random.default_rng(0)
        return np.sum(rng.normal(x[0], x[3] * 0.0, 3))
    with pytest.raises(ZygoteError, match="scale 0"):
        value_and_gradient(f, X.copy())


def test_foreign_constructors_of_a_differentiated_value():
    """jnp.linspace(a, 1.0, 5) and torch.full((3,), a) gave None (their NumPy twins were non-differentiable)."""
    jnp = pytest.importorskip("jax.numpy")
    torch = pytest.importorskip("torch")
    from zygotepy import gradient

    def f(a):
        return jnp.sum(jnp.linspace(a, 1.0, 5) ** 2) + jnp.sum(jnp.arange(4.0) * jnp.full((4,), a))
    (g,) = gradient(f, jnp.array(2.0, dtype=jnp.float32))
    assert isinstance(g, type(jnp.array(1.0))) and float(g) == pytest.approx(8.75 + 6.0)

    def t(a):
        return torch.sum(torch.full((3,), a) ** 2) + torch.sum(torch.linspace(0.0, 1.0, 3) * a)
    (g,) = gradient(t, torch.tensor(2.0, dtype=torch.float64))
    assert isinstance(g, torch.Tensor) and float(g) == pytest.approx(12.0 + 1.5)


def test_gamma_draw_scale_and_shape():
    """rng.gamma(k, scale) raised MissingAdjoint for a differentiated scale (reparameterizable: scale * G(k)); its
    shape k is refused (an implicit gradient)."""
    def f(x):
        rng = np.random.default_rng(5)
        return np.sum(rng.gamma(2.0, np.abs(x)) ** 2)
    agree(f)

    def g(x):
        rng = np.random.default_rng(5)
        return np.sum(rng.gamma(np.abs(x) + 1.0, 1.0))
    with pytest.raises(ZygoteError, match=r"test_numpy_functions.py:\d+: .*shape parameter"):
        value_and_gradient(g, X.copy())

    def constant_float_shape(x):  # (refused as the shape's gradient: a method call's arguments all count as needed)
        rng = np.random.default_rng(5)
        return np.sum(rng.gamma(2.5, np.abs(x)) ** 2) + rng.gamma(_SHAPE, 2.0) * np.sum(x)
    agree(constant_float_shape)


_SHAPE = 1.5


def test_random_picks_of_a_float_array():
    """rng.choice(x, n), rng.permutation(x) and np.random.choice(x) gave None (declared non-differentiable): the
    picked entries carry x's gradient; a draw differentiated in its probabilities raises."""
    def f(x):
        rng = np.random.default_rng(2)
        np.random.seed(5)
        return (np.sum(rng.choice(x, 6) ** 2) + np.sum(rng.permutation(x) * np.arange(4.0))
                + np.sum(np.random.choice(x, (2, 3)) ** 3))
    agree(f)

    def g(x):
        rng = np.random.default_rng(2)
        return np.sum(rng.choice(x, 3, False, np.abs(x) / np.sum(np.abs(x))))
    with pytest.raises(ZygoteError, match="probabilities"):
        value_and_gradient(g, X.copy())


def test_unique_of_distinct_values_is_a_sort():
    """np.sum(np.unique(x) ** 2) gave None (np.unique was declared non-differentiable)."""
    agree(lambda x: np.sum(np.unique(x) ** 2 * np.arange(4.0)))
    agree(lambda x: np.sum(np.unique(x, return_counts=True)[0] ** 3))
    agree(lambda x: np.sum(np.unique(np.stack([x, x ** 2]), axis=1)[0] * np.arange(4.0)))


def test_unique_with_ties_refuses_only_where_a_tied_value_gets_a_gradient():
    def f(x):
        u = np.unique(np.concatenate([x, x[:1]]))
        return np.sum(u ** 2)
    with pytest.raises(ZygoteError, match="ties"):
        value_and_gradient(f, X.copy())

    def g(x):  # the tied values only feed comparisons: no gradient reaches them
        y = np.concatenate([x, x[:1]])
        total = 0.0
        for u in np.unique(y):
            total = total + np.sum(np.where(y == u, y, 0.0)) ** 2
        return total
    agree(g)


def test_bincount_weights_and_histogram_edges():
    """np.bincount(idx, w) gave None for w (declared non-differentiable); np.histogram's edges, which move with x's
    extremes, gave None: now refused (with range= they are constants)."""
    idx = np.array([0, 2, 2, 1])
    agree(lambda x: np.sum(np.bincount(idx, x) ** 2) + np.sum(np.histogram(x, 3, (-3.0, 3.0))[0] * x[0]))
    with pytest.raises(ZygoteError, match="histogram"):
        value_and_gradient(lambda x: np.sum(np.histogram(x, bins=3)[1] ** 2), X.copy())
    agree(lambda x: np.sum(np.bincount(idx, weights=x) ** 2))  # (the keyword reaches the rule by position)


def test_reductions_of_a_python_float():
    """np.sum(x), np.mean(x), np.max(x), np.ptp(x) of a Python float crashed: AttributeError 'float' object has no
    attribute 'shape'."""
    def f(x):
        t = float(x[0])
        return np.sum(t) * np.mean(t) + np.max(t) + np.min(2.0 * t) + np.ptp(t) + np.sum(3)
    agree(f)


def test_std_of_equal_entries_is_not_nan():
    """np.std of one entry (identically 0) gave a nan gradient (0 / 0); now 0, like |x| at 0."""
    agree(lambda x: np.std(x[:1]) + np.std(x[1:2], axis=0) + np.sum(x))


def test_max_min_where_initial_wins():
    """np.max(x, axis=1, initial=c) gave nan gradients for a row where c won (0 / 0 maxima); none there now. (NumPy
    only: the array API's max has no initial=, so this is no rule-table row.)"""
    m = np.array([[0.1, 0.2, 3.0], [0.5, 0.4, 0.3]])
    agree(lambda x: np.sum(np.max(np.outer(x, x[:3]), axis=1, initial=2.0)) + np.max(x * 0.1, initial=1.0)
          + np.sum(np.min(np.outer(x, x[:3]) + m[0], axis=0, initial=-0.5)))


def test_orders_other_than_c_and_flat():
    """x.reshape(s, order="F") and np.reshape(x, s, "F") gave the C-order gradient (silently wrong); np.ravel(x, "F")
    and x.ravel("F") crashed (TypeError); reading through x.flat gave None. `x.flat[i]` is now `x` indexed at those
    positions (tests/ast_adjoint/lower/test_flat.py); the flatiter itself, walked, raises."""
    agree(lambda x: np.sum(x.reshape((2, 2), order="F") * np.arange(4.0).reshape(2, 2))
          + np.sum(np.reshape(np.outer(x, x[:3]), (3, 4), "F") * np.arange(12.0).reshape(3, 4))
          + np.sum(np.ravel(np.outer(x, x[:2]), "F") * np.arange(8.0)) + np.sum(x.reshape(2, 2).ravel("F") * x))
    with pytest.raises(ZygoteError, match="x.flat"):
        value_and_gradient(lambda x: sum(x.flat) * x[0], X.copy())


def test_select_and_choose():
    """np.select, np.choose and a.choose raised MissingAdjoint; rules added."""
    agree(lambda x: np.sum(np.select([x > 0.5, x < 0], [x ** 2, x * 3], x[0]))
          + np.sum(np.choose(np.array([0, 1, 0, 1]), [x, x ** 2])) + np.sum(np.array([1, 0, 0, 1]).choose([x, x[1]])))


def test_jax_twins_of_the_new_rules():
    """jnp.choose/select/bincount/histogram resolve to the NumPy rules added here (computed on NumPy copies, the
    cotangents returned as JAX arrays); torch.select (indexing, not np.select) is no twin of np.select."""
    jnp = pytest.importorskip("jax.numpy")
    from zygotepy import gradient

    def f(x):
        return (jnp.sum(jnp.choose(jnp.array([0, 1, 0]), [x, x ** 2])) + jnp.sum(jnp.select([x > 0.5], [x ** 2], x))
                + jnp.sum(jnp.bincount(jnp.array([0, 1, 1]), x) ** 2) + jnp.sum(jnp.histogram(x, 3, (-3.0, 3.0))[0] * x))
    (g,) = gradient(f, jnp.array([0.3, 1.2, 2.0]))
    np.testing.assert_allclose(np.asarray(g), [1 + 1 + 0.6 + 0, 2.4 + 2.4 + 6.4 + 1, 1 + 4 + 6.4 + 2], rtol=1e-5)
    torch = pytest.importorskip("torch")
    from zygotepy.adjoints import registry
    assert registry.twin_of(torch.select) is None


class _ArrayLike:
    def __init__(self, w):
        self.w = w

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.w * 2)


def test_objects_converted_by_library_functions_raise():
    """np.sum(obj), np.tanh(obj), float(obj) of a class with __array__/__float__ crashed with AttributeError
    ('A' object has no attribute 'shape', 'numpy.float64' object has no attribute 'items')."""
    for f in (lambda x: np.sum(_ArrayLike(x)), lambda x: np.sum(np.tanh(_ArrayLike(x)))):
        with pytest.raises(ZygoteError, match="converted it"):
            value_and_gradient(f, X.copy())


def _resampled(x):
    rng = np.random.default_rng(1)
    w = np.exp(-x ** 2)
    w = w / np.sum(w)
    idx = rng.choice(len(x), size=len(x), p=w)  # (a particle filter's resampling: positions, data)
    return np.sum(x[idx] * w[idx])


def test_positions_drawn_with_probabilities_that_carry_a_gradient_are_data():
    """`rng.choice(n, p=w)` was refused (a gradient flowing into `p=`); the positions are integers, data as any int,
    and the gradient is the one through the picked entries, as finite differences see it at a fixed draw."""
    agree(_resampled)

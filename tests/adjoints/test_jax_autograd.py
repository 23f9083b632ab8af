"""JAX's functions without a rule of ours, differentiated by `jax.vjp` (adjoints/jax_autograd.py): `jax.scipy.special`,
`jax.scipy.stats`, `jax.nn.relu6`, functions `jax.vmap` and `jax.jit` made. They were refused (JAX's code has `try`).
Checked against `jax.grad` of the same function, with every optimisation on and with every one off; a function that
captures a value that may carry a gradient is refused (JAX would take it for a constant). Skipped without JAX."""
import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from zygotepy import ZygoteError, gradient, value_and_gradient  # noqa: E402

jax.config.update("jax_enable_x64", True)
X = jnp.array([0.3, -0.7, 1.2])

CASES = {
    "erf": lambda x: jnp.sum(jax.scipy.special.erf(x) * x),
    "expit": lambda x: jnp.sum(jax.scipy.special.expit(x) ** 2),
    "gammaln": lambda x: jnp.sum(jax.scipy.special.gammaln(x + 2.0)),
    "xlogy": lambda x: jnp.sum(jax.scipy.special.xlogy(x, x * x + 1.0)),
    "relu6": lambda x: jnp.sum(jax.nn.relu6(x * 4.0) ** 2),
    "norm-logpdf": lambda x: jnp.sum(jax.scipy.stats.norm.logpdf(x, 0.5, 2.0)),
    "vmap": lambda x: jnp.sum(jax.vmap(lambda r: r * jnp.sin(r))(x)),
    "vmap-of-two-arguments": lambda x: jnp.sum(jax.vmap(lambda r, a: r * a, in_axes=(0, None))(x, x[0] * 2.0)),
    "jit": lambda x: jnp.sum(jax.jit(lambda r: r ** 3)(x)),
    "a-list-argument": lambda x: jnp.sum(jax.scipy.special.logsumexp(jnp.stack([x, x * 2.0]), axis=0)),
    # a dict and a nested list are pytrees to JAX: their arrays are lifted too (their gradients were None)
    "a-dict-through-jit": lambda x: jax.jit(lambda p: jnp.sum(p["w"] * p["b"] ** 2))({"w": x, "b": x[::-1] * 2.0}),
    "tree-map-of-a-dict": lambda x: jnp.sum(jax.tree_util.tree_map(lambda t: t ** 2, {"a": x, "b": [[x * 3.0]]})["b"][0][0]),
    # complex values crossing jax.vjp: JAX's cotangents are the conjugates of zygotepy's (the imaginary part's sign)
    "fft": lambda x: jnp.sum(jnp.real(jnp.fft.fft(x)) * jnp.arange(3.0)) + jnp.sum(jnp.imag(jnp.fft.fft(x)) * x),
    "a-complex-result-through-jit": lambda x: jnp.sum(jnp.imag(jax.jit(lambda a: jnp.exp(1j * a))(x))),
    "a-complex-argument-through-jit": lambda x: jnp.sum(jnp.abs(jax.jit(lambda z: z * (2.0 - 1.0j))(x * (1 + 2j))) ** 2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_jax_grad(mode, name):
    f = CASES[name]
    value, (grad,) = value_and_gradient(f, X)
    np.testing.assert_allclose(np.asarray(value), np.asarray(f(X)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(f)(X)), rtol=1e-10, atol=1e-12)


def test_a_float_argument_gets_a_float():
    (g,) = gradient(lambda s: float(jnp.sum(jax.scipy.special.erf(X * s))), 0.5)
    assert type(g) is float
    assert g == pytest.approx(float(jax.grad(lambda s: jnp.sum(jax.scipy.special.erf(X * s)))(0.5)), rel=1e-10)


def _captured_by_vmap(x):
    w = x[0] * 2.0
    return jnp.sum(jax.vmap(lambda r: r * w)(x))


def _captured_by_jit(x):
    w = x[0] * 2.0
    return jnp.sum(jax.jit(lambda r: r * w)(x))


def _bound_by_partial(x):
    w = x[0] * 2.0
    return jnp.sum(jax.vmap(functools.partial(lambda a, r: r * a, w))(x))


@pytest.mark.parametrize("f", [_captured_by_vmap, _captured_by_jit, _bound_by_partial])
def test_a_captured_value_is_refused(f):
    with pytest.raises(ZygoteError, match="captures"):
        gradient(f, X)


def test_a_list_of_arrays_by_keyword_and_an_unused_result(mode):
    # lifted one level into a list given by keyword (its cotangent a list), and a back given no cotangent
    def f(x):
        jax.vmap(lambda r: r * 2.0)(x)  # (its result unused)
        return jnp.sum(jax.jit(lambda *, parts: parts[0] * parts[1])(parts=[x, x * 3.0]))
    (grad,) = gradient(f, X)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(6.0 * X), rtol=1e-12)


def _fori_reading_a_captured_array(v):
    def body(i, s):
        return s * jnp.cos(v[i]) + v[i]
    return jax.lax.fori_loop(0, 3, body, 0.0)


def test_a_function_given_to_jax_that_captures_a_value_is_refused():
    """`lax.fori_loop`, `lax.scan`, `lax.cond`, `lax.map` with a body reading `v` it is not given: JAX takes `v` for
    a constant (its gradient was None)."""
    with pytest.raises(ZygoteError, match="a function given to it captures"):
        gradient(_fori_reading_a_captured_array, X)


def _a_tensor_handed_to_jax(t):
    return jnp.sum(jnp.from_dlpack(t) ** 2)


def test_another_librarys_array_given_to_a_jax_function_is_refused():
    """jax.vjp took the torch tensor for a constant: its gradient came back None, silently."""
    torch = pytest.importorskip("torch")
    with pytest.raises(ZygoteError, match=r"test_jax_autograd.py:\d+: zygotepy differentiates from_dlpack by jax.vjp, "
                                          r"which cannot differentiate the torch.Tensor"):
        gradient(_a_tensor_handed_to_jax, torch.tensor([1.0, 2.0], dtype=torch.float64))


def _tree_step(p):
    q = jax.tree_util.tree_map(lambda a, b: a - 0.3 * b, p, {"w": p["w"] * 2.0, "b": None})
    return np.sum((q["w"] - 1.0) ** 2)


def test_a_tree_map_over_a_tree_with_an_empty_subtree(mode):
    """`None` is an empty subtree to JAX: its cotangent seed is None (it was jnp.zeros_like(None): a TypeError)."""
    p = {"w": np.array([0.3, -0.7]), "b": None}
    (g,) = gradient(_tree_step, p)
    np.testing.assert_allclose(g["w"], 2 * (0.4 * p["w"] - 1.0) * 0.4, rtol=1e-12)


def _tree_scaled(p):
    q = jax.tree_util.tree_map(lambda a: a * 1.0, p)
    return np.sum((q["w"] - 10000.0) ** 2)


def test_a_tree_function_given_float64_numpy_leaves_in_float32_is_refused():
    """With jax_enable_x64 off, jax.vjp would compute a tree function's leaves in float32, while the plain call
    hands its function the float64 NumPy leaves: value and gradient rounded (0.0078 for 0.0074)."""
    p = {"w": np.array([10000.001, 10000.0037])}
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(ZygoteError, match="computes in float32 while jax_enable_x64 is off"):
            gradient(_tree_scaled, p)
    finally:
        jax.config.update("jax_enable_x64", True)
    (g,) = gradient(_tree_scaled, p)
    np.testing.assert_allclose(g["w"], 2 * (p["w"] - 10000.0), rtol=1e-9)

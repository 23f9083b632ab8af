"""jax.nn's activations (zygotepy/adjoints/jax_nn.py) differentiated inside user functions: every row against central
finite differences in float64 and against jax.grad; gradients stay JAX arrays of the input's dtype; parameters
(negative_slope, alpha, b) get their gradients; the options without a rule refuse."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import zygotepy  # noqa: E402
from zygotepy.adjoints import jax_nn, registry  # noqa: E402
from zygotepy.errors import ZygoteError  # noqa: E402

jax_nn.register()  # (idempotent: where the registry runs it on JAX's import, it already has)


@pytest.fixture(scope="module", autouse=True)
def x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


X = [[0.3, -1.2, 2.0], [-0.4, 0.7, 1.1]]      # no entry at a kink (0)
W = [[1.0, -2.0, 0.5], [0.3, 0.9, -1.5]]
W_ROWS = [0.7, -1.3]
W_COLS = [0.4, -0.6, 1.2]

nn = jax.nn
# (id, the function of x, the shape of its result's weight): the user's function is sum(fn(x) * weight)
ROWS = [
    ("relu", nn.relu, W),
    ("sigmoid", nn.sigmoid, W),
    ("softmax_axis1", lambda x: nn.softmax(x, axis=1), W),
    ("softmax_axis0", lambda x: nn.softmax(x, 0), W),
    ("softmax_default_axis", nn.softmax, W),
    ("softmax_both_axes", lambda x: nn.softmax(x, axis=(0, 1)), W),
    ("log_softmax_axis1", lambda x: nn.log_softmax(x, axis=1), W),
    ("log_softmax_axis0", lambda x: nn.log_softmax(x, axis=0), W),
    ("gelu_tanh", nn.gelu, W),
    ("gelu_tanh_keyword", lambda x: nn.gelu(x, approximate=True), W),
    ("gelu_exact", lambda x: nn.gelu(x, approximate=False), W),
    ("gelu_exact_positional", lambda x: nn.gelu(x, False), W),
    ("silu", nn.silu, W),
    ("swish", nn.swish, W),
    ("softplus", nn.softplus, W),
    ("log_sigmoid", nn.log_sigmoid, W),
    ("leaky_relu", nn.leaky_relu, W),
    ("leaky_relu_slope", lambda x: nn.leaky_relu(x, 0.2), W),
    ("leaky_relu_slope_keyword", lambda x: nn.leaky_relu(x, negative_slope=0.2), W),
    ("elu", nn.elu, W),
    ("elu_alpha", lambda x: nn.elu(x, alpha=1.7), W),
    ("logsumexp_axis1", lambda x: nn.logsumexp(x, axis=1), W_ROWS),
    ("logsumexp_axis0_positional", lambda x: nn.logsumexp(x, 0), W_COLS),
    ("logsumexp_all", lambda x: nn.logsumexp(x) * 1.0, 1.0),
    ("logsumexp_keepdims", lambda x: nn.logsumexp(x, axis=1, keepdims=True), [[0.7], [-1.3]]),
    ("logsumexp_b_constant", lambda x: nn.logsumexp(x, axis=1, b=jnp.asarray(W_COLS) ** 2), W_ROWS),
    ("scipy_logsumexp", lambda x: jax.scipy.special.logsumexp(x, axis=1), W_ROWS),
    ("tanh", nn.tanh, W),
    ("chain", lambda x: nn.softmax(nn.gelu(x) * 2.0 + nn.softplus(x), axis=1), W),
]


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (float(f(jnp.asarray(up))) - float(f(jnp.asarray(down)))) / (2 * eps)
    return g


@pytest.mark.parametrize("fn,weight", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_row_matches_finite_differences_and_jax_grad(fn, weight):
    w = jnp.asarray(weight)

    def f(x):
        return jnp.sum(fn(x) * w)
    x = jnp.asarray(X)
    (g,) = zygotepy.gradient(f, x)
    assert isinstance(g, jax.Array) and g.dtype == jnp.float64 and g.shape == x.shape
    np.testing.assert_allclose(np.asarray(g), _fd(f, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(f)(x)), rtol=1e-12, atol=1e-13)


PARAM_ROWS = [
    ("leaky_relu_negative_slope", lambda x, p: nn.leaky_relu(x, p), 0.2),
    ("leaky_relu_negative_slope_keyword", lambda x, p: nn.leaky_relu(x, negative_slope=p), 0.2),
    ("elu_alpha", lambda x, p: nn.elu(x, p), 1.7),
    ("elu_alpha_array", lambda x, p: nn.elu(x, alpha=p), [0.5, 1.0, 2.0]),
    ("logsumexp_b", lambda x, p: nn.logsumexp(x, 1, p), [0.5, 1.0, 2.0]),
    ("logsumexp_b_keyword", lambda x, p: nn.logsumexp(x, axis=1, b=p), [0.5, 1.0, 2.0]),
    ("logsumexp_b_broadcast", lambda x, p: nn.logsumexp(x, axis=0, b=p), [[0.5], [2.0]]),
]


@pytest.mark.parametrize("fn,p0", [r[1:] for r in PARAM_ROWS], ids=[r[0] for r in PARAM_ROWS])
def test_parameters_get_their_gradients(fn, p0):
    w = jnp.asarray(W)

    def f(x, p):
        y = fn(x, p)
        return jnp.sum(y * (w if y.shape == w.shape else jnp.asarray(W_ROWS) if y.shape == (2,) else 1.0))
    x, p = jnp.asarray(X), jnp.asarray(p0)
    gx, gp = zygotepy.gradient(f, x, p)
    assert isinstance(gp, jax.Array) and gp.dtype == jnp.float64 and gp.shape == p.shape
    np.testing.assert_allclose(np.asarray(gx), _fd(lambda a: f(a, p), X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gp), _fd(lambda b: f(x, b), p0), rtol=1e-6, atol=1e-8)
    assert np.any(np.asarray(gp) != 0)


def test_float32_stays_float32_and_matches_jax_grad():
    x = jnp.asarray(X, dtype=jnp.float32)

    def f(x):
        return jnp.sum(nn.log_softmax(nn.gelu(x), axis=1) * jnp.asarray(W, dtype=jnp.float32)) + jnp.sum(nn.relu(x))
    (g,) = zygotepy.gradient(f, x)
    assert isinstance(g, jax.Array) and g.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(f)(x)), rtol=1e-5, atol=1e-6)


def test_numpy_input_gets_a_numpy_gradient():
    def f(x):
        return jnp.sum(nn.sigmoid(x) * jnp.asarray(W))
    x = np.asarray(X)
    (g,) = zygotepy.gradient(f, x)
    assert type(g) is np.ndarray and g.dtype == np.float64
    np.testing.assert_allclose(g, _fd(f, X), rtol=1e-6, atol=1e-8)


def test_kinks_follow_jax():
    """relu'(0) = 0 (JAX's custom_jvp), leaky_relu'(0) = 1, elu'(0) = alpha: the same numbers as jax.grad."""
    x = jnp.asarray([0.0, 0.0, 1.0])
    for fn in (nn.relu, nn.leaky_relu, lambda x: nn.elu(x, 0.5)):
        def f(x, fn=fn):
            return jnp.sum(fn(x))
        np.testing.assert_array_equal(np.asarray(zygotepy.gradient(f, x)[0]), np.asarray(jax.grad(f)(x)))


def test_under_jax_jit():
    def f(x):
        return jnp.sum(nn.softmax(x, axis=1) * jnp.asarray(W)) + jnp.sum(nn.logsumexp(x, axis=0))
    x = jnp.asarray(X)
    jitted = jax.jit(lambda x: zygotepy.gradient(f, x)[0])
    np.testing.assert_allclose(np.asarray(jitted(x)), _fd(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("call,words", [
    (lambda x: nn.softmax(x, axis=1, where=x > 0), "where="),
    (lambda x: nn.log_softmax(x, where=x > 0), "where="),
    (lambda x: nn.logsumexp(x, axis=1, return_sign=True)[0], "return_sign"),
], ids=["softmax_where", "log_softmax_where", "logsumexp_return_sign"])
def test_options_without_a_rule_refuse(call, words):
    with pytest.raises(ZygoteError, match=words):
        zygotepy.gradient(lambda x: jnp.sum(call(x)), jnp.asarray(X))


def test_no_cotangent_gives_none():
    x = jnp.asarray(X)
    for target, args, kwargs in [(nn.relu, (x,), {}), (nn.gelu, (x, False), {}), (nn.elu, (x, 1.5), {}),
                                 (nn.softmax, (x,), {"axis": 0}), (nn.logsumexp, (x, 1), {"b": x})]:
        rule = registry.find_rule(target)
        _, back = rule(*args, **kwargs)
        grads = back(None)
        assert all(g is None for g in grads[:len(args)]), target
        if kwargs and getattr(rule, "__zygote_keywords__", False):  # (then a last dict: the keywords' cotangents)
            assert len(grads) == len(args) + 1 and all(g is None for g in grads[-1].values()), target
        else:
            assert len(grads) == len(args), target


def test_importing_the_module_does_not_import_jax():
    """The module registers lazily: in a fresh interpreter, importing zygotepy and it leaves JAX unimported."""
    import subprocess
    import sys
    code = "import sys, zygotepy, zygotepy.adjoints.jax_nn; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_rules_register_when_jax_is_imported_after_zygotepy():
    import subprocess
    import sys
    code = ("import zygotepy, zygotepy.adjoints.jax_nn, jax\n"
            "from zygotepy.adjoints import registry\n"
            "print(registry.find_rule(jax.nn.relu) is not None, registry.find_rule(jax.nn.logsumexp) is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_stop_gradient_is_data_as_jax_grad_has_it(mode):
    """`jax.lax.stop_gradient(x)` was refused (its source's `try`)."""
    x = jnp.array([0.1, -0.2, 0.3])

    def f(x):
        return jnp.sum(x * jax.lax.stop_gradient(x) ** 2)

    g, = zygotepy.gradient(f, x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(f)(x)))

"""JAX's names and conventions (grad, value_and_grad, vjp, jvp, hvp, argnums, has_aux), tree_map for update steps, and
jacobian/hessian over several arguments and nested structures: each against central finite differences in float64."""
import dataclasses
import doctest
import math
import os
import sys
from collections import namedtuple

import numpy as np
import pytest

import zygotepy
from zygotepy import (StructGrad, ZygoteError, grad, gradient, hessian, hvp, jacobian, jvp, tree_map, value_and_grad,
                      value_and_gradient, vjp)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import central_hessian  # noqa: E402


def _fd_grad(f, args, i, h=1e-6):
    x = np.asarray(args[i], dtype=float)
    g = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        a_up, a_down = list(args), list(args)
        a_up[i] = up if x.shape else float(up)
        a_down[i] = down if x.shape else float(down)
        g[k] = (f(*a_up) - f(*a_down)) / (2 * h)
    return g


def loss(w, b, x):
    return np.sum(np.tanh(x @ w + b) ** 2) + 0.1 * np.sum(w ** 2)


W = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]])
B = np.array([0.1, -0.3])
X = np.array([[1.0, 0.5, -0.2], [0.3, -1.0, 0.8]])


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_grad_and_argnums(argnums):
    got = grad(loss, argnums=argnums)(W, B, X)
    expected = [_fd_grad(loss, (W, B, X), i) for i in range(2)]
    if isinstance(argnums, int):
        np.testing.assert_allclose(got, expected[argnums], rtol=1e-6, atol=1e-9)
    else:
        assert isinstance(got, tuple) and len(got) == len(argnums)
        for g, i in zip(got, argnums):
            np.testing.assert_allclose(g, expected[i], rtol=1e-6, atol=1e-9)
    assert gradient(loss, W, B, X, argnums=argnums) is not None
    np.testing.assert_allclose(np.asarray(gradient(loss, W, B, X, argnums=1)), expected[1], rtol=1e-6, atol=1e-9)


def test_value_and_grad_and_value_and_gradient_with_argnums():
    v, g = value_and_grad(loss, argnums=(0, 1))(W, B, X)
    assert v == pytest.approx(loss(W, B, X), rel=1e-14)
    np.testing.assert_allclose(g[1], _fd_grad(loss, (W, B, X), 1), rtol=1e-6, atol=1e-9)
    v2, g2 = value_and_gradient(loss, W, B, X, argnums=0)
    assert v2 == v
    np.testing.assert_allclose(g2, g[0], rtol=1e-14)


def test_has_aux_returns_the_auxiliary_value_and_seeds_only_the_value():
    def f(w, x):
        pred = x @ w
        return np.sum(pred ** 2), {"pred": pred, "n": len(x)}
    g, aux = grad(f, has_aux=True)(W[:, 0], X)
    np.testing.assert_allclose(g, _fd_grad(lambda w, x: f(w, x)[0], (W[:, 0], X), 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(aux["pred"], X @ W[:, 0])
    assert aux["n"] == 2
    (v, aux2), g2 = value_and_grad(f, has_aux=True)(W[:, 0], X)
    assert v == pytest.approx(f(W[:, 0], X)[0])
    np.testing.assert_allclose(g2, g, rtol=1e-14)
    with pytest.raises(ZygoteError, match="has_aux=True"):
        grad(lambda w: np.sum(w), has_aux=True)(B)


def test_argnums_out_of_range_is_a_clear_error():
    with pytest.raises(ZygoteError, match="argnums=5"):
        gradient(loss, W, B, X, argnums=5)


def test_vjp_is_pullback_and_jvp_matches_finite_differences():
    y, back = vjp(lambda x: np.sin(x) * x, B)
    np.testing.assert_allclose(back(np.ones(2))[0], np.cos(B) * B + np.sin(B))
    value, tangent = jvp(lambda x, y: np.sin(x) * y, (B, 2.0), (np.array([1.0, 0.5]), 0.3))
    np.testing.assert_allclose(value, np.sin(B) * 2.0)
    h = 1e-6
    fd = (np.sin(B + h * np.array([1.0, 0.5])) * (2.0 + 0.3 * h) - np.sin(B - h * np.array([1.0, 0.5])) *
          (2.0 - 0.3 * h)) / (2 * h)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def test_hvp_matches_the_hessian_times_the_vector():
    f = lambda w: loss(w.reshape(3, 2), B, X)  # noqa: E731
    w = W.ravel()
    v = np.linspace(-1.0, 1.0, 6)
    (hv,) = hvp(f, (w,), (v,))
    np.testing.assert_allclose(hv, hessian(f, w) @ v, rtol=1e-10, atol=1e-12)
    h = 1e-5
    fd = (gradient(f, w + h * v)[0] - gradient(f, w - h * v)[0]) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)


def test_hessian_over_several_arguments_gives_blocks():
    def f(x, y):
        return np.sum(x ** 2 * y) + math.sin(y[0]) * x[1]
    x, y = np.array([0.4, -0.7]), np.array([1.3, 0.2])
    H = hessian(f, x, y)
    full = hessian(lambda z: f(z[:2], z[2:]), np.concatenate([x, y]))
    for i, (a, b) in enumerate([(0, 2), (2, 4)]):
        for j, (c, d) in enumerate([(0, 2), (2, 4)]):
            np.testing.assert_allclose(H[i][j], full[a:b, c:d], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hessian(f, x, y, argnums=1), full[2:, 2:], rtol=1e-12, atol=1e-14)
    assert hessian(lambda a, b: a * a * b, 1.0, 2.0) == ((4.0, 2.0), (2.0, 0.0))


def test_hessian_and_jacobian_of_a_dict_of_parameters():
    def f(p):
        return np.sum(p["w"] ** 2 * p["b"]) + p["c"] * p["b"] ** 3
    p = {"w": np.array([1.0, 2.0]), "b": 0.5, "c": 3.0, "n": 2}
    H = hessian(f, p)
    np.testing.assert_allclose(H["w"]["w"], 2 * 0.5 * np.eye(2))
    np.testing.assert_allclose(H["w"]["b"], 2 * p["w"])
    np.testing.assert_allclose(H["b"]["w"], 2 * p["w"])
    assert H["b"]["b"] == pytest.approx(6 * 3.0 * 0.5) and H["c"]["b"] == pytest.approx(3 * 0.5 ** 2)
    assert H["n"] is None  # an int: data
    J = jacobian(lambda p: {"a": p["w"] * p["b"], "s": np.sum(p["w"])}, p)
    np.testing.assert_allclose(J["a"][0]["w"], 0.5 * np.eye(2))
    np.testing.assert_allclose(J["a"][0]["b"], p["w"])
    np.testing.assert_allclose(J["s"][0]["w"], np.ones(2))
    np.testing.assert_allclose(jacobian(lambda x, y: x * y, np.array([1.0, 2.0]), 3.0, argnums=1), [1.0, 2.0])


Pair = namedtuple("Pair", "w b")


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray
    name: str = "dense"


class Plain:
    def __init__(self, W, b):
        self.W, self.b = W, b


@pytest.mark.parametrize("params", [
    {"W": W, "b": B}, [W, B], (W, B), Pair(W, B), Layer(W, B), Plain(W, B), {"layers": [{"W": W, "b": B}]},
], ids=["dict", "list", "tuple", "namedtuple", "dataclass", "object", "nested"])
def test_tree_map_makes_an_update_step_on_any_structure(params):
    def net_loss(p):
        leaves = zygotepy.trees.leaves(p)
        arrays = [a for a in leaves if isinstance(a, np.ndarray)]
        return loss(arrays[0], arrays[1], X)
    g = gradient(net_loss, params)[0]
    new = tree_map(lambda p, g: p if g is None else p - 0.1 * g, params, g)
    assert type(new) is type(params)
    before = [a for a in zygotepy.trees.leaves(params) if isinstance(a, np.ndarray)]
    after = [a for a in zygotepy.trees.leaves(new) if isinstance(a, np.ndarray)]
    expected = [_fd_grad(loss, (W, B, X), i) for i in range(2)]
    for b, a, e in zip(before, after, expected):
        np.testing.assert_allclose(a, b - 0.1 * e, rtol=1e-6, atol=1e-9)
    assert net_loss(new) < net_loss(params)
    if isinstance(params, Layer):
        assert new.name == "dense"


def test_tree_map_passes_none_for_a_missing_gradient_and_reads_structgrads():
    assert tree_map(lambda p, g: (p, g), {"a": 1.0, "b": [2.0, 3.0]}, {"a": 0.5, "b": None}) == \
        {"a": (1.0, 0.5), "b": [(2.0, None), (3.0, None)]}
    obj = Plain(1.0, 2.0)
    out = tree_map(lambda p, g: p - g, obj, StructGrad(W=0.5, b=1.0))
    assert (out.W, out.b) == (0.5, 1.0) and (obj.W, obj.b) == (1.0, 2.0)


def test_float32_inputs_give_float32_gradients():
    x = np.array([0.3, -0.2], dtype=np.float32)
    assert grad(lambda x: np.sum(np.sin(x) * x))(x).dtype == np.float32


def test_the_docstring_examples():
    for module in (zygotepy.transforms, zygotepy.trees, zygotepy.api_blocks):
        failed, _ = doctest.testmod(module, extraglobs={"np": np})
        assert failed == 0, module.__name__


def _inner(x, y):
    return x * x * y


@pytest.mark.parametrize("outer, expected", [
    (lambda x: gradient(_inner, x, 2.0, argnums=0), lambda x: 4.0),
    (lambda x: gradient(_inner, x, x * 0.5, argnums=(1, 0))[0] * 2.0, lambda x: 4.0 * x),
    (lambda x: sum(value_and_gradient(_inner, x, 3.0, argnums=0)), lambda x: 6.0 * x + 6.0),
], ids=["int", "tuple", "value_and_gradient"])
def test_argnums_in_a_nested_gradient(outer, expected):
    assert gradient(outer, 1.5)[0] == pytest.approx(expected(1.5), rel=1e-12)


def _cubes(x, y):
    return np.sum(x ** 3) * y


def test_an_entry_point_given_the_function_alone_returns_the_function_of_the_point():
    """`hessian(f)(x)`, as `jax.hessian(f)` and `torch.func.hessian(f)` are called (and as scipy.optimize takes `jac=`
    and `hess=`): before, `hessian(f)` returned `()`, the Hessian with respect to no arguments."""
    x, y = np.array([1.0, 2.0]), 3.0
    assert gradient(_cubes)(x, y)[1] == gradient(_cubes, x, y)[1] == 9.0
    assert np.array_equal(gradient(_cubes, argnums=0)(x, y), 3 * x ** 2 * y)
    assert value_and_gradient(_cubes)(x, y)[0] == 27.0
    assert np.array_equal(hessian(_cubes, argnums=0)(x, y), np.diag(6 * x * y))
    assert np.array_equal(hessian(lambda v: np.sum(v ** 3))(x), np.diag(6 * x))
    assert np.array_equal(jacobian(lambda v: v ** 2)(x)[0], np.diag(2 * x))
    assert np.array_equal(jacobian(_cubes, argnums=1)(x, y), 9.0)


def _inner_curried(x):
    return gradient(_cubes)(x, 2.0)[0][0]


def test_the_function_alone_inside_a_differentiated_function_is_a_clear_error():
    with pytest.raises(ZygoteError, match=r"test_transforms.py:\d+: .*gradient\(f\) called with the function alone"):
        gradient(_inner_curried, np.array([1.0, 2.0]))


@pytest.mark.parametrize("f", [lambda x: np.sum(np.power(x, 2.5)), lambda x: np.linalg.norm(x) ** 3,
                               lambda x: np.sum(np.logaddexp(0.0, x))], ids=["power", "norm", "logaddexp"])
def test_hvp_by_reverse_over_reverse_where_duals_cannot_pass(f):
    """A NumPy function with no tangent rule: hvp takes the gradient of <grad f, v>, as hessian retries (refused
    before, while hessian of the same functions worked)."""
    x, v = np.array([0.3, 0.7, 1.2]), np.array([1.0, -2.0, 0.5])
    (hv,) = hvp(f, (x,), (v,))
    assert np.allclose(hv, hessian(f, x) @ v)


def test_hvp_of_a_tree_by_reverse_over_reverse():
    """hvp of a dict or list of arrays through a function with no tangent rule: the fallback's <grad f, v> multiplied
    a dict by a dict (a TypeError; found by a probe of ML programs)."""
    from zygotepy.forward.dual import FORWARD
    w, v = np.array([0.3, 0.8, -0.2]), np.array([1.0, -0.5, 2.0])
    no_rule = FORWARD.pop(np.fft.rfft)  # (the route taken where dual numbers cannot pass)
    try:
        def f(p):
            return np.sum(np.abs(np.fft.rfft(p["w"])) ** 2) + np.sum(p["b"] ** 3)

        def flat(u):
            return f({"w": u[:3], "b": u[3:]})

        (hv,) = hvp(f, ({"w": w, "b": w[:2]},), ({"w": v, "b": v[:2]},))
        want = hessian(flat, np.concatenate([w, w[:2]])) @ np.concatenate([v, v[:2]])
        np.testing.assert_allclose(np.concatenate([hv["w"], hv["b"]]), want, atol=1e-10)
        (hl,) = hvp(lambda ps: f({"w": ps[0], "b": ps[1]}), ([w, w[:2]],), ([v, v[:2]],))
        np.testing.assert_allclose(np.concatenate(hl), want, atol=1e-10)
    finally:
        FORWARD[np.fft.rfft] = no_rule


def _loss_and_aux(w, x):
    return np.sum((w * x) ** 2), w * 2


@pytest.mark.dual_route
def test_grad_with_aux_inside_a_differentiated_function(mode):
    """`grad(f, has_aux=True)` in `f`: UnsupportedSyntax pointing at api.py's `try` (argnums' selection)."""
    def outer(x):
        g, aux = grad(_loss_and_aux, has_aux=True)(x, 3.0)
        return np.sum(g) + np.sum(aux)

    x = np.array([0.5, -1.0])
    g, = gradient(outer, x)
    np.testing.assert_allclose(g, [20.0, 20.0])


_W = np.array([0.7, -1.3, 0.4])


def _sorted_part(u):
    return np.sort(u)


FORWARD_OVER_REVERSE = {
    "asarray": lambda x: np.sum(_W * np.asarray(x) ** 2),
    "einsum": lambda x: np.sum(np.einsum("i,i->i", _W, x) ** 2),
    "take": lambda x: np.sum(_W * np.take(x, [2, 0, 1]) ** 3),
    "pad": lambda x: np.sum(np.pad(x, 1, constant_values=0.5) ** 3),
    "tile": lambda x: np.sum(np.tile(x, 2) ** 3),
    "sort-in-a-helper": lambda x: np.sum(_W * _sorted_part(x) ** 2),
}


@pytest.mark.dual_route
@pytest.mark.parametrize("name", sorted(FORWARD_OVER_REVERSE))
def test_forward_over_reverse_through_gathers_and_conversions(name):
    """`jvp(grad(f))` and `jacobian(grad(f), mode="forward")` refused (a dual number converted to a plain array) when
    `f` used np.asarray, einsum, take, pad or tile, or np.sort in a helper: their rules took NumPy arrays of the
    dual numbers (for shapes, NumPy's einsum parser, the scatter's bincount)."""
    f = FORWARD_OVER_REVERSE[name]
    x, v = np.array([0.3, -0.5, 1.2]), np.array([1.0, 2.0, 3.0])
    want = central_hessian(f, x)
    np.testing.assert_allclose(jvp(grad(f), (x,), (v,))[1], want @ v, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacobian(grad(f), x, mode="forward")[0], want, rtol=1e-6, atol=1e-8)


def test_has_aux_takes_a_list_pair_and_hessian_an_int():
    """`[value, aux]` was refused (JAX unpacks any pair); `hessian(f, 2)` said it needs a real number, where gradient
    differentiates an int as a real number."""
    assert value_and_grad(lambda x: [x ** 2, "aux"], has_aux=True)(3.0) == ((9.0, "aux"), 6.0)
    assert hessian(lambda x: x ** 3, 2) == 12.0


def test_a_tuple_output_in_jacobians_forward_mode_says_reverse_mode_takes_it():
    with pytest.raises(ZygoteError, match=r"in reverse mode, tuples, lists and dicts of them too\); it returned tuple"):
        jacobian(lambda x: (x * 2, x ** 2), 3.0, mode="forward")
    assert jacobian(lambda x: (x * 2, x ** 2), 3.0, mode="reverse") == ((2.0,), (6.0,))


@pytest.mark.parametrize("call", [lambda f: jvp(f, (1.0,), 1.0), lambda f: jvp(f, 1.0, (1.0,)),
                                  lambda f: hvp(f, (1.0,), 1.0), lambda f: hvp(f, 1.0, (1.0,))],
                         ids=["jvp tangents", "jvp args", "hvp vectors", "hvp args"])
def test_arguments_and_tangents_that_are_no_sequences_are_refused(call):
    """docs/api.md: "`args` and `tangents` are sequences of the same length (a `ZygoteError` otherwise)" (TypeError)."""
    with pytest.raises(ZygoteError, match="must be a tuple or list of one per argument"):
        call(lambda x: x * x)


@pytest.mark.parametrize("argnums", [1.0, True, (0, 2), "1"])
def test_hessian_refuses_argnums_that_name_no_argument_as_gradient_does(argnums):
    """`argnums=1.0` raised TypeError; `argnums=True` gave H[1][1] where gradient refuses it."""
    with pytest.raises(ZygoteError, match="does not name positional arguments"):
        hessian(lambda a, b: a * b * b, 2.0, 3.0, argnums=argnums)

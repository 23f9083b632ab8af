"""A `for` loop's variable updated in place (zygotepy/adjoints/mutation/loop_links.py): the items of a container held
in another (`for w in out["w"]`), items also held outside the container walked, and the loop variable of an unnamed
copy are differentiated; the loop variable of a copy updated after the loop raises naming the loop's line."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient
from zygotepy.testing import check_grads

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from plain_checks import central, central_hessian  # noqa: E402


def test_the_loop_variable_of_an_unnamed_copy_updated_in_the_body():
    """`for a in list(W): a *= 2` updates W's items: found in W through the copy (shared.py `shared_contents`)."""
    def f(W):
        for a in list(W):
            a *= 2.0
        return np.sum(W[0] ** 2) + np.sum(W[1] * W[0])
    (g,) = gradient(f, [np.array([1.0, 2.0]), np.array([3.0, -1.0])])
    w0, w1 = np.array([2.0, 4.0]), np.array([6.0, -2.0])  # (the arrays after the loop: d/dW0 = 2 (2 w0 + w1))
    np.testing.assert_allclose(g[0], 2.0 * (2.0 * w0 + w1))
    np.testing.assert_allclose(g[1], 2.0 * w0)


def test_the_loop_variable_of_a_copy_updated_after_the_loop_still_raises():
    """After the loop no iteration links the name to the container the copy was made from."""
    def f(W):
        for a in list(W):
            pass
        a *= 2.0
        return np.sum(W[1] ** 2)
    with pytest.raises(ZygoteError, match="also held in 'W' outside the list it walks .*a copy made by"):
        gradient(f, [np.ones(2), np.ones(2)])


# A loop over a container that is itself an item of another (`for w in out["w"]`) updates the items in place; it was
# refused with a message about copies. The items are reached only through the container walked, so it is differentiated.
def walk_a_dict_entry(x):
    out = {"w": [np.array([x, 1.0]), np.array([2 * x, 3.0])], "b": [x]}
    for w in out["w"]:
        w *= 3
        w += out["b"][0] * w
    out["w"][0][1] = x * x
    return (out["w"][0] * out["w"][1]).sum() * out["w"][1][0]


def walk_a_list_entry(x):
    out = [[np.array([x, 1.0]), np.array([2 * x, 3.0])]]
    for w in out[0]:
        w *= x
    return (out[0][0] * out[0][1]).sum()


class _Holder:
    pass


def walk_an_attribute_then_its_items(x):
    o = _Holder()
    o.layers = [[np.array([x, 2.0])], [np.array([x * x, 1.0])]]
    for layer in o.layers:
        for w in layer:
            w *= x
    return sum((layer[0] ** 2).sum() for layer in o.layers)


def walk_a_reversed_copy_of_a_dict_entry(x):
    out = {"w": [np.array([x, 1.0]), np.array([2 * x, 3.0])]}
    for w in out["w"][::-1]:
        w *= x
    return (out["w"][0] * out["w"][1]).sum()


@pytest.mark.parametrize("f", [walk_a_dict_entry, walk_a_list_entry, walk_an_attribute_then_its_items,
                               walk_a_reversed_copy_of_a_dict_entry], ids=lambda f: f.__name__)
def test_updating_the_items_of_a_container_held_in_another(f):
    check_grads(f, 1.5)
    check_grads(f, -0.7)


def held_twice_in_a_dict(x):
    a = np.array([x, 1.0])
    out = {"w": [a], "v": [a]}
    for w in out["v"]:
        w *= x
    return (out["w"][0] ** 2).sum()


def a_stored_copy_walked(x):
    out = {"w": [np.array([x, 1.0]), np.array([2 * x, 3.0])]}
    out["c"] = out["w"][::-1]
    for w in out["c"]:
        w *= x
    return (out["w"][0] * out["w"][1]).sum() + out["c"][0][0]


def a_list_copy_appended_then_walked(x):
    out = [[np.array([x, 1.0]), np.array([2 * x, 3.0])]]
    out.append(list(out[0]))
    for w in out[1]:
        w *= x
    return (out[0][0] * out[0][1]).sum()


@pytest.mark.parametrize("f", [held_twice_in_a_dict, a_stored_copy_walked, a_list_copy_appended_then_walked],
                         ids=lambda f: f.__name__)
def test_items_also_held_outside_the_walked_container(f, mode):
    """The items sit in `out` a second time, outside the container walked: an update through the loop variable is
    one of both places (it was silently wrong when only the container's own place was routed, then refused)."""
    check_grads(f, 1.5)
    check_grads(f, -0.7)


def test_the_items_of_a_jax_vector_given_to_a_helper_that_may_update_them():
    """A loop over a JAX vector whose items go to a helper that may update its arguments (`acc.append(u * s)`): a JAX
    array is never updated in place, so neither the vector nor the item changed. It was refused ("a loop over the array
    that its body updates in place"), as for torch, whose items are views; found by the program generator."""
    jnp = pytest.importorskip("jax.numpy")

    def f(x, b):
        def push(u, acc, s):
            acc.append(u * s)
            return len(acc)
        acc, n = [], 0
        for u in x:
            n = n + push(u, acc, b)
        return sum(acc) * n

    x, b = np.array([0.3, -0.7, 1.1]), 0.8
    gx, gb = gradient(f, jnp.asarray(x), b)
    want = gradient(f, x, b)
    assert np.allclose(np.asarray(gx), want[0], rtol=1e-6) and np.isclose(float(gb), want[1], rtol=1e-6)
    check_grads(f, x, b)


def products_appended_to_a_list_it_reads(x):
    out = [1.0]
    for v in x:
        out.append(v * out[-1])
    return out[-1] + sum(out)


def running_products(x):
    import itertools
    import operator
    return sum(itertools.accumulate(x, operator.mul)) ** 2


def a_vector_updated_ahead_of_its_loop(x):
    x = x * 1.0
    s = 0.0
    for v in x:
        s = s + v * v
        x[2] = x[2] * x[0]
    return s


@pytest.mark.parametrize("f", [products_appended_to_a_list_it_reads, running_products,
                               a_vector_updated_ahead_of_its_loop], ids=lambda f: f.__name__)
def test_the_hessian_of_a_loop_over_a_vector(f):
    """Under `hessian` the vector is a dual array, whose items, as a NumPy vector's, are numbers read when the loop gets
    there: `itertools.accumulate` and a loop whose body updates the list or the vector it reads were refused, the dual
    array taken for torch's, whose items are views ("a loop over the array that its body updates in place")."""
    from zygotepy import hessian
    x = np.array([1.1, 0.7, 1.3])
    check_grads(f, x)
    assert np.allclose(hessian(f, x), central_hessian(f, x, 1e-4), rtol=1e-6, atol=1e-6)


ROWS = np.array([[0.3, -0.2, 0.1], [0.1, 0.5, -0.4], [-0.3, 0.2, 0.6]])


def state_kept_per_row(x):
    m = np.zeros(3)
    means = []
    for y in ROWS:
        m = np.tanh(x * m + y)
        means.append(m)
    return np.sum(m ** 2) + np.sum(means[0] * x)


def rows_of_its_argument_kept(x):
    X = np.outer(x, x)
    kept = []
    for row in X:
        kept.append(row)
    return sum(np.sum(r ** 3) for r in kept)


@pytest.mark.parametrize("f", [state_kept_per_row, rows_of_its_argument_kept], ids=lambda f: f.__name__)
def test_the_hessian_of_a_loop_over_a_matrix_that_keeps_its_states(f):
    """The rows a loop walks, linked to the list the body appends to: their back copied a dual cotangent with np.array
    (a ForwardModeError under `hessian`)."""
    from zygotepy import hessian
    x = np.array([1.1, 0.7, 1.3])
    check_grads(f, x)
    assert np.allclose(hessian(f, x), central_hessian(f, x, 1e-4), rtol=1e-6, atol=1e-6)


class _Param:
    def __init__(self, value):
        self.value = value


class _Affine:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, t):
        return self.w * t + self.b


class _Recorder:  # (a class whose `__call__` updates its object: every `m(x)` of the module may update `m`)
    def __init__(self):
        self.h = 0.0

    def __call__(self, t):
        self.h = t
        return t


def _collected_from_items(x):
    d = {"a": _Param(x), "b": _Param(x * x)}
    out = []
    for _, v in d.items():  # (Module.parameters() over `self.__dict__.items()`)
        out.append(v)
    return sum(p.value for p in out)


def _called_from_values(x):
    d = {"a": _Affine(x, 1.0), "b": _Affine(2.0, x)}
    s = 0.0
    for m in d.values():
        s = s + m(x)
    return s


def test_an_item_a_call_left_as_it_was_is_no_update():
    # (refused: "the loop took the updated object from a dict_items object", where nothing was updated)
    assert gradient(_collected_from_items, 0.7) == (pytest.approx(2.4),)
    assert gradient(_called_from_values, 0.7) == (pytest.approx(4.4),)
    assert _Recorder()(1.0) == 1.0


class _Net:
    def __init__(self, x):
        self.w = x * 1.0
        self.b = x * 2.0

    def parameters(self):
        return [self.w, self.b]

    def loss(self, x):
        return np.sum(np.tanh(self.w * x) + self.b ** 2)


def a_step_over_parameters(x):
    net = _Net(x)
    for p in net.parameters():
        p *= 0.9
    return net.loss(x)


def a_step_over_parameters_and_gradients(x):
    net = _Net(x)
    for p, g in zip(net.parameters(), [x, x * 2.0]):
        p -= 0.1 * g
    return net.loss(x)


def a_step_over_a_slice_of_modules(x):
    nets = [_Net(x), _Net(x * 2.0)]
    for n in nets[1:]:
        n.w *= 0.5
    return nets[1].loss(x) + nets[0].loss(x)


def a_step_then_a_penalty_over_the_parameters_by_the_same_name(x):
    net = _Net(x)
    grads = [np.ones_like(p) for p in net.parameters()]
    for p, g in zip(net.parameters(), grads):
        p -= 0.1 * g * x
    return net.loss(x) + sum(np.sum(p ** 2) for p in net.parameters())


@pytest.mark.parametrize("f", [a_step_over_parameters, a_step_over_parameters_and_gradients,
                               a_step_over_a_slice_of_modules,
                               a_step_then_a_penalty_over_the_parameters_by_the_same_name], ids=lambda f: f.__name__)
def test_a_loop_over_what_a_method_or_a_slice_returns_updates_the_module(f, mode):
    """`for p in net.parameters(): p *= 0.9` (a list the method makes, holding the module's arrays) was refused as a
    copy; the update is found in the module through it. A comprehension's `p` is its own (it was refused as a loop
    variable updated after its loop, by the name's update elsewhere)."""
    x = np.array([0.3, -0.7, 1.1])
    (g,) = gradient(f, x)
    np.testing.assert_allclose(g, central(lambda v: f(v), [x], 0), rtol=1e-6, atol=1e-6)


class _Linear:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def parameters(self):
        return [self.W, self.b]

    def __call__(self, x):
        return x @ self.W + self.b


def _residual_gradients(model, X):
    r = 2.0 * (model(X) - 1.0) / len(X)
    return [X.T @ r, r.sum(0)]


def _mean_square(model, X):
    return np.mean((model(X) - 1.0) ** 2)


def _clipped_steps(W, b):
    X = np.array([[0.5, -1.0], [1.5, 0.3], [-0.2, 0.8]])
    m = _Linear(W * 1.0, b * 1.0)
    for _ in range(2):
        grads = _residual_gradients(m, X)
        total = 0.0
        for g in grads:
            total += np.sum(g * g)
        scale = 0.2 / np.sqrt(total)
        for i, p in enumerate(m.parameters()):
            p -= scale * grads[i]
    return _mean_square(m, X)


def test_steps_over_parameters_after_a_loop_over_the_gradients(mode):
    """Two loops in a training loop (a norm over `grads`, then a step over `m.parameters()`): an update after them
    named a version of `grads` only the loop's body defines (NameError in the generated code)."""
    W, b = np.array([[0.3, -0.2], [0.1, 0.4]]), np.array([0.05, -0.1])
    gW, gb = gradient(_clipped_steps, W, b)
    np.testing.assert_allclose(gW, central(_clipped_steps, [W, b], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gb, central(_clipped_steps, [W, b], 1), rtol=1e-6, atol=1e-7)

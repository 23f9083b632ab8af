"""Reductions called as a NumPy array's methods (`x.sum()`, `x.mean(axis=1, keepdims=True)`, `x.max(0)`) take the
array path of the NumPy function they compute (ast_adjoint/optimize/array_paths.py `_as_function`, the table of
`registry.array_method`): the same derivative, pasted in, where the operand is a real NumPy array, and the method's own
rule otherwise (integer arrays, lists' arrays of objects, a JAX array). Each row is checked against central finite
differences, with the optimisations on and off, and gives the same cotangents to the bit either way."""
import numpy as np
import pytest

from zygotepy import gradient, optimizations, show_adjoint
from zygotepy.testing import check_grads

RNG = np.random.default_rng(11)
M = RNG.standard_normal((4, 3))
V = RNG.standard_normal(5)


def whole_array_methods(x):
    y = np.tanh(x) * x
    return y.sum() + (x * x).mean() + 0.5 * y.max() - 0.25 * y.min()


def methods_along_axes(x):
    e = np.exp(x)
    p = e / e.sum(axis=1, keepdims=True)
    return (p * x).sum() + x.mean(axis=0).sum() + (x.max(axis=1) ** 2).sum() + x.min(0).mean()


def positional_axis(x):
    return (x.sum(1) ** 2).sum() + (x.mean(0) * x.max(1).sum()).sum()


def softmax_cross_entropy_in_methods(logits, y):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(y * logp).sum() / logits.shape[0]


def methods_in_a_loop(x):
    total = 0.0
    for k in range(3):
        c = np.sin(x * (k + 1.0))
        total = total + c.sum() * c.mean(axis=0).max()
    return total


def integer_and_python_operands(x, counts):
    return (x * counts).sum() + counts.sum() * x.mean() + float(np.array([1, 2]).sum())


def reduced_twice(x):
    s = x * x  # reduced whole by a method and used again: its cotangent is a number plus an array
    return s.sum() + (s * x).sum()


ONE_HOT = np.eye(3)[[0, 2, 1, 1]]
ROWS = [
    ("whole_array_methods", whole_array_methods, (V,)),
    ("whole_array_methods_matrix", whole_array_methods, (M,)),
    ("methods_along_axes", methods_along_axes, (M,)),
    ("positional_axis", positional_axis, (M,)),
    ("softmax_cross_entropy_in_methods", softmax_cross_entropy_in_methods, (M, ONE_HOT)),
    ("methods_in_a_loop", methods_in_a_loop, (M * 0.3,)),
    ("integer_and_python_operands", integer_and_python_operands, (M, np.arange(3))),
    ("reduced_twice", reduced_twice, (V,)),
]


@pytest.mark.parametrize("fn, args", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_matches_finite_differences(mode, fn, args):
    check_grads(fn, *args)


@pytest.mark.parametrize("fn, args", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_same_cotangents_with_and_without_array_paths(fn, args):
    with optimizations(array_paths=True):
        on = gradient(fn, *args)
    with optimizations(array_paths=False):
        off = gradient(fn, *args)
    for a, b in zip(on, off, strict=True):
        assert (a is None and b is None) or (np.array_equal(a, b) and a.dtype == b.dtype), (a, b)


@pytest.mark.optimizations
def test_method_reductions_run_without_a_rule_call():
    text = show_adjoint(softmax_cross_entropy_in_methods, optimized=True)
    assert "(logits.max(axis=1, keepdims=True))" in text and ".sum(axis=1, keepdims=True))" in text
    assert "_back = _ARRAY" in text
    text = show_adjoint(positional_axis, optimized=True)  # (the axis given by position is the keyword's)
    assert "x.sum(axis=1, keepdims=False)" in text


def test_a_method_of_another_library_takes_its_own_rule():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.asarray(M)
    got = gradient(lambda a: (a * a).sum() + a.max(axis=1).sum(), x)[0]
    want = 2 * M + (M == M.max(axis=1, keepdims=True))
    assert np.allclose(np.asarray(got), want)

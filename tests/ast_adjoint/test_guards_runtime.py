"""Tests of `zygotepy/ast_adjoint/guards_runtime.py`: which values may carry a gradient (`differentiable`,
`reads_gradients`, `carries_gradient`), where a wrong "no" lets a call run as a constant and its gradient be lost.

This module defines a class whose `__call__` calls another of its methods: the lowering then sends calls of
callables and of user methods through `valuecall` (they may update their objects), the path these tests need."""
import functools
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import zygotepy
from zygotepy.ast_adjoint.guards_runtime import carries_gradient, differentiable, reads_gradients

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plain_checks import central  # noqa: E402


class Term:  # (never made: its presence in the module is what counts)
    def energy(self, x):
        return x

    def __call__(self, x):
        return self.energy(x)


class Param:
    def __init__(self, value):
        self.value = value


class Dense:
    def __init__(self, w):
        self.W = Param(w)


class Seq:
    def __init__(self, layer):
        self.layers = [layer]

    def parameters(self):
        return [self.layers[0].W]

    def l2(self):
        return self.parameters()[0].value ** 2


def _l2_of_new_model(a):
    return Seq(Dense(a)).l2()


def _l2_of_model_and_data(net, x):
    return net.l2() + net.layers[0].W.value * x


def _composed(x, a):
    compose = functools.reduce(lambda f, g: lambda t: g(f(t)), [np.sin, lambda t: t * a])
    return compose(x)


def _two_accumulations(xs):
    sums = list(itertools.accumulate(xs))
    decayed = list(itertools.accumulate(xs, lambda a, b: a * 0.5 + b))
    return sum(sums) + decayed[-1]


def test_a_parameter_three_objects_deep_reaches_the_gradient(mode):
    """A list of layers holding parameter objects: deeper than the quick look, walked whole (it ran as a constant)."""
    with zygotepy.optimizations(mode):
        assert zygotepy.gradient(_l2_of_new_model, 0.3) == pytest.approx((0.6,))
        (g_net, g_x) = zygotepy.gradient(_l2_of_model_and_data, Seq(Dense(0.3)), 2.0)
    assert g_net.layers[0].W.value == pytest.approx(2 * 0.3 + 2.0)
    assert g_x == pytest.approx(0.3)


def test_a_fold_of_functions_reading_a_gradient_keeps_it(mode):
    """`reduce` given closures over `a`: a call given functions that read a gradient is no constant."""
    with zygotepy.optimizations(mode):
        g = zygotepy.gradient(_composed, 0.3, 0.6)
    assert g == pytest.approx((0.6 * np.cos(0.3), np.sin(0.3)))


def test_a_rules_helper_does_not_take_another_call_sites_cotangents(mode):
    """The second accumulate's cotangent of `xs` after it reached the first's helper function too (counted twice)."""
    with zygotepy.optimizations(mode):
        (g,) = zygotepy.gradient(_two_accumulations, [0.3, -1.2, 0.8, 1.5])
    assert g == pytest.approx([4.125, 3.25, 2.5, 2.0])


def test_differentiable_walks_deep_structures_each_object_once():
    deep = {"a": [[[[{"w": Param(np.ones(2))}]]]]}
    assert differentiable(deep)
    ints = {"a": [[[[{"w": Param(3)}]]]]}
    assert not differentiable(ints)
    node = Param(1)
    node.parent = Param([node])  # (a cycle below the quick look's depth)
    node.parent.parent = node
    assert not differentiable([[[node]]])
    node.parent.leaf = 2.5
    assert differentiable([[[node]]])


def test_reads_gradients_follows_functions_a_closure_holds():
    a = 2.0

    def inner(t):
        return t * a

    def outer(t):
        return inner(t) + 1

    assert reads_gradients(outer)
    assert not reads_gradients(lambda t: t + 1)
    assert carries_gradient([np.sin, inner]) and carries_gradient({"f": inner})
    assert not carries_gradient([np.sin, len])


def _any_then_rest(xs):
    it = iter(xs)
    found = any(v > 0.5 for v in it)  # (Python stops at the first item over 0.5; `it` keeps the rest)
    return sum(it) * 2 + (1.0 if found else 0.0)


def _any_over_a_list_then_the_list(xs):
    found = any(v > 0.5 for v in xs)
    return sum(xs) * 2 + (1.0 if found else 0.0)


def _all_of_an_iterator_used_once(xs):
    it = iter(xs)
    return 2.0 * sum(xs) if all(v > -5.0 for v in it) else 0.0


def test_a_kept_iterator_taken_in_part_by_a_generator_is_refused(mode):
    """zygotepy computes the generator's items when it is made, which used `it` up: value and gradient both wrong."""
    xs = [0.3, -1.2, 0.7, 1.5, 0.2]
    with zygotepy.optimizations(mode):
        with pytest.raises(zygotepy.UnsupportedSyntax, match="over the iterator 'it'.*read again"):
            zygotepy.gradient(_any_then_rest, xs)
        assert zygotepy.gradient(_any_over_a_list_then_the_list, xs) == ([2.0] * 5,)
        assert zygotepy.gradient(_all_of_an_iterator_used_once, xs) == ([2.0] * 5,)


def _kept_generator_then_rest(x, y):
    it = iter([x, y, x * y])
    g = (v * 2.0 for v in it)
    first = next(g)
    return first + sum(it)


def _kept_enumerate_then_rest(x, y):
    it = iter([x, y, x * y])
    e = enumerate(it)
    _, first = next(e)
    return first * 3.0 + sum(it)


def _kept_iter_of_iterator_then_rest(x, y):
    it = iter([x, y, x * y])
    again = iter(it)
    return next(again) + sum(it) * 2.0


def _kept_zip_then_rest(x, y):
    it = iter([x, y, x * y])
    z = zip(it, [1.0, 2.0, 3.0])
    a, b = next(z)
    return a * b + sum(it)


def _kept_map_then_rest(x, y):
    it = iter([x, y, x * y])
    m = map(lambda t: t * 5.0, it)
    return next(m) + sum(it)


def _loop_over_a_generator_left_by_break(x, y):
    it = iter([x, y, x * y])
    first = 0.0
    for v in (t * 2.0 for t in it):
        first = v
        break
    return first + sum(it)


def _loop_over_a_map_left_by_break(x, y):
    it = iter([x, y, x * y])
    s = 0.0
    for t in map(lambda u: u * 3.0, it):
        s = s + t
        if s > 1.0:
            break
    return s + sum(it)


@pytest.mark.parametrize("f", [_kept_generator_then_rest, _kept_enumerate_then_rest, _kept_iter_of_iterator_then_rest,
                               _kept_zip_then_rest, _kept_map_then_rest, _loop_over_a_generator_left_by_break,
                               _loop_over_a_map_left_by_break], ids=lambda f: f.__name__.strip("_"))
def test_a_lazy_iterator_over_an_iterator_read_again_is_refused(f, mode):
    """A generator, `zip`, `map`, `enumerate` or `iter` over the iterator `it`, kept in a name or walked by a loop left
    by break: Python takes only the items asked for and leaves the rest in `it`; zygotepy took them all when it made
    the list (the value and the gradient of `sum(it)` were wrong, y's gradient None)."""
    with pytest.raises(zygotepy.UnsupportedSyntax, match="over the iterator 'it'.*read again"):
        zygotepy.gradient(f, 1.5, 2.5)


def _kept_generator_over_a_list_then_the_list(x, y):
    xs = [x, y, x * y]
    g = (v * 2.0 for v in xs)
    first = next(g)
    return first + sum(xs) + sum(g)


def _loop_over_a_map_of_a_list_left_by_break(x, y):
    xs = [x, y, x * y]
    s = 0.0
    for t in map(lambda u: u * 3.0, xs):
        s = s + t
        if s > 1.0:
            break
    return s + sum(xs)


@pytest.mark.parametrize("f", [_kept_generator_over_a_list_then_the_list, _loop_over_a_map_of_a_list_left_by_break],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_lazy_iterator_over_a_list_read_again_is_differentiated(f, mode):
    args = (1.5, 2.5)
    grads = zygotepy.gradient(f, *args)
    for k in range(2):
        assert grads[k] == pytest.approx(central(f, args, k), rel=1e-6)


def _scalar_or_array(x):
    return x ** 2 if np.isscalar(x) else np.sum(x ** 3)


def _elementwise(x):
    total = 0.0
    for v in x:
        total = total + (v ** 2 if np.isscalar(v) else np.sum(v ** 3))
    return total


@pytest.mark.parametrize("f, x, want", [(_scalar_or_array, 1.7, 2.0),
                                        (_elementwise, np.array([0.3, -1.2, 0.8]), np.diag([2.0, 2.0, 2.0]))],
                         ids=["a number", "an array's items"])
def test_np_isscalar_of_a_dual_number_under_hessian(f, x, want, mode):
    """hessian's reverse pass runs on dual numbers, which np.isscalar called False: the array branch (10.2 for 2)."""
    from zygotepy import hessian
    np.testing.assert_allclose(hessian(f, x), want)

"""Calls in a module where a class, never made, defines methods of the names the code calls that update their object,
and a `__call__` that calls one: the lowering then sends those calls, and calls of callables, through `valuecall` and
`objectcall` (zygotepy/adjoints/mutation/calls.py), which must give the gradients the plain calls give. (The random
programs do the same with their class `Decoy`: zygotepy/fuzz/idioms.py.)"""
import numpy as np
import pytest

import zygotepy


class Decoy:  # never made
    def __call__(self, v):
        self.h = v
        return self.ev(v)

    def ev(self, *a, **k):
        self.state = a
        return 0.0


class _Poly:
    def __init__(self, c):
        self.c = c

    def ev(self, x, *extra, shift=0.0, **kw):
        return self.c * x + sum(extra) + shift * kw.get("k", 1.0)


class _Scaled:
    def __init__(self, s):
        self.s = s

    def __call__(self, v):
        return v * self.s


def _evaluated(c, x):
    args = (x, x * 2.0)
    return _Poly(c).ev(*args, shift=x, k=c)  # (c x + 2 x + x c)


def test_a_method_with_star_args_and_keywords_through_objectcall(mode):
    """objectcall's back gives the keywords' cotangents as a last dict, which its call site took for one too many."""
    with zygotepy.optimizations(mode):
        assert zygotepy.gradient(_evaluated, 0.5, 0.7) == pytest.approx((1.4, 3.0))


def test_a_sort_key_carrying_a_gradient_is_refused_not_crashed(mode):
    """The key's dropped cotangent met another of the same object: a TypeError (DroppedKeyword + StructGrad)."""
    def loss(s, xs):
        key = _Scaled(s)
        return sum(sorted(xs, key=key)[:1]) * key(1.0)
    with zygotepy.optimizations(mode), pytest.raises(zygotepy.ZygoteError, match="keyword argument key="):
        zygotepy.gradient(loss, 2.0, [0.3, -0.2, 0.5])


def _through_a_fetched_closure(x):
    w = x[::2] * 1.0
    get = lambda: w  # noqa: E731
    same = {"g": get}["g"]()  # (a callable object's call, here: its result may be what the closure captures)
    same[0] = 0.5
    return np.sum(w ** 2)


def test_an_update_through_what_a_called_closure_returns_is_refused(mode):
    """The result of `objectcall` was not linked to what the callee captures (a plain call's is): the update of `w`
    through it went unseen, and x[0] kept the gradient of the entry it overwrote (random programs, seed 2512, 261)."""
    with zygotepy.optimizations(mode), pytest.raises(zygotepy.UnsupportedSyntax, match="nested function captures"):
        zygotepy.gradient(_through_a_fetched_closure, np.linspace(-0.4, 0.6, 6))

"""The backward's None-test removal (nullness.simplify_backward) changes no gradient: every function of the feature
table gets bit-identical gradients with the pass on and off, and the pass does remove tests."""
import copy
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import pullback, show_adjoint
from zygotepy.adjoints import registry
from zygotepy.ast_adjoint import nullness

sys.path.insert(0, str(Path(__file__).parent.parent))
from test_features import FEATURES


def pow_loop(x, n):
    r = 1.0
    while n > 0:
        n -= 1
        r *= x
    return r


def _gradients(fn, args, enabled):
    nullness.ENABLED[0] = enabled
    registry.generation[0] += 1  # every compiled adjoint is rebuilt under the new setting
    try:
        y, back = pullback(fn, *copy.deepcopy(args))
        return back(_ones_like(y))
    finally:
        nullness.ENABLED[0] = True
        registry.generation[0] += 1


def _ones_like(y):
    """A fixed cotangent with the output's structure."""
    if isinstance(y, (tuple, list)):
        return type(y)(_ones_like(v) for v in y)
    if isinstance(y, dict):
        return {k: _ones_like(v) for k, v in y.items()}
    return np.ones_like(y) if isinstance(y, np.ndarray) else 1.0


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    if hasattr(a, "items"):  # a StructGrad
        return _same(dict(a.items()), dict(b.items()))
    return a == b or bool(np.isnan(a) and np.isnan(b))


@pytest.mark.parametrize("fn, args", [row[1:] for row in FEATURES], ids=[row[0] for row in FEATURES])
def test_same_gradients_with_and_without(fn, args):
    assert _same(_gradients(fn, args, True), _gradients(fn, args, False))


def test_the_pass_removes_none_tests():
    on = show_adjoint(pow_loop)
    nullness.ENABLED[0] = False
    registry.generation[0] += 1
    try:
        off = show_adjoint(pow_loop)
    finally:
        nullness.ENABLED[0] = True
        registry.generation[0] += 1
    assert on.count("None") < off.count("None")
    assert on.count("is None else") < off.count("is None else")

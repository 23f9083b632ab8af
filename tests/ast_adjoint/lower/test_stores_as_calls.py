"""Stores written as calls (ast_adjoint/lower/calls.py `stored`): `setattr(p, "w", a)`, `d.__setitem__(k, v)`,
`operator.setitem(d, k, v)` link the value stored to its holder as the statement `p.w = a` does, and `getattr(p,
"w")` reads the attribute as `p.w` does; an update in place of the value afterwards reached neither (gradient 4x for
8x; a list appended to after `setattr` crashed the backward with "too many values to unpack")."""
import operator
import types

import numpy as np
import pytest

from plain_checks import central
from zygotepy import value_and_gradient


def _setattr_then_update(x):
    p = types.SimpleNamespace()
    a = x * 1.0
    setattr(p, "w", a)
    a += x
    return np.sum(p.w ** 2)


def _setitem_method_then_update(x):
    d = {}
    a = x * 1.0
    d.__setitem__("w", a)
    d["w"] += x
    return np.sum(a ** 2)


def _operator_setitem_then_update(x):
    d = {}
    a = x * 1.0
    operator.setitem(d, "w", a)
    a *= x
    return np.sum(d["w"])


def _store_through_getattr(x):
    p = types.SimpleNamespace(w=x * 1.0)
    a = p.w
    getattr(p, "w")[0] = x[1] ** 3
    return np.sum(a * x)


def _list_appended_after_setattr(x):
    p = types.SimpleNamespace()
    items = [x[0]]
    setattr(p, "l", items)
    items.append(x[1] * 2.0)
    return sum(p.l) * x[2]


@pytest.mark.parametrize("f", [_setattr_then_update, _setitem_method_then_update, _operator_setitem_then_update,
                               _store_through_getattr, _list_appended_after_setattr], ids=lambda f: f.__name__)
def test_stores_and_reads_written_as_calls(mode, f):
    x = np.array([0.3, -0.5, 1.2, 0.7])
    value, (g,) = value_and_gradient(f, x.copy())
    assert value == pytest.approx(f(x.copy()))
    np.testing.assert_allclose(g, central(f, [x], 0), atol=1e-6)

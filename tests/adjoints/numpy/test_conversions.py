"""Tests of `zygotepy/adjoints/numpy/conversions.py` (np.array, casts and copies, atleast_nd, item and tolist): its rows
of the rule table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of
tests/adjoints/test_rules.py) and what the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/plain_checks.py
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

import zygotepy  # noqa: E402
from plain_checks import central  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("conversions"))


def test_float_casts_return_the_argument_dtype():
    x = np.array([1.0, 2.0, 3.0])
    y, back = registry.find_rule(np.float32)(x)
    assert y.dtype == np.float32
    (g,) = back(np.ones(3, np.float32))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, np.ones(3))
    _, back = registry.find_rule(np.float64)(np.float32(2.0))
    assert back(np.float64(3.0))[0].dtype == np.float32
    _, back = registry.find_rule(np.float64)(2.0)
    assert type(back(np.float64(3.0))[0]) is float


_I = np.int64
INTEGER_CASTS = {  # each multiplies x by its integer part (or a bool, a sum of integer parts), a piecewise constant
    "np.asarray(x, dtype=int)": lambda x: np.sum(np.asarray(x, dtype=_I) * x),
    "np.array(x, int)": lambda x: np.sum(np.array(x, _I) * x),
    "np.asarray(x, 'i8')": lambda x: np.sum(np.asarray(x, "i8") * x),
    "np.array([x0, x1], dtype=int)": lambda x: np.sum(np.array([x[0], x[1]], dtype=_I) * x),
    "np.array(x - 2, dtype=bool)": lambda x: np.sum(np.array(x - 2.0, dtype=bool) * x),
    "np.ascontiguousarray(x, int)": lambda x: np.sum(np.ascontiguousarray(x, _I) * x),
    "np.astype(x, int)": lambda x: np.sum(np.astype(x, _I) * x),
    "np.sum(x, dtype=int)": lambda x: np.sum(np.sum(x, dtype=_I) * x),
    "np.sum(x, None, int)": lambda x: np.sum(np.sum(x, None, _I) * x),
    "np.mean(x, 0, int)": lambda x: np.sum(np.mean(x, 0, _I) * x),
    "np.prod(x, 0, int)": lambda x: np.prod(x, 0, _I) + np.sum(x),
    "np.cumsum(x, 0, int)": lambda x: np.sum(np.cumsum(x, 0, _I) * x),
    "np.cumprod(x, 0, int)": lambda x: np.sum(np.cumprod(x, 0, _I) * x),
    "x.sum(dtype=int)": lambda x: np.sum(x.sum(dtype=_I) * x),
    "np.mean(x, dtype=int)": lambda x: np.sum(np.mean(x, dtype=_I) * x),
    "np.prod(x, dtype=int)": lambda x: np.prod(x, dtype=_I) + np.sum(x),
    "np.cumsum(x, dtype=int)": lambda x: np.sum(np.cumsum(x, dtype=_I) * x),
    "x.cumprod(dtype=int)": lambda x: np.sum(x.cumprod(dtype=_I) * x),
    "np.nancumsum(x, dtype=int)": lambda x: np.sum(np.nancumsum(x, dtype=_I) * x),
    "np.trace(np.diag(x), dtype=int)": lambda x: np.sum(np.trace(np.diag(x), dtype=_I) * x),
    "np.einsum(..., dtype=int)": lambda x: np.sum(np.einsum("i,i->i", x, np.ones(2), dtype=_I, casting="unsafe") * x),
    "np.concatenate(..., dtype=int)": lambda x: np.sum(np.concatenate([x, x], dtype=_I, casting="unsafe")[:2] * x),
    "np.stack(..., dtype=int)": lambda x: np.sum(np.stack([x, x], dtype=_I, casting="unsafe")[0] * x),
}


@pytest.mark.parametrize("name", sorted(INTEGER_CASTS))
def test_a_cast_to_integers_carries_no_gradient(name, mode):
    """A result of integer or bool type computed from floats is piecewise constant: the gradient is that of the other
    factor only (it was the identity's: `x * int(x)` differentiated as `x * x`)."""
    f = INTEGER_CASTS[name]
    x = np.array([1.3, 2.6])
    with zygotepy.optimizations(mode):
        (g,) = zygotepy.gradient(f, x)
    np.testing.assert_allclose(g, central(f, (x,), 0), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["np.asarray(x, dtype=int)", "np.array(x, int)", "np.sum(x, dtype=int)",
                                  "np.cumsum(x, dtype=int)", "np.einsum(..., dtype=int)", "np.stack(..., dtype=int)"])
def test_a_cast_to_integers_carries_no_tangent(name):
    f, x, v = INTEGER_CASTS[name], np.array([1.3, 2.6]), np.array([1.0, 0.5])
    _, t = zygotepy.jvp(f, (x,), (v,))
    np.testing.assert_allclose(t, central(f, (x,), 0) @ v, rtol=1e-4)


def test_a_cast_to_float32_keeps_the_gradient():
    x = np.array([1.3, 2.6])
    (g,) = zygotepy.gradient(lambda x: np.sum(np.asarray(x, dtype=np.float32) * x), x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)


def test_an_int_the_caller_differentiates_keeps_its_gradient_through_asarray():
    assert zygotepy.gradient(lambda n: float(np.sum(np.asarray(n) * 2.0)), 3) == (2.0,)


def test_an_array_of_a_named_tuple(mode):
    """`np.array(np.linalg.slogdet(A))`: the cotangent was rebuilt as `SlogdetResult(list)`, which takes its fields
    one by one (a TypeError; found by a probe of nested differentiation)."""
    from zygotepy import gradient

    def f(v):
        a = np.array([[2.0, v[0]], [v[1], 3.0]])
        return np.sum(np.array(np.linalg.slogdet(a)) * np.array([0.0, 1.0]))
    v = np.array([0.4, -0.6])
    a = np.array([[2.0, v[0]], [v[1], 3.0]])
    np.testing.assert_allclose(gradient(f, v)[0], np.linalg.inv(a).T[[0, 1], [1, 0]], rtol=1e-12)

"""The rules of Python's operators (zygotepy/adjoints/operators.py; mutation/test_operators.py is the in-place
ones), here `**` and its NumPy twins at a zero base with a zero exponent: a ** 0 is the constant 1, also at a = 0, so
its derivative is 0 there, where the rule's b * a ** (b - 1) was 0 * inf = nan (polynomial features
`x[:, None] ** np.arange(k)` at x = 0; found by a probe of numeric types). Reverse mode, forward mode and both orders
of nesting against the derivatives written out."""
import numpy as np
import pytest

from zygotepy import gradient, hessian, jvp

COEFFS = np.array([1.0, 2.0, 3.0, 4.0])
X = np.array([0.0, 0.5, -1.5])


def features(x):  # sum_i 1 + 2 x_i + 3 x_i^2 + 4 x_i^3
    return np.sum(x[:, None] ** np.arange(4) * COEFFS)


def features_by_power(x):
    return np.sum(np.power(x[:, None], np.arange(4.0)) * COEFFS)


def features_by_float_power(x):
    return np.sum(np.float_power(x[:, None], np.arange(4)) * COEFFS)


@pytest.mark.parametrize("f", [features, features_by_power, features_by_float_power], ids=lambda f: f.__name__)
def test_powers_with_a_zero_exponent_at_a_zero_base(f, mode):
    first = 2 + 6 * X + 12 * X ** 2
    np.testing.assert_allclose(gradient(f, X)[0], first)
    np.testing.assert_allclose(hessian(f, X), np.diag(6 + 24 * X))
    np.testing.assert_allclose(gradient(lambda v: gradient(f, v)[0][0], X)[0], [6.0, 0.0, 0.0])
    np.testing.assert_allclose(jvp(f, (X,), (np.ones(3),))[1], np.sum(first))


@pytest.mark.parametrize("f, expected", [
    (lambda x: np.sum(np.power(x, 0)), [0.0, 0.0]),
    (lambda x: np.sum(x ** np.array([0.0, 1.0])), [0.0, 1.0]),
    (lambda x: np.sum(np.power(x, np.array([0, 2]))), [0.0, 4.0]),
], ids=["int zero", "float array", "int array"])
def test_the_exponent_zero_in_other_forms(f, expected, mode):
    np.testing.assert_allclose(gradient(f, np.array([0.0, 2.0]))[0], expected)


def test_a_numpy_scalar_to_the_power_zero(mode):
    assert gradient(lambda x: np.power(x, 0.0), np.float64(0.0)) == (0.0,)
    assert gradient(lambda x, p: x ** p, np.float64(0.0), np.float64(0.0))[0] == 0.0


def test_a_list_of_one_function_repeated(mode):
    """`[lambda v: v * s] * 2`: the repetition's back summed its copies' cotangents with `+`, which a function's
    (its captures', a StructGrad) does not have (a TypeError; found by a probe of higher-order code)."""
    def f(x, s):
        fs = [lambda v: v * s] * 2
        return fs[0](x) + fs[1](x)
    assert gradient(f, 0.3, 0.7) == (pytest.approx(1.4), pytest.approx(0.6))

    def g(x):  # (lists' cotangents add entry by entry, not by concatenation)
        rows = [[x, 2.0 * x]] * 2
        return rows[0][0] * rows[1][1]
    assert gradient(g, 0.5) == (pytest.approx(2.0),)


def _wrapped_in_place(th):
    t = th * 3.0
    t %= 2 * np.pi  # (an angle wrapped in place)
    return np.sum(np.sin(t) * t) + np.sum((th * 7.0) % 1.5 * th)


def test_hessian_through_a_remainder(mode):
    """`a % b`'s back took the floor of a / b with NumPy's asarray, which hessian's dual numbers refuse."""
    x = np.array([0.5, 1.7, 2.9])
    t, u = (3.0 * x) % (2 * np.pi), (7.0 * x) % 1.5
    want = np.diag(9.0 * (2.0 * np.cos(t) - t * np.sin(t)) + 2.0 * 7.0 + 0.0 * u)  # (u x: d2 = 2 du/dx = 14)
    assert np.allclose(hessian(_wrapped_in_place, x), want)

"""np.clip in forward mode where its bounds cross (a_min > a_max in some entries, or everywhere): NumPy computes
minimum(maximum(x, lo), hi), so those entries are hi, and their tangent is hi's. The rule let the lower bound win
(jvp gave d/dlo = 2, d/dhi = 1 where the truth is 0 and 3). Every form a user writes a clip in (by position, by
keyword, `min=`/`max=`, None for a bound, the array method on a dual or on a plain array, minimum/maximum, the
builtins min/max) is checked against central differences, in forward mode (jvp along each argument, the forward
Jacobian, hessian) and reverse mode (gradient)."""
import numpy as np
import pytest

from plain_checks import central
from zygotepy import derivative, gradient, hessian, jacobian, jvp


def by_position(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) ** 2)


def by_keyword(x, lo, hi):
    return np.sum(np.clip(x, a_min=lo, a_max=hi) ** 2)


def by_new_keyword(x, lo, hi):
    return np.sum(np.clip(x, min=lo, max=hi) ** 2)


def upper_by_keyword(x, lo, hi):
    return np.sum(np.clip(x, lo, a_max=hi) ** 2)


def as_method(x, lo, hi):
    return np.sum((x * 1.0).clip(lo, hi) ** 2)


def as_method_of_plain_array(x, lo, hi):
    return np.sum(np.array([-1.5, 0.1, 0.45, 2.0]).clip(lo, hi) * x)


def as_method_by_keyword(x, lo, hi):
    return np.sum((x * 1.0).clip(min=lo, max=hi) ** 2)


def lower_only_method(x, lo, hi):
    return np.sum((x * 1.0).clip(lo) ** 2) + hi


def no_lower_bound(x, lo, hi):
    return np.sum(np.clip(x, None, hi) ** 2) + lo


def no_upper_bound(x, lo, hi):
    return np.sum(np.clip(x, lo, None) ** 2) + hi


def through_maximum_and_minimum(x, lo, hi):
    return np.sum(np.minimum(np.maximum(x, lo), hi) ** 2)


def builtin_min_and_max(x, lo, hi):
    total = 0.0
    for v in x:
        total = total + min(max(v, lo), hi) ** 2
    return total


FUNCTIONS = [by_position, by_keyword, by_new_keyword, upper_by_keyword, as_method, as_method_of_plain_array,
             as_method_by_keyword, lower_only_method, no_lower_bound, no_upper_bound, through_maximum_and_minimum,
             builtin_min_and_max]
X = np.array([-1.0, 0.1, 0.45, 2.0])
POINTS = {
    "crossed everywhere": (X, 0.5, -0.2),
    "in order": (X, -0.5, 0.6),
    "crossed in some entries": (X, np.array([0.5, -0.5, 0.2, 0.9]), np.array([-0.2, 0.6, 0.4, 0.1])),
    "crossed, broadcast lower bound": (X, np.array([0.5, -0.5, 0.2, 0.9]), 0.3),
}
SCALAR_BOUNDS = {by_position, by_keyword, by_new_keyword, upper_by_keyword, as_method, as_method_of_plain_array,
                 as_method_by_keyword, through_maximum_and_minimum}  # (the others take numbers for their bounds)


def cases():
    for f in FUNCTIONS:
        for name, point in POINTS.items():
            if np.ndim(point[1]) + np.ndim(point[2]) == 0 or f in SCALAR_BOUNDS:
                yield pytest.param(f, point, id=f"{f.__name__}, {name}")


@pytest.mark.parametrize("f, point", list(cases()))
def test_jvp_and_gradient_of_each_argument(mode, f, point):
    want = [central(f, point, k) for k in range(3)]
    for k in range(3):
        tangents = [None, None, None]
        tangents[k] = np.ones(np.shape(point[k])) if np.ndim(point[k]) else 1.0
        value, got = jvp(f, point, tuple(tangents))
        assert value == pytest.approx(f(*point), rel=1e-12)
        assert got == pytest.approx(np.sum(want[k]), abs=1e-6), f"d/d argument {k}"
    for got, w in zip(gradient(f, *point), want):
        np.testing.assert_allclose(np.zeros(np.shape(w)) if got is None else got, w, atol=1e-6)


def _central_jacobian(g, point, j, h=1e-6):
    """d g / d point[j] by central differences, of shape g's output shape + point[j]'s shape."""
    x = np.asarray(point[j], dtype=float)
    columns = []
    for e in np.eye(x.size).reshape(x.size, *x.shape) * h:
        up, down = list(point), list(point)
        up[j], down[j] = (x + e, x - e) if x.shape else (float(x + e), float(x - e))
        columns.append((np.asarray(g(*up)) - np.asarray(g(*down))) / (2 * h))
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(g(*point)) + x.shape)


def _gradients(f, point):
    """Reverse mode's gradient, a zero for an argument it gives None for."""
    return [np.zeros(np.shape(a)) if g is None else g for g, a in zip(gradient(f, *point), point)]


@pytest.mark.parametrize("f, point", list(cases()))
def test_forward_jacobian_and_hessian(mode, f, point):
    x, lo, hi = point
    of_x = lambda v: f(v, lo, hi)  # noqa: E731
    np.testing.assert_allclose(jacobian(of_x, x, mode="forward")[0], central(of_x, (x,), 0), atol=1e-6)
    blocks = hessian(f, *point)
    for i in range(3):
        for j in range(3):
            want = _central_jacobian(lambda *args: _gradients(f, args)[i], point, j)  # (d/d arg j of gradient i)
            got = np.zeros(np.shape(want)) if blocks[i][j] is None else blocks[i][j]
            np.testing.assert_allclose(got, want, atol=1e-5, err_msg=f"block {i}, {j}")


@pytest.mark.parametrize("point", [(0.3, 0.5, -0.2), (0.9, 0.5, -0.2), (-0.7, 0.5, -0.2), (0.3, -0.5, 0.6)],
                         ids=["inside", "above both", "below both", "in order"])
def test_derivative_of_each_bound_of_a_scalar_clip(mode, point):
    x, lo, hi = point
    fs = [lambda v: float(np.clip(v, lo, hi)) ** 2, lambda v: float(np.clip(x, v, hi)) ** 2,
          lambda v: float(np.clip(x, lo, v)) ** 2]
    for k, f in enumerate(fs):
        assert derivative(f, point[k]) == pytest.approx(central(f, (point[k],), 0), abs=1e-6)


def test_a_bound_named_twice_is_numpys_error(mode):
    def f(x):
        return np.sum(np.clip(x, 0.1, a_min=0.2, a_max=0.5))
    with pytest.raises(TypeError):
        jvp(f, (X,), (np.ones(4),))

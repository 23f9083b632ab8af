"""The forward source transform (forward/transform.py): `x.__class__` of a dual number is its value's class, as
`type(x)` is (the branch `if x.__class__ is float:` took the other arm under jvp: tangent 1.47 for 1.4); keywords of
`pow` reach its tangent rule (a crash)."""
import functools

import numpy as np
import pytest

from zygotepy import derivative, gradient, hessian, jvp
from zygotepy.errors import MissingTangentRule


def squared_if_float(x):
    if x.__class__ is float:
        return x * x
    return x * x * x


def by_class_name(x):
    return x * x if x.__class__.__name__ == "float" else x


def rebuilt(x):
    return x.__class__(0.5) * x


@pytest.mark.parametrize("f, slope, curvature", [(squared_if_float, 1.4, 2.0), (by_class_name, 1.4, 2.0),
                                                 (rebuilt, 0.5, 0.0)], ids=lambda v: getattr(v, "__name__", ""))
def test_the_class_of_a_dual_number_is_its_value_s(f, slope, curvature):
    assert jvp(f, (0.7,), (1.0,))[1] == pytest.approx(slope)
    assert derivative(f, 0.7) == pytest.approx(slope)
    assert gradient(f, 0.7)[0] == pytest.approx(slope)
    assert hessian(f, 0.7) == pytest.approx(curvature)


def test_pow_with_keywords_in_forward_mode():
    assert jvp(lambda x: pow(x, exp=2), (0.7,), (1.0,)) == pytest.approx((0.49, 1.4))
    assert derivative(functools.partial(pow, exp=3), 2.0) == pytest.approx(12.0)


def _scale_(buf, a):
    buf *= a


class _Lin:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w @ x


def _with_user_rules():
    from zygotepy import adjoint

    @adjoint(_scale_, updates=True)
    def _scale_rule(buf, a):
        old = buf.copy()
        _scale_(buf, a)
        return buf, lambda dbuf: (dbuf * a, float(np.sum(dbuf * old)))

    @adjoint(_Lin.apply)
    def _apply_rule(self, x):
        return self.apply(x), lambda dy: (None, self.w.T @ dy)


def test_user_rules_in_forward_mode():  # (rules for this module's own functions: nothing to restore)
    """A rule declared updates=True has no tangent to give the updated argument: refused in forward mode (jvp updated
    the value and not its tangent: 2 for 4); a rule given to `Class.method` and called bound crashed (TypeError)."""
    _with_user_rules()

    def scaled(x):
        z = x * 1.0
        _scale_(z, 2.0)
        return np.sum(z ** 2)
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(MissingTangentRule, match="updates=True"):
        jvp(scaled, (x.copy(),), (np.array([1.0, 0.0, 0.0]),))
    np.testing.assert_allclose(gradient(scaled, x.copy())[0], 8 * x)
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    y, t = jvp(lambda v: _Lin(w).apply(v) ** 2, (np.array([0.5, -1.0]),), (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(t, 2 * (w @ np.array([0.5, -1.0])) * w[:, 0])

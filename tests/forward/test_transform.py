"""The forward source transform (forward/transform.py): `x.__class__` of a dual number is its value's class, as
`type(x)` is (the branch `if x.__class__ is float:` took the other arm under jvp: tangent 1.47 for 1.4); keywords of
`pow` reach its tangent rule (a crash)."""
import functools
import math

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


@functools.singledispatch
def _scaled(s):
    return 0.0


@_scaled.register(float)
def _(s):
    return s * s


class _Cached:
    def __init__(self, w):
        self.w = w

    @functools.lru_cache(maxsize=None)
    def act(self, x):
        return np.tanh(self.w * x)


_CACHED = _Cached(0.7)


@pytest.mark.parametrize("f, want", [
    (lambda x: _scaled(x) + x, lambda x: 2 * x + 1),
    (lambda x: (2.0).__mul__(x) + x.__rmul__(3.0), lambda x: 5.0),
    (lambda x: _CACHED.act(x) * 2, lambda x: 2 * 0.7 * (1 - np.tanh(0.7 * x) ** 2)),
], ids=["singledispatch", "a number's dunder", "lru_cache on a method"])
def test_calls_that_look_at_the_class_of_a_dual_number(f, want):
    """singledispatch took the default implementation (1.0 for 2.4), `(2.0).__mul__(x)` answered NotImplemented, and
    a cached method handed back an earlier call's value (0.0 for 0.63)."""
    f(1.37)  # (fills the cache)
    assert derivative(f, 1.37) == pytest.approx(want(1.37))


def _matched(x):
    match x:
        case float():
            return x * x
        case _:
            return 0.0


def test_a_class_pattern_given_a_dual_number_is_refused():
    """`case float():` failed to match the dual number and took another case: 0.0 for 1.4."""
    from zygotepy.errors import ForwardModeError
    with pytest.raises(ForwardModeError, match=r"test_transform.py:\d+: a match statement's class pattern"):
        derivative(_matched, 0.7)


class Polar:
    def __init__(self, r, theta):
        self.x = r * math.cos(theta)  # (computed in `__init__`: it runs transformed on the dual numbers)
        self.y = r * math.sin(theta)

    @property
    def slope(self):
        return math.atan2(self.y, self.x) + math.hypot(self.x, self.y)


class Shifted(Polar):
    def __init__(self, r, theta, by):
        super().__init__(r, theta)
        self.by = float(by) if by == 0 else by

    @property
    def total(self):
        return self.slope * self.by


def through_init_and_properties(t):
    p = Shifted(1.0 + t * t, 0.3 * t, t)
    return p.total + Polar(t, 0.5).slope


def test_a_users_init_and_properties_run_transformed_in_forward_mode():
    """`P(x).val` with `self.a = math.sin(a)` in `__init__` or `math.sin(self.a)` in a property raised
    ForwardModeError under jvp and derivative: the class's Python code ran as it is, on dual numbers."""
    want = gradient(through_init_and_properties, 0.7)[0]
    assert np.isclose(derivative(through_init_and_properties, 0.7), want)
    assert np.isclose(jvp(through_init_and_properties, (0.7,), (2.0,))[1], 2.0 * want)
    h = 1e-5
    fd = (gradient(through_init_and_properties, 0.7 + h)[0] - gradient(through_init_and_properties, 0.7 - h)[0]) / 2e-5
    assert np.isclose(hessian(through_init_and_properties, 0.7), fd, rtol=1e-6)


def _tone(v, w):
    return v * v * w if v < 0.5 else math.sin(v) + w


def test_np_vectorize_of_a_users_function_runs_it_transformed():
    """np.vectorize(f)(x) under jvp raised MissingTangentRule naming "numpy.tone": each entry now runs f transformed,
    broadcast as NumPy broadcasts."""
    def f(x, w):
        return np.sum(np.vectorize(_tone)(x, w)) + np.vectorize(_tone)(x[0], 2.0)
    x, w = np.array([0.2, 0.7, 0.4]), np.array([[1.5], [0.5]])
    t = np.array([1.0, -2.0, 0.5])
    g = gradient(f, x, w)[0]
    assert np.isclose(jvp(lambda x: f(x, w), (x,), (t,))[1], np.dot(g, t))


class _Holder:
    def __init__(self, obj, w):
        self.obj, self.w = obj, w  # (attribute names the reader of attributes might take for its own)


def test_an_attribute_named_like_the_readers_own_is_the_objects():
    def f(x):
        h = _Holder(x * 2.0, x)
        return h.obj * h.w
    assert jvp(f, (1.5,), (1.0,)) == (4.5, 6.0)

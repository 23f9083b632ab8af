"""How generated code's `obj.name(...)` resolves (zygotepy/ast_adjoint/dispatch.py `_method_kind`, `_callmethod`):
as Python does, checked against central differences in float64."""
import numpy as np

import zygotepy

from zygotepy import gradient, value_and_gradient
from zygotepy.testing import check_grads


# How `obj.name(...)` resolves (ast_adjoint/dispatch.py `_method_kind`): as Python does. An attribute of the object
# itself hides a function of its class, a function replaced on the class between two calls is the new one, and a
# ufunc kept on a class is not bound to the object. The first two were silently wrong (the class's function, or the
# old one, was differentiated); the third crashed (`tanh_rule() takes 1 positional argument but 2 were given`).
class _Layer:
    scale = np.tanh  # (no descriptor: `self.scale(z)` is `np.tanh(z)`)

    def __init__(self, w, act=None):
        self.w = w
        if act is not None:
            self.activation = act

    def activation(self, z):
        return z

    def __call__(self, x):
        return self.activation(self.w * x) + self.scale(x * self.w)


def _through_a_layer(w, x):
    return _Layer(w, np.sin)(x) * _Layer(w * 2.0)(x)


def test_an_instance_attribute_hides_the_class_function():
    w, x = 0.5, 2.0
    value, _ = value_and_gradient(_through_a_layer, w, x)
    assert value == _through_a_layer(w, x)
    check_grads(_through_a_layer, w, x)


class _Patched:
    def __init__(self, w):
        self.w = w

    def act(self, x):
        return self.w * x


def _use_patched(w, x):
    return _Patched(w).act(x)


def test_a_method_replaced_on_its_class_is_found_again():
    original = _Patched.act
    try:
        assert gradient(_use_patched, 2.0, 3.0) == (3.0, 2.0)
        _Patched.act = lambda self, x: self.w * x * x
        assert value_and_gradient(_use_patched, 2.0, 3.0) == (18.0, (9.0, 12.0))
    finally:
        _Patched.act = original
    assert gradient(_use_patched, 2.0, 3.0) == (3.0, 2.0)


class _Scale:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return self.w * x


class _Slotted:
    __slots__ = ("layer",)

    def __init__(self, layer):
        self.layer = layer


def test_a_callable_held_by_an_object_without_a_dict():
    """`p.layer(x)` where `p` is a namedtuple or has `__slots__` (its fields are the class's descriptors): the
    pullback read `p.__dict__` (an AttributeError; found by a probe of ML programs)."""
    import collections
    params = collections.namedtuple("Params", ["layer", "c"])

    def f(p, x):
        return np.sum(p.layer(x)) * p.c

    def g(h, x):
        return np.sum(h.layer(x) ** 2)
    check_grads(f, params(_Scale(np.array([2.0, 3.0])), 2.0), np.array([1.0, -1.5]))
    (dh, dx) = gradient(g, _Slotted(_Scale(np.array([2.0, 3.0]))), np.array([1.0, -1.5]))
    np.testing.assert_allclose(dh.layer.w, 2 * np.array([2.0, 3.0]) * np.array([1.0, 2.25]))
    np.testing.assert_allclose(dx, 2 * np.array([4.0, 9.0]) * np.array([1.0, -1.5]))
    (dp, dx) = gradient(f, params(_Scale(np.array([2.0, 3.0])), 2.0), np.array([1.0, 1.0]))
    np.testing.assert_allclose(dp.layer.w, [2.0, 2.0])
    assert dp.c == 5.0
    np.testing.assert_allclose(dx, [4.0, 6.0])


# A method or callable a class's `__getattr__` (or `__getattribute__`) supplies, called in the same expression: its
# object's gradient comes back through the lookup (it was None: the callable was taken as a field of the object)
class _Inner:
    def __init__(self, x):
        self.x = x

    def sq(self):
        return self.x * self.x


class _Delegate:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Scale:
    def __init__(self, w):
        self.w = w

    def __call__(self, t):
        return self.w * t


class _Model:
    def __init__(self, layers):
        self.layers = layers

    def __getattr__(self, name):
        if name.startswith("layer"):
            return self.layers[int(name[5:])]
        raise AttributeError(name)


class _Logged:
    def __init__(self, inner):
        self.inner = inner

    def __getattribute__(self, name):
        if name == "sq":
            return object.__getattribute__(self, "inner").sq
        return object.__getattribute__(self, name)


def test_a_callable_a_user_lookup_supplies():
    for optimized in (True, False):
        with zygotepy.optimizations(optimized):
            assert gradient(lambda x: _Delegate(_Inner(x)).sq() * 2.0, 3.0) == (12.0,)
            assert gradient(lambda x: _Model([_Scale(x), _Scale(2.0)]).layer0(3.0) + x, 1.5) == (4.0,)
            assert gradient(lambda x: _Logged(_Inner(x * x)).sq(), 1.5) == (4 * 1.5 ** 3,)
            check_grads(lambda w: np.sum(_Model([_Scale(w)]).layer0(np.arange(3.0)) ** 2), np.array([0.3, -1.0, 2.0]))

"""A class changed between two gradients (zygotepy/ast_adjoint/class_lookup.py, used by dispatch.py `_method_kind` and
adjoints/structures/attributes.py): a property replaced, added, deleted, shadowed in a subclass, a cached_property or
a descriptor replaced, `mock.patch.object`. Each was silently wrong: the answer kept per (class, name) from the first
gradient ran the old getter, or read a field where a getter now computes. Each case is differentiated before and after
the change, against one plain call and central differences in float64 (tests/plain_checks.py)."""
import functools
import os
import sys
from unittest import mock

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import central  # noqa: E402


def _agrees(f, a=0.6):
    value, (grad,) = value_and_gradient(f, a)
    np.testing.assert_allclose(value, f(a), rtol=1e-12, err_msg="value")
    np.testing.assert_allclose(grad, central(f, (a,), 0), rtol=1e-6, atol=1e-8, err_msg="gradient")


def _replaced():
    class Q:
        def __init__(self, a):
            self.a = a

        @property
        def v(self):
            return self.a * 2.0

    def change():
        Q.v = property(lambda self: self.a ** 3)
    return (lambda a: Q(a).v * a), change


def _constant_then_property():
    class F:
        v = 3.0

        def __init__(self, a):
            self.a = a

    def change():
        F.v = property(lambda self: self.a * self.a)
    return (lambda a: F(a).v * a), change


def _field_then_property():
    class A:
        def __init__(self, a):
            self.a = a
            self.__dict__["b"] = a * 2.0

    def change():
        A.b = property(lambda self: self.a ** 3)
    return (lambda a: A(a).b * a), change


def _property_deleted():
    class B:
        def __init__(self, a):
            self.a = a
            self.__dict__["b"] = a * 2.0

        @property
        def b(self):
            return self.a ** 3

    def change():
        del B.b  # (the instance's own field answers again)
    return (lambda a: B(a).b * a), change


def _getattr_then_property():
    class C:
        def __init__(self, a):
            self.a = a

        def __getattr__(self, name):
            if name == "w":
                return self.a * 2.0
            raise AttributeError(name)

    def change():
        C.w = property(lambda self: self.a ** 3)
    return (lambda a: C(a).w * a), change


def _subclass_shadows():
    class Base:
        def __init__(self, a):
            self.a = a

        @property
        def v(self):
            return self.a * 2.0

    class G(Base):
        pass

    def change():
        G.v = property(lambda self: self.a ** 3)
    return (lambda a: G(a).v * a + Base(a).v), change


def _cached_property_replaced():
    class D:
        def __init__(self, a):
            self.a = a

        @functools.cached_property
        def sq(self):
            return self.a * self.a

    def change():
        new = functools.cached_property(lambda self: self.a ** 3)
        new.__set_name__(D, "sq")
        D.sq = new
    return (lambda a: D(a).sq * a), change


def _descriptor_replaced():
    class Desc:
        def __init__(self, k):
            self.k = k

        def __get__(self, obj, typ=None):
            return obj.a * self.k

    class H:
        v = Desc(2.0)

        def __init__(self, a):
            self.a = a

    def change():
        H.v = Desc(5.0)
    return (lambda a: H(a).v * a), change


def _base_method_shadowed():
    class Base:
        def __init__(self, a):
            self.a = a

        def energy(self):
            return self.a ** 2

    class S(Base):
        pass

    def change():
        S.energy = lambda self: self.a ** 3
    return (lambda a: S(a).energy() + Base(a).energy()), change


def _method_deleted():
    class Base:
        def __init__(self, a):
            self.a = a

        def energy(self):
            return self.a ** 2

    class S(Base):
        def energy(self):
            return self.a ** 4

    def change():
        del S.energy  # (the base's method answers again)
    return (lambda a: S(a).energy()), change


CASES = {"property replaced": _replaced, "constant then property": _constant_then_property,
         "field then property": _field_then_property, "property deleted": _property_deleted,
         "__getattr__ then property": _getattr_then_property, "subclass shadows": _subclass_shadows,
         "cached_property replaced": _cached_property_replaced, "descriptor replaced": _descriptor_replaced,
         "base method shadowed": _base_method_shadowed, "method deleted": _method_deleted}


@pytest.mark.parametrize("case", CASES)
def test_a_class_changed_between_two_gradients(mode, case):
    f, change = CASES[case]()
    _agrees(f)
    change()
    _agrees(f)


class _Patched:
    def __init__(self, a):
        self.a = a

    def energy(self):
        return self.a ** 2

    @property
    def p(self):
        return self.a * 2.0


def _patched(a):
    return _Patched(a).energy() + _Patched(a).p


@pytest.mark.parametrize("name, new", [("energy", lambda self: self.a ** 3),
                                       ("p", property(lambda self: self.a ** 4))])
def test_mock_patch_object_and_after(mode, name, new):
    _agrees(_patched)
    with mock.patch.object(_Patched, name, new):
        _agrees(_patched)
    _agrees(_patched)

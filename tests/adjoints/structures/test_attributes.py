"""Attribute reads (adjoints/structures/attributes.py): descriptors (`functools.cached_property`, a class with
`__get__`), `__getattr__` and `__getattribute__`, `obj.__dict__` and `vars(obj)`, `getattr` with a default: each
checked against one plain call and central finite differences (tests/plain_checks.py)."""
import functools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


class _Cached:
    def __init__(self, w):
        self.w = w

    @functools.cached_property
    def sq(self):
        return self.w ** 2


class _Tripled:
    def __get__(self, obj, owner):
        return obj.w * 3.0


class _WithDescriptor:
    t = _Tripled()

    def __init__(self, w):
        self.w = w


class _Lazy:
    def __init__(self, w):
        self.w = w

    def __getattr__(self, name):
        return self.w * len(name)


def test_descriptors_are_differentiated():
    """functools.cached_property and a class with __get__ gave None (their value was taken as a field of the
    object); a second read of the cached value reaches the first computation."""
    agree(lambda x: np.sum(_Cached(x).sq))

    def f(x):
        c = _Cached(x)
        return np.sum(c.sq) + np.sum(c.sq * x)
    agree(f)
    agree(lambda x: np.sum(_WithDescriptor(x).t ** 2))
    agree(lambda x: np.sum(_Lazy(x).abc))  # __getattr__ (was a RecursionError)


def test_object_dict_read_and_write():
    """obj.__dict__["w"] gave None; writing through it gave the old field's gradient; vars(obj) raised
    MissingAdjoint."""
    agree(lambda x: np.sum(_Cached(x).__dict__["w"] ** 2) + np.sum(vars(_Cached(x * 2))["w"]))

    def f(x):
        c = _Cached(x * 1.0)
        c.__dict__["w"] = x ** 3
        return np.sum(c.w)
    agree(f)


def test_getattr_default_takes_the_gradient():
    """getattr(obj, "missing", d) gave d no gradient (None)."""
    agree(lambda x: getattr(_Cached(x), "missing", x[0]) * 2 + np.sum(getattr(_Cached(x), "w", x[1]) ** 2))


class _Doubling:
    def __init__(self, w):
        self.w = w

    def __getattribute__(self, name):
        v = object.__getattribute__(self, name)
        return v * 2 if name == "w" else v


def test_user_getattribute_is_differentiated():
    """A class overriding __getattribute__ ran it unseen: the gradient missed its computation (silently wrong)."""
    agree(lambda x: np.sum(_Doubling(x).w ** 2))

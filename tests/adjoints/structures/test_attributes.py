"""Attribute reads (adjoints/structures/attributes.py): descriptors (`functools.cached_property`, a class with
`__get__`), `__getattr__` and `__getattribute__`, `obj.__dict__` and `vars(obj)`, `getattr` with a default: each
checked against one plain call and central finite differences (tests/plain_checks.py)."""
import dataclasses
import functools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy import StructGrad, ZygoteError, gradient  # noqa: E402


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


# Found by a probe of ordinary Python programs: partials of partials (Python merges them: the inner one's keywords were
# lost, silently, and its arguments crashed the backward), `functools.partialmethod` (the object's gradient was lost)
# and a callable a property makes (now refused: its gradient has no field of the object to go to).
def _mul(a, b):
    return a * b


def _partial_of_partial(x):
    return functools.partial(functools.partial(_mul, x), 3.0)()


def _partial_of_keyword_partial(x, y):
    return functools.partial(functools.partial(_mul, b=y), x)()


class _Lin:
    rate = None  # (a class attribute)

    def __init__(self, w):
        self.w = w

    def apply(self, x, scale=1.0):
        return self.w * x * scale

    twice = functools.partialmethod(apply, scale=2.0)
    thrice = functools.partialmethod(apply, 3.0)

    @property
    def act(self):
        return lambda t: self.w * t


def _twice(w, x):
    return _Lin(w).twice(x) + _Lin(w).thrice(x * x)


def test_partials_found_by_the_probe():
    import pytest
    from zygotepy import ZygoteError, gradient
    from zygotepy.testing import check_grads
    check_grads(_partial_of_partial, 0.7)
    check_grads(_partial_of_keyword_partial, 0.7, 1.3)
    check_grads(_twice, 0.7, 1.3)
    assert gradient(_partial_of_keyword_partial, 0.7, 1.3) == (1.3, 0.7)
    with pytest.raises(ZygoteError, match="a callable its class makes for the object"):
        gradient(lambda w, x: _Lin(w).act(x), 0.7, 1.3)


def _read_unused_then_again(x):
    c = _Cached(x)
    c.sq  # noqa: B018 (a read whose value goes unused: Python caches it all the same)
    return c.sq * 3.0


def _read_twice(x):
    c = _Cached(x)
    return c.sq + c.sq


def _changed_between_reads(x):
    c = _Cached(x)
    first = c.sq
    c.w = 2 * x
    return c.sq + first


def _unused_read_then_changed(x):
    c = _Cached(x)
    c.sq  # noqa: B018
    c.w = 2 * x
    return c.sq


def test_cached_property_read_again():
    # (after a change of the object, the second read gave None where the gradient is 2x: refused now)
    for optimized in (True, False):
        with zygotepy.optimizations(optimized):
            assert gradient(_read_unused_then_again, 0.7) == (pytest.approx(4.2),)
            assert gradient(_read_twice, 0.7) == (pytest.approx(2.8),)
            for f in (_changed_between_reads, _unused_read_then_changed):
                with pytest.raises(ZygoteError, match="cached_property _Cached.sq after the object changed"):
                    gradient(f, 0.7)
            warm = _Cached(1.5)
            warm.sq  # noqa: B018 (cached before the differentiated call, from the fields it still has)
            assert gradient(lambda c: c.sq * 2.0, warm)[0].w == pytest.approx(6.0)


@dataclasses.dataclass
class _Weight:
    w: float


def _inner_loss(m, x):
    return m.w * x * x * m.w


def _read_by_attribute(w):
    g = gradient(_inner_loss, _Weight(w), 3.0)[0]
    return g.w * w


@pytest.mark.parametrize("on", [True, False], ids=["optimized", "plain"])
def test_a_structgrad_field_read_by_attribute(on):
    """`g.w` of a gradient inside a differentiated function (api.md: a StructGrad reads as `g.W` and `g["W"]`) was
    refused, naming structgrad.py's `try`; it is `g["w"]`."""
    with zygotepy.optimizations(on):
        assert gradient(_read_by_attribute, 2.0) == pytest.approx((72.0,))
        assert gradient(lambda g: g.W * g.W, StructGrad(W=3.0)) == (StructGrad(W=6.0),)


class _Scaled:
    def __init__(self, w):
        self.w = w

    def _square(self):
        return np.sum(self.w ** 2)

    class _Getter:
        def __call__(self, obj):
            return np.sum(np.sin(obj.w))

    cached = property(functools.cache(_square))
    partial = property(functools.partial(_square))
    by_object = property(_Getter())
    by_attrgetter = property(__import__("operator").attrgetter("w"))


@pytest.mark.parametrize("read", [lambda o: o.cached, lambda o: o.partial, lambda o: o.by_object,
                                  lambda o: np.sum(o.by_attrgetter * o.w)],
                         ids=["functools.cache", "partial", "callable object", "attrgetter"])
def test_a_property_whose_getter_is_not_a_plain_function(read, mode):
    """A property's getter called natively gave its reads no gradient (None for 2w)."""
    agree(lambda w: read(_Scaled(w * 1.0)))


class _Base:
    def __init__(self, a):
        self.a = a

    @property
    def sq(self):
        return np.sum(self.a ** 2)

    @functools.cached_property
    def csq(self):
        return np.sum(np.exp(self.a))


class _Sub(_Base):
    @property
    def sq(self):
        return super().sq * 2

    def twice_csq(self):
        return super().csq * 2


@pytest.mark.parametrize("read", [lambda o: o.sq, lambda o: o.twice_csq()], ids=["property", "cached_property"])
def test_a_property_read_through_super(read, mode):
    """`super().sq` ran the base class's getter natively: None for 4a."""
    agree(lambda a: read(_Sub(a * 1.0)))


class _Optional:
    def __init__(self, values):
        self._values = values

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._values:
            raise AttributeError(name)
        return self._values[name]

    @property
    def missing(self):
        raise AttributeError("missing")


@pytest.mark.parametrize("read", [lambda o: getattr(o, "c", 2.0), lambda o: getattr(o, "missing", 3.0),
                                  lambda o: getattr(o, "a", 5.0)], ids=["__getattr__", "property", "found"])
def test_getattr_default_where_the_users_code_raises_attribute_error(read, mode):
    """Python's getattr answers the default where `__getattr__` or a property raises AttributeError: zygotepy let the
    AttributeError out of `gradient`."""
    agree(lambda x: np.sum(_Optional({"a": x}).a * read(_Optional({"a": x}))))

"""Nested reverse mode through constructors: namedtuples, dataclasses, SimpleNamespace and `dict(a=x)` by their
structural rules, and plain classes whose `__init__` is read as a function returning the fields (adjoints/nesting/
constructors.py), checked against closed forms; an `__init__` that does more is refused by the twins."""

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient


def d(f):
    """The derivative of a scalar function, by reverse mode (nests)."""
    return lambda x: gradient(f, x)[0]


_Pair = __import__("collections").namedtuple("_Pair", "a b")


@__import__("dataclasses").dataclass
class _Fields:
    a: float
    b: float = 2.0


@pytest.mark.parametrize("make", [
    lambda y: _Pair(y, 2.0), lambda y: _Pair(b=2.0, a=y), lambda y: _Fields(y), lambda y: _Fields(a=y, b=2.0),
    lambda y: __import__("types").SimpleNamespace(a=y, b=2.0)],
    ids=["namedtuple", "namedtuple-keywords", "dataclass", "dataclass-keywords", "simplenamespace"])
def test_second_and_third_order_through_constructors(make):
    def f(y):
        p = make(y)
        return p.a ** 3 * p.b  # 2 y^3: second derivative 12 y, third 12
    assert d(d(f))(1.5) == pytest.approx(18.0, rel=1e-12)
    assert d(d(d(f)))(1.5) == pytest.approx(12.0, rel=1e-12)


def test_second_order_through_a_dict_built_with_keywords():
    def f(y):
        p = dict(a=y, b=2.0)
        return p["a"] ** 3 * p["b"]
    assert d(d(f))(1.5) == pytest.approx(18.0, rel=1e-12)


class _Plain:
    def __init__(self, v):
        self.v = v


class _Scaled2:
    """A docstring."""

    def __init__(self, v, s=2.0, *, shift=0.0):
        self.v, self.s = v, s
        self.w = self.v * s + shift  # reads an attribute it set
        self.w += 1.0
        note: str = "kept"
        self.note = note


class _CallsMethod:
    def __init__(self, v):
        self.v = self.clean(v)

    def clean(self, v):
        return v


class _SetsInBranch:
    def __init__(self, v):
        if v > 0:
            self.v = v
        else:
            self.v = -v


class _Child(_Plain):
    def __init__(self, v):
        super().__init__(v)


@pytest.mark.parametrize("make, second, third", [
    (lambda y: _Plain(y).v ** 3, lambda x: 6 * x, lambda x: 6.0),
    (lambda y: _Scaled2(y).w ** 2, lambda x: 8.0, None),  # (2y + 1)^2
    (lambda y: _Scaled2(y, y, shift=1.0).w * _Scaled2(y).s, lambda x: 4.0, None),  # 2 (y^2 + 2)
    (lambda y: _Scaled2(v=y, shift=y).w ** 2, lambda x: 18.0, None)],  # (3y + 1)^2
    ids=["fields", "computed-fields", "keywords", "all-keywords"])
def test_nested_reverse_through_plain_classes(make, second, third):
    # a plain class's __init__ is read as a function returning its attributes (adjoints/nesting/constructors.py)
    assert d(d(make))(1.3) == pytest.approx(second(1.3), rel=1e-12)
    if third is not None:
        assert d(d(d(make)))(1.3) == pytest.approx(third(1.3), rel=1e-12)


def test_nested_reverse_through_a_model_object_matches_the_hessian():
    from zygotepy import hessian

    class Model:
        def __init__(self, w, b):
            self.w = w
            self.b = b

        def __call__(self, x):
            return np.tanh(x @ self.w + self.b)
    xs = np.array([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]])

    def loss(w):
        return np.sum(Model(w, 0.1)(xs) ** 2)
    w0 = np.array([0.3, -0.2])
    (hv,) = gradient(lambda w: gradient(loss, w)[0] @ np.array([1.0, -2.0]), w0)
    np.testing.assert_allclose(hv, hessian(loss, w0) @ np.array([1.0, -2.0]), rtol=1e-10)


@pytest.mark.dual_route
@pytest.mark.parametrize("cls, why", [(_CallsMethod, "reads self.clean"), (_SetsInBranch, "inside a block"),
                                      (_Child, "closure")])
def test_plain_classes_whose_init_does_more_at_second_order(cls, why):
    assert gradient(lambda y: cls(y).v ** 3, 1.5) == pytest.approx((6.75,))  # one level: the derived __init__
    with pytest.raises(ZygoteError, match=why):  # the twins refuse to read such an __init__ as a function ...
        from zygotepy.adjoints.nesting.constructors import init_fields
        init_fields(cls)
    # ... so the inner gradient is taken by forward-over-reverse (nesting/deep.py): (y^3)'' = 6 y
    assert d(d(lambda y: cls(y).v ** 3))(1.5) == pytest.approx(9.0, rel=1e-12)

"""`@adjoint` targets and what a user's back may return (adjoints/user_rules.py): a method bound to one object is
refused when registered (its rule, keyed by the class's function, would serve every object of the class); a
classmethod's rule is written for the call (`def _(x)` for `Ops.cube(x)`), or takes the class first under the
classmethod's own name for it; a staticmethod's is its function's; a back may return a list. Gradients are checked
against central finite differences in float64."""
import numpy as np
import pytest

from zygotepy import ZygoteError, adjoint, gradient, hessian, value_and_gradient
from zygotepy.adjoints import registry

CALLS = []  # (which rule ran, what it was given): a rule that did not run would leave a source-derived gradient


def fd(f, x, h=1e-6):
    """Central finite differences of a real-valued `f` at `x` (a float or a float64 array)."""
    if np.ndim(x) == 0:
        return (f(x + h) - f(x - h)) / (2 * h)
    g = np.zeros(np.shape(x))
    for i in range(g.size):
        e = np.zeros(g.shape)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


class Ops:
    k = 2.0

    @classmethod
    def cube(cls, x):
        return x ** 3

    @classmethod
    def scaled(cls, x, n=2.0):
        return cls.k * x ** n

    @classmethod
    def lin(cls, x, y):
        return x * y

    @classmethod
    def power(cls, x, n):
        return x ** n

    @staticmethod
    def sq(x):
        return x * x

    @staticmethod
    def sq2(x):
        return x * x


class SubOps(Ops):
    k = 5.0


@adjoint(Ops.cube)  # the call's form, `Ops.cube(x)`; its back returns a list
def _cube(x):
    CALLS.append("cube")
    return Ops.cube(x), lambda dy: [3 * x * x * dy]


@adjoint(Ops.scaled)  # the class first, under the classmethod's name for it; `n` gets no cotangent
def _scaled(cls, x, n=2.0):
    CALLS.append(("scaled", cls))
    return cls.scaled(x, n), lambda dy: (None, cls.k * n * x ** (n - 1) * dy, None)


@adjoint(Ops.lin, need=True)
def _lin(x, y):
    def back(dy, need):
        CALLS.append(("lin", need))
        return (dy * y if need[0] else None, dy * x if need[1] else None)
    return Ops.lin(x, y), back


@adjoint(Ops.power)
def _power(x, n):
    y = Ops.power(x, n)
    return y, lambda dy: (n * x ** (n - 1) * dy, y * np.log(x) * dy)


@adjoint(Ops.sq)  # a staticmethod read through its class: the function itself
def _sq(x):
    CALLS.append("sq")
    return Ops.sq(x), lambda dy: (2 * x * dy,)


@adjoint(Ops.__dict__["sq2"])  # the staticmethod object
def _sq2(x):
    CALLS.append("sq2")
    return Ops.sq2(x), lambda dy: (2 * x * dy,)


X = np.array([0.3, -0.5, 1.2])

CASES = [  # (name, f, x, a rule that must have run)
    ("classmethod", lambda x: Ops.cube(x) * 2.0, 0.9, "cube"),
    ("classmethod, array", lambda x: np.sum(np.sin(Ops.cube(x))), X, "cube"),
    ("classmethod through an object", lambda x: Ops().cube(x), 0.9, "cube"),
    ("classmethod through a subclass", lambda x: SubOps.cube(np.sin(x)), 0.9, "cube"),
    ("classmethod, class first", lambda x: Ops.scaled(x, 3.0), 0.9, ("scaled", Ops)),
    ("classmethod, class first, subclass", lambda x: SubOps.scaled(x), 0.9, ("scaled", SubOps)),
    ("classmethod, class first, keyword", lambda x: Ops.scaled(x, n=3.0), 0.9, ("scaled", Ops)),
    ("classmethod, need", lambda x: Ops.lin(x, 2.0) + Ops.lin(3.0, x), 0.9, ("lin", (False, True))),
    ("classmethod, gradient into a keyword", lambda x: Ops.power(x, n=x), 1.3, None),
    ("classmethod, all keywords", lambda x: Ops.power(x=x, n=2.5), 1.3, None),
    ("staticmethod", lambda x: Ops.sq(x) ** 2, 0.9, "sq"),
    ("staticmethod through an object", lambda x: Ops().sq(x), 0.9, "sq"),
    ("staticmethod object", lambda x: Ops.sq2(x) + 1.0, 0.9, "sq2"),
    ("staticmethod, array", lambda x: np.sum(Ops.sq(x) * x), X, "sq"),
]


@pytest.mark.parametrize("name, f, x, ran", CASES, ids=[c[0] for c in CASES])
def test_classmethod_and_staticmethod_rules(name, f, x, ran):
    CALLS.clear()
    (g,) = gradient(f, x)
    assert ran is None or ran in CALLS
    v, (g2,) = value_and_gradient(f, x)
    assert np.allclose(v, f(x), rtol=1e-14, atol=0)
    expected = fd(f, x)
    np.testing.assert_allclose(g, expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(g2, expected, rtol=1e-7, atol=1e-9)


def test_classmethod_rule_under_hessian_and_nesting():
    f = lambda x: Ops.cube(x) * Ops.sq(x)  # noqa: E731  (x ** 5)
    assert np.isclose(hessian(f, 0.9), 20 * 0.9 ** 3, rtol=1e-12)
    (g,) = gradient(lambda x: gradient(lambda t: Ops.cube(t), x)[0], 0.9)
    assert np.isclose(g, 6 * 0.9, rtol=1e-12)
    np.testing.assert_allclose(np.diag(hessian(lambda x: np.sum(Ops.cube(x)), X)), 6 * X, rtol=1e-12)


# --- a method bound to one object: refused when registered ---------------------------------------------------

class Field:
    def __init__(self, a):
        self.a = a

    def f(self, x):
        return self.a * x ** 2


class Meta(type):
    def m(cls, x):
        return 3.0 * x


class Metered(metaclass=Meta):
    pass


BOUND = [  # (name, target, the function that must get no rule, what the message names)
    ("method of an object", Field(2.0).f, Field.f, r"Field\.f bound to one object.*@adjoint\(Field\.f\)"),
    ("metaclass method of a class", Metered.m, Meta.m, r"Meta\.m bound to one object.*@adjoint\(Meta\.m\)"),
]


@pytest.mark.parametrize("name, target, fn, match", BOUND, ids=[b[0] for b in BOUND])
def test_bound_method_refused(name, target, fn, match):
    with pytest.raises(ZygoteError, match=match):
        @adjoint(target)
        def _(self, x):
            return target(x), lambda dy: (None, 4.0 * x * dy)
    assert registry.find_rule(fn) is None


def test_bound_method_refused_leaves_other_objects_exact():
    c1, c2 = Field(2.0), Field(3.0)
    with pytest.raises(ZygoteError, match="made anew at each access"):
        adjoint(c1.f)
    for c in (c1, c2):
        f = lambda x: c.f(x)  # noqa: E731
        v, (g,) = value_and_gradient(f, 1.5)
        assert v == c.a * 2.25 and np.isclose(g, fd(f, 1.5), rtol=1e-8)


def test_ambiguous_classmethod_rule_refused():
    class Amb:
        @classmethod
        def f(cls, x):
            return 2.0 * x
    with pytest.raises(ZygoteError, match="could be written for the call or for the function.*'cls'"):
        @adjoint(Amb.f)
        def _(c, x):
            return Amb.f(x), lambda dy: (None, 2.0 * dy)
    assert registry.find_rule(Amb.f.__func__) is None


@pytest.mark.parametrize("back, got", [(lambda dy: 2.0 * dy, "'float'"), (lambda dy: (2.0 * dy, 1.0), "2 cotangents"),
                                       (lambda dy: (), "0 cotangents")])
def test_classmethod_back_counted_without_the_class(back, got):
    class Bad:
        @classmethod
        def f(cls, x):
            return 2.0 * x

    @adjoint(Bad.f)
    def _(x):
        return Bad.f(x), back
    with pytest.raises(ZygoteError, match=f"returned {got} for a call with 1 positional arguments.*class not counted"):
        gradient(lambda x: Bad.f(x), 1.0)


# --- a back returning a list ---------------------------------------------------------------------------------------

def tripled(x):
    return 3.0 * x


@adjoint(tripled)
def _tripled(x):
    return tripled(x), lambda dy: [3.0 * dy]


def mixed(x, y):
    return x * np.sin(y)


@adjoint(mixed)
def _mixed(x, y):
    return mixed(x, y), lambda dy: [dy * np.sin(y), dy * x * np.cos(y)]


class Scale:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w * x


@adjoint(Scale.apply)
def _apply(self, x):
    return Scale.apply(self, x), lambda dy: [{"w": np.sum(dy * x)}, dy * self.w]


LISTS = [
    ("function", lambda x: tripled(x) ** 2, 0.8),
    ("two arguments", lambda x: mixed(x, x * x), 0.8),
    ("array", lambda x: np.sum(mixed(x, 2.0 * x) ** 2), X),
    ("method", lambda x: np.sum(Scale(1.5).apply(x) ** 2), X),
    ("classmethod", lambda x: Ops.cube(x) ** 2, 0.8),
]


@pytest.mark.parametrize("name, f, x", LISTS, ids=[c[0] for c in LISTS])
def test_back_returning_a_list(name, f, x):
    v, (g,) = value_and_gradient(f, x)
    assert np.allclose(v, f(x), rtol=1e-14, atol=0)
    np.testing.assert_allclose(g, fd(f, x), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(gradient(f, x)[0], g, rtol=1e-15, atol=0)


def test_list_back_under_hessian():
    assert np.isclose(hessian(lambda x: tripled(x) ** 2, 0.8), 18.0, rtol=1e-12)


def test_method_rule_under_subclass_super():
    """The doc's form (`Scale.apply(self, x)`): a subclass calling `super().apply` gets the rule, value and gradient."""
    class Twice(Scale):
        def apply(self, x):
            return super().apply(x) * 2.0
    s = Twice(1.5)
    f = lambda x: np.sum(s.apply(x) ** 2)  # noqa: E731
    v, (g,) = value_and_gradient(f, X)
    assert np.isclose(v, f(X), rtol=1e-14)
    np.testing.assert_allclose(g, fd(f, X), rtol=1e-7, atol=1e-9)

"""Classes defined inside the differentiated function: made at run time from the user's own class-body code, so their
methods, properties, operators, `super()` and dataclass constructors are differentiated as a module-level class's are.
A class whose body or methods read the function's variables (other than the class's own name) is refused before
anything runs: the gradient to those variables would be lost inside the class."""
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest

from zygotepy import UnsupportedSyntax, gradient, show_adjoint
from zygotepy.testing import check_grads


class _Base:
    def scale(self, v):
        return 2.0 * v


def methods_properties_operators_and_super(x):
    class Scale(_Base):
        """A layer-like object."""
        power = 2

        def __init__(self, k):
            self.k = k

        def apply(self, v):
            return self.k * v ** self.power + super().scale(v)

        @property
        def twice(self):
            return 2 * self.k

        def __mul__(self, other):
            return Scale(self.k * other)  # its own name: allowed
    s = Scale(x)
    bound = s.apply
    unbound = Scale.apply
    t = s * x
    return bound(x) + unbound(s, 2.0) + s.twice + t.k


def a_dataclass(x):
    @dataclass
    class P:
        a: float
        b: float
    p = P(x, 2 * x)
    return p.a * p.b + math.sin(p.a)


def a_namedtuple_subclass(x):
    class Pair(NamedTuple):
        a: float
        b: float
    p = Pair(x, x * x)
    return p.a * p.b


def a_class_made_in_a_loop(x):
    for _ in range(2):
        class Square:
            def __call__(self, v):
                return v * v
        x = Square()(x)
    return x


def a_callable_layer_on_arrays(x):
    class Dense:
        def __init__(self, W, b):
            self.W, self.b = W, b

        def __call__(self, v):
            return np.tanh(self.W @ v + self.b)
    layer = Dense(np.outer(x, x) + np.eye(2), x)
    return np.sum(layer(x) ** 2)


@pytest.mark.parametrize("f, x", [
    (methods_properties_operators_and_super, 1.5),
    (a_dataclass, 0.7),
    (a_namedtuple_subclass, -1.3),
    (a_class_made_in_a_loop, 1.1),
    (a_callable_layer_on_arrays, np.array([0.3, -0.4])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_class_defined_inside_the_function(f, x):
    check_grads(f, x)


def test_the_closed_form_of_a_local_class():
    # k v^2 + 2v at v = x, k = x, plus the same at v = 2, plus 2k, plus k*x: x^3 + 2x + 4x + 4 + 2x + x^2
    x = 1.5
    (g,) = gradient(methods_properties_operators_and_super, x)
    assert g == pytest.approx(3 * x ** 2 + 2 + 4 + 2 + 2 * x, rel=1e-12)


def test_a_class_reading_the_function_variables_is_refused_naming_them():
    def f(x):
        k = 3.0 * x
        class Q:
            def f(self, v):
                return k * v
        return Q().f(x)
    line = f.__code__.co_firstlineno + 2
    with pytest.raises(UnsupportedSyntax, match=rf"test_local_classes.py:{line}: .*read the function's variables \('k'\)"):
        gradient(f, 1.5)


def test_show_adjoint_builds_the_class_from_the_users_code():
    text = show_adjoint(a_dataclass, optimized=True)
    assert "_build_class(_class_body, 'P')" in text and "P = dataclass(_class)" in text


def test_a_local_class_method_updating_its_object_called_for_its_value():
    """As for a module-level class (tests/adjoints/mutation/test_calls.py): the call goes through valuecall, so the
    update of `c` is seen (it raised for a class defined in the function, whose methods the lowering could not look
    up)."""
    def f(x):
        class Counter:
            def __init__(self, w):
                self.w = w

            def bump(self, v):
                self.w = self.w + v
                return self.w
        c = Counter(1.0)
        y = c.bump(x)
        return y * c.w * x
    check_grads(f, 2.0)
    assert gradient(f, 2.0) == (pytest.approx(3 * 2.0 ** 2 + 4 * 2.0 + 1.0),)

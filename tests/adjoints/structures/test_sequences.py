"""structures/sequences.py: copies of containers and objects (`copy.copy` of an object with `__slots__`)."""
import copy

import pytest

from zygotepy import gradient


class Body:
    __slots__ = ("m", "x")

    def __init__(self, m, x):
        self.m = m
        self.x = x


class Tagged(Body):
    __slots__ = ("tag",)

    def __init__(self, m, x):
        super().__init__(m, x)
        self.tag = "b"


def energy(m, x, cls=Body):
    b = cls(m, x)
    c = copy.copy(b)
    c.x = c.x * 2.0
    return c.m * c.x ** 2 + b.x


@pytest.mark.parametrize("cls", [Body, Tagged])
def test_a_shallow_copy_of_an_object_with_slots(cls, mode):
    """`copy.copy` of an object whose class has `__slots__` (its own, or a base class's too) was refused ("only lists,
    dicts, arrays and plain objects"): its fields are copied as Python's copy copies them. m c.x^2 + x, c.x = 2x."""
    assert gradient(lambda m, x: energy(m, x, cls), 1.5, 0.7) == (pytest.approx(4 * 0.7 ** 2),
                                                                 pytest.approx(8 * 1.5 * 0.7 + 1.0))

"""`y *= v` on a name a nested function made before captures (ast_adjoint/lower/statements.py, runtime
`captured_updated`): on an array or a list it updates the object the closure reads, whose new version the closure's
derived code cannot follow; that gave a silently wrong gradient and is refused now, naming the line, as an item store
into a captured object already was. On a number it makes a new object, which the closure's cell holds as in Python.
"""
import numpy as np
import pytest

from zygotepy import UnsupportedSyntax, gradient
from zygotepy.testing import check_grads


def test_an_array_updated_in_place_after_a_closure_captured_it_is_refused():
    def f(x, b):
        y = x * 1.0

        def g(t):
            return np.sum(np.sin(y) * t)
        y *= b
        return g(2.0)
    with pytest.raises(UnsupportedSyntax, match=r"test_captured_updates.py:\d+.*updating 'y' in place, which a "
                                                r"nested function captures"):
        gradient(f, np.array([0.3, -0.2]), 0.7)


def test_updates_before_the_closure_and_of_numbers_are_followed():
    def before(x, b):
        y = x * 1.0
        y *= b

        def g(t):
            return np.sum(np.sin(y) * t)
        return g(2.0)

    def number(x, b):
        s = b * 1.0
        g = lambda t: np.sum(t * x) * s  # noqa: E731
        first = g(1.5)
        s *= 2.0  # (a new object: refused only if g is called again, see the capture checks)
        return first + s
    check_grads(before, np.array([0.3, -0.2]), 0.7)
    check_grads(number, np.array([0.3, -0.2]), 0.7)

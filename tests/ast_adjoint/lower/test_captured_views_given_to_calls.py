"""A view of an array a nested function captures, given to a call that may update its arguments as far as the
lowering knows (a class of the module has a `__call__` that updates its object, so a call of a local may be such an
object's): the run-time check of the captured array asks whether the call left the view as it was
(call_checks.captured_unchanged, its `root`). It refused whenever the array had no mark of its own (the program
generator's seed 502, program 15182: a false refusal, "updating 'y' in place, which a nested function captures as
'x'")."""
import numpy as np
import pytest

from zygotepy import UnsupportedSyntax, gradient
from zygotepy.testing import check_grads


class Accumulator:  # (a callable object that updates itself: calls of locals here may be its calls)
    def __init__(self):
        self.total = 0.0

    def __call__(self, v):
        self.total += v
        return self.total


def _view_given_to_a_recursive_closure(a, x):
    y = x[1:4]

    def scaled(k, t):  # (captures x)
        if k == 0:
            return t * 0.5
        return scaled(k - 1, t * 0.5) * np.tanh(a) + np.sum(x) * 0.1
    return 0.5 * x[4] + np.sum(scaled(2, y))


def test_a_view_the_call_left_as_it_was_is_followed(mode):
    check_grads(_view_given_to_a_recursive_closure, 0.3, np.array([0.1, 0.2, 0.3, 0.4, 0.5]))


def _store_head(t):
    t[0] = t[0] * 2.0


def _view_stored_into_by_a_helper(x, b):
    y = x[1:3]
    g = lambda: np.sum(x * b)  # noqa: E731
    v = g()
    _store_head(y)
    return v + np.sum(x ** 2)


def test_a_view_the_call_did_update_is_refused(mode):
    with pytest.raises(UnsupportedSyntax, match="updating 'y' in place, which a nested function captures as 'x'"):
        gradient(_view_stored_into_by_a_helper, np.array([0.3, -0.5, 0.8, 0.1]), 0.7)

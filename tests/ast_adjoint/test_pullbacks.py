"""The pullback objects (zygotepy/ast_adjoint/pullbacks.py): a user's rule gets its cotangent read-only, since another
use of the same value may hold the very same array (`double(t) + t`); updating it in place is refused, naming the
rule, where it corrupted the other path's gradient silently (with optimisations off) or raised NumPy's read-only
error (with them on)."""
import numpy as np
import pytest

from zygotepy import ZygoteError, adjoint, checkpoint, gradient


def doubled(t):
    return 2.0 * t


@adjoint(doubled)
def _doubled_in_place(t):
    def back(dy):
        dy *= 2.0
        return (dy,)
    return 2.0 * t, back


def tripled(t):
    return 3.0 * t


@adjoint(tripled)
def _tripled(t):
    return 3.0 * t, lambda dy: (dy * 3.0,)


def identity_rule(t):
    return t + 0.0


@adjoint(identity_rule)
def _identity_rule(t):
    return t + 0.0, lambda dy: (dy,)  # hands the cotangent on as it is


@pytest.mark.parametrize("f", [lambda t: np.sum(doubled(t) + t), lambda t: np.sum(checkpoint(doubled, t) * 3.0 + t)],
                         ids=["sum", "checkpoint"])
def test_a_rule_updating_its_cotangent_in_place_is_refused(f, mode):
    with pytest.raises(ZygoteError, match="updated its cotangent dy in place"):
        gradient(f, np.ones(2))


def test_a_rule_computing_a_new_cotangent_or_passing_it_on_is_followed(mode):
    t = np.array([0.5, -1.0])
    g, = gradient(lambda t: np.sum(tripled(t) + t), t)
    assert np.array_equal(g, [4.0, 4.0])
    g, = gradient(lambda t: np.sum(identity_rule(t) * identity_rule(t) + t), t)
    assert np.allclose(g, 2 * t + 1) and g.flags.writeable

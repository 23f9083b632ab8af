"""A helper whose augmented assignment updates its array argument (`w /= w.sum()`, the E-step's `r /= r.sum(1,
keepdims=True)`), where the helper also reads the argument (`w.sum()`, `w.shape`): the read links the argument to
another value, so the helper gives its argument's final version back to the caller (lower/__init__.py), and that was
the version before the update (an update that may not be in place leaves the parameter's own entry alone): the
caller's gradient skipped the update (found by a probe of probabilistic models). Its final version is now the
updated object where the update was in place. A helper that returns nothing and updates a parameter so is taken to
mean the update; one that returns a value and does not read the parameter is refused, as docs/limitations.md says.
Checked against central differences in float64."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def _normalize(w):
    w /= w.sum()


def _scale_after_reading_its_shape(w):
    n = w.shape[0]
    w *= 2.0 / n


def _centre_then_square(w):
    w -= w.mean()
    w **= 2


def _responsibilities(r):
    r -= r.max(axis=1, keepdims=True)
    np.exp(r, out=r)
    r /= r.sum(axis=1, keepdims=True)


def normalized_first(x):
    w = x * 1.0
    _normalize(w)
    return w[0]


def scaled_sum_of_squares(x):
    w = x * 1.0
    _scale_after_reading_its_shape(w)
    return np.sum(w * w)


def centred_squares(x):
    w = x * 1.0
    _centre_then_square(w)
    return np.sum(w * np.arange(1.0, 3.0))


def e_step(x):
    r = np.stack([-(x - 0.5) ** 2, -(x + 1.0) ** 2], axis=1)
    _responsibilities(r)
    return np.sum(r[:, 0] * x)


@pytest.mark.parametrize("f", [normalized_first, scaled_sum_of_squares, centred_squares, e_step],
                         ids=lambda f: f.__name__)
def test_a_helper_updating_its_argument_after_reading_it(f, mode):
    x = np.array([1.0, 3.0])
    value, (g,) = value_and_gradient(f, x.copy())
    assert value == pytest.approx(f(x.copy()), rel=1e-14)
    np.testing.assert_allclose(g, central(f, (x,), 0), rtol=1e-6, atol=1e-9)


def _double(w):
    w *= 2.0


def _leapfrog_step(x, v, dt, k):
    v -= dt * k * x
    x += dt * v


def doubled(x):
    w = x * 1.0
    _double(w)
    return np.sum(w * w)


def oscillator(x0, k):
    x, v = x0.copy(), np.zeros_like(x0)
    for _ in range(10):
        _leapfrog_step(x, v, 0.1, k)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f, args", [(doubled, (np.array([1.0, 3.0]),)), (oscillator, (np.array([0.3, 0.7]), 1.5))],
                         ids=["doubled", "oscillator"])
def test_a_helper_returning_nothing_updates_its_arguments_with_augmented_assignments(f, args, mode):
    """A helper that returns nothing and updates a parameter with `x += v` means to update its object (`step(x, v,
    dt)` of a simulation, `normalize_(w)`): its parameters follow those updates, and a call statement takes them
    back (found refused by a probe of simulations)."""
    value, grads = value_and_gradient(f, *(a.copy() if isinstance(a, np.ndarray) else a for a in args))
    assert value == pytest.approx(f(*(a.copy() if isinstance(a, np.ndarray) else a for a in args)), rel=1e-14)
    for k in range(len(args)):
        np.testing.assert_allclose(grads[k], central(f, args, k), rtol=1e-6, atol=1e-9)


def _double_and_return(w):
    w *= 2.0
    return w


def doubled_by_a_returning_helper(x):
    w = x * 1.0
    _double_and_return(w)
    return np.sum(w)


def test_a_returning_helper_updating_its_argument_without_reading_it_stays_refused(mode):
    """(One that returns a value may as well mean a number: `pow`'s `n -= 1`. Its update of an array is refused.)"""
    with pytest.raises(ZygoteError, match="updates its argument"):
        value_and_gradient(doubled_by_a_returning_helper, np.array([1.0, 3.0]))

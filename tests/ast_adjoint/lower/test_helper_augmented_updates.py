"""A helper whose augmented assignment updates its array argument (`w /= w.sum()`, the E-step's `r /= r.sum(1,
keepdims=True)`), where the helper also reads the argument (`w.sum()`, `w.shape`): the read links the argument to
another value, so the helper gives its argument's final version back to the caller (lower/__init__.py), and that was
the version before the update (an update that may not be in place leaves the parameter's own entry alone): the
caller's gradient skipped the update (found by a probe of probabilistic models). Its final version is now the
updated object where the update was in place. Without such a read the update stays refused, as docs/limitations.md
says. Checked against central differences in float64."""
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


def doubled(x):
    w = x * 1.0
    _double(w)
    return np.sum(w)


def test_a_helper_updating_its_argument_without_reading_it_stays_refused(mode):
    with pytest.raises(ZygoteError, match="updates its argument"):
        value_and_gradient(doubled, np.array([1.0, 3.0]))

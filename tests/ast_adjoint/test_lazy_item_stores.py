"""A loop over a lazy iterator of an array (`iter(x[1:])`, `reversed(x)`) whose body stores into an item of that
array, or of the array it views: with the optimisations on, the item stores of a loop's fast path (items.ItemRun)
tell the log only when the loop is over, so the watch of the lazy iterator (lazy_watch.py) did not see them, and the
gradient came out silently wrong (the items were taken when the loop began, Python takes them as it goes). Refused
naming the line under both settings now, as the plain form refused it; a loop whose stores go into another array
runs, checked against central differences. (Found by the random-program generator, seed 50505, program 17.)"""
import os
import sys

import numpy as np
import pytest

from zygotepy import UnsupportedSyntax, gradient

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_checks import central, line_of  # noqa: E402


def stores_into_the_viewed_array(b, x):
    y4 = x[1:]
    for e6 in iter(y4):
        b = 0.5 * b + 0.4 * (np.sum(x) + b)
        x[2] += 0.25 * e6  # (the item the loop reaches next)
    return 0.5 * b


def stores_into_the_walked_array(x):
    s = 0.0
    for v in reversed(x):
        s = s + v * v
        x[0] = x[0] * 0.5 + v  # (the last item reversed(x) gives)
    return s


def stores_elsewhere(b, x):
    out = np.zeros_like(x)
    for k, v in enumerate(iter(x)):
        out[k] = v * b
    return np.sum(out * out)


@pytest.mark.parametrize("f, args, marker", [
    (stores_into_the_viewed_array, (-0.9, np.array([0.86, 0.53, -0.45, 0.54, 0.4, -0.85])), "for e6 in iter(y4)"),
    (stores_into_the_walked_array, (np.array([0.3, -0.7, 1.1]),), "for v in reversed(x)"),
], ids=["viewed", "walked"])
def test_an_item_store_into_what_a_lazy_iterator_walks_is_refused(f, args, marker, mode):
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    with pytest.raises(UnsupportedSyntax, match=rf"test_lazy_item_stores\.py:{line_of(f, marker)}: .*lazy iterator"):
        gradient(f, *args)


def test_item_stores_into_another_array_run(mode):
    b, x = 0.7, np.array([0.3, -0.7, 1.1, 0.4])
    grads = gradient(stores_elsewhere, b, x.copy())
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central(stores_elsewhere, (b, x), k), rtol=1e-6, atol=1e-8)


def stored_before_then_in_the_loop(x):
    for k in range(5):
        x[k] = x[k] * 1.5  # (an earlier loop's item stores into x: a run of its own, over)
    s = 0.0
    for v in iter(x[1:]):
        s = s + v * v
        x[2] = x[2] * 0.5 + v
    return s


def test_a_store_after_an_earlier_loops_stores_is_refused(mode):
    with pytest.raises(UnsupportedSyntax, match=rf"test_lazy_item_stores\.py:"
                                                rf"{line_of(stored_before_then_in_the_loop, 'in iter(x[1:])')}: "):
        gradient(stored_before_then_in_the_loop, np.array([0.3, -0.7, 1.1, 0.4, 0.2, 0.9]))

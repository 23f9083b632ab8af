"""The itertools that pick and pair items (adjoints/itertools_picks.py) inside user functions, checked against central
differences in float64 (the rule table has a row for each rule alone), and what they refuse."""
import itertools

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient
from zygotepy.testing import check_grads


def _items(x):
    return [x[0], x[1] * 2.0, np.sin(x[2]), x[0] * x[1]]


def pairwise_products(x):
    return sum(a * b for a, b in itertools.pairwise(_items(x)))


def pairwise_of_array_rows(x):
    return sum(np.sum(a * b) for a, b in itertools.pairwise(x.reshape(3, 2)))


def sliced(x):
    xs = _items(x)
    return sum(itertools.islice(xs, 1, None, 2)) * sum(itertools.islice(xs, 2))


def combinations_in_a_loop(x):
    total = 0.0
    for a, b, c in itertools.combinations(_items(x), 3):
        total = total + a * b * c
    return total


def permutations_and_replacement(x):
    xs = _items(x)[:3]
    return sum(a * b - c for a, b, c in itertools.permutations(xs)) + \
        sum(a * b for a, b in itertools.combinations_with_replacement(xs, 2))


def compressed(x):
    return sum(itertools.compress(_items(x), [1, 0, 1, 1]))


def zipped_longest(x):
    xs, ys = _items(x), [x[2]]
    filled = sum(a * b for a, b in itertools.zip_longest(xs, ys, fillvalue=x[1] * 3.0))
    return filled + sum(a * (1.0 if b is None else b) for a, b in itertools.zip_longest(xs, ys))


def while_predicates(x):
    xs = [x[0], x[1] * 2.0, np.sin(x[2]), -x[0]]
    return sum(itertools.takewhile(lambda t: t > 0, xs)) * sum(itertools.dropwhile(lambda t: t > 1.0, xs))


def repeated_and_teed(x):
    a, b = itertools.tee(_items(x), 2)
    return sum(itertools.repeat(x[0] * x[1], 3)) + sum(a) * sum(b)


def teed_and_advanced(x):
    """`next(b)` on one of tee's iterators (they were lists: a TypeError), then the pairs of neighbours."""
    a, b = itertools.tee(_items(x))
    next(b)
    return sum(p * q for p, q in zip(a, b))


def index_and_count(x):
    xs = _items(x) + [3.0]
    return xs[xs.index(3.0) - 1] * xs.count(3.0)


CASES = [pairwise_products, pairwise_of_array_rows, sliced, combinations_in_a_loop, permutations_and_replacement,
         compressed, zipped_longest, while_predicates, repeated_and_teed, teed_and_advanced, index_and_count]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_itertools_in_user_code(f):
    x = np.array([0.6, 0.9, 1.2, -0.4, 0.3, 0.8]) if f is pairwise_of_array_rows else np.array([0.6, 0.9, 1.2])
    check_grads(f, x)


def test_islice_of_an_iterator_is_refused():
    """Python's islice takes some of the iterator's items and leaves the rest for `sum(it)`: the twin would take all."""
    def f(x):
        it = iter([x, 2.0 * x, x * x])
        first = list(itertools.islice(it, 2))
        return sum(first) + sum(it)
    with pytest.raises(ZygoteError, match="itertools.islice of a list, tuple or array, not of an iterator"):
        gradient(f, 1.3)


def test_an_endless_repeat_is_refused():
    def f(x):
        return sum(a * b for a, b in zip([x, x * x], itertools.repeat(x)))
    with pytest.raises(ZygoteError, match="not an endless repeat"):
        gradient(f, 1.3)

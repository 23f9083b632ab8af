"""An iterator a name keeps (`pairs = zip(a, b)`, `map`, `filter`, `enumerate`, `reversed`, a generator expression):
Python's is used up by one walk and reads what it walks as it goes; zygotepy's rules make a list when it is made
(adjoints/structures/iteration.py `kept_iterator`, ast_adjoint/lower/statements.py). Kept in a name, it is now an
iterator used up as Python's is, and an item taken after an update in place of what it walks is refused.

Before, a second walk gave the items again (the value itself differed from Python's: `sum(pairs)` twice counted them
twice), an update between making and walking gave the items of the start, and a generator expression over a list of
arrays updated by the loop that walked it lost the update: each a silently wrong gradient. Checked against one plain
call and central finite differences in float64.
"""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

X = np.array([0.3, -0.2, 0.5, 0.9])
B = 0.7


def agree(f):
    want_value = f(X.copy(), B)
    value, grads = value_and_gradient(f, X.copy(), B)
    assert value == pytest.approx(want_value, rel=1e-12)
    for k, g in enumerate(grads):
        assert g is not None and np.allclose(g, central(f, (X.copy(), B), k), rtol=1e-6, atol=1e-8), (k, g)


def _zip_twice(x, b):
    pairs = zip(x, x * b)
    s1 = sum(p * q for p, q in pairs)
    return s1 + sum(p * q for p, q in pairs) * 3.0


def _map_twice(x, b):
    m = map(np.sin, x * b)
    s1 = sum(m)
    return s1 + sum(m) * 3.0


def _enumerate_then_list(x, b):
    e = enumerate(x * b)
    first = [t * i for i, t in e]
    return sum(first) + len(list(e)) * 3.0


def _reversed_twice(x, b):
    r = reversed(x * b)
    return sum(t * t for t in r) + sum(r) * 3.0


def _filter_then_next(x, b):
    f = filter(lambda t: t > 0.0, x * b)
    return next(f) * 2.0 + sum(f)


def _map_next(x, b):
    m = map(np.tanh, x * b)
    first = next(m)
    return first + sum(m)


def _generator_twice(x, b):
    g = (t * b for t in x)
    return sum(g) + sum(g) * 3.0


@pytest.mark.parametrize("f", [_zip_twice, _map_twice, _enumerate_then_list, _reversed_twice, _filter_then_next,
                               _map_next, _generator_twice], ids=lambda f: f.__name__)
def test_a_kept_iterator_is_used_up_as_pythons(f):
    agree(f)


def _zip_kept_over_updated_items(x, b):
    ys = [x * 1.0, x * b]
    pairs = zip(ys, [b, 2.0])
    for y, w in pairs:
        y *= w
    return np.sum(np.sin(ys[0])) + np.sum(ys[1])


def _generator_over_updated_items(x, b):
    ys = [x * 1.0, x * b]
    for y in (y for y in ys):
        y *= b
    return np.sum(np.sin(ys[0])) + np.sum(ys[1])


def _kept_generator_over_updated_items(x, b):
    ys = [x * 1.0, x * b]
    g = (y for y in ys)
    for y in g:
        y *= b
    return np.sum(np.sin(ys[0])) + np.sum(ys[1])


def _enumerate_kept_and_stored_into(x, b):
    y = x * 1.0
    e = enumerate(y)
    for i, v in e:
        y[i] = v * b
    return np.sum(np.sin(y))


@pytest.mark.parametrize("f", [_zip_kept_over_updated_items, _generator_over_updated_items,
                               _kept_generator_over_updated_items, _enumerate_kept_and_stored_into],
                         ids=lambda f: f.__name__)
def test_a_loop_over_an_iterator_updates_the_items_it_walks(f):
    # (the two generators were silently wrong: the update of an item never reached `ys`)
    agree(f)


def _generator_then_update(x, b):
    y = x * 1.0
    s = (y[i] * 2 for i in range(3))
    y[0] = b
    return sum(s)


def _zip_then_update(x, b):
    y = x * 1.0
    pairs = zip(y, y[1:])
    y[1] = b
    return sum(p * q for p, q in pairs)


def _map_then_update(x, b):
    y = x * 1.0
    m = map(np.sin, y)
    y[0] = b
    return sum(m)


def _enumerate_of_a_view_then_update(x, b):
    y = x * 1.0
    e = enumerate(y.view())
    y[2] = b
    return sum(i * t for i, t in e)


@pytest.mark.parametrize("f", [_generator_then_update, _zip_then_update, _map_then_update,
                               _enumerate_of_a_view_then_update], ids=lambda f: f.__name__)
def test_an_item_taken_after_an_update_of_what_the_iterator_walks_is_refused(f):
    with pytest.raises(ZygoteError, match=r"test_kept_iterators.py:\d+: .*an iterator .* after what it walks was "
                                          r"updated in place"):
        value_and_gradient(f, X.copy(), B)

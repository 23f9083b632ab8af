"""Dict keys read back out of a dict, and `next` on iterators: each table row is checked against central finite
differences (float64). Both used to drop gradients silently: a float key computed from the input and read back by
iterating the dict gave None, and so did `next(iter(xs))` and `next(v for v in xs if ...)`."""
import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.runtime.context import current
from zygotepy.errors import ZygoteError


# --- keys: computed from the input, stored, read back out -----------------------------------------------------------

def for_over_dict(x):
    d = {x: 1.0, 2.0: 3.0}
    t = 0.0
    for k in d:
        t = t + k * k
    return t


def over_keys(x):
    d = {x: 1.0}
    t = 0.0
    for k in d.keys():
        t = t + k * 3
    return t


def over_items(x):
    d = {x: 2.0}
    t = 0.0
    for k, v in d.items():
        t = t + k * v
    return t


def list_of_dict(x):
    return list({x: 1.0})[0] * 3


def sorted_dict(x):
    return sorted({x: 1.0, 5.0: 2.0})[0] * 3


def max_of_dict(x):
    return max({x: 1.0, 0.0: 2.0}) * 3


def stored_in_a_loop(x):
    d = {}
    for j in range(2):
        d[x + j] = j
    t = 0.0
    for k in d:
        t = t + k * k
    return t


def comprehension_keys(x):
    d = {x * j: j for j in range(1, 3)}
    return sum(d) * x


def tuple_of_dict(x):
    return tuple({x: 1})[0] * 2


def dict_of_pairs(x):
    d = dict(zip([x, 2.0], [1.0, x]))
    return sum(k * v for k, v in d.items())


def copied(x):
    e = {x: 1.0}.copy()
    return sum(e) * 2


def merged(x):
    e = {**{x: 1.0}, 3.0: 1.0}
    return sum(k * k for k in e)


def updated(x):
    d = {}
    d.update({x: 1.0})
    return sum(d) * 2


def set_default(x):
    d = {}
    d.setdefault(x * x, 1.0)
    return sum(d) * 2


def two_stores_one_key(x):
    d = {x: 1.0}
    e = {x: 2.0}
    return sum(k * v for k, v in d.items()) + sum(k * v for k, v in e.items())


def key_through_two_dicts(x):
    d = {x * 3: 1.0}
    e = {}
    for k in d:
        e[k] = k
    return sum(k * v for k, v in e.items())


def constant_keys(x):
    d = {0.5: 1.0, 1.5: 2.0}
    t = 0.0
    for k, v in d.items():
        t = t + k * v * x
    return t


def constant_keys_in_a_loop(x):
    d = {}
    for j in range(3):
        d[0.5 * j] = x * j
    t = 0.0
    for k in d:
        t = t + k * d[k]
    return t


# --- next ---------------------------------------------------------------------------------------------------------

def next_of_iter(x):
    return next(iter([x, 2.0])) * 3


def next_twice(x):
    it = iter([x, 2 * x])
    a = next(it)
    b = next(it)
    return a * 3 + b * b


def next_then_loop(x):
    it = iter([x, 2 * x, 3 * x])
    first = next(it)
    t = first * 10
    for v in it:
        t = t + v * v
    return t


def next_then_sum(x):
    it = iter([x, 2 * x, 3 * x])
    next(it)
    return sum(it)


def next_default(x):
    it = iter([x])
    next(it)
    return next(it, 5 * x)


def first_match(x):
    return next(v for v in [-x, 2 * x, 3 * x] if v > 0) * 3


def generator_spliced(x):
    return sum([*(v * v for v in [x, 2 * x]), x])


def next_of_dict(x):
    return next(iter({x * x: 1.0})) * 3


def next_of_array_rows(x):
    it = iter(np.array([x, 2 * x]) * x)
    return next(it) * 3 + next(it)


def central_difference(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


ROWS = [for_over_dict, over_keys, over_items, list_of_dict, sorted_dict, max_of_dict, stored_in_a_loop,
        comprehension_keys, tuple_of_dict, dict_of_pairs, copied, merged, updated, set_default, two_stores_one_key,
        key_through_two_dicts, constant_keys, constant_keys_in_a_loop, next_of_iter, next_twice, next_then_loop,
        next_then_sum, next_default, first_match, generator_spliced, next_of_dict, next_of_array_rows]


@pytest.mark.parametrize("f", ROWS, ids=lambda f: f.__name__)
def test_matches_finite_differences(f):
    x = 1.3
    (g,) = gradient(f, x)
    expected = central_difference(f, x)
    assert g is not None and g == pytest.approx(expected, rel=1e-6, abs=1e-8)
    assert not current().read_keys  # nothing is left filed once the call returns


def test_keys_of_an_input_dict_have_no_gradient():
    def f(x, d):
        t = 0.0
        for k, v in d.items():
            t = t + k * v * x
        return t
    gx, gd = gradient(f, 2.0, {0.5: 1.0, 1.5: 2.0})
    assert gx == pytest.approx(3.5)
    assert gd == {0.5: 1.0, 1.5: 3.0}


def test_next_on_a_materialised_iterator_is_refused_clearly():
    def f(x):
        return next(zip([x], [x]))[0]  # zygotepy's zip gives a list
    with pytest.raises(ZygoteError, match="next"):
        gradient(f, 1.5)

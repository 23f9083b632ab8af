"""Functions that take a one-shot iterator (a generator expression, `iter(...)`) as an argument: each must take its
items once, and hand their cotangents back to the positions they came from. Each case is checked against one plain
call (the value) and central finite differences in float64, with every optimisation on and off (`mode`).

Regressions: `itertools.product` of generators walked a generator once per row (a wrong value, a wrong gradient);
`sum(gen, start=y)` (start by keyword) dropped the items' gradients; `set(gen)` was refused, naming an internal class;
`P._make(items)` of a namedtuple class had no rule."""
import collections
import itertools
import os
import sys

import numpy as np
import pytest

from zygotepy import hessian, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import central  # noqa: E402

XS = [0.3, -0.7, 1.1]
Y = 0.9


def agree(f, xs=XS, y=Y):
    """zygotepy's value and gradient of f(xs, y) against one plain call and central differences."""
    value, grads = value_and_gradient(f, list(xs), y)
    assert value == pytest.approx(f(list(xs), y), rel=1e-12, abs=1e-12)
    for k, g in enumerate(grads):
        want = central(f, (np.array(xs), y), k)
        got = np.zeros(np.shape(want)) if g is None else np.array([0.0 if v is None else v for v in g]) \
            if isinstance(g, list) else g
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=f"argument {k}")


# --- itertools.product --------------------------------------------------------------------------------------------

def product_of_generators(xs, y):
    return sum(a * b for a, b in itertools.product((v * y for v in xs), (v + y for v in xs)))


def product_of_iters(xs, y):
    return sum(a * b * b for a, b in itertools.product(iter(xs), iter([y, y * y])))


def product_repeat_of_a_generator(xs, y):
    return sum(a * b for a, b in itertools.product((v * y for v in xs), repeat=2))


def product_of_a_partly_taken_iterator(xs, y):
    it = iter([v * y for v in xs])
    next(it)
    return sum(a * b for a, b in itertools.product(xs, it))


def product_repeat_of_two(xs, y):
    return sum(a * b * c * d for a, b, c, d in itertools.product(xs[:2], (y, xs[2]), repeat=2))


@pytest.mark.parametrize("f", [product_of_generators, product_of_iters, product_repeat_of_a_generator,
                               product_of_a_partly_taken_iterator, product_repeat_of_two])
def test_product_takes_each_iterator_once(f, mode):
    agree(f)


# --- sum(..., start=) ---------------------------------------------------------------------------------------------

def sum_generator_start_keyword(xs, y):
    return sum((v * v for v in xs), start=y)


def sum_iter_start_keyword(xs, y):
    return sum(iter([v * v * y for v in xs]), start=y * y)


def sum_partly_taken_start_keyword(xs, y):
    it = iter([v * y for v in xs])
    next(it)
    return sum(it, start=y) * xs[0]


@pytest.mark.parametrize("f", [sum_generator_start_keyword, sum_iter_start_keyword, sum_partly_taken_start_keyword])
def test_sum_of_an_iterator_with_start_by_keyword(f, mode):
    agree(f)


# --- set() and frozenset() of an iterator -------------------------------------------------------------------------

def set_of_a_generator(xs, y):
    return sum(set(v * y for v in xs))


def frozenset_of_iters(xs, y):
    return sum(frozenset(v * y for v in xs)) * sum(set(iter([y, y * y, xs[0]])))


def set_of_a_partly_taken_iterator(xs, y):
    it = iter([v * y for v in xs])
    next(it)
    return sum(set(it)) * y


@pytest.mark.parametrize("f", [set_of_a_generator, frozenset_of_iters, set_of_a_partly_taken_iterator])
def test_set_of_an_iterator(f, mode):
    agree(f)


# --- namedtuple._make ---------------------------------------------------------------------------------------------

P = collections.namedtuple("P", "a b c")


def make_of_a_list(xs, y):
    p = P._make([xs[0] * y, xs[1], y])
    return p.a * p.b + p.c * xs[2]


def make_of_a_generator(xs, y):
    p = P._make(v * y for v in xs)
    return p.a * p.c + p.b


def make_then_replace(xs, y):
    p = P._make((y, xs[0], xs[1]))
    q = p._replace(a=xs[2])
    return p.a * q.a * q.b + p.c


@pytest.mark.parametrize("f", [make_of_a_list, make_of_a_generator, make_then_replace])
def test_namedtuple_make(f, mode):
    agree(f)


def test_namedtuple_make_second_derivative(mode):
    def f(y):
        p = P._make(v * y for v in [1.0, 2.0, 3.0])
        return p.a * p.b * p.c  # 6 y**3
    assert hessian(f, 0.7) == pytest.approx(36 * 0.7)


def test_namedtuple_make_wrong_length_is_pythons_error(mode):
    def f(y):
        return P._make([y, y]).a
    with pytest.raises(TypeError, match="Expected 3 arguments"):
        value_and_gradient(f, 0.7)


# --- dict() and dict.update of a generator of pairs ----------------------------------------------------------------
# Not fixed here: the rules are adjoints/objects.py `dict_new` and adjoints/mutation/methods.py `_dict_update`, which
# take the pairs with `dict(*args)` and walk the same (used up) iterator again in their backs.

def dict_of_pairs_generator(xs, y):
    d = dict((i, v * y) for i, v in enumerate(xs))
    return d[0] * d[2] + d[1]


def dict_update_of_pairs_generator(xs, y):
    d = {}
    d.update((i, v * y) for i, v in enumerate(xs))
    return d[0] * d[2] + d[1]


def _k(a, b, c):
    return a * c + b


def keywords_of_dict_of_generator(xs, y):
    return _k(**dict((n, v * y) for n, v in zip("abc", xs)))


@pytest.mark.parametrize("f", [dict_of_pairs_generator, dict_update_of_pairs_generator,
                               keywords_of_dict_of_generator])
def test_dict_of_a_generator_of_pairs(f, mode):
    """dict_new and dict.update walked the used-up iterator again in their backs: every gradient None."""
    agree(f)

"""Iterators Python takes items from as it goes and zygotepy all at once (lower/lazy.py, lower/late.py,
structures/iteration.py `kept_iterator`): itertools' iterators kept in a name (used up once, watching what they read,
as `zip`'s and `map`'s are), a loop whose body takes from the iterator it walks, a kept iterator whose function reads a
container updated before it is used up. Each was silently wrong (the value too) or a crash; each is followed or refused
naming the line, checked against one plain call and central differences. With blocks: a manager the block fills, and
a `@contextmanager` function updating what it is given after its yield."""
import contextlib
import itertools
import operator
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient
from zygotepy.errors import UnsupportedSyntax

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at, line_of  # noqa: E402

XS = np.array([0.7, -1.3, 2.1, 0.4, 1.9])


# --- itertools' iterators kept in a name: used up once, as Python's --------------------------------------------------
def accumulate_walked_twice(x):
    c = itertools.accumulate(list(x))
    first = list(c)
    return sum(first) + sum(c) * 100.0  # (Python: the second walk is empty; it was 737.3 for 7.3)


def starmap_walked_twice(x):
    c = itertools.starmap(operator.mul, zip(list(x), list(x)))
    return sum(c) + sum(c) * 100.0


def islice_walked_twice(x):
    c = itertools.islice(list(x), 1, 4)
    return sum(c) * 2.0 + sum(c)


def pairwise_then_again(x):
    c = itertools.pairwise(list(x))
    products = [u * v for u, v in c]
    return sum(products) + sum(u for u, v in c)


def product_first_then_rest(x):
    c = itertools.product(list(x[:2]), list(x[2:4]))
    first = next(c)  # (was a TypeError: 'list' object is not an iterator)
    return first[0] * first[1] + sum(u * v for u, v in c)


def combinations_first_then_rest(x):
    c = itertools.combinations(list(x), 2)
    next(c)
    return sum(a * b for a, b in c)


def chain_walked_by_a_loop_then_summed(x):
    c = itertools.chain(list(x), [1.0])
    t = 0.0
    for v in c:
        t = t + v * v
    return t + sum(c)


@pytest.mark.parametrize("f", [accumulate_walked_twice, starmap_walked_twice, islice_walked_twice,
                               pairwise_then_again, product_first_then_rest, combinations_first_then_rest,
                               chain_walked_by_a_loop_then_summed], ids=lambda f: f.__name__)
def test_a_kept_itertools_iterator_is_used_up_once(f, mode):
    agree_at(f, XS)


def chain_left_by_break_then_summed(x):
    c = itertools.chain(list(x), list(x))
    for v in c:
        if v > 2.0:
            break
    return sum(c) * v


def chain_whose_list_is_updated_before_it_is_used(x):
    lst = [x[0], x[1], x[2]]
    c = itertools.chain(lst, [1.0])
    lst[0] = x[3] * 2.0
    return sum(c)  # (Python reads the new item: d/dx0 was 1.0 for 0)


def accumulate_whose_lambda_reads_a_name_assigned_later(x):
    w = 1.0
    acc = itertools.accumulate(list(x), lambda s, v: s * w + v)
    w = x[0]
    return sum(acc)


def filterfalse_whose_lambda_reads_a_name_assigned_later(x):
    w = 1.0
    kept = itertools.filterfalse(lambda v: v * w > 1.0, list(x))
    w = x[1]
    return sum(kept)


def map_of_a_function_reading_a_dict_updated_later(x):
    d = {"w": 1.0}

    def scale(v):
        return v * d["w"]
    m = map(scale, list(x))
    d["w"] = x[0]
    return sum(m)  # (Python's scale reads the new weight: d/dx0 was None)


def starmap_of_a_function_reading_a_dict_updated_later(x):
    d = {"w": 1.0}

    def mul(a, b):
        return a * b * d["w"]
    sm = itertools.starmap(mul, zip(list(x), list(x)))
    d["w"] = x[0]
    return sum(sm)


def chain_of_an_iterator_taken_from_after(x):
    it = iter(list(x))
    c = itertools.chain(it, [1.0])
    next(it)
    return sum(c)  # (was a StopIteration: the chain had taken every item)


@pytest.mark.parametrize("f, marker", [
    (chain_left_by_break_then_summed, "for v in c"),
    (chain_whose_list_is_updated_before_it_is_used, "return sum(c)"),
    (accumulate_whose_lambda_reads_a_name_assigned_later, "acc = itertools"),
    (filterfalse_whose_lambda_reads_a_name_assigned_later, "kept = itertools"),
    (map_of_a_function_reading_a_dict_updated_later, "return sum(m)"),
    (starmap_of_a_function_reading_a_dict_updated_later, "return sum(sm)"),
    (chain_of_an_iterator_taken_from_after, "c = itertools"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_kept_iterator_read_differently_than_python_would_is_refused(f, marker, mode):
    with pytest.raises(ZygoteError, match=rf"test_lazy_itertools\.py:{line_of(f, marker)}: "):
        value_and_gradient(f, XS.copy())


# --- a loop whose body takes from the iterator it walks --------------------------------------------------------------
def loop_taking_pairs_by_next(x):
    it = iter(list(x))
    total = 0.0
    for v in it:
        w = next(it, 1.0)  # (Python pairs the items; it was 3.8 for 1.83, each d/dx 1.0)
        total = total + v * w
    return total


def loop_summing_the_rest(x):
    it = iter(list(x))
    total = 0.0
    for v in it:
        total = total + v * sum(it)
    return total


def comprehension_taking_pairs_by_next(x):
    it = iter(list(x))
    return sum([v * next(it, 1.0) for v in it])


def loop_taking_pairs_by_next_without_default(x):
    it = iter(list(x[:4]))
    total = 0.0
    for v in it:
        total = total + v * next(it)  # (was a StopIteration)
    return total


@pytest.mark.parametrize("f", [loop_taking_pairs_by_next, loop_summing_the_rest, comprehension_taking_pairs_by_next,
                               loop_taking_pairs_by_next_without_default], ids=lambda f: f.__name__)
def test_a_loop_whose_body_takes_from_the_iterator_it_walks_is_refused(f, mode):
    marker = "for v in it" if "comprehension" not in f.__name__ else "return sum("
    with pytest.raises(UnsupportedSyntax, match=rf"test_lazy_itertools\.py:{line_of(f, marker)}: .*whose body takes "
                                                r"from 'it' too"):
        value_and_gradient(f, XS.copy())


def loop_over_a_list_reading_it_in_the_body(x):
    lst = [x[0], x[1], x[2]]
    total = 0.0
    for v in lst:
        total = total + v * len(lst) + v * lst[0]
    return total


def test_a_loop_over_a_list_read_in_its_body_runs(mode):
    agree_at(loop_over_a_list_reading_it_in_the_body, XS)


# --- with blocks -------------------------------------------------------------------------------------------------------
class _Accum:
    def __init__(self):
        self.items = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.total = sum(self.items)
        return False


def manager_filled_by_its_block(x):
    with _Accum() as acc:  # (its __exit__ sums what the block appended: the gradient was None)
        for v in x:
            acc.items.append(v * v)
    return acc.total


@contextlib.contextmanager
def _appending_after_yield(store):
    yield
    store.append(1.0)


def generator_manager_updating_its_argument(x):
    s = [x[0]]
    with _appending_after_yield(s):  # (was a ValueError in the backward: s had grown unseen)
        y = x[1] * 2.0
    return sum(s) * y


@contextlib.contextmanager
def _counting(store):
    n = len(store)
    yield
    print("appended", len(store) - n)


def generator_manager_reading_its_argument(x):
    s = [x[0]]
    with _counting(s):
        y = x[1] * x[0]
    return sum(s) * y


def test_a_manager_filled_by_its_block_is_refused(mode):
    with pytest.raises(ZygoteError, match=rf"test_lazy_itertools\.py:{line_of(manager_filled_by_its_block, 'with')}: "
                                          r".*_Accum.__exit__ updates the manager"):
        value_and_gradient(manager_filled_by_its_block, XS.copy())


def test_a_contextmanager_function_updating_what_it_is_given_is_refused(mode):
    line = line_of(generator_manager_updating_its_argument, "with ")
    with pytest.raises(ZygoteError, match=rf"test_lazy_itertools\.py:{line}: .*_appending_after_yield, a "
                                          r"@contextmanager function that updates in place"):
        value_and_gradient(generator_manager_updating_its_argument, XS.copy())


def test_a_contextmanager_function_that_only_reads_runs(mode, capsys):
    agree_at(generator_manager_reading_its_argument, XS)
    assert "appended 0" in capsys.readouterr().out

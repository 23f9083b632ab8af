"""Iteration (adjoints/structures/iteration.py): `for` loops over user classes (their `__iter__` or `__getitem__`),
other libraries' arrays and dicts, and `next` on iterators, each checked against central finite differences (float64).
`next(iter(xs))` and `next(v for v in xs if ...)` used to drop gradients silently."""
import itertools
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient, value_and_gradient
from zygotepy.runtime.context import current
from zygotepy.errors import ZygoteError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at, line_of  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


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


ROWS = [next_of_iter, next_twice, next_then_loop, next_then_sum, next_default, first_match, generator_spliced,
        next_of_dict, next_of_array_rows]


@pytest.mark.parametrize("f", ROWS, ids=lambda f: f.__name__)
def test_matches_finite_differences(f):
    x = 1.3
    (g,) = gradient(f, x)
    expected = central_difference(f, x)
    assert g is not None and g == pytest.approx(expected, rel=1e-6, abs=1e-8)
    assert not current().read_keys  # nothing is left filed once the call returns


def test_next_on_a_materialised_iterator_is_refused_clearly():
    def f(x):
        return next(zip([x], [x]))[0]  # zygotepy's zip gives a list
    with pytest.raises(ZygoteError, match="next"):
        gradient(f, 1.5)


class _Pairs:
    def __init__(self, w):
        self.w = w

    def __iter__(self):
        return iter([self.w[0], self.w[1] * 2])


def test_iterating_an_object_with_iter():
    """`for v in obj` over a class with __iter__ crashed (AttributeError 'list' object has no attribute 'items');
    iter(list) raised MissingAdjoint."""
    def f(x):
        s = 0.0
        for v in _Pairs(x):
            s = s + v ** 2
        return s + sum(list(_Pairs(x * x)))
    agree(f)

    def g(x):
        s = 0.0
        for v in iter([x[0], x[1] * 2]):
            s = s + v ** 2
        return s
    agree(g)


@pytest.mark.parametrize("library", ["torch", "jax"])
def test_for_rows_of_a_foreign_array(library):
    """`for row in t` over a torch tensor or a JAX array gave a list of row gradients, not an array."""
    from zygotepy import gradient
    if library == "torch":
        torch = pytest.importorskip("torch")
        t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    else:
        jnp = pytest.importorskip("jax.numpy")
        t = jnp.array([[1.0, 2.0], [3.0, 4.0]])

    def f(t):
        s = 0.0
        for row in t:
            s = s + (row ** 2).sum()
        return s
    (g,) = gradient(f, t)
    assert type(g) is type(t) and np.allclose(np.asarray(g), 2 * np.asarray(t))


def test_iterating_a_dict_with_float_keys():
    """`for k in d` over a dict crashed in the backward (AttributeError: a list given as the dict's cotangent)."""
    def f(x):
        d = {0.5: x[0], 1.5: x[1] ** 2}
        t = 0.0
        for k in d:
            t = t + k * d[k]
        return t
    agree(f)


class _Indexed:
    def __init__(self, w):
        self.w = w

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return self.w[i] * 3


class _OwnIterator:
    def __init__(self, w):
        self.w, self.i = w, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= 2:
            raise StopIteration
        self.i += 1
        return self.w[self.i - 1]


def test_iteration_protocols_of_user_classes():
    """`for v in obj` over a class with only __getitem__ crashed (AttributeError 'list' object has no attribute
    'items'), as did sum(obj) and `a, b = obj`; an object that is its own iterator gave a RecursionError. `sum(obj)`
    was then refused ("walked here"); it differentiates the class's iteration now (builtins.py's sum rule)."""
    def f(x):
        t = 0.0
        for v in _Indexed(x):
            t = t + v ** 2
        return t + np.sum(list(_Indexed(x * x))) + sum(_Indexed(x * x * x))
    agree(f)
    with pytest.raises(ZygoteError, match="its own iterator"):
        value_and_gradient(lambda x: sum(v for v in _OwnIterator(x)), X.copy())


def _next_after_an_update(x):
    lst = [x[0], x[1], x[2]]
    it = iter(lst)
    lst[0] = lst[0] * 5.0  # Python's iterator would read the new lst[0]
    return next(it) * x[1]


def _bump_first(seq):
    seq[0] = seq[0] * 5.0


def _next_after_an_update_by_a_helper(x):
    y = x * 1.0
    it = iter(y)
    _bump_first(y)
    return next(it) * x[1]


def _loop_over_a_named_iterator(x):
    lst = [x[0], x[1], x[2]]
    s = 0.0
    it = iter(lst)
    for v in it:
        lst[-1] = lst[-1] * 2.0
        s = s + v
    return s


def _next_before_any_update(x):
    lst = [x[0], x[1], x[2]]
    it = iter(lst)
    a = next(it)
    b = next(it)
    return a * b * lst[2]


@pytest.mark.parametrize("f", [_next_after_an_update, _next_after_an_update_by_a_helper, _loop_over_a_named_iterator],
                         ids=lambda f: f.__name__)
def test_an_iterator_over_what_is_updated_before_its_items_are_taken_is_refused(f):
    """zygotepy's `iter(seq)` takes the items when it is called, Python's as they are taken: an update of `seq` in
    between is refused, naming the user's line (the values were those of the start before: -0.21 for -1.05)."""
    with pytest.raises(ZygoteError, match=r"test_iteration.py:\d+: .*(an iterator \(iter, zip|lazy iterator of 'lst')"):
        value_and_gradient(f, np.array([0.3, -0.7, 1.1]))


def test_an_iterator_whose_items_are_taken_before_any_update_runs():
    x = np.array([0.3, -0.7, 1.1])
    agree_at(_next_before_any_update, x)


def _two(a, b):
    return a * b


def test_a_call_unpacking_a_generator_expression():
    """`f(*(g(a) for a in xs))`: the call's cotangent of its unpacked arguments is a tuple, one per item (it crashed:
    the generator's back read it as an iterator's)."""
    def f(x):
        return np.sum(_two(*(np.sin(a) for a in [x, x * 2.0])))
    agree_at(f, np.array([0.3, 0.5]))


def test_unpacking_an_object_with_slots_walks_its_iter():
    """A `__slots__` object with `__iter__` unpacked (`x, y = obj`): walked by its `__iter__`, as `list(obj)` is (a
    TypeError inside zygotepy once, then a refusal; tests/adjoints/structures/test_unpacking_user_iterables.py)."""
    from zygotepy import gradient

    class Pair:
        __slots__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

        def __iter__(self):
            return iter((self.x, self.y))

    def f(a, b):
        x, y = Pair(a, b)
        return x * y
    np.testing.assert_allclose(gradient(f, 0.7, 1.3), (1.3, 0.7), rtol=1e-12)


# --- endless iterators, and one iterator given to zip twice --------------------------------------------------------
# A `for` loop walks an iterator that cannot tell how many items it has left as Python does, taking items as it goes
# (runtime.iterate): `for i in itertools.count(1): ... break` took every item first (a MemoryError, or the process
# killed); `zip(itertools.count(), xs)` crashed (no len), and so did `zip(it, it)` over one `iter(xs)` (the grouper).

class _Naturals:  # its own iterator, endless
    def __init__(self):
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self):
        self.i += 1
        return self.i


def _naturals():
    i = 0
    while True:
        i += 1
        yield i


def count_left_by_break(x):
    acc = 0.0
    for i in itertools.count(1):
        acc += x[0] / i
        if i >= 3:
            break
    return acc


def count_of_floats(x):
    acc = 0.0
    for t in itertools.count(0.5, 0.25):
        acc += x[1] * t
        if t > 1.0:
            break
    return acc


def zip_with_count(x):
    acc = 0.0
    for i, v in zip(itertools.count(), [x[0], 2 * x[1]]):
        acc += i * v
    return acc


def zip_with_count_in_a_generator(x):
    return sum(i * v * v for i, v in zip(itertools.count(1), x))


def enumerate_count(x):
    acc = 0.0
    for k, i in enumerate(itertools.count(2)):
        acc += x[2] ** k / i
        if k == 3:
            break
    return acc


def own_endless_iterator(x):
    acc = 0.0
    for i in _Naturals():
        acc += x[3] * i
        if i >= 3:
            break
    return acc


def endless_generator(x):
    acc = 0.0
    for i in _naturals():
        acc += x[0] * x[1] / i
        if i >= 4:
            break
    return acc


def next_of_count(x):
    it = itertools.count(1)
    acc = 0.0
    while True:
        i = next(it)
        acc += x[2] / i
        if i >= 3:
            break
    return acc


def zip_it_it(x):
    it = iter(x)
    return sum(a * b for a, b in zip(it, it))


def zip_of_one_iterator_twice(x):
    return sum(a * b for a, b in zip(*[iter(x)] * 2))


def zip_it_it_odd(x):
    it = iter([x[0], x[1], x[2], x[3], x[0] * x[1]])
    s = sum(a * b for a, b in zip(it, it))
    return s + next(it, 0.5)


def zip_iterator_and_list(x):
    it = iter(x)
    s = sum(a * b for a, b in zip(it, [1.0, 2.0]))  # takes x[2] too, and drops it
    return s + sum(it) * 3.0


def map_of_count_carrying_no_gradient(x):
    acc = 0.0
    for v in map(lambda i: 1.0 / i, itertools.count(1)):
        acc += v * x[1]
        if v < 0.3:
            break
    return acc


ENDLESS = [map_of_count_carrying_no_gradient, count_left_by_break, count_of_floats, zip_with_count,
           zip_with_count_in_a_generator, enumerate_count, own_endless_iterator, endless_generator, next_of_count,
           zip_it_it, zip_of_one_iterator_twice, zip_it_it_odd, zip_iterator_and_list]


@pytest.mark.parametrize("f", ENDLESS, ids=lambda f: f.__name__)
def test_endless_iterators_and_one_iterator_zipped_twice(f):
    agree(f)


def map_of_count(x):
    acc = 0.0
    for v in map(lambda i: x[0] / i, itertools.count(1)):  # refused here
        acc += v
        if acc > 1.5:
            break
    return acc


def filter_of_count(x):
    acc = 0.0
    for v in filter(lambda i: i * x[1] > 1.0, itertools.count(1)):  # refused here
        acc += v * x[1]
        if acc > 3.0:
            break
    return acc


@pytest.mark.parametrize("f", [map_of_count, filter_of_count], ids=lambda f: f.__name__)
def test_map_or_filter_of_an_endless_iterator_is_refused(f):
    """The rules of map and filter make lists: of an endless iterator there is no list to make (it ran out of
    memory); of one carrying no gradient the loop walks Python's map as it goes."""
    with pytest.raises(ZygoteError, match=rf"test_iteration.py:{line_of(f, 'refused here')}: .*endless iterator"):
        value_and_gradient(f, X.copy())

"""Iteration (adjoints/structures/iteration.py): `for` loops over user classes (their `__iter__` or `__getitem__`),
other libraries' arrays and dicts, and `next` on iterators, each checked against central finite differences (float64).
`next(iter(xs))` and `next(v for v in xs if ...)` used to drop gradients silently."""
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient, value_and_gradient
from zygotepy.runtime.context import current
from zygotepy.errors import ZygoteError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at  # noqa: E402


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
    'items'), as did sum(obj) and `a, b = obj`; an object that is its own iterator gave a RecursionError."""
    def f(x):
        t = 0.0
        for v in _Indexed(x):
            t = t + v ** 2
        return t + np.sum(list(_Indexed(x * x)))
    agree(f)
    for g, text in [(lambda x: sum(_Indexed(x)), "walked here"), (lambda x: sum(v for v in _OwnIterator(x)),
                                                                   "its own iterator")]:
        with pytest.raises(ZygoteError, match=text):
            value_and_gradient(g, X.copy())


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


def test_unpacking_an_object_with_slots_is_refused_clearly():
    """A `__slots__` object with `__iter__` walked natively (`x, y = obj`, `sum(obj)`): as for one with a `__dict__`,
    a clear refusal (a TypeError inside zygotepy before)."""
    import pytest
    from zygotepy import ZygoteError, gradient

    class Pair:
        __slots__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

        def __iter__(self):
            return iter((self.x, self.y))

    def f(a, b):
        x, y = Pair(a, b)
        return x * y
    with pytest.raises(ZygoteError, match="items of a Pair object"):
        gradient(f, 0.7, 1.3)

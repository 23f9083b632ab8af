"""A loop over `reversed(...)` or `iter(...)` of an object made when the loop begins (`range(len(lst))`, `sorted(lst)`,
`list(lst)`) walks no lazy view of `lst`: the classic "delete while walking the indices backwards" idiom was refused as
"a loop over a lazy iterator of 'lst' whose body updates 'lst' in place" (lower/lazy.py took every name inside the
header). A loop over `reversed(lst)` itself, or over a name shadowing the builtin, is still refused."""
import numpy as np
import pytest

from plain_checks import central, line_of
from zygotepy import value_and_gradient
from zygotepy.errors import UnsupportedSyntax


def delete_backwards(x):
    lst = [x[0] * 1.0, x[0] * 2.0, x[1] * 3.0, x[1] * 4.0]
    for i in reversed(range(len(lst))):
        if lst[i] > 2.5:
            del lst[i]
    return sum(v * v for v in lst)


def pop_backwards(x):
    lst = [x[0], x[1] * 2.0, x[0] * x[1], x[1] + 1.0]
    for i in reversed(range(1, len(lst))):
        if lst[i] < lst[i - 1]:
            lst.pop(i)
    return sum(v ** 3 for v in lst)


def append_over_sorted(x):
    lst = [x[0], x[1], x[0] * x[1]]
    for v in reversed(sorted(lst)):
        lst.append(v * 2.0)
    return sum(v * k for k, v in enumerate(lst))


def remove_over_copy(x):
    lst = [x[0], x[1] * 3.0, x[0] - x[1]]
    for v in reversed(list(lst)):
        if v > 0.5:
            lst.remove(v)
    return sum(lst) * x[1]


def iter_of_range_assigns_items(x):
    arr = np.array([x[0], x[1], x[0] + x[1]])
    for i in iter(range(1, len(arr))):
        arr[i] = arr[i - 1] * 2.0 + arr[i]
    return np.sum(arr ** 2)


def enumerate_reversed_range(x):
    lst = [x[0], x[1], 2.0 * x[0]]
    total = 0.0
    for k, i in enumerate(reversed(range(len(lst)))):
        total = total + lst[i] * (k + 1)
        del lst[i]
    return total


def kept_reversed_range(x):
    lst = [x[0] * 3.0, x[1], x[0] * x[1], 1.0]
    order = reversed(range(len(lst)))
    for i in order:
        if lst[i] > 0.4:
            del lst[i]
    return sum(v * v for v in lst) + x[0]


FUNCTIONS = [delete_backwards, pop_backwards, append_over_sorted, remove_over_copy, iter_of_range_assigns_items,
             enumerate_reversed_range, kept_reversed_range]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([0.7, 1.3]), np.array([1.6, 0.2])], ids=["a", "b"])
def test_loop_over_a_fresh_object_updating_the_list(mode, f, x):
    value, (grad,) = value_and_gradient(f, x.copy())
    assert value == pytest.approx(f(x.copy()), rel=1e-12)
    np.testing.assert_allclose(grad, central(f, (x,), 0), rtol=1e-6, atol=1e-6)


def reversed_of_the_list_itself(x):
    lst = [x[0], x[1], x[0] * 2.0]
    for v in reversed(lst):
        lst.append(v)  # (Python: an endless loop would follow if it did not read lazily)
        break
    return sum(lst)


def shadowed_sorted(x):
    sorted = lambda seq: seq  # noqa: E731  (named like the builtin: it hands back the list itself)
    lst = [x[0], x[1]]
    for v in reversed(sorted(lst)):  # marker
        if v > 0.5:
            lst.remove(v)
    return sum(lst)


@pytest.mark.parametrize("f", [reversed_of_the_list_itself, shadowed_sorted], ids=lambda f: f.__name__)
def test_a_lazy_walk_of_the_list_is_still_refused(mode, f):
    with pytest.raises(UnsupportedSyntax, match=r"lazy iterator of 'lst' whose body updates 'lst' in place"):
        value_and_gradient(f, np.array([0.7, 1.3]))


def test_the_refusal_names_the_line(mode):
    with pytest.raises(UnsupportedSyntax, match=rf":{line_of(shadowed_sorted, '# marker')}:"):
        value_and_gradient(shadowed_sorted, np.array([0.7, 1.3]))

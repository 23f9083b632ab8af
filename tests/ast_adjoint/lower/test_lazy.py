"""Loops over `enumerate(lst)` or `zip(lst, ...)` whose body may change the list's length (lower/lazy.py): Python runs
as many iterations as the list then has, zygotepy as many as it had when the loop began, so a change is refused,
naming the loop's line (the value was 4.4 for 6.4 before); a body that only rebinds items runs, checked against one
plain call and central differences. (Lazy iterators: tests/test_updates_through_aliases.py.)"""
import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1, 0.4])


def inserts_while_enumerating(x):
    lst = [x[0], x[1], x[2], x[3]]
    s = 0.0
    for k, v in enumerate(lst):
        if k == 0:
            lst.insert(1, v * 3.0)
        s = s + v * (k + 1)
    return s


def _drop_last(seq):
    del seq[-1]


def shrinks_through_a_helper_while_zipping(x):
    lst = [x[0], x[1], x[2], x[3]]
    s = 0.0
    for a, b in zip(lst, [1.0, 2.0, 3.0, 4.0]):
        if len(lst) > 2:
            _drop_last(lst)
        s = s + a * b
    return s


def _scale_first(seq):
    seq[0] = seq[0] * 2.0


def rebinds_items_through_a_helper_while_enumerating(x):
    lst = [x[0], x[1], x[2], x[3]]
    s = 0.0
    for k, v in enumerate(lst):
        _scale_first(lst)
        s = s + v * (k + 1)
    return s


@pytest.mark.parametrize("f", [inserts_while_enumerating, shrinks_through_a_helper_while_zipping],
                         ids=lambda f: f.__name__)
def test_a_change_of_length_while_enumerate_or_zip_walks_the_list_is_refused(f):
    line = f.__code__.co_firstlineno + 3
    with pytest.raises(ZygoteError, match=rf"test_lazy.py:{line}: .*changes the length of 'lst'"):
        value_and_gradient(f, X.copy())


def test_a_helper_that_only_rebinds_items_runs():
    f = rebinds_items_through_a_helper_while_enumerating
    assert value_and_gradient(f, X.copy())[0] == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())

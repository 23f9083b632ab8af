"""`a, b = value` and `a, *rest = value`: each name is an item of `value` (a list's or tuple's item, an array's row),
or a list of its items, so an update of one in place is `value`'s, and its gradient goes through that update (it was
lost before: `a, b = pairs[0]; a *= 2.0` left the gradient of `pairs[0][0]` without the factor 2). Each function is
checked against one plain call (its value) and central differences in float64."""
import numpy as np
import pytest

from zygotepy import value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


def element_of_a_pair(x):
    pairs = [(x * 1.0, x * 2.0), (x * 3.0, x * 0.5)]
    a, b = pairs[0]
    a *= 2.0
    return np.sum(pairs[0][0] * b)


def rows_of_a_matrix(x):
    m = np.stack([x, x * 2.0])
    r1, r2 = m
    r1 *= 2.0
    return np.sum(m * m)


def items_of_a_returned_tuple(x):
    a, b = _two(x)
    a *= 3.0
    return np.sum(a * b)


def _two(x):
    return x * 1.0, x * 2.0


def nested_targets(x):
    objs = [[x[0], x[1]], [x[2], x[0]]]
    (a, b), (c, e) = objs
    objs[0][0] = b * c
    return objs[0][0] * a + e


def starred_list_items(x):
    lst = [x * 1.0, x * 2.0, x * 3.0]
    a, *rest = lst
    rest[0] *= 2.0
    a[1] = 5.0 * a[0]
    return np.sum(lst[0]) + np.sum(lst[1] * lst[1]) + np.sum(rest[0])


def starred_tuple_items(x):
    tup = (x * 1.0, x * 2.0, x * 3.0, x * 4.0)
    a, *rest, z = tup
    rest[1] *= 2.0
    return np.sum(tup[2] * tup[1]) + np.sum(a * z)


def starred_rows(x):
    m = np.stack([x, x * 2.0, x * 3.0])
    a, *rest, z = m
    rest[0] *= 2.0
    z[0] = a[1] * 3.0
    return np.sum(m * m)


def keys_of_a_dict(x):
    d = {"p": x * 1.0, "q": x * 2.0}
    k1, k2 = d
    d[k1] *= 3.0
    return np.sum(d["p"] * d["q"])


@pytest.mark.parametrize("f", [element_of_a_pair, rows_of_a_matrix, items_of_a_returned_tuple, nested_targets,
                               starred_list_items, starred_tuple_items, starred_rows, keys_of_a_dict],
                         ids=lambda f: f.__name__)
def test_an_unpacked_name_updated_in_place_updates_what_it_came_from(f):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())


def _four(a, b, c, d):
    return a * b + c * d ** 2


def two_stars_in_a_call(x):
    p = (x[0], x[1])
    return _four(*p, *[x[2], x[0]])


def an_argument_after_a_star(x):
    return _four(*x[:2], x[2], 3.0) + max(*x, 0.5 * x[1], *x[1:])


def stars_of_an_array(x):
    return np.sum(np.stack([*x, *x[::-1]]) * x[0])


@pytest.mark.parametrize("f", [two_stars_in_a_call, an_argument_after_a_star, stars_of_an_array])
def test_several_stars_in_one_call(mode, f):
    # what follows the first star is one tuple display (`g(*(*p, *q))`), whose rule gives each item its cotangent
    check_grads(f, X.copy())
    assert value_and_gradient(f, X.copy())[0] == pytest.approx(f(X.copy()))

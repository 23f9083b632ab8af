"""A dict's view kept in a name (`vals = d.values()`, `d.items()`) shows the dict as it is when it is read, as
Python's does: the rules of `values` and `items` make lists, and an update of the dict in place makes the list again
(`runtime.view_refreshed`, placed by the lowering for a view kept in a name), its cotangent going to the dict's new
version. Before, the view kept the values of the start, a silently wrong gradient. Each function is checked against
one plain call (its value) and central differences in float64, with every optimisation on and with every one off (CI's
off step)."""
import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient
from zygotepy.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


def _rebind_w(d, b):
    d["w"] = d["w"] * b


def values_after_a_store(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    vals = d.values()
    d["w"] = x * x[0]
    return np.sum(sum(vals))


def items_after_a_store(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    it = d.items()
    d["w"] = x * x[1]
    return sum(np.sum(v) * len(k) for k, v in it)


def values_read_in_a_loop_that_updates(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    vals = d.values()
    s = 0.0
    for i in range(3):
        d["w"] = d["w"] * x[2]
        s = s + np.sum(sum(vals) ** 2)
    return s


def values_after_a_helper_updates(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    vals = d.values()
    _rebind_w(d, x[0])
    return np.sum(sum(vals))


def values_after_a_new_key(x):
    d = {"v": x * 1.0}
    before = list(d.values())
    view = d.values()
    d["w"] = x * x[1]
    return np.sum(sum(view)) + np.sum(before[0])


def items_after_del_and_pop(x):
    d = {"v": x * 1.0, "w": x * x[0], "u": x * x}
    it = d.items()
    del d["v"]
    d.pop("u")
    return sum(np.sum(v) for k, v in it)


def values_after_update_and_setdefault(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    vals = d.values()
    d.update({"v": x * x[2]})
    d.setdefault("z", x * x[0])
    return np.sum(sum(vals))


def values_after_a_conditional_store(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    vals = d.values()
    if x[0] > 0:
        d["w"] = x * x[1]
    return np.sum(sum(vals))


def values_read_before_and_after(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    vals = d.values()
    first = np.sum(sum(vals) * x)
    d["v"] = x ** 2
    return first + np.sum(sum(vals) * x)


def a_value_updated_in_place(x):
    d = {"v": x * 1.0, "w": x * 2.0}
    vals = d.values()
    w = d["w"]
    w *= x[0]  # the same array: the view sees it without a store
    return np.sum(sum(vals) ** 2)


CASES = [values_after_a_store, items_after_a_store, values_read_in_a_loop_that_updates, values_after_a_helper_updates,
         values_after_a_new_key, items_after_del_and_pop, values_after_update_and_setdefault,
         values_after_a_conditional_store, values_read_before_and_after, a_value_updated_in_place]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_kept_view_shows_the_dict_of_now(f):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())


def test_a_view_made_inside_a_loop_body_is_made_again():
    def f(x):
        d = {"v": x * 1.0, "w": x * 2.0}
        s = 0.0
        for i in range(2):
            vals = d.values()
            d["v"] = d["v"] * x[i]
            s = s + np.sum(sum(vals))
        return s
    value, (g,) = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())


def iterator_of_values(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    it = iter(d.values())
    first = next(it)
    d["b"] = x * x[0]  # Python's iterator gives this value next
    return np.sum(first * next(it))


def iterator_of_items(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    it = iter(d.items())
    _, first = next(it)
    d["b"] = x * x[0]
    _, second = next(it)
    return np.sum(first * second)


def iterator_of_a_kept_view(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    vals = d.values()
    it = iter(vals)
    first = next(it)
    d["b"] = x * x[0]
    return np.sum(first * next(it))


@pytest.mark.parametrize("f", [iterator_of_values, iterator_of_items, iterator_of_a_kept_view],
                         ids=lambda f: f.__name__)
def test_an_iterator_over_a_view_refuses_an_item_after_the_dict_changed(f):
    """`iter` of a view kept in a name watches the dict (lower/statements.py `kept_iterator`): the item Python gives
    after the store is the dict's new value, where zygotepy's list has the old one (silently wrong before)."""
    with pytest.raises(ZygoteError, match="taking an item of an iterator .* after what it walks was updated in place"):
        value_and_gradient(f, X.copy())


def iterator_of_values_read_before_the_store(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    it = iter(d.values())
    first, second = next(it), next(it)
    d["a"] = first * 3.0
    return np.sum(first * second) + np.sum(d["a"])


def iterator_of_a_copy(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    it = iter(list(d.values()))
    first = next(it)
    d["b"] = x * x[0]
    return np.sum(first * next(it))


def iterator_of_the_keys(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    it = iter(d)
    k = next(it)
    d["b"] = x * x[0]  # the keys stay as they were
    return np.sum(d[next(it)] * d[k])


@pytest.mark.parametrize("f", [iterator_of_values_read_before_the_store, iterator_of_a_copy, iterator_of_the_keys],
                         ids=lambda f: f.__name__)
def test_an_iterator_the_store_leaves_alone_is_followed(f):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-13)
    check_grads(f, X.copy())

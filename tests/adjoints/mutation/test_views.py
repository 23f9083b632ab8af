"""A dict's view that left the function updating the dict (adjoints/mutation/views.py): returned by a helper, held in
a list, a dict or an object, made in a nested function, or handed back beside its dict. Python's view is live: read
after an update of the dict, it shows the new values. zygotepy's rules make lists, which the update's links find at
run time and show again as the dict is now; before, these kept the values of the start (a silently wrong value and
gradient). Each function is checked against one plain call (its value) and central differences in float64, with
every optimisation on and with every one off (CI's off step), and by forward over reverse."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, hessian
from zygotepy.testing import check_grads

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at  # noqa: E402

X = np.array([0.3, -0.7, 1.1])


def _values(d):
    return d.values()


def _items(d):
    return d.items()


def _store(d, key, value):
    d[key] = value


def _made(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    return d, d.values()


class _Keeper:
    def __init__(self):
        self.views = []

    def keep(self, d):
        self.views.append(d.values())


def returned_by_a_helper(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    v = _values(d)
    d["a"] = x * x[0]
    return np.sum(sum(v))


def returned_then_a_helper_updates(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    v = _values(d)
    _store(d, "a", np.sin(x))
    return np.sum(sum(v))


def keys_removed_and_added(x):
    d = {"a": x * 1.0, "b": x * 2.0, "c": x ** 3}
    v = _values(d)
    d.pop("b")
    d["e"] = np.sin(x)
    return np.sum(sum(v)) * len(v)


def items_held_in_a_dict(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    box = {"it": _items(d)}
    del d["a"]
    d["z"] = x ** 2
    return sum(np.sum(val * val) for _, val in box["it"])


def read_before_and_after_in_a_loop(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    v = _values(d)
    total = 0.0
    for i in range(3):
        total = total + np.sum(sum(v)) * (i + 1)
        d["a"] = d["a"] * x[i]
    return total + np.sum(sum(v))


def held_in_a_list_then_cleared(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    hold = [d.values(), 1.0]
    d.clear()
    d.update({"q": x * 3.0, "r": x})
    return np.sum(sum(hold[0])) + hold[1]


def held_twice(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    v = _values(d)
    pair = (v, v)
    d["b"] = x * 5.0
    return np.sum(sum(pair[0]) * sum(pair[1]))


def kept_by_a_method(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    keeper = _Keeper()
    keeper.keep(d)
    d["a"] = x ** 2
    return np.sum(sum(keeper.views[0]))


def made_by_a_lambda(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    get = lambda: d.values()  # noqa: E731
    v = get()
    d["a"] = x * 7.0
    return np.sum(sum(v))


def named_and_held(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    v = d.values()
    w = [v]
    d["a"] = x * x
    return np.sum(sum(w[0]) + sum(v))


def handed_back_beside_its_dict(x):
    d, v = _made(x)
    d["b"] = x ** 3
    return np.sum(sum(v))


def made_in_a_comprehension(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    vs = [d.values() for _ in range(2)]
    d["a"] = x * 4.0
    return np.sum(sum(vs[1]) * sum(vs[0]))


def _update_through_a_pack(pack, x):
    pack[0]["a"] = x * x
    return sum(pack[1])


def updated_through_what_holds_it(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    return np.sum(_update_through_a_pack([d, d.values()], x))


CASES = [returned_by_a_helper, returned_then_a_helper_updates, keys_removed_and_added, items_held_in_a_dict,
         read_before_and_after_in_a_loop, held_in_a_list_then_cleared, held_twice, kept_by_a_method,
         made_by_a_lambda, named_and_held, handed_back_beside_its_dict, made_in_a_comprehension,
         updated_through_what_holds_it]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_view_out_of_its_function_shows_the_dict_of_now(f):
    agree_at(f, X.copy())


@pytest.mark.dual_route  # (a nested gradient through an update in place takes forward over reverse)
@pytest.mark.parametrize("f", [returned_by_a_helper, keys_removed_and_added, read_before_and_after_in_a_loop,
                               kept_by_a_method, named_and_held], ids=lambda f: f.__name__)
def test_second_derivatives_through_a_refreshed_view(f):
    """hessian and a gradient of a gradient against differences of the gradient."""
    def scalar(t):
        return f(X * t)
    t, eps = 0.8, 1e-5
    expected = (gradient(scalar, t + eps)[0] - gradient(scalar, t - eps)[0]) / (2 * eps)
    assert hessian(scalar, t) == pytest.approx(expected, rel=1e-6)
    assert gradient(lambda s: gradient(scalar, s)[0], t)[0] == pytest.approx(expected, rel=1e-6)


def test_a_view_left_alone_by_the_update_keeps_its_values():
    def f(x):
        d = {"a": x * 1.0, "b": x * 2.0}
        v = _values(d)
        d["a"] = d["a"]  # the same object: the view is not stale
        return np.sum(sum(v))
    check_grads(f, X.copy())


def _update_then_read(d, view, x):
    d["a"] = x * x
    return sum(view)


def test_a_helper_updating_a_dict_beside_its_view_is_refused():
    """The helper's parameters are separate objects to its code: its read of the view after the update would see
    the values of before (silently wrong), so the call is refused, naming the parameter."""
    def f(x):
        d = {"a": x * 1.0, "b": x * 2.0}
        return np.sum(_update_then_read(d, d.values(), x))
    with pytest.raises(ZygoteError, match="updates its parameter 'd' in place while another of its arguments holds "
                                          "a view of that dict"):
        gradient(f, X.copy())

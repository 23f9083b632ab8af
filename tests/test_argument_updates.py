"""Calls that update an argument in place: `np.add.at` and `np.subtract.at`, `out=` given by position, the updates
without a rule (refused naming the line), store dunders and `operator.setitem`, `a.sort()`, and a call statement into
code without source. Each case agrees with one plain call (value and the argument state it leaves) and central finite
differences (tests/plain_checks.py), or raises a ZygoteError."""
import os
import sys

import numpy as np
import pytest

from zygotepy import ZygoteError, value_and_gradient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plain_checks import agree_at, central_hessian  # noqa: E402


X = np.array([0.3, -1.2, 2.4, 0.7])


def agree(f, x=X):
    agree_at(f, x)


def test_add_at_as_a_value_and_in_a_comprehension():
    """`r = np.add.at(y, idx, x)` and `[np.add.at(y, [i], x[i]) for i ...]` gave None: only a call statement was
    seen as an update of y."""
    def f(x):
        y = np.zeros(3)
        r = np.add.at(y, [0, 0, 2], x[:3])
        return np.sum(y ** 2) + (r is None)
    agree(f)

    def g(x):
        y = np.zeros(4)
        [np.add.at(y, [i, 0], x[i]) for i in range(4)]
        return np.sum(y ** 2)
    agree(g)


def test_subtract_at_is_differentiated():
    """np.subtract.at(y, idx, v) gave the gradient of y[idx] = v's neighbour (silently wrong: the call ran unseen)."""
    def f(x):
        y = np.ones(4) * x
        np.subtract.at(y, [0, 0, 1], x[1:] ** 2)
        return np.sum(y ** 2)
    agree(f)


def test_positional_out_is_an_update():
    """np.multiply(a, b, y) and np.cumsum(x, 0, None, y) passed out= by position: a TypeError inside the rule, or a
    silently wrong gradient (y's update unseen)."""
    def f(x):
        y = np.zeros(4)
        np.multiply(x, x, y)
        z = x * 1.0
        np.negative(z, z)
        return np.sum(y * z)
    agree(f)

    def g(x):
        y = x * 1.0
        np.cumsum(x, 0, None, y)
        r = np.clip(x, -1.0, 1.0, x * 0.0)
        return np.sum(y * x) + np.sum(r)
    agree(g)


def _where_refused(f, text):
    """f is refused with a ZygoteError whose message contains `text` and whose notes name f's line holding it."""
    import inspect
    lines, first = inspect.getsourcelines(f)
    line = first + next(k for k, t in enumerate(lines) if text in t)
    with pytest.raises(ZygoteError, match=text.replace(".", r"\.")) as e:
        value_and_gradient(f, X.copy())
    assert f"test_argument_updates.py, line {line}" in "".join(getattr(e.value, "__notes__", [])) \
        or f"test_argument_updates.py:{line}" in str(e.value)


def test_updates_without_a_rule_refuse_naming_the_line():
    """np.multiply.at, np.maximum.at, np.put_along_axis, np.put, np.place and rng.shuffle ran unseen (their gradients
    silently wrong: y's old cotangent, or None). Shuffle and the `at` of a ufunc without a rule (np.divide.at) are
    refused; the others are followed (the first two since: adjoints/mutation/array_calls.py)."""
    def f1(x):
        y = np.ones(4) * x
        np.multiply.at(y, [0, 0, 1], x[:3])
        return np.sum(y)

    def f2(x):
        y = np.ones(4) * x
        np.maximum.at(y, [0, 1], x[2:])
        return np.sum(y)

    def f3(x):
        y = np.zeros(4)
        np.put_along_axis(y, np.array([2, 0]), x[:2], axis=0)
        return np.sum(y ** 2)

    def f4(x):
        y = np.zeros(4)
        np.put(y, [0, 2], x[:2])
        return np.sum(y ** 2)

    def f5(x):
        y = x.copy()
        np.place(y, y > 1.0, x[:1])
        return np.sum(y ** 2)

    def f6(x):
        y = x.copy()
        np.random.default_rng(0).shuffle(y)
        return np.sum(y * np.arange(4.0))

    def f7(x):
        y = np.ones(4) * x
        np.divide.at(y, [0, 0, 1], x[:3])
        return np.sum(y)
    for f, text in [(f7, "np.divide.at"), (f6, "shuffle")]:
        _where_refused(f, text)
    for f in (f1, f2, f3, f4, f5):  # (followed since: adjoints/mutation/array_calls.py and overwrites.py)
        agree(f)


def test_updates_of_data_still_run():
    """np.put on an int array and np.add.at of counts carry no gradient: they run as written."""
    def f(x):
        idx = np.zeros(4, dtype=int)
        np.put(idx, [1, 2], [3, 1])
        counts = np.zeros(4, dtype=int)
        np.add.at(counts, idx, 1)
        return np.sum(x[idx] * counts)
    agree(f)


class _Store:
    def __init__(self):
        self.d = {}

    def __setitem__(self, k, v):
        self.d[k] = v * 2

    def __getitem__(self, k):
        return self.d[k]


def test_store_dunders_and_operator_setitem():
    """`r = s.__setitem__(k, v)`, `d.__setitem__(k, v)` and `operator.setitem(y, i, v)` ran unseen (None or a
    wrong gradient) or raised MissingAdjoint for arrays and dicts."""
    import operator

    def f(x):
        s = _Store()
        r = s.__setitem__("a", x)
        y = np.zeros(4)
        y.__setitem__(0, x[1])
        d = {"a": 1.0}
        d.__setitem__("a", x[2])
        z = np.zeros(4)
        operator.setitem(z, 1, x[3])
        return np.sum(s["a"]) + np.sum(y * x) + d["a"] * x[0] + np.sum(z * x) + (r is None)
    agree(f)


def test_array_sort_in_place():
    """a.sort() raised ZygoteError (an untracked update); now the permutation routes the gradient, through aliases
    and views too."""
    def f(x):
        a = x * 2
        b = a
        v = a[1:]
        a.sort()
        m = np.outer(x, x[:3])
        m.sort(axis=0)
        return np.sum(b * np.arange(4.0)) + np.sum(v * np.arange(3.0)) + np.sum(m * np.arange(12.0).reshape(4, 3))
    agree(f)


def test_hessian_through_an_in_place_sort():
    """hessian of a function that sorts an array in place crashed with AttributeError ('Dual' object has no
    attribute 'sort'), then raised a ZygoteError (np.sort's rule took a NumPy array of the dual numbers); now it
    gives the Hessian (checked against central differences of the gradient)."""
    from zygotepy import hessian

    def f(x):
        y = x * 1.0
        y.sort()
        return np.sum(y ** 3 * np.arange(4.0))
    np.testing.assert_allclose(hessian(f, X.copy()), central_hessian(f, X.copy()), atol=1e-6)


def test_call_statement_without_source_that_updates_an_array_refuses():
    """A call statement into a function with no rule and no source (C code, exec) ran as is, its arguments taken as
    not updated: one that did update a float array gave a silently wrong gradient. Now checked, and refused."""
    ns = {}
    exec("def update(y, v):\n    y[0] = v\n", ns)
    update = ns["update"]

    def f(x):
        y = x * 1.0
        update(y, x[1] ** 2)
        return np.sum(y * x)
    with pytest.raises(ZygoteError, match="updated an argument array in place"):
        value_and_gradient(f, X.copy())

    def g(x):  # updating a list it made itself is none of the gradient's business
        update([0.0], 1.0)
        return np.sum(x * x)
    agree(g)


def _double_first_read_second(a, b):
    a[0] = 2 * a[0]
    return np.sum(b ** 2)


def test_one_object_given_twice_to_a_function_that_updates_it_is_refused():
    """`h(x, x)`: the callee's code treats its parameters as separate objects, so the read of `b` after the update
    of `a` took the values of before (silently wrong, also at the entry point: `gradient(h, z, z)`)."""
    def f(x):
        return _double_first_read_second(x, x)
    with pytest.raises(ZygoteError, match="writes into its parameter 'a' while another of its arguments is that "
                                          "same object"):
        value_and_gradient(f, np.array([1.0, 2.0]))
    z = np.array([1.0, 2.0])
    with pytest.raises(ZygoteError, match="is that same object"):
        value_and_gradient(_double_first_read_second, z, z)


def _put_one(v, *, buf, w=0.5):
    buf[1] = v[0] * w + buf[2]  # (its reads of v come before its store)
    return buf[1]


def _aliased_then_updated(a, b):
    c = b
    a[0] = 5.0 * a[1]
    return np.sum(c ** 2)


def _updated_in_a_loop(a, b):
    for i in range(2):
        a[i + 1] = b[i] * 2.0
    return a[2]


def test_one_object_given_twice_is_followed_where_the_other_is_read_only_before_the_update():
    """`h_put(x, buf=x)` reads `v` only in the statement that first names `buf`: right as the callee's code has it
    (lower/scan.py `reads_alias_after_update`)."""
    def f(x):
        z = x * 1.0
        _put_one(z, buf=z)
        return np.sum(np.sin(z) * np.arange(1, 4))
    agree_at(f, np.array([0.3, -0.7, 1.1]))


@pytest.mark.parametrize("helper", [_aliased_then_updated, _updated_in_a_loop], ids=lambda h: h.__name__)
def test_one_object_given_twice_is_refused_where_the_other_may_be_read_after(helper):
    def f(x):
        y = x * 1.0
        return helper(y, y)
    with pytest.raises(ZygoteError, match="is that same object"):
        value_and_gradient(f, np.array([0.3, -0.7, 1.1]))


def _updates_a_dict(p):
    p["w"] = p["w"] * p["b"]
    return np.sum(p["w"] ** 2)


def _updates_a_list(p):
    p[0] = p[0] * p[1]
    p.append(p[0] * 2.0)
    return p[0] ** 2 + p[2]


@pytest.mark.parametrize("run", ["hessian", "hvp", "jvp", "pushforward"])
def test_forward_modes_leave_a_list_or_dict_argument_as_one_call_does(run):
    """hessian, hvp and jvp saw a list or dict argument as a copy holding dual numbers, and left the user's own as
    it was (api.md: an argument f updates ends as one call of f leaves it)."""
    from zygotepy import hessian, hvp, jvp, pushforward
    calls = {
        "hessian": lambda f, p, t: hessian(f, p),
        "hvp": lambda f, p, t: hvp(f, (p,), (t,)),
        "jvp": lambda f, p, t: jvp(f, (p,), (t,)),
        "pushforward": lambda f, p, t: pushforward(f, p)(t),
    }
    p = {"w": np.array([1.0, 2.0]), "b": 3.0}
    calls[run](_updates_a_dict, p, {"w": np.ones(2), "b": 0.0})
    np.testing.assert_array_equal(p["w"], [3.0, 6.0])
    assert p["b"] == 3.0 and type(p["b"]) is float
    q = [2.0, 3.0]
    calls[run](_updates_a_list, q, [1.0, 0.0])
    assert q == [6.0, 3.0, 12.0] and all(type(v) is float for v in q)

"""An update in place of an object no name of the differentiated function reaches (`get_registry().append(v)`,
`Registry().items.append(v)`, `get_buffer()[0] = v`) can be read back only through state outside the function, where
its gradient would be lost: with a value that carries a gradient it is refused, naming the line
(lower/updates.py `unseen_update`, stores.py's rule); without one it runs. An object a name reaches through a holder
(`d.setdefault(k, []).append(v)`) is followed as before."""
import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.errors import ZygoteError

REGISTRY = []
BUFFER = np.zeros(3)


class Holder:
    items = []


class Plain:
    pass


def get_registry():
    return REGISTRY


def get_buffer():
    return BUFFER


def appended_through_a_helper(x):
    get_registry().append(x * 2.0)
    return get_registry()[-1] * 3.0


def appended_read_by_name(x):
    get_registry().append(x * 2.0)
    return REGISTRY[-1] * 3.0


def stored_through_a_helper(x):
    get_buffer()[0] = x * 2.0
    return get_buffer()[0] * 3.0


def appended_through_a_new_instance(x):
    Holder().items.append(x * 2.0)
    return Holder().items[-1] * 3.0


def attribute_of_a_new_object(x):
    Plain().v = x * 2.0
    return x


def _clear():
    REGISTRY.clear()
    Holder.items.clear()
    BUFFER[:] = 0.0


@pytest.mark.parametrize("f, what", [
    (appended_through_a_helper, r"`\.append\(\.\.\.\)`"),
    (appended_read_by_name, r"`\.append\(\.\.\.\)`"),
    (stored_through_a_helper, "this store of an item"),
    (appended_through_a_new_instance, r"`\.append\(\.\.\.\)`"),
    (attribute_of_a_new_object, "this store of an attribute"),
])
def test_an_update_no_name_reaches_is_refused(mode, f, what):
    _clear()
    with pytest.raises(ZygoteError, match=rf"test_unseen_updates\.py:\d+: zygotepy cannot differentiate {what}, "
                                          r"which updates in place an object no variable of this function holds"):
        gradient(f, 1.5)
    _clear()


def constants_through_a_helper(x):
    get_registry().append("step")
    get_buffer()[1] = 4.0
    return x * get_buffer()[1]


def through_a_holder(x):
    d = {}
    d.setdefault("a", []).append(x * 2.0)
    rows = [[], []]
    rows[1].append(x * x)
    return d["a"][0] * 3.0 + rows[1][0]


@pytest.mark.parametrize("f, want", [
    (constants_through_a_helper, lambda x: 4.0),
    (through_a_holder, lambda x: 6.0 + 2.0 * x),
])
def test_updates_without_a_gradient_or_through_a_holder_are_followed(mode, f, want):
    for x in (1.5, -0.5):
        _clear()
        np.testing.assert_allclose(gradient(f, x)[0], want(x), rtol=1e-12)
    assert REGISTRY == ["step"] if f is constants_through_a_helper else True
    _clear()

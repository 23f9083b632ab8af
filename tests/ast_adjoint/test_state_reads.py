"""A module global updated in place through an alias (`lst = get_registry(); lst.append(v)`) and read back in the same
differentiated call, by name or through a helper run as written (no gradient flows through its call), is refused,
naming the read: its reads would get no gradient (state_reads.py `as_written_reading`, mutate.py `global_read`, which
now covers global arrays too). A helper that reads a global nobody updated, a copy, and a log never read back run."""
import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.errors import ZygoteError

REGISTRY = []
BUFFER = np.zeros(3)
WEIGHTS = np.array([1.0, 2.0, 3.0])


class State:
    pass


STATE = State()
STATE.v = 0.0


def get_registry():
    return REGISTRY


def get_buffer():
    return BUFFER


def get_state():
    return STATE


def registry_twice_removed():
    return get_registry()


def weights():
    return WEIGHTS


def list_read_through_the_helper(x):
    lst = get_registry()
    lst.append(x * 2.0)
    return get_registry()[-1] * 3.0


def list_read_through_a_helper_of_a_helper(x):
    lst = registry_twice_removed()
    lst.append(x * 2.0)
    return registry_twice_removed()[-1] * 3.0


def array_read_through_the_helper(x):
    b = get_buffer()
    b[0] = x * 2.0
    return get_buffer().sum() * 3.0


def array_read_by_name(x):
    b = get_buffer()
    b[0] = x * 2.0
    return BUFFER.sum() * 3.0


def array_aliased_by_name(x):
    b = BUFFER
    b[0] = x * 2.0
    return BUFFER.sum() * 3.0


def object_read_through_the_helper(x):
    s = get_state()
    s.v = x * 2.0
    return get_state().v * 3.0


def _clear():
    REGISTRY.clear()
    BUFFER[:] = 0.0
    STATE.v = 0.0


@pytest.mark.parametrize("f, name", [
    (list_read_through_the_helper, "REGISTRY"),
    (list_read_through_a_helper_of_a_helper, "REGISTRY"),
    (array_read_through_the_helper, "BUFFER"),
    (array_read_by_name, "BUFFER"),
    (array_aliased_by_name, "BUFFER"),
    (object_read_through_the_helper, "STATE"),
])
def test_a_global_read_back_after_an_update_through_an_alias_is_refused(mode, f, name):
    _clear()
    with pytest.raises(ZygoteError, match=rf"test_state_reads\.py:\d+: zygotepy cannot differentiate (calling \w+, "
                                          rf"which reads|reading) the global '{name}' after it was updated in place"):
        gradient(f, 1.5)
    _clear()


def copied(x):
    lst = list(get_registry())
    lst.append(x * 2.0)
    return lst[-1] * 3.0 + len(get_registry())


def logged(x):
    y = x * 2.0
    REGISTRY.append(y)
    return y * 3.0


def weighted(x):
    out = np.zeros(3)
    out[0] = x
    return np.sum(out * weights()) + np.sum(WEIGHTS) * x


@pytest.mark.parametrize("f, want", [
    (copied, lambda x: 6.0),
    (logged, lambda x: 6.0),
    (weighted, lambda x: 7.0),
])
def test_helpers_reading_globals_nobody_updated_run(mode, f, want):
    for x in (1.5, -0.5):
        _clear()
        np.testing.assert_allclose(gradient(f, x)[0], want(x), rtol=1e-12)
    _clear()

"""A dict kept outside the differentiated function (a memo in a closure or a module global) read by a key that
carries a gradient is refused where its entry was computed before the call (ast_adjoint/kept_lookups.py: the gradient
through the cached value was None once the memo was warm); filled and read in the same call, and read by data keys,
it is followed."""
import math

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient


def memoize(fn):
    memo = {}

    def wrapper(t):
        if t not in memo:
            memo[t] = fn(t)
        return memo[t]
    return wrapper


@memoize
def exp_memo(t):
    return math.exp(t)


def through_a_memo(x):
    return exp_memo(x) * x


CACHE = {}


def cached_sin(t):
    if t in CACHE:
        return CACHE[t]
    return math.sin(t)


def through_a_global_memo(x):
    return cached_sin(x) * 2.0


def test_a_warm_closure_memo_is_refused_and_a_cold_one_followed():
    x = 0.37
    assert gradient(through_a_memo, x)[0] == pytest.approx(math.exp(x) * (1 + x))  # (fills the memo, and reads it)
    with pytest.raises(ZygoteError, match=r"test_kept_lookups.py:\d+: .*a dict kept outside the function"):
        gradient(through_a_memo, x)


def test_a_warm_global_memo_is_refused():
    CACHE[0.41] = math.sin(0.41)
    with pytest.raises(ZygoteError, match=r"test_kept_lookups.py:\d+: .*a dict kept outside the function"):
        gradient(through_a_global_memo, 0.41)
    assert gradient(through_a_global_memo, 0.5)[0] == pytest.approx(2 * math.cos(0.5))  # (not in the memo)


TABLE = {0: 1.5, 1: 2.5}
SCALES = {"a": np.array([1.0, 2.0])}


def by_data_keys(x, n=1):
    local = {x: x * x}
    return TABLE[n] * x + SCALES.get("a")[0] * x + local[x] + local.get(x)


def test_lookups_by_data_keys_and_in_dicts_made_in_the_call_are_followed():
    assert gradient(by_data_keys, 0.75) == (pytest.approx(2.5 + 1.0 + 4 * 0.75),)


class _Model:
    def __init__(self):
        self.cache = {}

    def value(self, t):
        if t not in self.cache:
            self.cache[t] = t ** 3
        return self.cache[t]


_SHARED = _Model()


def through_a_kept_object(x):
    return _SHARED.value(x)


def through_a_fresh_object(x):
    m = _Model()
    return m.value(x) + m.value(x)


def test_a_memo_in_an_object_that_outlives_the_call_is_refused_once_warm():
    assert gradient(through_a_kept_object, 1.3) == (pytest.approx(3 * 1.3 ** 2),)
    with pytest.raises(ZygoteError, match=r"test_kept_lookups.py:\d+: .*a dict kept outside the function"):
        gradient(through_a_kept_object, 1.3)
    for _ in range(2):
        assert gradient(through_a_fresh_object, 1.3) == (pytest.approx(6 * 1.3 ** 2),)



POWERS = {}


def power_by_tuple_key(n, t):
    if (n, t) not in POWERS:
        POWERS[(n, t)] = t ** n
    return POWERS[(n, t)]


def popped(t):
    if t in POWERS:
        return POWERS.pop(t)
    return t ** 3


def set_by_default(t):
    return POWERS.setdefault(t, t ** 3)


@pytest.mark.parametrize("f", [lambda x: power_by_tuple_key(3, x), popped, set_by_default],
                         ids=["a tuple key", "pop", "setdefault"])
def test_memos_read_by_a_tuple_key_pop_and_setdefault_are_refused(f):
    """Each gave None for 3x² once the memo was warm (setdefault: even cold, its value taken as data)."""
    x = 0.7
    POWERS.clear()
    POWERS[(3, x)] = POWERS[x] = x ** 3  # (an earlier call's entries)
    with pytest.raises(ZygoteError, match=r"test_kept_lookups.py:\d+: "):
        gradient(f, x)

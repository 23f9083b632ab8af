"""The compiler's own limits: an update in place on Python numbers reads as plain arithmetic to an outer level, and
an analysis too deep for Python's recursion limit is a clear error naming the function, not a recursion of the user's."""
import sys
import types

import pytest

import zygotepy as zg
from zygotepy.ast_adjoint import compile as compiler


def scaled(a, c):
    d = c + 0.0
    b = d
    d *= a
    return d * b * a


@pytest.mark.optimizations
def test_scalar_update_of_an_alias_is_emitted_as_arithmetic():
    # `d_2 = d` then `d_2 *= a` made the outer level of a nested gradient follow a maybe-in-place update through
    # every object the generated forward had made (seed 404, program 8391: 19 s to compile, then too deep)
    forward = str(zg.show_adjoint(scaled, optimized=True)).split("def scaled_back")[0]
    assert "d_2 = d * a" in forward
    assert not [line for line in forward.splitlines() if "*=" in line and not line.strip().startswith("#")]


def test_nested_gradient_through_a_scalar_update():
    a, c = 0.5, 2.0
    assert zg.gradient(scaled, a, c) == pytest.approx((2 * a * c * c, 2 * a * a * c))  # a^2 c^2
    second = zg.gradient(lambda t: zg.gradient(scaled, t, c)[0], a)[0]
    assert second == pytest.approx(2 * c * c)
    mixed = zg.gradient(lambda t: zg.gradient(scaled, a, t)[0], c)[0]
    assert mixed == pytest.approx(4 * a * c)


def _too_deep(*args):
    raise RecursionError("maximum recursion depth exceeded")


def test_analysis_too_deep_names_the_function(monkeypatch):
    def fresh(x):
        return x * 3.0
    monkeypatch.setattr(compiler, "_transform", _too_deep)
    with pytest.raises(zg.ZygoteError, match=r"test_compile\.py:\d+: fresh is too large") as info:
        zg.gradient(fresh, 1.0)
    assert not isinstance(info.value, RecursionError)


def test_recursion_error_deep_in_the_users_stack_stays_one(monkeypatch):
    def fresh_too(x):
        return x * 3.0
    monkeypatch.setattr(compiler, "_transform", _too_deep)

    def dive(k):
        return dive(k - 1) if k else compiler.transform(fresh_too)
    with pytest.raises(RecursionError) as info:
        dive(sys.getrecursionlimit() * 2 // 3)
    assert not isinstance(info.value, zg.ZygoteError)


def _scaled(x, s=2.0):
    return x * s


def _scaled_by_keyword(x, *, s=2.0):
    return x * s


def test_defaults_reassigned_after_the_first_gradient(mode):
    # the derived forward takes the function's defaults as they are when it is made: a new `__defaults__` (or
    # `__kwdefaults__`) derives it again, as a new `__code__` does
    scaled = types.FunctionType(_scaled.__code__, _scaled.__globals__, "scaled", _scaled.__defaults__)
    by_keyword = types.FunctionType(_scaled_by_keyword.__code__, _scaled_by_keyword.__globals__, "by_keyword")
    by_keyword.__kwdefaults__ = {"s": 2.0}

    def caller(x):
        return scaled(x) + by_keyword(x)
    assert zg.value_and_gradient(caller, 1.5) == (6.0, (4.0,))
    scaled.__defaults__ = (7.0,)
    by_keyword.__kwdefaults__ = {"s": 3.0}
    assert zg.value_and_gradient(caller, 1.5) == (15.0, (10.0,))
    assert zg.value_and_gradient(scaled, 1.5) == (10.5, (7.0,))

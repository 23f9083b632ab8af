"""Fast paths and loop versioning give the same gradients as the general paths they stand in for."""
import math
import re

import numpy as np
import pytest

from zygotepy import gradient, show_adjoint
from zygotepy.testing import check_grads


def pow_loop(x, n):
    r = 1.0
    while n > 0:
        n -= 1
        r *= x
    return r


def chain(y, a, b):
    for _ in range(20):
        y = math.sin(y) * a + math.cos(y) * b
    return y


def counter_mix(x):
    s = 0.0
    for i in range(6):
        s = s + x * i - s / (i + 1)
    return s


def type_changes(x, n):
    r = 1            # an int on entry, a float after one step: still on the fast copy
    for _ in range(n):
        r = r * x + 1
    return r


def not_closed(x):
    r = x
    for k in range(3):
        r = r ** 1.5 + k  # ** is not closed over floats (complex results), so no versioning
    return r


CASES = [(pow_loop, (1.3, 7)), (chain, (0.3, 0.9, 0.4)), (counter_mix, (0.7,)), (type_changes, (1.1, 5)),
         (not_closed, (1.2,))]


@pytest.mark.parametrize("fn, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_fast_and_general_copies_agree(fn, args):
    fast = gradient(fn, *args)
    general = gradient(fn, *(np.float64(a) if isinstance(a, float) else a for a in args))  # fails the entry test
    for f, g in zip(fast, general, strict=True):
        assert (f is None) == (g is None)
        if f is not None:
            assert math.isclose(float(f), float(g), rel_tol=1e-12)
    check_grads(fn, *args)


@pytest.mark.optimizations
def test_versioned_loops_are_emitted_for_float_loops_only():
    assert "stack_fast" in show_adjoint(pow_loop, optimized=True)
    assert "stack_fast" not in show_adjoint(not_closed, optimized=True)


def test_array_argument_takes_the_general_copy():
    x = np.array([1.5, 2.0])
    (g, _) = gradient(lambda x, n: pow_loop(x, n).sum(), x, 3)
    np.testing.assert_allclose(g, 3 * x ** 2)


W = np.array([1.0, 2.0, 3.0])


def with_global_array(x, n):
    s = 0.0
    for _ in range(n):
        s = s + x * W  # W is a global array: the scalar fast path must not take it
    return s.sum()


def test_global_array_operand_takes_the_general_path():
    (g, _) = gradient(with_global_array, 2.0, 3)
    assert g == pytest.approx(3 * W.sum())
    check_grads(with_global_array, 2.0, 3)


def repeat_constant_tuple(x, n):
    t = (0.5,) * n  # a constant tuple repeated by an int: the scalar fast path of * must not take it
    return t[0] * x + t[1]


def test_constant_sequence_operand_takes_the_general_path():
    # the guard tests variables only (n is an int, a scalar): the inline derivative of * would give n the cotangent
    # `dt * (0.5,)`, a TypeError for the tuple cotangent dt; mul's rule repeats the sequence and gives n None
    assert gradient(repeat_constant_tuple, 2.0, 2) == (0.5, None)
    assert "type(n) in _SC" not in show_adjoint(repeat_constant_tuple, optimized=True)


# --- the fast copy's backward starts its sums before the loop (nullness._started_sums) ---------------------------------

def sometimes(x, n):
    r = 1.0
    for i in range(n):
        if i % 2:
            r = r * x  # (a sum that not every iteration adds to: it keeps its None test)
        r = r + 0.5 * x
    return r


@pytest.mark.optimizations
def test_a_loop_invariants_sum_starts_before_the_loop():
    text = show_adjoint(pow_loop, optimized=True)
    assert "if dx is None and _stack:" in text and "dx = dx + (dr_2 * r_2_back)" in text
    assert gradient(pow_loop, 1.5, 3) == (3 * 1.5 ** 2, None)


def test_a_loop_that_never_runs_still_gives_no_gradient():
    assert gradient(pow_loop, 1.5, 0) == (None, None)


@pytest.mark.parametrize("n", [0, 1, 4, 7])
def test_sums_some_iterations_skip(n):
    check_grads(sometimes, 1.3, n)


def _fast_copies(fn):
    """The fast copy's forward loop and backward loop, as text, without the comments that quote the source."""
    text = "\n".join(line for line in show_adjoint(fn, optimized=True).splitlines() if not line.lstrip().startswith("#"))
    return text.split("if stack_fast:")[1].split("else:")[0], text.split("if stack_fast:")[2].split("else:")[0]


@pytest.mark.optimizations
def test_the_fast_copy_tapes_only_what_its_backward_reads():
    # sin(y) * a + cos(y) * b: the backward needs sin(y) and cos(y) (each other's derivative) and nothing else: no
    # copy of y, no None slot of the final `+`, and the values themselves pushed, not copies of them
    forward, _ = _fast_copies(chain)
    assert "_stack_push((_t_4, _t_2))" in forward and "_back =" not in forward
    check_grads(chain, 0.3, 0.8, -0.4)


def trig(y, a):
    for _ in range(5):
        z = 0.5 * y  # (one value: `sinh(0.5 * y) * cosh(0.5 * y)` computes 0.5 * y twice, two values)
        y = math.sin(y) * a + math.cos(y) + math.sinh(z) * math.cosh(z)
    return y


def sin_alone(y, a):
    for _ in range(5):
        y = math.sin(y) * a + math.cos(0.5 * y)  # cos of another value: sin's derivative is computed
    return y


@pytest.mark.optimizations
def test_sin_and_cos_of_one_value_share_their_derivatives():
    _, backward = _fast_copies(trig)
    for fn in ("sin", "cos", "sinh", "cosh"):
        assert f".{fn}(" not in backward  # each multiplies by the other's forward value
    _, backward = _fast_copies(sin_alone)
    assert ".cos(_t" in backward and ".sin(" in backward


@pytest.mark.parametrize("fn", [trig, sin_alone])
def test_shared_derivatives_have_the_general_paths_bits(fn):
    fast = gradient(fn, 0.4, 0.9)
    general = gradient(fn, np.float64(0.4), np.float64(0.9))  # fails the entry test: the rules' `math.cos(x)`
    assert fast == tuple(float(g) for g in general)
    check_grads(fn, 0.4, 0.9)


def inlined_helper(x):
    return x * math.sin(x) + x


def through_helper(a, b, y):
    for _ in range(6):
        y = 0.5 * inlined_helper(y) * a + b
    return y


@pytest.mark.optimizations
def test_the_fast_backward_copies_no_cotangent():
    # `+` passes its cotangent on, and so does an inlined callee's return: the fast backward reads it where it is
    _, backward = _fast_copies(through_helper)
    copies = [line.strip() for line in backward.splitlines() if re.fullmatch(r"\s*d\w+ = d\w+", line)]
    assert len(copies) == 1 and copies[0].startswith("dy_")  # (into the carried y's cotangent: 4 more without)
    check_grads(through_helper, 0.9, 0.5, 0.1)
    fast = gradient(through_helper, 0.9, 0.5, 0.1)
    assert fast == tuple(float(g) for g in gradient(through_helper, *map(np.float64, (0.9, 0.5, 0.1))))

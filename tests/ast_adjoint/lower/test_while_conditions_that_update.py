"""A `while` condition that updates an object in place (`while advance(state):` with a helper stepping the state,
`while lst and lst.pop() > t:`, a method of the user's class) runs, updates included, as a statement of each
iteration (lower/jumps.py `test_in_body`), the last test that ends the loop too: it failed with the internal
"a loop condition carries no gradient". Value and gradient against one plain call and central differences, with
the loop's `else` clause, `break` and `continue`, and the hand-written `while True: ... break` form."""
import os
import sys

import numpy as np
import pytest

from zygotepy import value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


class State:
    def __init__(self, v):
        self.v, self.n = v, 0

    def step(self):
        self.n += 1
        self.v = self.v * 0.8 + 0.1
        return self.n < 4


def advance(s):
    s.n += 1
    s.v = s.v * 0.8 + 0.1
    return s.n < 5


def shrink(v, limit):
    v[:] = v * 0.9
    return float(v.sum()) > limit


def helper_steps_state(x):
    s = State(x)
    while advance(s):
        pass
    return s.v * s.v


def helper_steps_state_body_reads_it(x):
    s = State(x)
    total = 0.0
    while advance(s):
        total = total + s.v * x
    return total + s.v


def method_steps_state(x):
    s = State(x)
    total = 0.0
    while s.step():
        total = total + s.v ** 2
    return total * s.v


def pops_while_large(x):
    lst, tot = [x, x * 2.0, x * 0.5], 0.0
    while lst and lst.pop() > 0.2:
        tot += x
    return tot + len(lst) * x


def pops_from_a_stack(x):
    stack = [x * 0.1, x * 3.0, x * 2.0]
    tot = 0.0
    while stack.pop() > 1.0:
        tot = tot + x * len(stack)
    return tot + sum(stack) * x


def array_helper_in_condition(x):
    v = np.array([x, 2.0 * x, 1.0])
    while shrink(v, 2.0):
        v = v + 0.01 * x
    return float(v @ v)


def with_else(x):
    s = State(x)
    out = 0.0
    while advance(s):
        out = out + s.v
    else:
        out = out * s.v
    return out


def with_break_and_else(x):
    s = State(x)
    out = 0.0
    while advance(s):
        out = out + s.v
        if out > 1.0:
            break
    else:
        out = out * 10.0
    return out * s.v


def with_continue(x):
    s = State(x)
    out = 0.0
    while advance(s):
        if s.n == 2:
            continue
        out = out + s.v * x
    return out


def inside_a_for_with_else_continue(x):
    tot = 0.0
    for k in range(3):
        s = State(x * (k + 1.0))
        while advance(s):
            if s.n == 3 and k == 1:
                break
        else:
            tot = tot + s.v
            continue
        tot = tot + s.v * 2.0
    return tot


def returns_from_the_body(x):
    s = State(x)
    while advance(s):
        if s.v > 0.9:
            return s.v * x
    return s.v


def counts_its_tests(x):
    s = State(x)
    while advance(s) and s.v < 5.0:
        x = x * 1.1
    return s.n * x + s.v  # (s.n: how many times the condition ran, as in Python)


def written_as_while_true(x):
    s = State(x)
    while True:
        if not advance(s):
            break
    return s.v * s.v


CASES = [helper_steps_state, helper_steps_state_body_reads_it, method_steps_state, pops_while_large,
         pops_from_a_stack, array_helper_in_condition, with_else, with_break_and_else, with_continue,
         inside_a_for_with_else_continue, returns_from_the_body, counts_its_tests, written_as_while_true]


@pytest.mark.parametrize("x", [0.7, 1.9])
@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_condition_updates_are_part_of_each_iteration(mode, f, x):
    value, (grad,) = value_and_gradient(f, x)
    assert value == pytest.approx(f(x), rel=1e-12)
    assert grad == pytest.approx(central(f, (x,), 0), rel=1e-6, abs=1e-7)

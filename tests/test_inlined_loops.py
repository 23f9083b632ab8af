"""Loops that call small helpers get two copies, chosen at entry (ast_adjoint/speculate.py): one with the helpers
inlined, one with the calls as they are. Everything a loop body makes, lambdas and nested functions included, must be
renamed in each copy (a lambda made in such a loop read a name the copy never bound: a NameError in generated code)."""
import math

import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.testing import check_grads


def h2(p1, p2):
    pass


def scaled(p, q):
    return p * q


def lambda_in_while_loop(a):
    k5 = 0
    while k5 < 2:
        k5 += 1
        acc4 = h2(k5, 0.5)
        g6 = lambda q7: q7
    return a


def lambda_used_in_for_loop(a):
    total = 0.0
    for k in range(3):
        acc = scaled(a, 0.5)
        g = lambda q, c: q * c + math.sin(q)
        total = total + g(a, acc)
    return total


def def_in_loop_with_default(a):
    total = a
    for k in range(2):
        c = scaled(total, 0.9)

        def step(q, w):
            return q * w + math.cos(q)
        total = step(total, c)
    return total


def lambda_passed_to_helper(x):
    out = x
    for k in range(2):
        w = scaled(out, 0.3)
        out = apply(lambda v, u: np.tanh(v) * u, out, w)
    return np.sum(out)


def apply(fn, v, u):
    return fn(v, u)


@pytest.mark.parametrize("fn, args", [(lambda_in_while_loop, (0.7,)), (lambda_used_in_for_loop, (0.7,)),
                                      (def_in_loop_with_default, (0.7,)),
                                      (lambda_passed_to_helper, (np.array([0.3, -0.5]),))])
def test_functions_made_in_a_loop_that_calls_helpers(fn, args):
    check_grads(fn, *args, rtol=1e-6, atol=1e-9)


def test_a_lambda_in_a_loop_beside_a_helper_returning_none():
    assert gradient(lambda_in_while_loop, 0.7) == (1.0,)


def captured_then_rebound(a):
    total = 0.0
    for k in range(3):
        acc = scaled(a, 0.5)
        g = lambda q: q * acc
        total = total + g(a)
    return total


def test_a_capture_rebound_by_the_loop_before_each_call():
    """The closure's cell changes each iteration, before the closure is made and called in it: the call reads the
    value it was made with (a call after a new assignment is refused, tests/test_features.py)."""
    check_grads(captured_then_rebound, 0.7, rtol=1e-6, atol=1e-9)

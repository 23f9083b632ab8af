"""A name only one arm of an `if` assigns, read (in arithmetic) by the other arm, which does not run: Python runs the
function, and so did the plain form, but the optimisations compiled the read as if the name were bound there. A
scalar or array path recorded it for the backward, where nothing defines it (`AssertionError: backward reads undefined
[Var(name='s')]` at compile time), and a guard hoisted before a loop in that arm read it where Python does not (an
UnboundLocalError from a loop that runs no iteration). Such a read now takes the plain pair (optimize/guards.py
`unbound_here`), which raises Python's own error where it runs. Checked against central differences, on and off;
where the arm that reads the unbound name runs, both raise Python's UnboundLocalError."""
import math
import os
import sys

import numpy as np
import pytest

from zygotepy import gradient, value_and_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402


def probe_form(x):
    if x > 0:
        s = x * 2.0
        out = s * s
    else:
        out = s * x
    return out


def augmented_in_the_other_arm(x):
    out = x * 3.0
    if x > 0:
        s = math.sin(x)
        out = out * s
    else:
        out += s
    return out


def elif_chain(x):
    if x > 0:
        s = x * x
        out = s + x
    elif x > -1.0:
        out = s * x
    else:
        out = s - x
    return out


def nested_ifs(x):
    if x > 0:
        if x > 0.5:
            s = math.exp(x)
            out = s * x
        else:
            out = s * s
    else:
        out = s / x
    return out


def loop_in_the_other_arm(x):
    out = 0.0
    if x > 0:
        s = x * 1.5
        out = s * x
    else:
        for i in range(3):
            out = out + s * x
    return out


def while_in_the_other_arm(x):
    out = x
    if x > 0:
        s = math.tanh(x)
        out = out * s
    else:
        k = 0
        while k < 2:
            out = out * s + x
            k += 1
    return out


def loop_around_the_if(x):
    acc = 0.0
    for i in range(3):
        if x > 0:
            s = x * (i + 1.0)
            acc = acc + s * s
        else:
            acc = acc + s * x
    return acc


def assigned_further_on(x):
    if x > 5.0:
        return x * b  # noqa: F821 (bound further on)
    b = x * 0.25
    return b * x


def array_only_one_arm_makes(x):
    v = np.array([x, 2.0 * x, 3.0])
    if x > 0:
        w = np.sin(v)
        out = float((w * v).sum())
    else:
        out = float((w * x).sum())
    return out


def items_read_in_a_loop_of_the_other_arm(x):
    v = np.array([x, 2.0 * x, 3.0])
    out = 0.0
    if x > 0:
        w = v * x
        out = float(w.sum())
    else:
        for i in range(3):
            out = out + w[i] * x
    return out


def keyword_call_in_the_other_arm(x):
    v = np.array([x, 2.0 * x, 3.0])
    if x > 0:
        w = v * v
        out = float(np.sum(w, axis=0))
    else:
        out = float(np.sum(w * x, axis=0))
    return out


def callee_only_one_arm_binds(x):
    if x > 0:
        act = math.sin
        out = act(x) * x
    else:
        out = act(x)
    return out


def two_names_two_arms(x, y):
    if x > y:
        s = x * y
        out = s + x
    else:
        t = y * y
        out = t * s
    if x > 0:
        out = out * x
    else:
        out = out * s * t
    return out


def later_iteration(x):
    out = 0.0
    for i in range(3):
        if i > 0:
            out = out + s * x  # noqa: F821 (bound further on)
        s = x * (i + 1.0)
    return out

def later_iteration_while(x):
    out = 0.0
    k = 0
    while k < 3:
        if k > 0:
            out = out + math.sin(s) * x  # noqa: F821 (bound further on)
        else:
            s = x * x
        k += 1
    return out

def arm_binds_in_loop(x):
    v = np.array([x, 2.0, 3.0 * x])
    out = 0.0
    for i in range(3):
        if i == 0:
            w = v * x
        else:
            out = out + w[i] * v[i]
    return out


def callee_in_a_loop_that_may_not_run(x, n):
    if x > 0:
        h = abs
        out = x * h(-2)
    else:
        out = x * x
        for i in range(n):
            out = out + h(i)
    return out


def elif_chain_with_loops(x):
    out = x
    if x > 1.0:
        s = x * 0.5
        for i in range(2):
            out = out * s
    elif x > 0:
        t = math.cos(x)
        out = out + t * x
    else:
        for i in range(2):
            out = out + s * t
    return out


CASES = [(probe_form, (0.7,)), (augmented_in_the_other_arm, (0.6,)), (elif_chain, (0.8,)), (nested_ifs, (0.9,)),
         (loop_in_the_other_arm, (0.4,)), (while_in_the_other_arm, (0.5,)), (loop_around_the_if, (0.6,)),
         (assigned_further_on, (1.3,)), (array_only_one_arm_makes, (0.7,)),
         (items_read_in_a_loop_of_the_other_arm, (0.7,)), (keyword_call_in_the_other_arm, (0.7,)),
         (callee_only_one_arm_binds, (0.7,)), (two_names_two_arms, (1.2, 0.3)),
         (callee_in_a_loop_that_may_not_run, (-0.7, 0)), (elif_chain_with_loops, (1.4,)),
         (elif_chain_with_loops, (0.6,)), (later_iteration, (0.7,)), (later_iteration_while, (0.6,)),
         (arm_binds_in_loop, (0.8,))]


def _ids(cases):
    seen, out = {}, []
    for f, _ in cases:
        seen[f.__name__] = seen.get(f.__name__, 0) + 1
        out.append(f.__name__ + ("" if seen[f.__name__] == 1 else f"_{seen[f.__name__]}"))
    return out


@pytest.mark.parametrize("f, args", CASES, ids=_ids(CASES))
def test_against_central_differences(f, args, mode):
    value, grads = value_and_gradient(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    for k, g in enumerate(grads):
        if isinstance(args[k], int):
            continue
        assert g == pytest.approx(central(f, args, k), rel=1e-6, abs=1e-7), f"argument {k}"


@pytest.mark.parametrize("f, args", [(probe_form, (-0.7,)), (nested_ifs, (0.3,)), (elif_chain, (-0.5,)),
                                     (loop_in_the_other_arm, (-0.4,)), (array_only_one_arm_makes, (-0.7,)),
                                     (callee_in_a_loop_that_may_not_run, (-0.7, 2))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_the_arm_that_reads_it_raises_as_python_does(f, args, mode):
    with pytest.raises(UnboundLocalError):
        f(*args)
    with pytest.raises(UnboundLocalError, match="local variable"):
        gradient(f, *args)

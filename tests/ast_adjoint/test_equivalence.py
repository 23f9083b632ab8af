"""Optimisations change no gradient: every function of the feature table gets bit-identical cotangents with each
optimisation on and off (the backward's None-test removal, `nullness`; speculative inlining of small callees,
`speculate`; rules adding to the running cotangents they are handed, `accumulate`; generated code adding into the
array cotangents it alone holds, `acc in place`; rule backs computing into buffers only they hold, `reuse buffers`;
dropping the joins nothing reads, `dead joins`; computing literal arithmetic at transform time, `fold literals`; no
`is_native` guard on the tuples the lowering unpacks, `known containers`; array items read and stored in loops without
the rules, `item paths`; operations on real arrays with their derivative inlined, `array paths`), and `nullness`, `speculate` and `accumulate`
do change the generated code (`acc in place` and `reuse buffers` change no code: tests/adjoints/test_handover.py and
tests/ast_adjoint/test_accumulate.py show that they write in place; the last three's code changes are checked in
tests/adjoints/nesting/). Nested code, which an outer level transforms again, is written small (`nested_size`): its
derivatives agree to the last bits at the end of this file."""
import copy
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import gradient, optimizations, pullback, show_adjoint
from zygotepy.testing import check_grads

sys.path.insert(0, str(Path(__file__).parent.parent))
from feature_helpers import cube, shifted_sin
from test_features import FEATURES
from test_specialize import pow_loop

SWITCHES = {"nullness": "nullness", "speculate": "inline", "accumulate": "accumulate", "acc in place": "acc_in_place",
            "reuse buffers": "reuse_buffers", "dead joins": "dead_joins", "fold literals": "fold_literals",
            "known containers": "known_containers", "item paths": "item_paths", "array paths": "array_paths",
            "scalar paths": "scalar_paths", "loop copies": "loop_copies", "direct rules": "direct_rules",
            "all": None}


def _with(switch, enabled, run):
    """`run()` with one optimisation (or, for "all", every one) switched to `enabled`; compiled code is rebuilt."""
    flags = {SWITCHES[switch]: enabled} if SWITCHES[switch] else {}
    with optimizations(None if flags else enabled, **flags):
        return run()


def _gradients(fn, args, switch, enabled):
    def run():
        y, back = pullback(fn, *copy.deepcopy(args))
        return back(_ones_like(y))
    return _with(switch, enabled, run)


def _ones_like(y):
    """A fixed cotangent with the output's structure."""
    if isinstance(y, (tuple, list)):
        return type(y)(_ones_like(v) for v in y)
    if isinstance(y, dict):
        return {k: _ones_like(v) for k, v in y.items()}
    return np.ones_like(y) if isinstance(y, np.ndarray) else 1.0


def _close(a, b):
    """Same structure and Nones, numbers equal to 1e-13 relative."""
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if hasattr(a, "items"):  # a StructGrad
        return _close(dict(a.items()), dict(b.items()))
    if a is None or b is None:
        return a is b
    return bool(np.allclose(a, b, rtol=1e-13, atol=0, equal_nan=True))


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    if hasattr(a, "items"):  # a StructGrad
        return _same(dict(a.items()), dict(b.items()))
    return a == b or bool(np.isnan(a) and np.isnan(b))


@pytest.mark.parametrize("switch", sorted(SWITCHES))
@pytest.mark.parametrize("fn, args", [row[1:] for row in FEATURES], ids=[row[0] for row in FEATURES])
def test_same_gradients_with_and_without(fn, args, switch):
    on, off = _gradients(fn, args, switch, True), _gradients(fn, args, switch, False)
    # nullness and adding in place change no arithmetic: bit-identical; inlined code may add in another order
    assert _same(on, off) if switch not in ("speculate", "all") else _close(on, off)


@pytest.mark.optimizations
def test_nullness_removes_none_tests():
    on, off = show_adjoint(pow_loop, optimized=True), _with("nullness", False, lambda: show_adjoint(pow_loop, optimized=True))
    assert on.count("None") < off.count("None")
    assert on.count("is None else") < off.count("is None else")


def _cell(a, b):
    return a * math.sin(b) + b


def calls_helper(a, x, n):
    for _ in range(n):
        x = _cell(a, x)
    return x


@pytest.mark.optimizations
def test_speculate_inlines_small_callees():
    on, off = show_adjoint(calls_helper, optimized=True), _with("speculate", False, lambda: show_adjoint(calls_helper, optimized=True))
    assert "_cell_is_known" in on and "_sin(" in on
    assert "_cell_is_known" not in off


def test_a_redefined_helper_is_called_as_it_is_now():
    global _cell
    before = _cell
    assert gradient(calls_helper, 0.9, 0.5, 3) == check_grads(calls_helper, 0.9, 0.5, 3, dy=1.0)
    try:
        _cell = lambda a, b: a * b
        g = gradient(calls_helper, 0.9, 0.5, 3)
        assert g[0] == pytest.approx(3 * 0.9 ** 2 * 0.5) and g[1] == pytest.approx(0.9 ** 3)
    finally:
        _cell = before


def early_exit(a, x, n):
    total = 0.0
    for i in range(n):
        x = _cell(a, x)
        if x > 1.2:
            return x * i + total
        total = total + _cell(x, a)
        while total > 3.0:
            total = total / _cell(a, 1.0)
    return x + total


@pytest.mark.optimizations
def test_loops_with_inlined_helpers_are_versioned():
    text = show_adjoint(calls_helper, optimized=True)
    assert "_cell_is_known" in text and "stack_fast" in text  # the inlined loop copy is itself specialised


@pytest.mark.parametrize("args", [(0.9, 0.5, 6), (0.7, 0.1, 9), (1.3, 0.2, 4)])
def test_inlined_loops_with_early_exits(args):
    check_grads(early_exit, *args)
    on, off = _gradients(early_exit, args, "speculate", True), _gradients(early_exit, args, "speculate", False)
    assert on[2] is off[2] is None
    assert on[:2] == pytest.approx(off[:2], rel=1e-14)  # inlined code may add in another order: last-bit differences


def uses_imported(x):
    return cube(x) + shifted_sin(x)  # cube reads no globals; shifted_sin reads math and OFFSET (not ours)


@pytest.mark.optimizations
def test_imported_helpers_are_inlined_only_when_their_globals_mean_the_same():
    text = show_adjoint(uses_imported, optimized=True)
    assert "cube_is_known" in text and "shifted_sin_is_known" not in text
    check_grads(uses_imported, 0.4)


def _pair(u, v, a):
    return a * u - u * v, u * v - a * v


def two_stage(u, v, a, n):
    for _ in range(n):
        k1u, k1v = _pair(u, v, a)
        k2u, k2v = _pair(u + 0.1 * k1u, v + 0.1 * k1v, a)
        u, v = u + 0.05 * (k1u + k2u), v + 0.05 * (k1v + k2v)
    return u * v


@pytest.mark.optimizations
def test_tuples_returned_by_inlined_helpers_are_taken_apart_at_transform_time():
    text = show_adjoint(two_stage, optimized=True)
    assert "_pair_is_known" in text and "_unpack" not in text.split("else:")[0]
    check_grads(two_stage, 1.0, 0.8, 0.7, 5)
    on, off = _gradients(two_stage, (1.0, 0.8, 0.7, 5), "speculate", True), \
        _gradients(two_stage, (1.0, 0.8, 0.7, 5), "speculate", False)
    assert _close(on, off)


# --- nested code: written for an outer level to transform (the `nested_size` option), the same derivatives --------------

def _d(f):
    return lambda x: gradient(f, x)[0]


def _damped(x):
    r = x
    for _ in range(3):
        r = math.sin(r) * 0.5 + x * r
    return r


def _with_closure(x):
    scale = x * x
    g = lambda t: scale * t  # noqa: E731
    return g(x) + math.log(x) * x


@pytest.mark.parametrize("fn, x", [(lambda x: x ** 5, 1.3), (math.sin, 0.7), (_damped, 0.4), (_with_closure, 1.1),
                                   (lambda x: x * x * x if x > 1.0 else math.exp(x), 1.2)],
                         ids=["pow", "sin", "loop", "closure", "branch"])
def test_nested_code_written_for_an_outer_level_gives_the_same_derivatives(fn, x):
    # statics read as constants, no versioned loop copies, no inlined callees, `acc` calls, no guards an enclosing guard
    # proved: the same arithmetic, but a loop's or a helper's contributions may be added in another order (last bits)
    third = lambda: _d(_d(_d(fn)))(x)  # noqa: E731
    on = third()
    with optimizations(nested_size=False):
        off = third()
    assert on == pytest.approx(off, rel=1e-13)

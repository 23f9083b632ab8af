"""Random programs: hypothesis writes small Python functions (assignments, branches, for/while loops, break, swaps,
math calls) and every gradient must match central finite differences. This is how the transform's riskiest parts
(loop-carried values, copy coalescing, loop versioning, branch records) are checked beyond hand-picked examples."""
import itertools
import os
import re
import linecache
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zygotepy.testing import check_grads

VARS = ["a", "b", "c", "d"]
_counter = itertools.count()

unary = st.sampled_from(["math.sin({})", "math.cos({})", "math.tanh({})", "-{}", "({} * 0.5)", "math.exp(-abs({}))"])
binary = st.sampled_from(["{} + {}", "{} - {}", "{} * {}", "{} * 0.3 + {}", "math.atan2({}, 1.0 + {} * {})"])


@st.composite
def expression(draw):
    if draw(st.booleans()):
        return draw(unary).format(draw(st.sampled_from(VARS)))
    form = draw(binary)
    return form.format(*(draw(st.sampled_from(VARS)) for _ in range(form.count("{}"))))


@st.composite
def block(draw, depth, in_loop=False):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["assign", "assign", "swap", "if", "for", "while", "break", "continue", "return",
                                     "call", "comprehension"]
                                    if depth < 2 else ["assign", "swap", "call"]))
        target = draw(st.sampled_from(VARS))
        if kind == "assign":
            op = draw(st.sampled_from(["=", "+=", "*="]))
            expr = draw(expression())
            lines.append(f"{target} {op} {expr}" if op == "=" else f"{target} {op} 0.5 * math.tanh({expr})")
        elif kind == "swap":
            other = draw(st.sampled_from(VARS))
            lines.append(f"{target}, {other} = {other}, {target} * 0.9")
        elif kind == "if":
            test = f"{draw(st.sampled_from(VARS))} > {draw(st.sampled_from(VARS))}"
            lines.append(f"if {test}:")
            lines += ["    " + s for s in draw(block(depth + 1, in_loop))]
            lines.append("else:")
            lines += ["    " + s for s in draw(block(depth + 1, in_loop))]
        elif kind == "for":
            lines.append(f"for i{depth} in range({draw(st.integers(0, 4))}):")
            lines += ["    " + s for s in draw(block(depth + 1, True))]
        elif kind == "while":
            lines.append(f"k{depth} = 0")
            lines.append(f"while k{depth} < {draw(st.integers(0, 3))}:")
            lines.append(f"    k{depth} += 1")
            lines += ["    " + s for s in draw(block(depth + 1, True))]
        elif kind == "call":
            lines.append(f"{target} = helper({draw(st.sampled_from(VARS))}, {draw(st.sampled_from(VARS))})")
        elif kind == "comprehension":
            cut = draw(st.sampled_from(VARS))
            lines.append(f"{target} = sum((x * 0.5 for x in ({', '.join(VARS)}) if x > {cut}), 0.0 * a)")
        elif kind == "return":
            lines.append(f"if {draw(st.sampled_from(VARS))} > 1.2:")
            lines.append(f"    return {draw(expression())}")
        elif in_loop:
            lines.append(f"if {draw(st.sampled_from(VARS))} > 1.5:")
            lines.append("    break" if kind == "break" else "    continue")
    return lines or [f"{VARS[0]} = {draw(expression())}"]


def compile_function(lines):
    """Define the program under a fresh linecache filename, as a notebook cell would be."""
    body = "\n".join("    " + s for s in lines)
    src = (f"def helper(x, y):\n    return x * math.sin(y) + y\n\n"
           f"def program(a, b, c, d):\n{body}\n    return a + 2.0 * b - c * d\n")
    filename = f"<random program {next(_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"math": math}
    exec(compile(src, filename, "exec"), namespace)
    return namespace["program"], src


def _smooth_at(fn, args, h=1e-4):
    """Skip points where a branch or a break flips within the finite-difference step: there the one-sided slopes
    disagree (a jump or a kink) and the gradient is not defined. Checked along each axis and along random
    directions (a branch on `a > b` flips along a + b directions too)."""
    rng = np.random.default_rng(1)
    base = fn(*args)
    if not np.isfinite(base):  # an overflow (`a = a * a` repeated): no finite difference to compare with
        return False
    directions = list(np.eye(len(args))) + [rng.standard_normal(len(args)) for _ in range(8)]
    for v in directions:
        up = [x + h * dv for x, dv in zip(args, v, strict=True)]
        down = [x - h * dv for x, dv in zip(args, v, strict=True)]
        right, left = (fn(*up) - base) / h, (base - fn(*down)) / h
        if not np.isfinite(right - left) or abs(right - left) > 1e-3 * (1 + abs(right) + abs(left)):
            return False
    return True


@settings(max_examples=int(os.environ.get("ZYGOTEPY_RANDOM_PROGRAMS", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=block(0), seed=st.integers(0, 2**32 - 1))
def test_random_program_gradient_matches_finite_differences(lines, seed):
    fn, src = compile_function(lines)
    args = tuple(float(x) for x in np.random.default_rng(seed).uniform(-1.5, 1.5, len(VARS)))
    if min(abs(x - y) for x, y in itertools.combinations((0.0, *args), 2)) < 1e-3 or not _smooth_at(fn, args):
        return
    try:
        check_grads(fn, *args, rtol=1e-4, atol=1e-6)
    except AssertionError as e:
        pytest.fail(f"{e}\n{src}")


def as_array_program(lines):
    """The same program over NumPy vectors: `math.f` becomes `np.f`, and branch tests compare sums."""
    out = []
    for line in lines:
        line = line.replace("math.atan2", "np.arctan2").replace("math.", "np.").replace("abs(", "np.abs(")
        line = re.sub(r"if ([abcd]) > ([abcd]):", r"if \1.sum() > \2.sum():", line)
        line = re.sub(r"if ([abcd]) > ([\d.]+):", r"if \1.sum() > \2:", line)
        line = re.sub(r"if x > ([abcd])\)", r"if x.sum() > \1.sum())", line)
        line = re.sub(r"^(\s*)return (.*)$", r"\1return np.sum(\2)", line)
        out.append(line)
    return out


@settings(max_examples=int(os.environ.get("ZYGOTEPY_RANDOM_PROGRAMS", "150")) // 3, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(lines=block(0), seed=st.integers(0, 2**32 - 1))
def test_random_array_program_gradient_matches_finite_differences(lines, seed):
    body = "\n".join("    " + s for s in as_array_program(lines))
    src = (f"def helper(x, y):\n    return x * np.sin(y) + y\n\n"
           f"def program(a, b, c, d):\n{body}\n    return (a + 2.0 * b - c * d).sum()\n")
    filename = f"<random array program {next(_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(src, filename, "exec"), namespace)
    fn = namespace["program"]
    args = tuple(np.random.default_rng(seed).uniform(-1.5, 1.5, (len(VARS), 3)))
    flat = np.concatenate(args)
    if min(abs(x - y) for x, y in itertools.combinations((0.0, *flat), 2)) < 1e-3:
        return
    if not _smooth_at(lambda *xs: fn(*(np.array(xs[3 * k:3 * k + 3]) for k in range(len(VARS)))), tuple(flat)):
        return
    try:
        check_grads(fn, *args, rtol=1e-4, atol=1e-6)
    except AssertionError as e:
        pytest.fail(f"{e}\n{src}")


@pytest.mark.dual_route
@settings(max_examples=int(os.environ.get("ZYGOTEPY_RANDOM_PROGRAMS", "150")) // 5, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(lines=block(0), seed=st.integers(0, 2**32 - 1))
def test_random_program_second_derivatives_agree_by_both_nesting_routes(lines, seed):
    """Nested reverse mode by the twins (adjoints/nesting.py) and by forward-over-reverse (nesting_deep.py, taken here
    by lowering MAX_LEVELS to 1) are two independent computations of the same second derivatives."""
    from zygotepy import gradient
    import zygotepy.adjoints.nesting as nesting
    import zygotepy.adjoints.nesting_deep as nesting_deep
    fn, src = compile_function(lines)
    args = tuple(float(x) for x in np.random.default_rng(seed).uniform(-1.5, 1.5, len(VARS)))
    if min(abs(x - y) for x, y in itertools.combinations((0.0, *args), 2)) < 1e-3 or not _smooth_at(fn, args):
        return

    def slope(a, b):  # d program / d a
        return gradient(fn, a, b, *args[2:])[0] or 0.0
    by_twins = gradient(slope, *args[:2])
    limit, keys = nesting.MAX_LEVELS, nesting_deep._DUAL_KEYS
    nesting.MAX_LEVELS, nesting_deep._DUAL_KEYS = 1, set()
    try:
        by_duals = gradient(slope, *args[:2])
        assert nesting_deep._DUAL_KEYS, "the dual route was not taken"
    finally:
        nesting.MAX_LEVELS, nesting_deep._DUAL_KEYS = limit, keys
    for t, d in zip(by_twins, by_duals, strict=True):
        assert (t or 0.0) == pytest.approx(d or 0.0, rel=1e-8, abs=1e-10), src

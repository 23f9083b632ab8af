"""Random programs from the fuzzer's generator (zygotepy/fuzz/generate.py): every gradient must match central finite
differences, and second derivatives taken by the two nesting routes must agree. This is how the transform's riskiest
parts (loop-carried values, copy coalescing, loop versioning, branch records, updates in place) are checked beyond
hand-picked examples; `python -m zygotepy.fuzz` runs the same checks at scale."""
import copy
import os

import pytest

from zygotepy.fuzz import BUGS, check_program, generate
from zygotepy.fuzz.check import load, make_args

COUNT = int(os.environ.get("ZYGOTEPY_RANDOM_PROGRAMS", "150"))
SEED = 7


@pytest.mark.parametrize("flavour", ["scalar", "array"])
def test_random_program_gradient_matches_finite_differences(flavour):
    failures = []
    for i in range(COUNT // 3):
        prog = generate(SEED, i, flavour=flavour)
        prog.second = prog.foreign = False  # first derivatives only here (test_fuzz.py checks the rest)
        res = check_program(prog)
        if res["outcome"] in BUGS:
            failures.append(f"{res['outcome']} at {res['stage']}: {res['message']}\n{prog.src}")
    assert not failures, f"{len(failures)} failures; the first:\n{failures[0]}"


def _smooth_scalar_programs(count):
    """Scalar programs whose first derivative passes (so the point is smooth), with their arguments."""
    for i in range(count):
        prog = generate(SEED + 1, i, flavour="scalar")
        prog.second = prog.foreign = False
        if check_program(prog)["outcome"] == "pass":
            yield prog, load(prog.src, prog.filename), make_args(prog)


@pytest.mark.dual_route
def test_random_program_second_derivatives_agree_by_both_nesting_routes():
    """Nested reverse mode by the twins (adjoints/nesting/) and by forward-over-reverse (nesting/deep.py, taken here
    by lowering MAX_LEVELS to 1) are two independent computations of the same second derivatives."""
    from zygotepy import ZygoteError, gradient
    import zygotepy.adjoints.nesting.deep as nesting_deep
    import zygotepy.adjoints.nesting.entries as nesting
    compared = 0
    for prog, fn, args in _smooth_scalar_programs(max(10, COUNT // 5)):
        rest = args[2:]

        def slope(a, b):  # d program / d a
            return gradient(fn, a, b, *copy.deepcopy(rest))[0] or 0.0
        try:
            by_twins = gradient(slope, *args[:2])
        except ZygoteError:
            continue  # the twins refuse (an update in place): the dual route is what serves it
        limit, keys = nesting.MAX_LEVELS, nesting_deep._DUAL_KEYS
        nesting.MAX_LEVELS, nesting_deep._DUAL_KEYS = 1, set()
        try:
            by_duals = gradient(slope, *args[:2])
            assert nesting_deep._DUAL_KEYS, "the dual route was not taken"
        except ZygoteError as e:  # a clear refusal of forward-over-reverse (fuzz finding: a lambda made in a loop)
            assert prog.filename in str(e) + "".join(getattr(e, "__notes__", [])), e
            continue
        finally:
            nesting.MAX_LEVELS, nesting_deep._DUAL_KEYS = limit, keys
        for t, d in zip(by_twins, by_duals, strict=True):
            assert (t or 0.0) == pytest.approx(d or 0.0, rel=1e-8, abs=1e-10), prog.src
        compared += 1
    assert compared >= 5

"""The random-program fuzzer (zygotepy/fuzz): a CI-sized run in both optimisation modes must find no bug, and the
generator and the shrinker do what they say."""
import linecache
import math

import numpy as np
import pytest

import zygotepy
from zygotepy.fuzz import BUGS, CONSTRUCTS, check_program, generate, run, shrink
from zygotepy.fuzz.check import TIMEOUT_S, load, make_args
from zygotepy.fuzz.runner import format_report, restore_optimisations, set_optimisations
from zygotepy.options import OPTIONS

CI_COUNT = 120  # per mode; about 15-30 s each on one quiet core


@pytest.mark.dual_route  # nested gradients are checked as users get them: either route may serve one
@pytest.mark.parametrize("opt", [True, False], ids=["opt-on", "opt-off"])
def test_ci_sized_fuzz_run_finds_no_bug(opt):
    # a hang is an endless loop, not a slow machine: the long runs' 10 s per program, on a CI machine busy with other
    # jobs, timed out a program that takes under a second alone
    old, TIMEOUT_S[0] = TIMEOUT_S[0], 120
    try:
        report = run(seed=20240 + (0 if opt else 1), count=CI_COUNT, opt=opt, shrink_budget=10.0, max_shrink=1)
    finally:
        TIMEOUT_S[0] = old
    assert report["outcomes"]["invalid"] == 0, format_report(report)
    assert report["skipped_share"] < 0.01, format_report(report)
    assert report["bugs"] == 0, format_report(report)


@pytest.mark.optimizations
def test_the_no_opt_mode_switches_every_optimisation_off_and_back():
    names = OPTIONS.names()
    assert {"inline", "item_paths", "array_paths", "nullness", "fold_literals", "dead_joins", "accumulate",
            "acc_in_place", "reuse_buffers", "scalar_paths", "loop_copies", "direct_rules"} <= set(names)
    assert all(getattr(OPTIONS, n) is True for n in names)
    old = set_optimisations(False)
    try:
        assert all(getattr(OPTIONS, n) is False for n in names)
    finally:
        restore_optimisations(old)
    assert all(getattr(OPTIONS, n) is True for n in names)


def test_generation_is_deterministic_by_seed():
    assert [generate(5, i).src for i in range(20)] == [generate(5, i).src for i in range(20)]
    assert [generate(5, i).src for i in range(20)] != [generate(6, i).src for i in range(20)]
    p, q = generate(5, 3), generate(5, 3)
    assert p.tags == q.tags and p.flavour == q.flavour and repr(p.args) == repr(q.args)


def test_every_construct_appears_across_a_run():
    seen = set()
    for i in range(400):
        seen |= generate(11, i).tags
    assert set(CONSTRUCTS) - seen == set()


def test_generated_programs_compile_and_run_plainly_to_a_finite_real_number():
    import copy
    flavours = set()
    for i in range(150):
        prog = generate(12, i)
        flavours.add(prog.flavour)
        fn = load(prog.src, prog.filename)
        y = fn(*copy.deepcopy(make_args(prog)))
        assert isinstance(y, (float, np.floating)) and math.isfinite(y), prog.src
        if "[n]" in prog.src:  # the finite-difference twin rounds n's index uses
            load(prog.fd_src(), prog.filename + " fd")
    assert flavours == {"scalar", "array", "complex"}


def test_int_roles_and_mutation_flags_are_recorded():
    progs = [generate(13, i) for i in range(300)]
    kinds = {kind for p in progs for _, kind, _ in p.args}
    assert {"float", "array", "complex", "int_arith", "int_index", "int_data"} <= kinds
    assert any(p.mutates_arg for p in progs) and any(not p.mutates_any for p in progs)
    assert all(p.mutates_any for p in progs if p.mutates_arg)


def test_a_simple_program_passes_and_a_refused_one_is_a_clear_error():
    prog = generate(14, 0, flavour="scalar")
    good = type(prog)(14, 0, "scalar", "import math\n\ndef program(a, b, c):\n    return math.sin(a) * b + c\n",
                      [("a", "float", 0.3), ("b", "float", 0.7), ("c", "float", -0.2)])
    assert check_program(good)["outcome"] == "pass"
    refused = type(prog)(14, 1, "scalar", "def program(a, b, c):\n    try:\n        return a * b\n    finally:"
                                          "\n        c = 0.0\n", good.args)
    res = check_program(refused)
    assert res["outcome"] == "clear_error", res


def test_the_shrinker_keeps_a_fake_failure_and_removes_the_rest():
    """A fake checker: the program 'fails' whenever it still calls math.cos and has a loop."""
    prog = next(p for p in (generate(15, i, flavour="scalar") for i in range(200))
                if "math.cos(" in p.src and "for " in p.src and p.src.count("\n") > 25)

    def fake(p):
        fails = "math.cos(" in p.src and "for " in p.src
        return {"outcome": "wrong" if fails else "pass", "stage": "gradient", "message": ""}
    small, res, checks = shrink(prog, fake(prog), check=fake, budget_s=30)
    assert res["outcome"] == "wrong" and "math.cos(" in small.src and "for " in small.src
    assert small.src.count("\n") < prog.src.count("\n") // 2, small.src


def test_the_shrinker_cuts_down_a_deliberately_broken_gradient(monkeypatch):
    """`gradient` broken for programs that call math.cos: the shrunk program still calls it and still fails."""
    real = zygotepy.gradient

    def broken(f, *args):
        grads = real(f, *args)
        text = "".join(linecache.getlines(f.__code__.co_filename))
        if "math.cos(" in text and grads and isinstance(grads[0], float):
            return (grads[0] + 0.01, *grads[1:])
        return grads
    monkeypatch.setattr(zygotepy, "gradient", broken)
    for i in range(200):
        prog = generate(16, i, flavour="scalar")
        if "math.cos(" not in prog.src:
            continue
        res = check_program(prog)
        if res["outcome"] == "wrong":
            break
    else:
        pytest.fail("no program broken by the fake rule")
    small, res2, checks = shrink(prog, res, budget_s=40)
    assert res2["outcome"] == "wrong" and "math.cos(" in small.src
    assert len(small.src) < len(prog.src), small.src
    assert check_program(small)["outcome"] == "wrong"


def test_bug_outcomes_are_the_issue_s_list():
    assert set(BUGS) >= {"wrong", "structure", "crash", "changed_argument", "false_refusal"}


def test_a_name_a_helper_updates_through_a_keyword_is_not_taken_as_never_updated():
    """`h_fill(v, s, out=w)` updates `w`: the oracle took a refusal of updating `w` in place for a false one (seed 912,
    program 0: a documented refusal, an update in a loop of what a nested function captures)."""
    from zygotepy.fuzz.check import never_updated
    src = "def program(a, x):\n    for w in [x]:\n        h_fill(x, a, out=w)\n    return a\n"
    assert not never_updated(src, "w")
    assert never_updated("def program(a, x):\n    w = x * 2\n    return w\n", "w")


def _program(src, args):
    return type(generate(14, 0, flavour="scalar"))(14, 0, "scalar", "import math\n\n" + src, args)


def test_a_small_kink_at_the_point_is_skipped_and_a_curved_smooth_point_is_checked(monkeypatch):
    """A tie the generator's ints make (`sorted([...])[1]` with two equal entries), damped by the factors after it,
    is a kink too small for the one-sided slopes' 1e-3 test: the gap between them does not shrink with the step, so
    the point is skipped (the gradient, one side's slope, is not the differences' average). A smooth point of large
    curvature, where the gap does shrink, is still checked: a gradient off by 1e-4 there is wrong."""
    tie = _program("def program(a, n):\n    return 0.001 * sorted([math.tanh(0.2 * n), math.tanh(0.2), 0.9])[1] + a\n",
                   [("a", "float", 0.3), ("n", "int_arith", 1)])
    res = check_program(tie)
    assert res["outcome"] == "skipped" and "kink" in res["message"], res
    curved = _program("def program(a, b):\n    return math.exp(3.0 * a) * b\n", [("a", "float", 0.9), ("b", "float", 0.7)])
    assert check_program(curved)["outcome"] == "pass"
    real = zygotepy.gradient
    monkeypatch.setattr(zygotepy, "gradient", lambda f, *args: (real(f, *args)[0] * (1 + 1e-4), real(f, *args)[1]))
    assert check_program(curved)["outcome"] == "wrong"

"""The free-shift pass (ast_adjoint/optimize/shifts.py): where softmax, log-softmax or logsumexp cancel a subtracted
reduction, the reduction carries no gradient. Every row is checked against central finite differences and against the
gradient with the pass off; the rows where the result does depend on the shift must not be rewritten."""
import importlib
import types

import numpy as np
import pytest

from zygotepy import gradient, optimizations, show_adjoint
from zygotepy.options import OPTIONS
from zygotepy.testing import check_grads

RNG = np.random.default_rng(11)
X = RNG.standard_normal((5, 4))
Y = np.eye(4)[RNG.integers(0, 4, 5)]
V = RNG.standard_normal(7)


def log_softmax_loss(x, y):
    z = x - np.max(x, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * logp) / x.shape[0]


def softmax_by_methods(x, y):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return np.sum(p * y * np.arange(1.0, 5.0))


def logsumexp_whole(v, unused):
    m = np.max(v)
    return m + np.log(np.sum(np.exp(v - m)))


def mean_shift_along_axis_0(x, y):
    z = x - np.mean(x, axis=0, keepdims=True)
    s = np.log(np.sum(np.exp(z), axis=0, keepdims=True))
    return np.sum((z - s) * y)


def min_shift_squared_softmax(x, y):
    z = 2.0 * (x - np.min(x, axis=1, keepdims=True))
    e = np.exp(z) * np.exp(z)
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * y)


def softmax_in_a_loop(x, y):
    total = 0.0
    for k in range(x.shape[0]):
        row = x[k]
        m = row.max()
        p = np.exp(row - m) / np.sum(np.exp(row - m))
        total = total + np.sum(p * y[k])
    return total


def softmax_in_a_branch(x, y):
    if x.shape[0] > 2:
        z = x - x.max(axis=1, keepdims=True)
        out = np.sum(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True) * y)
    else:
        out = np.sum(x)
    return out


PROVEN = [log_softmax_loss, softmax_by_methods, logsumexp_whole, mean_shift_along_axis_0, min_shift_squared_softmax,
          softmax_in_a_loop, softmax_in_a_branch]


# --- the result depends on the shift: the pass must leave these alone ---------------------------------------------

def sum_along_another_axis(x, y):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z), axis=0, keepdims=True)))


def shift_not_added_back(v, unused):
    m = np.max(v)
    return np.log(np.sum(np.exp(v - m)))


def centred_square(x, y):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z * z * y)


def shift_used_again(x, y):
    m = np.max(x, axis=1, keepdims=True)
    z = x - m
    return np.sum(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))) + np.sum(m * m)


def sum_of_shifted(x, y):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(np.exp(np.sum(z, axis=1, keepdims=True)))


def another_operand(x, y):
    z = y - np.max(x, axis=1, keepdims=True)
    return np.sum(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)))


def weighted_before_the_sum(x, y):
    z = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(z) * y
    return np.sum(np.log(np.sum(e, axis=1, keepdims=True)) - z)


def without_keepdims(x, y):
    m = np.max(x, axis=1)
    z = x - m[:, None]
    return np.sum((z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))) * y)


NOT_PROVEN = [sum_along_another_axis, shift_not_added_back, centred_square, shift_used_again, sum_of_shifted,
              another_operand, weighted_before_the_sum, without_keepdims]


def _args(f):
    return (V + 0.0, None) if f in (logsumexp_whole, shift_not_added_back) else (X + 0.0, Y)


@pytest.mark.parametrize("f", PROVEN + NOT_PROVEN, ids=lambda f: f.__name__)
def test_gradient_against_finite_differences(f):
    x, y = _args(f)
    check_grads(lambda x: f(x, y), x)


@pytest.mark.parametrize("f", PROVEN + NOT_PROVEN, ids=lambda f: f.__name__)
def test_same_gradient_with_the_pass_off(f):
    x, y = _args(f)
    on = gradient(f, x, y)[0]
    with optimizations(free_shifts=False):
        off = gradient(f, x, y)[0]
    np.testing.assert_allclose(on, off, rtol=1e-12, atol=1e-14)


@pytest.mark.optimizations
@pytest.mark.parametrize("f", PROVEN, ids=lambda f: f.__name__)
def test_the_proven_shifts_are_rewritten(f):
    assert "shift_free" in show_adjoint(f, optimized=True)
    assert "shift_free" not in show_adjoint(f)  # (the plain form)
    with optimizations(free_shifts=False):
        assert "shift_free" not in show_adjoint(f, optimized=True)


@pytest.mark.optimizations
@pytest.mark.parametrize("f", NOT_PROVEN, ids=lambda f: f.__name__)
def test_the_others_are_not(f):
    assert "shift_free" not in show_adjoint(f, optimized=True)


def _arms(text, flag_suffix="shift_free"):
    """The then and else arms (as text) of the first `if <...shift_free>:` in the backward of `text`."""
    lines = text[text.index("_back(_tape"):].splitlines()
    k = next(i for i, line in enumerate(lines) if line.strip().startswith("if ") and line.rstrip().endswith(
        flag_suffix + ":"))
    indent = len(lines[k]) - len(lines[k].lstrip())
    arms, current = [], []
    for line in lines[k + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            arms.append("\n".join(current))
            current = []
            if not line.strip().startswith("else:"):
                break
            continue
        current.append(line)
    return arms


@pytest.mark.optimizations
def test_the_shift_is_not_differentiated():
    """In the guarded arm the max is a constant: its backward (the ties' shares) does not run, nor is its cotangent
    summed at its use; the general arm keeps both."""
    fast, general = _arms(show_adjoint(log_softmax_loss, optimized=True))
    assert "extremum_share" not in fast and "_unb(dz" in fast
    assert "extremum_share" in general


def test_another_namespace_with_the_same_code_takes_the_general_arm():
    """One transform serves every function of a code object: a namespace whose `exp` is not NumPy's (here `square`,
    under which the result depends on the shift) fails the guard, and its gradient is that of what it computes."""
    fake = types.SimpleNamespace(max=np.max, sum=np.sum, log=np.log, exp=np.square)
    f = types.FunctionType(log_softmax_loss.__code__, {**log_softmax_loss.__globals__, "np": fake})
    gradient(log_softmax_loss, X, Y)  # (the transform made for the NumPy version first)
    x = X + 0.0
    check_grads(lambda x: f(x, Y), x)


def test_float32():
    x = X.astype(np.float32)
    g = gradient(log_softmax_loss, x, Y)[0]
    with optimizations(False):
        want = gradient(log_softmax_loss, x, Y)[0]
    assert g.dtype == want.dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)


def test_ties():
    """Ties in the max: the function is smooth there (it does not depend on the max), and so is its gradient."""
    x = X + 0.0
    x[0, :2] = x[0].max() + 1.0
    x[3, 1:] = x[3].max() + 0.5
    check_grads(lambda x: log_softmax_loss(x, Y), x)
    with optimizations(free_shifts=False):
        want = gradient(log_softmax_loss, x, Y)[0]
    np.testing.assert_allclose(gradient(log_softmax_loss, x, Y)[0], want, rtol=1e-12, atol=1e-15)


# --- random programs over the pass's algebra: shifted and scaled values, combined at random -------------------------

def _random_program(rng):
    """Source of `def program(x, y)`: a shift of `x` (a reduction along a random axis, or of the whole array), then a
    few random steps on the values made so far (many of which break the invariance the pass proves), and a loss."""
    pick = lambda seq: seq[int(rng.integers(len(seq)))]  # noqa: E731
    axis = pick([0, 1, -1, -2, None])
    reduce_ = pick(["np.max", "np.min", "np.mean", "method"])
    spec = "" if axis is None else f"axis={axis}, keepdims=True"
    if reduce_ == "method":
        lines = [f"m = x.{pick(['max', 'min'])}({spec})"]
    else:
        lines = [f"m = {reduce_}(x{', ' + spec if spec else ''})"]
    first = pick(["x - m", "0.5 * (x - m)", "(x - m) / 2.0", "x + 0.3 - m", "-(m - x)", "m - x"])
    lines.append(f"v1 = {first}")
    values = {"v1": "A"}  # "A": may be exponentiated; "M": positive, may take a log; "X": anything else
    for k in range(2, int(rng.integers(3, 8))):
        a = pick(sorted(values))
        kind = values[a]
        other = pick(sorted(values))
        red_axis = pick([axis, axis, 0, 1, -1]) if axis is not None else pick([None, 0, 1])
        red = "" if red_axis is None else f", axis={red_axis}, keepdims=True"
        if kind == "A":
            step, made = pick([(f"np.exp({a})", "M"), (f"0.5 * {a}", "A"), (f"{a} - {other}", "X"),
                               (f"np.mean({a}{red})", "A"), (f"np.sum({a}{red})", "X"), (f"{a} + x", "X"),
                               (f"np.max({a}{red})", "A"), (f"{a} - np.log(np.sum(np.exp({a}){red}))", "X"),
                               (f"np.exp({a}) / np.sum(np.exp({a}){red})", "X")])
            if step.startswith(f"{a} - ") and values[other] == "A":
                made = "A"
        elif kind == "M":
            step, made = pick([(f"np.log({a})", "A"), (f"np.sum({a}{red})", "M"), (f"{a} * 2.0", "M"),
                               (f"{a} * x", "X"), (f"np.mean({a}{red})", "M"), (f"{a} / np.sum({a}{red})", "X")])
            if values[other] == "M":
                step, made = pick([(step, made), (f"{a} / {other}", "M"), (f"{a} * {other}", "M")])
        else:
            step, made = pick([(f"np.tanh({a})", "X"), (f"{a} * {a}", "X"), (f"np.sum({a}{red})", "X")])
        lines.append(f"v{k} = {step}")
        values[f"v{k}"] = made
    outs = [pick(sorted(values)) for _ in range(int(rng.integers(1, 3)))]
    loss = " + ".join(f"np.sum({v} * y)" if v != "m" else "np.sum(m)" for v in outs)
    if rng.random() < 0.2:
        loss += " + 0.5 * np.sum(m)"
    return "def program(x, y):\n" + "".join(f"    {line}\n" for line in lines) + f"    return {loss}\n"


def _central_gradient(f, x, y, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        g[i] = (f(up, y) - f(down, y)) / (2 * h)
    return g


def test_random_programs(tmp_path, monkeypatch):
    """200 random programs: each gradient matches central differences and the gradient with the pass off; the pass
    rewrote a fair share of them (so the table above is not all it ever sees)."""
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((4, 5))
    x[1, 2] = x[1].max() + 0.7  # (no ties: the max is smooth at x, so finite differences are right)
    y = rng.standard_normal((4, 5))
    monkeypatch.syspath_prepend(str(tmp_path))
    rewritten = 0
    for k in range(200):
        src = _random_program(rng)
        (tmp_path / f"shift_program_{k}.py").write_text("import numpy as np\n\n" + src)
        program = importlib.import_module(f"shift_program_{k}").program
        with np.errstate(all="ignore"):
            try:
                value = program(x, y)
            except ValueError:  # (an axis the value no longer has: a program the generator should not have made)
                continue
            if not np.isfinite(value):
                continue
            want = _central_gradient(program, x, y)
        got = gradient(program, x, y)[0]
        with optimizations(free_shifts=False):
            plain = gradient(program, x, y)[0]
        scale = max(1.0, float(np.max(np.abs(want))))
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5 * scale), src
        assert np.allclose(got, plain, rtol=1e-10, atol=1e-12 * scale), src
        rewritten += "shift_free" in show_adjoint(program, optimized=True)
    assert rewritten >= 10 or not OPTIONS.free_shifts  # (ZYGOTEPY_OPTIMIZATIONS=off: the gradients still hold)

"""Guards on a global callee that must hold when it runs (ast_adjoint/optimize/rebinding.py): an inlined helper whose
`__code__` was replaced (IPython's autoreload), an inlined helper from another module whose globals were rebound there,
and a callee switched inside a loop by a call in its body (a schedule), which a guard hoisted out of the loop missed.
Each program is compiled once with the state it starts in, then the state changes and its value and derivatives are
checked against plain Python and central differences, under every optimisation on and every one off."""
import importlib
import os
import re
import sys
import textwrap

import numpy as np
import pytest

from zygotepy import derivative, hessian, jacobian, show_adjoint, value_and_gradient
from zygotepy.options import OPTIONS

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import central  # noqa: E402

HOME = """
import numpy as np
scale = 1.5
def helper(t):
    return scale * t * t
def uses_builtin(t):
    return abs(t) * np.sin(t)
"""

# name: (the program's module, what changes after it was compiled, the point)
CASES = {
    "code swapped": ("""
def g(t):
    return t * t
def f(x):
    return g(x) + 1.0
def change():
    def g_new(t):
        return t * t * t
    g.__code__ = g_new.__code__
""", 0.9),
    "code swapped, inlined in a loop": ("""
import math
def g(a, t):
    return a * math.sin(t) + t
def f(x):
    y = x
    for i in range(3):
        y = 0.5 * g(x, y) + x
    return y
def change():
    def g_new(a, t):
        return a * math.cos(t) * t
    g.__code__ = g_new.__code__
""", 0.7),
    "code swapped, inlined two deep": ("""
def inner(t):
    return t * t
def outer(t):
    return inner(t) + t
def f(x):
    return outer(x) * x
def change():
    def inner_new(t):
        return t * t * t
    inner.__code__ = inner_new.__code__
""", 0.8),
    "another module's global rebound there": ("""
import {home}
from {home} import helper, scale
def f(x):
    return helper(x) * x
def change():
    {home}.scale = 4.0
""", 0.7),
    "another module's global rebound in the caller's": ("""
from {home} import helper, scale
def f(x):
    return helper(x) * x
def change():
    global scale
    scale = 4.0
""", 0.7),
    "another module's global, in a loop": ("""
import {home}
from {home} import helper, scale
def f(x):
    s = x
    for i in range(3):
        s = helper(s) * 0.5 + x
    return s
def change():
    {home}.scale = 0.25
""", 0.6),
    "another module's helper reading a builtin": ("""
import numpy as np
from {home} import uses_builtin
def f(x):
    return uses_builtin(x) * x
def change():
    pass
""", 0.6),
}

SWITCHES = {
    "class attribute, inlined callee": ("""
def sq(t):
    return t * t
def cube(t):
    return t * t * t
class Cfg:
    act = sq
def schedule(i):
    if i == 1:
        Cfg.act = cube
def f(x):
    s = x
    for i in range(3):
        s = Cfg.act(s) * 0.5 + x
        schedule(i)
    return s
def reset():
    Cfg.act = sq
""", 0.9),
    "module attribute, direct rule": ("""
import numpy as np
import {home} as config
def schedule(i):
    if i == 0:
        config.act = np.cos
def f(x):
    s = x
    for i in range(2):
        s = config.act(s) + x
        schedule(i)
    return s
def reset():
    config.act = np.sin
""", 0.3),
    "module attribute, scalar path": ("""
import math
import {home} as config
def schedule(i):
    if i == 1:
        config.act = math.cos
def f(x):
    s = x
    for i in range(4):
        s = config.act(s) * x
        schedule(i)
    return s
def reset():
    config.act = math.sin
""", 0.4),
    "stored in the loop's own body": ("""
import numpy as np
class Cfg:
    act = np.sin
def f(x):
    s = x
    for i in range(3):
        s = Cfg.act(s) + x
        if i == 0:
            Cfg.act = np.tanh
    return s
def reset():
    Cfg.act = np.sin
""", 0.5),
    "array operand rebound by a schedule": ("""
import numpy as np
import {home} as config
def schedule(i):
    if i == 0:
        config.act = np.exp
def f(x):
    s = x
    for i in range(2):
        s = np.sum(config.act(x) * s) * x
        schedule(i)
    return np.sum(s)
def reset():
    config.act = np.tanh
""", np.array([0.3, -0.2])),
}


def _module(tmp_path, monkeypatch, name, source):
    """`source` written as the module `name` (`{home}` naming a fresh copy of HOME) and imported."""
    monkeypatch.syspath_prepend(str(tmp_path))
    home = name + "_home"
    (tmp_path / f"{home}.py").write_text(HOME)
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source).format(home=home))
    return importlib.import_module(name)


def _name(case, mode):
    return "stale_" + "".join(c if c.isalnum() else "_" for c in case) + ("_on" if mode else "_off")


def _agree(f, x):
    """zygotepy's value and gradient of f at x equal plain Python's and central differences."""
    value, (grad,) = value_and_gradient(f, x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central(f, (x,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", CASES)
def test_inlined_callee_changed_after_compiling(case, mode, tmp_path, monkeypatch):
    source, x = CASES[case]
    m = _module(tmp_path, monkeypatch, _name(case, mode), source)
    value_and_gradient(m.f, x)
    hessian(m.f, x)
    m.change()
    _agree(m.f, x)
    h = 1e-5
    want = (central(m.f, (x + h,), 0) - central(m.f, (x - h,), 0)) / (2 * h)
    np.testing.assert_allclose(hessian(m.f, x), want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(derivative(m.f, x), central(m.f, (x,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacobian(m.f, x), central(m.f, (x,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", SWITCHES)
def test_callee_switched_inside_its_loop(case, mode, tmp_path, monkeypatch):
    source, x = SWITCHES[case]
    m = _module(tmp_path, monkeypatch, _name(case, mode), source)

    def run(v):
        m.reset()
        return m.f(v.copy() if isinstance(v, np.ndarray) else v)

    m.reset()
    value, (grad,) = value_and_gradient(m.f, x)  # (the first call: the switch happens inside it)
    np.testing.assert_allclose(value, run(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central(run, (x,), 0), rtol=1e-6, atol=1e-8)
    m.reset()
    value, (grad,) = value_and_gradient(m.f, x)  # (and once compiled)
    np.testing.assert_allclose(grad, central(run, (x,), 0), rtol=1e-6, atol=1e-8)


def _loop_text(source, tmp_path, monkeypatch, name):
    m = _module(tmp_path, monkeypatch, name, source)
    text = show_adjoint(m.f, optimized=True).split("def f_backward")[0]
    before, after = re.split(r"\n *for \w+ in ", text, maxsplit=1)
    return before, after.split("\n    else:")[0]  # (before the first loop, and that loop: the inlined copy's if any)


@pytest.mark.skipif(not OPTIONS.inline, reason="the optimisations are off (ZYGOTEPY_OPTIMIZATIONS=off)")
def test_guards_stay_hoisted_out_of_loops_that_cannot_rebind(tmp_path, monkeypatch):
    """A loop of arithmetic and NumPy calls tests its callees once, before it (and keeps its inlined copy); one that
    calls a function that is not inlined tests them in every iteration (the copy that calls `cell`, run where it
    was rebound, does too)."""
    steady = """
    import numpy as np
    def cell(a, t):
        return a * np.tanh(t) + t
    def f(x):
        s = x
        for i in range(3):
            s = 0.5 * cell(x, s) + np.sin(s)
        return s
    """
    before, inside = _loop_text(steady, tmp_path, monkeypatch, "hoist_steady")
    assert "cell_is_known = cell is _cell and cell.__code__ is" in before
    assert "np_sin_is_known = np.sin is" in before and "np.sin is" not in inside
    rebinding = steady.replace("+ np.sin(s)", "+ np.sin(s)\n            log(i)").replace(
        "def f(x):", "def log(i, *more):\n        return i\n    def f(x):")  # (not inlined: *more)
    before, inside = _loop_text(rebinding, tmp_path, monkeypatch, "hoist_rebinding")
    assert "cell is _cell" in inside and "np.sin is" in inside and "np.sin is" not in before


def test_autoreload_updates_inlined_helpers(mode, tmp_path, monkeypatch):
    """IPython's `%autoreload 2` replaces the `__code__` of functions imported from an edited module: a compiled
    caller that inlined them runs their new code."""
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    monkeypatch.syspath_prepend(str(tmp_path))
    name = _name("autoreload", mode)
    path = tmp_path / f"{name}.py"

    def write(text, stamp):
        path.write_text(text)
        os.utime(path, (stamp, stamp))

    write("def act(t):\n    return t * t\ndef layer(t):\n    return act(t) + 1.0\n", 1_000_000)
    shell = shell_module.InteractiveShell.instance()
    shell.run_cell(f"%load_ext autoreload\n%autoreload 2\nfrom {name} import act, layer\n"
                   f"def loss(x):\n    return act(x) * x + layer(x)\n", store_history=False)
    loss = shell.user_ns["loss"]
    value_and_gradient(loss, 0.7)
    write("import numpy as np\ndef act(t):\n    return np.sin(t) * 3.0\ndef layer(t):\n    return act(t) * t\n",
          2_000_000)
    shell.run_cell("pass", store_history=False)  # (autoreload reloads before a cell runs)
    _agree(loss, 0.7)

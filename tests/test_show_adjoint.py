"""Golden-text tests for `show_adjoint`, and determinism of the emitted source.

Each function's source is compiled under a fixed pseudo-filename registered in `linecache` (as IPython does for a
cell), so the generated text does not depend on where this test file's lines fall. The expected text lives in
`tests/golden/<name>.txt`; run with `ZYGOTEPY_UPDATE_GOLDEN=1` to rewrite the files from the current output (then
review the diff).
"""
import difflib
import json
import linecache
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, show_adjoint

GOLDEN = pathlib.Path(__file__).parent / "golden"
UPDATE = os.environ.get("ZYGOTEPY_UPDATE_GOLDEN") == "1"

SOURCES = {
    "pow": """
        def pow(x, n):
            r = 1
            while n > 0:
                n -= 1
                r *= x
            return r
    """,
    "if_else": """
        def branch(x, y):
            if x > y:
                z = x * y
            else:
                z = x - 2.0 * y
            return z * x
    """,
    "np_sin": """
        def waves(a, w):
            s = np.sin(w * a)
            return np.sum(s * a)
    """,
}


def _define(source, filename, namespace=None):
    """exec `source` under `filename` with its text in linecache; returns the namespace."""
    text = textwrap.dedent(source).lstrip("\n")
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {"np": np} if namespace is None else namespace
    exec(compile(text, filename, "exec"), ns)
    return ns


def _function(name, filename=None):
    source = SOURCES[name]
    ns = _define(source, filename or f"<zygotepy-golden:{name}>")
    fname = textwrap.dedent(source).lstrip("\n").split("(")[0].split()[-1]
    return ns[fname]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ast.unparse on 3.10 parenthesises tuple targets")
@pytest.mark.parametrize("optimized", [False, pytest.param(True, marks=pytest.mark.optimizations)],
                         ids=["plain", "optimized"])
@pytest.mark.parametrize("name", list(SOURCES))
def test_golden(name, optimized):
    """The plain form (`tests/golden/<name>.txt`) and the code that runs (`<name>.optimized.txt`)."""
    text = str(show_adjoint(_function(name), optimized=optimized))
    path = GOLDEN / (f"{name}.optimized.txt" if optimized else f"{name}.txt")
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run with ZYGOTEPY_UPDATE_GOLDEN=1 to create it, then review it"
    assert text == path.read_text(), f"show_adjoint output for {name} changed; if intended, ZYGOTEPY_UPDATE_GOLDEN=1"


@pytest.mark.optimizations
def test_the_plain_form_of_the_seed_pow_is_one_pair_per_operation():
    """What the adjoint pass emits with every optimisation off: `J` and a pullback per differentiated operation, under
    25 lines for the seed's pow (its comments name the user's lines), and it runs."""
    text = str(show_adjoint(_function("pow")))
    assert len(text.strip().splitlines()) < 30
    code = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) < 25, text
    assert "_J(" in text and "_back(" in text and "_SC" not in text and "stack_fast" not in text
    optimized = str(show_adjoint(_function("pow"), optimized=True))
    assert "_SC" in optimized and "stack_fast" in optimized  # the scalar paths and the loop copy
    assert gradient(_function("pow"), 5, 3) == (75, None)


@pytest.mark.parametrize("name", list(SOURCES))
def test_show_adjoint_is_valid_python_with_user_names(name):
    fn = _function(name)
    text = show_adjoint(fn)
    compile(text, "<show_adjoint>", "exec")
    assert "def " in text
    for arg in fn.__code__.co_varnames[:fn.__code__.co_argcount]:
        assert arg in text


def test_golden_functions_differentiate():
    pow_ = _function("pow")
    assert gradient(pow_, 5, 3) == (75, None)
    branch = _function("if_else")
    assert gradient(branch, 3.0, 2.0) == (12.0, 9.0)  # z*x = x^2 y: (2xy, x^2)
    assert gradient(branch, 1.0, 2.0) == (-2.0, -2.0)  # (x - 2y) x: (2x - 2y, -2x)
    waves = _function("np_sin")
    a = np.array([0.5, -1.0])
    ga, gw = gradient(waves, a, 2.0)
    # d/da sum(sin(w a) a) = w cos(w a) a + sin(w a); d/dw = sum(a^2 cos(w a))
    np.testing.assert_allclose(ga, 2.0 * np.cos(2.0 * a) * a + np.sin(2.0 * a))
    assert gw == pytest.approx(np.sum(a * a * np.cos(2.0 * a)))


@pytest.mark.parametrize("name", list(SOURCES))
def test_deterministic_within_a_process(name):
    """The same source compiled twice, under other filenames and another function name, gives the same text."""
    source = textwrap.dedent(SOURCES[name]).lstrip("\n")
    fname = source.split("(")[0].split()[-1]
    renamed = source.replace(f"def {fname}(", "def renamed_fn(", 1)
    a = _define(source, f"<zygotepy-det-a:{name}>")[fname]
    b = _define(renamed, f"<zygotepy-det-b:{name}>")["renamed_fn"]
    ta = str(show_adjoint(a))
    tb = str(show_adjoint(b))
    assert "renamed_fn" in tb
    assert ta == tb.replace("renamed_fn", fname)


_SUBPROCESS = r"""
import json, linecache, sys, textwrap
import numpy as np
from zygotepy import show_adjoint
sources = json.loads(sys.argv[1])
texts = {}
for name, source in sources.items():
    text = textwrap.dedent(source).lstrip("\n")
    filename = f"<zygotepy-golden:{name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {"np": np}
    exec(compile(text, filename, "exec"), ns)
    fname = text.split("(")[0].split()[-1]
    texts[name] = str(show_adjoint(ns[fname]))
print(json.dumps(texts))
"""


def _diff(a, b):
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True)))


def test_deterministic_across_hash_seeds():
    """Set/dict ordering must not leak into the emitted text: two processes with different hash seeds agree, and
    agree with this process."""
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _SUBPROCESS, json.dumps(SOURCES)], capture_output=True,
                              text=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr
        outputs.append(json.loads(proc.stdout))
    for name in SOURCES:
        here = str(show_adjoint(_function(name)))
        assert outputs[0][name] == outputs[1][name], _diff(outputs[0][name], outputs[1][name])
        assert here == outputs[0][name], _diff(here, outputs[0][name])


def test_show_adjoint_echoes_as_python_and_renders_as_html_in_a_notebook():
    def f(x):
        return x * x
    shown = show_adjoint(f)
    assert isinstance(shown, str) and "def f_forward(x):" in shown
    assert repr(shown) == str(shown)  # echoed at a prompt: the code itself, not an escaped one-line string
    html = shown._repr_html_()
    assert html.lstrip().startswith(("<div", "<pre")) and "f_forward" in html
    pytest.importorskip("pygments")
    assert "style=" in html  # highlighted inline, as a notebook shows it without a stylesheet


def test_show_adjoint_in_ipython_prints_the_code():
    IPython = pytest.importorskip("IPython")
    from IPython.lib.pretty import pretty

    def f(x):
        return x * 2.0
    assert pretty(show_adjoint(f)) == str(show_adjoint(f))
    assert IPython is not None


def test_show_adjoint_of_what_has_no_python_code_says_so():
    """A builtin, a ufunc or a class raised AttributeError ('... has no attribute __code__'); a partial shows its
    function's code."""
    import functools
    import math

    class M:
        def __init__(self, w):
            self.w = w

    for f in (math.sin, np.sin):
        with pytest.raises(ZygoteError, match="has no Python code: zygotepy differentiates it by its rule"):
            show_adjoint(f)
    with pytest.raises(ZygoteError, match=r"show_adjoint\(M.__init__\)"):
        show_adjoint(M)

    def scaled(x, k):
        return x * k
    assert "def scaled_forward" in str(show_adjoint(functools.partial(scaled, k=2.0)))

"""Derived code cached across a change the cache must see: a global called as a constant (non-differentiable when the
function was first derived) rebound to a differentiable function, one code object run in two namespaces, and a
module's file edited on disk without a reload (compile.py `artefact`, derived.py `_adjoint_of`, assumptions.py,
source.py `_read_as_run`)."""
import importlib.util
import linecache
import os
import sys
import textwrap
import types

import numpy as np
import pytest

from plain_checks import central
from zygotepy import gradient, hessian, register_source
from zygotepy.errors import SourceUnavailable

_COUNT = [0]


def _module(tmp_path, text, name=None):
    """Import `text` as a module of its own from a file under tmp_path."""
    _COUNT[0] += 1
    name = name or f"zygote_staleness_{_COUNT[0]}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _agrees(f, x):
    got = gradient(f, x)[0]
    np.testing.assert_allclose(got, central(f, (x,), 0), rtol=1e-6, atol=1e-6)


_SOFTMAX = "def softw(x):\n    e = np.exp(x)\n    return e / np.sum(e)\n"

REBOUND = [  # (body of f, the global, its value first, its value after, x)
    ("return act(x) * x", "act", "np.floor", "np.tanh", 1.3),
    ("return act(x) * x", "act", "np.tanh", "np.floor", 1.3),
    ("return act(x) * x", "act", "np.sin", "np.cos", 1.3),
    ("return conv(x) * x + x", "conv", "int", "float", 1.3),
    ("return np.sum((x + perturb(x)) ** 2)", "perturb", "np.zeros_like", "np.sin", np.array([0.3, 0.7])),
    ("return np.sum(rnd(x) * x)", "rnd", "np.ndarray.round", "np.ndarray.cumsum", np.array([0.3, 1.7])),
    ("return np.sum(pick(x) * x)", "pick", "np.argmax", "softw", np.array([0.3, 1.7])),
    ("s = x\n    for i in range(3):\n        s = s + 0.1 * sgn(s)\n    return np.sum(s * s)", "sgn", "np.sign",
     "np.tanh", np.array([0.3, -0.7])),
]


@pytest.mark.parametrize("body, name, first, then, x", REBOUND, ids=[f"{r[2]}->{r[3]}" for r in REBOUND])
def test_rebound_global_callee(tmp_path, mode, body, name, first, then, x):
    mod = _module(tmp_path, f"import numpy as np\n{_SOFTMAX}{name} = {first}\ndef f(x):\n    {body}\n")
    _agrees(mod.f, x)
    setattr(mod, name, eval(then, vars(mod)))  # (a notebook re-running the cell that set it)
    _agrees(mod.f, x)


def test_rebound_class_and_module_attributes(tmp_path, mode):
    cfg = _module(tmp_path, "import numpy as np\nact = np.floor\n")
    mod = _module(tmp_path, f"""
        import numpy as np
        import {cfg.__name__} as cfg
        class Cfg:
            act = np.floor
        def f(x):
            return cfg.act(x) * x + Cfg.act(x) * x
        """)
    _agrees(mod.f, 1.3)
    cfg.act, mod.Cfg.act = np.tanh, np.sin
    _agrees(mod.f, 1.3)


def test_rebound_in_nested_function_and_back(tmp_path, mode):
    mod = _module(tmp_path, """
        import numpy as np
        act = np.floor
        def f(x):
            def inner(t):
                return act(t) * t
            return inner(x) + x
        """)
    for value in (np.floor, np.exp, np.round, np.sin):
        mod.act = value
        _agrees(mod.f, 1.3)


def test_rebound_under_hessian(tmp_path, mode):
    mod = _module(tmp_path, "import numpy as np\nact = np.floor\ndef f(x):\n    return np.sum(act(x) * x ** 2)\n")
    x = np.array([1.3, 0.4])
    hessian(mod.f, x)
    mod.act = np.tanh
    want = np.stack([central(lambda v, k=k: gradient(mod.f, v)[0][k], (x,), 0) for k in range(2)])
    np.testing.assert_allclose(hessian(mod.f, x), want, rtol=1e-5, atol=1e-5)


def test_rebound_under_nested_gradient(tmp_path, mode):
    mod = _module(tmp_path, """
        import numpy as np
        from zygotepy import gradient
        act = np.floor
        def f(x):
            return np.sum(act(x) * x ** 2)
        def outer(v):
            return gradient(f, v)[0][0] * v[1]
        """)
    x = np.array([1.3, 0.4])
    _agrees(mod.outer, x)
    mod.act = np.tanh
    _agrees(mod.outer, x)


def test_one_code_object_in_two_namespaces(tmp_path, mode):
    path = tmp_path / "plugin_model.py"
    path.write_text("def model(x):\n    return op(x) * x + x\n")
    code = compile(path.read_text(), str(path), "exec")
    first, second = {"op": np.round}, {"op": np.sin}
    exec(code, first)
    exec(code, second)
    for ns in (first, second, first, second):  # (each keeps its own derived code)
        _agrees(ns["model"], 1.3)


def test_function_made_with_other_globals(tmp_path, mode):
    mod = _module(tmp_path, "import numpy as np\nop = np.round\ndef g(x):\n    return op(x) * x + x\n")
    other = types.FunctionType(mod.g.__code__, {**vars(mod), "op": np.sin}, "g")
    _agrees(mod.g, 1.3)
    _agrees(other, 1.3)
    _agrees(mod.g, 1.3)


EDITS = [  # (text imported, text on disk afterwards, same layout)
    ("import numpy as np\ndef b(x):\n    return np.sin(x) * x\n",
     "import numpy as np\ndef b(x):\n    return np.cos(x) * x\n"),
    ("def b(x):\n    return x * 3.0\n", "def b(x):\n    return x * 4.0\n"),
    ("def b(x):\n    y = x * x\n    return y + x\n", "def b(x):\n    z = x * x\n    return z + x\n"),
    ("import numpy as np\ndef b(x):\n    def inner(t):\n        return np.sin(t)\n    return inner(x) * x\n",
     "import numpy as np\ndef b(x):\n    def inner(t):\n        return np.cos(t)\n    return inner(x) * x\n"),
]


@pytest.mark.parametrize("before, after", EDITS)
def test_file_edited_since_import_is_refused(tmp_path, mode, before, after):
    mod = _module(tmp_path, before)
    path = mod.__file__
    with open(path, "w") as fh:
        fh.write(after)
    later = os.stat(path).st_mtime + 5
    os.utime(path, (later, later))
    line = mod.b.__code__.co_firstlineno
    with pytest.raises(SourceUnavailable, match=rf"{path}:{line} is not the code that runs.*edited since it was "
                                                r"imported"):
        gradient(mod.b, 0.7)
    importlib.util.spec_from_file_location(mod.__name__, path).loader.exec_module(mod)  # (reloaded: the new text)
    _agrees(mod.b, 0.7)


_ACCEPTED = """\
from __future__ import annotations
import functools
import numpy as np

def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper

class Base:
    def scale(self, x: float) -> float:
        return 2.0 * x

class Model(Base):
    __k = 3.0
    def run(self, x: float) -> float:
        def inner(t: float) -> float:
            return t * t
        return inner(x) * self.__k + super().scale(x)

def closure(a):
    def f(x: np.ndarray) -> float:
        return a * np.sin(x) + (lambda t: t * t)(x)
    return f

@deco
def decorated(x):
    return np.exp(x) * x

square = lambda x: x * x; cube = lambda x: x * x * x
defaulted = lambda x, f=lambda t: t * t: f(x) * x
"""


def test_ordinary_functions_still_accepted(tmp_path, mode):
    mod = _module(tmp_path, _ACCEPTED)
    model = mod.Model()
    for fn in (model.run, mod.closure(2.0), mod.decorated, mod.square, mod.cube, mod.defaulted):
        _agrees(fn, 0.7)


def test_notebook_cell_and_registered_source(mode):
    text = "import numpy as np\ndef cell_fn(x):\n    return np.sin(x) * x\n"
    name = "<ipython-input-77-staleness>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {}
    exec(compile(text, name, "exec"), ns)
    _agrees(ns["cell_fn"], 0.7)
    made = {"np": np}
    exec("def made(x):\n    return np.cos(x) * x\n", made)
    register_source(made["made"], "def made(x):\n    return np.cos(x) * x\n")
    _agrees(made["made"], 0.7)


def _asserting(x):
    assert x > 0, "positive"
    return np.sin(x) * x


def test_function_pytest_rewrote(mode):
    _agrees(_asserting, 0.7)

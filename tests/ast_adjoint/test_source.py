"""Tests for zygotepy.ast_adjoint.source: finding a function's node through its code object."""

import collections
import dataclasses
import functools
import gc
import importlib.util
import linecache
import pathlib
import subprocess
import sys
import textwrap

import gast
import pytest

from zygotepy.ast_adjoint import source as source_mod
from zygotepy.ast_adjoint.source import (
    Source,
    SourceUnavailable,
    get_source,
    register_source,
)
from zygotepy import gradient, jvp
from zygotepy.errors import ZygoteError


# --- functions under test, defined in this very file so line numbers can be checked against it --------------------
def plain(x):
    y = x * 2
    return y + 1


class Box:
    def method(self, x):
        return self.k * x

    @staticmethod
    def static(x):
        return x - 1


def make_closure(a):
    def inner(x):
        return a * x

    return inner


def make_class():
    class Local:
        def m(self, x):
            return x / 2

    return Local


async def coro(x):
    return x


def doubling(fn):
    @functools.wraps(fn)
    def wrapper(*a):
        return 2 * fn(*a)

    return wrapper


REGISTRY = []


def register(fn):
    REGISTRY.append(fn)
    return fn


@doubling
def wrapped(x):
    return x + 3


@register
@functools.lru_cache  # a second decorator: the first decorator's line is the one that counts
def twice_decorated(x):
    return x


@register
def registered(x):
    return x - 3


f1, f2 = (lambda x: x * 2), (lambda x: x + 1)
curried = lambda x: lambda y: x - y


def _capture_key(**kw):
    return kw["key"]


def with_default(f=lambda z: z * 3):
    return f


def tag_with(g):
    def deco(fn):
        fn.tag = g
        return fn

    return deco


@tag_with(lambda w: w**2)
def tagged(x):
    return x


# fmt: off
in_call_key = _capture_key(
    items=[3, 1, 2],
    key=lambda v: (
        -v
        * 2
    ),
)
# fmt: on

THIS_FILE_LINES = pathlib.Path(__file__).read_text().splitlines()


def def_line(name, keyword="def "):
    """The real 1-based line of `def name` in this file."""
    return next(i for i, s in enumerate(THIS_FILE_LINES, 1) if s.strip().startswith(f"{keyword}{name}("))


DEFS = [
    ("plain", plain, "plain", "def "),
    ("method", Box.method, "method", "def "),
    ("method_func", Box().method.__func__, "method", "def "),
    ("bound_method", Box().method, "method", "def "),
    ("staticmethod", Box.static, "static", "def "),
    ("closure", make_closure(3), "inner", "def "),
    ("class_in_function", make_class().m, "m", "def "),
    ("async", coro, "coro", "async def "),
    ("decorated_wrapper", wrapped, "wrapper", "def "),
    ("identity_decorator", registered, "registered", "def "),
    ("two_decorators", twice_decorated.__wrapped__, "twice_decorated", "def "),
    ("decorator_with_lambda", tagged, "tagged", "def "),
]


@pytest.mark.parametrize("fn, name, keyword", [row[1:] for row in DEFS], ids=[row[0] for row in DEFS])
def test_def_is_found_at_its_real_line(fn, name, keyword):
    src = get_source(fn)
    assert isinstance(src, Source)
    assert isinstance(src.node, (gast.FunctionDef, gast.AsyncFunctionDef))
    assert src.node.name == name
    assert src.node.decorator_list == []
    assert src.node.lineno == def_line(name, keyword)
    assert src.filename == __file__ and src.code is fn.__code__
    assert src.lines[src.node.lineno - 1].strip().startswith(f"{keyword}{name}(")
    # body lines are real lines too
    assert src.lines[src.node.body[-1].lineno - 1].strip().startswith("return")


def test_decorated_wrapper_keeps_what_the_wrapper_adds():
    # inspect.getsource(wrapped) follows __wrapped__ and would return `x + 3`; we must see the wrapper's `2 * fn(*a)`.
    node = get_source(wrapped).node
    assert gast.unparse(node.body[0].value) == "2 * fn(*a)"


def test_identity_decorator_is_found_through_first_decorator_line():
    code = registered.__code__
    assert THIS_FILE_LINES[code.co_firstlineno - 1] == "@register"  # 3.11 starts the code at the decorator
    assert gast.unparse(get_source(registered).node.body[0]) == "return x - 3"


# Under `python -X no_debug_ranges` code has no column positions, so lambdas sharing a line cannot be told apart.
HAS_COLUMNS = hasattr((lambda: 0).__code__, "co_positions") and any(
    p[2] for p in (lambda: 0).__code__.co_positions() if p[2] is not None)
needs_columns = pytest.mark.skipif(not HAS_COLUMNS, reason="no column positions (-X no_debug_ranges)")


def _body(fn):
    return gast.unparse(get_source(fn).node.body)


@needs_columns
@pytest.mark.parametrize(
    "fn, body",
    [
        (f1, "x * 2"),
        (f2, "x + 1"),
        (curried, "lambda y: x - y"),
        (curried(1), "x - y"),
        (in_call_key, "-v * 2"),
        (with_default.__defaults__[0], "z * 3"),
        (tagged.tag, "w ** 2"),
    ],
    ids=[
        "first_of_two",
        "second_of_two",
        "outer_nested",
        "inner_nested",
        "call_argument_multiline",
        "default_arg",
        "decorator_argument",
    ],
)
def test_lambda_is_resolved_by_positions(fn, body):
    src = get_source(fn)
    assert isinstance(src.node, gast.Lambda)
    assert _body(fn) == body
    assert src.node.lineno == fn.__code__.co_firstlineno


def test_multiline_lambda_lines_are_real():
    node = get_source(in_call_key).node
    assert THIS_FILE_LINES[node.lineno - 1].strip().startswith("key=lambda v:")
    assert THIS_FILE_LINES[node.body.lineno - 1].strip() == "-v"
    assert THIS_FILE_LINES[node.body.end_lineno - 1].strip() == "* 2"


def test_returned_node_is_a_fresh_copy():
    first = get_source(plain).node
    first.body.clear()
    first.name = "mutated"
    again = get_source(plain).node
    assert again is not first and again.name == "plain" and len(again.body) == 2


# --- notebooks ---------------------------------------------------------------------------------------------------
def _run_cell(name, text):
    """Do what IPython's CachingCompiler does: cache the cell in linecache (mtime None), compile under its name."""
    lines = [line + "\n" for line in text.splitlines()]
    linecache.cache[name] = (len(text), None, lines, name)
    ns = {"__name__": "__main__"}
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - what IPython does
    return ns


@pytest.fixture
def cells():
    names = []

    def run(text, name=None):
        name = name or f"<ipython-input-{len(names) + 1}-deadbeef{len(names)}>"
        names.append(name)
        return _run_cell(name, textwrap.dedent(text))

    yield run
    for name in names:
        linecache.cache.pop(name, None)
        source_mod._PARSED.pop(name, None)


def test_simulated_notebook_cell(cells):
    ns = cells(
        """
        import math
        def f(x):
            return math.sin(x) * x
        """
    )
    src = get_source(ns["f"])
    assert src.filename.startswith("<ipython-input-")
    assert src.node.lineno == 3 and gast.unparse(src.node.body[0]) == "return math.sin(x) * x"


def test_notebook_redefinition_returns_new_body(cells):
    old = cells("def f(x):\n    return x + 1\n")["f"]
    new = cells("def f(x):\n    return x * 100\n")["f"]
    assert gast.unparse(get_source(new).node.body[0]) == "return x * 100"
    assert gast.unparse(get_source(old).node.body[0]) == "return x + 1"


def test_ipykernel_style_tmp_path_cell(cells):
    # ipykernel names cells like a real file that need not exist on disk; the linecache entry has mtime None.
    ns = cells("g = lambda x: x ** 3\n", name="/tmp/ipykernel_4242/1234567890.py")
    assert _body(ns["g"]) == "x ** 3"


IPYTHON_SCRIPT = """
import gast
from IPython.testing.globalipapp import get_ipython
from zygotepy.ast_adjoint.source import get_source

ip = get_ipython()
ip.run_cell("def cell_fn(x):\\n    y = x * 4\\n    return y\\n", store_history=True)
first = ip.user_ns["cell_fn"]
ip.run_cell("def cell_fn(x):\\n    return x - 4\\n", store_history=True)
second = ip.user_ns["cell_fn"]
ip.run_cell("sq = lambda t: t * t", store_history=True)
for fn in (first, second, ip.user_ns["sq"]):
    src = get_source(fn)
    body = src.node.body
    print(src.filename, gast.unparse(body[0] if isinstance(body, list) else body))
"""


def test_real_ipython_cell():
    # A subprocess: globalipapp installs get_ipython into builtins, which would leak into every later test.
    pytest.importorskip("IPython")
    root = pathlib.Path(source_mod.__file__).parents[2]
    out = subprocess.run(
        [sys.executable, "-c", IPYTHON_SCRIPT], capture_output=True, text=True, cwd=root, check=True, timeout=120
    ).stdout.splitlines()
    assert [line.split(" ", 1)[1] for line in out] == ["y = x * 4", "return x - 4", "t * t"]
    assert all(line.startswith("<ipython-input-") for line in out), out
    assert out[0].split()[0] != out[1].split()[0]  # a redefinition is a new "file"


# --- no source ---------------------------------------------------------------------------------------------------
def _exec_fn(text, name):
    ns = {}
    exec(text, ns)  # noqa: S102 - code without source is what is under test
    return ns[name]


@dataclasses.dataclass
class Point:
    x: float
    y: float


Pair = collections.namedtuple("Pair", "a b")

NO_SOURCE = [
    ("exec", _exec_fn("def h(x):\n    return x\n", "h"), "h"),
    ("exec_lambda", _exec_fn("k = lambda x: x\n", "k"), "<lambda>"),
    ("builtin", len, "len"),
    ("partial", functools.partial(plain, 1), "functools.partial"),
    ("lru_cache", functools.lru_cache(plain), "plain"),  # has __wrapped__ but no __code__: never followed
    ("dataclass_init", Point.__init__, "__init__"),
    ("namedtuple_new", Pair.__new__, "__new__"),
    ("not_callable", 3, "3"),
]


@pytest.mark.parametrize("fn, name", [row[1:] for row in NO_SOURCE], ids=[row[0] for row in NO_SOURCE])
def test_no_source_raises(fn, name):
    with pytest.raises(SourceUnavailable, match="no Python source") as info:
        get_source(fn)
    assert name in str(info.value)
    assert isinstance(info.value, ZygoteError)


def test_edited_file_does_not_return_the_wrong_node(tmp_path):
    path = tmp_path / "edited_mod.py"
    path.write_text("def f(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location("edited_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert gast.unparse(get_source(mod.f).node.body[0]) == "return x + 1"
    # another function now sits at f's line, and f moved down: the stale code must not get g's node
    path.write_text("def g(x):\n    return x - 1\n\n\ndef f(x):\n    return x + 1\n")
    with pytest.raises(SourceUnavailable, match="edited"):
        get_source(mod.f)
    sys.modules.pop("edited_mod", None)


# --- register_source ---------------------------------------------------------------------------------------------
def test_register_source_whole_exec_text():
    text = "import math\n\ndef h(x):\n    return math.cos(x) + 1\n"
    h = _exec_fn(text, "h")
    register_source(h, text)
    src = get_source(h)
    assert src.filename.startswith("<zygotepy-source") and src.filename in linecache.cache
    assert src.node.lineno == h.__code__.co_firstlineno == 3
    assert gast.unparse(src.node.body[0]) == "return math.cos(x) + 1"


def test_register_source_only_the_function_part():
    h = _exec_fn("a = 1\nb = 2\n\ndef h(x):\n    return x * a\n", "h")
    register_source(h, "def h(x):\n    return x * a\n")  # padded so the def sits at co_firstlineno (4)
    src = get_source(h)
    assert src.node.lineno == 4 and src.lines[3] == "def h(x):\n"


def test_register_source_method_is_dedented():
    cls = _exec_fn("class C:\n    def m(self, x):\n        return x + 7\n", "C")
    register_source(cls.m, "    def m(self, x):\n        return x + 7\n")
    assert gast.unparse(get_source(cls.m).node.body[0]) == "return x + 7"


@needs_columns
def test_register_source_lambdas_on_one_line():
    text = "p, q = (lambda x: x * 5), (lambda x: x - 5)\n"
    p, q = _exec_fn(text, "p"), _exec_fn(text, "q")
    register_source(p, text)
    register_source(q, text)
    assert (_body(p), _body(q)) == ("x * 5", "x - 5")


def test_register_source_is_per_code_object_identity():
    # exec'ing one text twice gives equal (==, same hash) but distinct code objects; registration must not leak
    text = "def h(x):\n    return x * 11\n"
    h1, h2 = _exec_fn(text, "h"), _exec_fn(text, "h")
    assert h1.__code__ == h2.__code__ and h1.__code__ is not h2.__code__
    register_source(h2, text)
    with pytest.raises(SourceUnavailable):
        get_source(h1)
    register_source(h1, text)
    del h1
    gc.collect()  # h1's code dies and its registration with it; h2's stays
    assert gast.unparse(get_source(h2).node.body[0]) == "return x * 11"


def test_register_source_twice_replaces_the_entry():
    h = _exec_fn("def h(x):\n    return x\n", "h")
    register_source(h, "def h(x):\n    return x\n")
    first = get_source(h).filename
    register_source(h, "def h(x):\n    return x  # second text\n")
    src = get_source(h)
    assert src.filename != first and first not in linecache.cache
    assert src.lines[1].endswith("# second text\n")


def test_register_source_rejects_text_without_the_function():
    h = _exec_fn("def h(x):\n    return x\n", "h")
    with pytest.raises(SourceUnavailable, match="registered text"):
        register_source(h, "def other(x):\n    return x\n")
    with pytest.raises(SourceUnavailable):
        get_source(h)
    with pytest.raises(TypeError):
        register_source(len, "def len(x): ...\n")


# --- the parse cache ---------------------------------------------------------------------------------------------
def test_file_is_parsed_once():
    get_source(plain)
    lines, tree = source_mod._PARSED[__file__]
    for fn in (plain, Box.method, make_closure(1), wrapped, with_default.__defaults__[0]):
        get_source(fn)
    assert source_mod._PARSED[__file__][1] is tree
    assert lines == tuple(linecache.getlines(__file__))


def test_cache_is_keyed_on_content(cells):
    name = "<ipython-input-99-cafe>"
    old = cells("def f(x):\n    return x + 1\n", name=name)["f"]
    get_source(old)
    tree = source_mod._PARSED[name][1]
    # the same name now holds new text (a reused cell name): the old tree must not be served
    new = cells("def f(x):\n    return x * 9\n", name=name)["f"]
    assert gast.unparse(get_source(new).node.body[0]) == "return x * 9"
    assert source_mod._PARSED[name][1] is not tree


@pytest.mark.parametrize("registered", [
    "def c(x):\n    return x * 4\n",
    "def c(x):\n    return x + 3\n",
    "def c(x):\n    return x.real * 3\n",
], ids=["constant", "operator", "attribute"])
def test_register_source_refuses_a_text_whose_body_is_not_the_functions(registered):
    """Only the name and the line were compared: `gradient` of a function computing x * 3 gave 4.0."""
    c = _exec_fn("def c(x):\n    return x * 3\n", "c")
    with pytest.raises(SourceUnavailable, match="is not the one that made it"):
        register_source(c, registered)


@pytest.mark.parametrize("text, name", [
    ("import math\nclass B:\n    def m(self, x):\n        return x\nclass C(B):\n    def m(self, x):\n"
     "        self.__k = 2.0\n        return super().m(x) * self.__k + math.sin(x)\nm = C.m\n", "m"),
    ("def outer(a):\n    def inner(x):\n        return x * a + (lambda t: t * a)(x)\n    return inner\nf = outer(2.0)\n",
     "f"),
    ("def c(x):\n    return sum([t * 2 for t in x if t > 0])\n", "c"),
    ("import functools\n@functools.lru_cache\ndef d(x):\n    for i in range(3):\n        if x > i:\n"
     "            x = x * 2\n        else:\n            break\n    return x\nd2 = d.__wrapped__\n", "d2"),
], ids=["method-with-private-name-and-super", "closure", "comprehension", "decorated-loop"])
def test_register_source_accepts_the_text_that_made_the_function(text, name):
    fn = _exec_fn(text, name)
    register_source(fn, text)
    assert get_source(fn).filename.startswith("<zygotepy-source")


class _Scaled:
    def apply(self, x, *, __scale=2.0):  # (Python keeps the default under `_Scaled__scale`)
        return __scale * x ** 2


def test_a_private_keyword_only_parameter_of_a_method(mode):
    """The generated forward, compiled outside the class, takes `__scale`, while the method's defaults say
    `_Scaled__scale`: a TypeError ("missing 1 required keyword-only argument") in reverse and in forward mode, which
    networkx's decorators (`def func(*args, __wrapper=None, **kwargs)`) met in most of its functions."""
    assert gradient(lambda x: _Scaled().apply(x), 3.0) == (12.0,)
    assert jvp(lambda x: _Scaled().apply(x), (3.0,), (1.0,)) == (18.0, 12.0)

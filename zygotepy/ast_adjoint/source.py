"""Find the source of a function, as a gast node whose line numbers are the real lines of its file.

Everything goes through the function's *code object*, never ``__wrapped__`` (``inspect.getsource`` follows
``__wrapped__`` and would hand back the undecorated body, silently dropping what a wrapper adds).

How a node is found (docs/internals.md, "How it works", step 1):

- The whole file is read with ``linecache`` and parsed once. Parsing the whole file, rather than the dedented text
  ``inspect.getsource`` returns, keeps real line numbers and avoids dedent trouble for methods and nested functions.
  The parse is cached per filename and keyed on the *content* of the lines, so a file edited on disk (or an IPython
  cell name reused with new text) is parsed again instead of serving a stale tree.
- The file is parsed with the stdlib ``ast`` and only the function found is converted with ``gast.ast_to_gast``.
  For a 255-line file ``gast.parse`` costs ~14 ms against ~4.5 ms for ``ast.parse``, while converting one 16-line
  function costs ~0.6 ms; the conversion builds fresh nodes, so it doubles as the copy the compiler may mutate
  (``copy.deepcopy`` of the gast node alone costs ~1.1 ms).
- A ``def`` is the (Async)FunctionDef named ``co_name`` whose ``def`` line or first decorator line is
  ``co_firstlineno``. A lambda is the innermost ``Lambda`` starting on ``co_firstlineno`` whose body contains every
  ``co_positions()`` entry of the code, so two lambdas on one line, and a lambda inside a lambda, each get their own
  node. A def must contain its code's positions too: this catches a file edited since the function was compiled.
- The node found must compile to the names, constants and local variables of the code (`_read_as_run`): an edit
  that keeps the layout (`sin` for `cos`) would otherwise be differentiated in place of the code that runs.
- The walk is a worklist that only enters nodes whose line span contains ``co_firstlineno``, so a lookup touches one
  path through the tree, not the whole file.

Invariants: the returned node is a fresh gast tree owned by the caller; ``decorator_list`` is ``[]``; every line
number is a line of ``Source.lines``.
"""

import __future__
import ast
import copy
import dis
import functools
import itertools
import operator
import linecache
import textwrap
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import gast

from zygotepy.errors import SourceUnavailable

__all__ = ["Source", "SourceUnavailable", "get_source", "register_made", "register_source"]

_MAX_FILES = 256  # parsed files kept; the oldest is dropped first (IPython makes one "file" per cell)
_PARSED = {}  # filename -> (tuple of lines, ast.Module); the tuple is compared on every lookup
# id(code) -> (linecache name, finalizer) from register_source. Keyed by identity, not by the code object: code
# objects compare by value, so two exec's of one text would share (and one's death would drop) a weak-dict entry.
_REGISTERED = {}
_MADE = {}  # id(code) -> (gast node, filename, lines, finalizer) from register_made
_COUNTER = itertools.count(1)  # deterministic registry names (no uuids), unique within the process


@dataclass(frozen=True, slots=True, eq=False)
class Source:
    """Where a function's source lives.

    Attributes:
        node: a fresh ``gast.FunctionDef``/``AsyncFunctionDef`` (``decorator_list`` cleared) or ``gast.Lambda``;
            its line numbers are lines of ``lines`` (1-based), i.e. the real lines of the file.
        filename: ``code.co_filename``, or for a function given to ``register_source`` the ``linecache`` name its
            text was stored under (so ``filename`` and ``lines`` always agree).
        code: the code object the node belongs to.
        lines: the file's lines as a tuple of strings ending in newlines (immutable, shared with the parse cache).
    """

    node: gast.AST
    filename: str
    code: types.CodeType
    lines: tuple


def get_source(fn):
    """Return the ``Source`` of ``fn``, read through ``fn.__code__``.

    Args:
        fn: anything. Functions, lambdas, closures, a method's ``__func__`` (bound methods work too) and decorated
            functions (the *wrapper* actually called) have source; objects without a Python ``__code__`` (builtins,
            ``functools.partial``, classes) raise.
    Returns:
        a ``Source``; its ``node`` is a new tree on every call, so callers may mutate it.
    Raises:
        SourceUnavailable: no ``__code__``, no lines in ``linecache`` (``<string>``, exec'd code, dataclass
            ``__init__``, namedtuple ``__new__``), a file that does not parse, or no node matching the code (the file
            changed since the function was compiled).

    >>> def square(x):
    ...     return x * x
    >>> get_source(square).node.name
    'square'
    """
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise SourceUnavailable(fn, "it is not a Python function")
    made = _MADE.get(id(code))
    if made is not None:
        return Source(copy.deepcopy(made[0]), made[1], code, made[2])
    registered = _REGISTERED.get(id(code))
    filename = registered[0] if registered else code.co_filename
    if not filename or filename == "<string>":
        raise SourceUnavailable(fn, f"its code was compiled from a string ({filename!r})")
    linecache.checkcache(filename)  # drop a real file's stale lines, as inspect does; keeps mtime=None entries
    lines = linecache.getlines(filename, getattr(fn, "__globals__", None))
    if not lines:
        raise SourceUnavailable(fn, f"linecache has no lines for {filename!r}")
    lines, tree = _parse(fn, filename, lines)
    node = _find(tree, code)
    if node is None:
        raise SourceUnavailable(
            fn,
            f"no single {code.co_name} starting at {filename}:{code.co_firstlineno} matches its code; "
            "was the file edited since it was imported?",
        )
    if not registered and not filename.startswith("<zygotepy:") and not _read_as_run(node, code, lines):
        raise SourceUnavailable(
            fn,
            f"the text of {code.co_name} at {filename}:{code.co_firstlineno} is not the code that runs (it uses other "
            "names or constants); was the file edited since it was imported? Reload it (importlib.reload) to "
            "differentiate the new text",
        )
    node = gast.ast_to_gast(node)  # fresh nodes: the caller's copy
    if not isinstance(node, gast.Lambda):
        node.decorator_list = []
    return Source(node, filename, code, lines)


def register_source(fn: Callable[..., Any], src: str) -> None:
    """Provide the source of a function that has none (e.g. built by ``exec``), so ``get_source`` finds it.

    ``src`` is stored in ``linecache`` under a unique name ``<zygotepy-source N: qualname>`` (``mtime=None``, so
    ``checkcache`` keeps it; the entry is dropped when the code object dies) and ``fn.__code__`` is mapped to it.
    ``src`` may be the whole text that was exec'd, or just the function's part of it: it is dedented, then padded
    with blank lines so the function sits at ``co_firstlineno``. A lambda's lines must keep the exec'd columns.

    Args:
        fn: a Python function (anything with a ``__code__``).
        src: Python text containing the ``def`` or ``lambda`` of ``fn``.
    Raises:
        TypeError: ``fn`` has no code object.
        SourceUnavailable: ``src`` contains no definition matching ``fn``'s code.

    >>> ns = {}
    >>> exec("def triple(x):\\n    return 3 * x\\n", ns)
    >>> register_source(ns["triple"], "def triple(x):\\n    return 3 * x\\n")
    >>> get_source(ns["triple"]).node.body[0].lineno
    2
    """
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise TypeError(f"register_source needs a Python function, got {fn!r}")
    src_lines = textwrap.dedent(src).splitlines(keepends=True)
    if src_lines and not src_lines[-1].endswith("\n"):
        src_lines[-1] += "\n"
    try:
        tree = ast.parse("".join(src_lines))
    except SyntaxError as err:
        raise SourceUnavailable(fn, f"the registered text does not parse: {err}") from None
    # Try the text as exec'd first (pad 0), then shift each candidate definition onto co_firstlineno.
    starts = {_start(n) for n in ast.walk(tree) if _is_candidate(n, code)}
    pads = [0] + sorted({code.co_firstlineno - s for s in starts if code.co_firstlineno - s > 0})
    name = f"<zygotepy-source {next(_COUNTER)}: {getattr(fn, '__qualname__', code.co_name)}>"
    for pad in pads:
        lines = ["\n"] * pad + src_lines
        linecache.cache[name] = (sum(map(len, lines)), None, lines, name)
        node = _find(_parse(fn, name, lines)[1], code)
        if node is not None:
            if not _compiles_to(node, code):
                _forget(name)
                raise SourceUnavailable(fn, f"the registered text's {code.co_name} is not the one that made it (it "
                                            "compiles to other instructions, constants or names)")
            old = _REGISTERED.get(id(code))
            if old:
                old[1]()  # a second registration replaces the first
            _REGISTERED[id(code)] = (name, weakref.finalize(code, _forget, name, id(code)))
            return
    _forget(name)
    raise SourceUnavailable(fn, f"the registered text has no {code.co_name} matching its code")


def register_made(fn, node, filename, lines):
    """Give a function the compiler made from a user's statements (a `try` body: lower/tries.py) the gast node it was
    compiled from, whose lines are those of the user's file: its source, with no text of its own."""
    code = fn.__code__
    _MADE[id(code)] = (node, filename, lines, weakref.finalize(code, _MADE.pop, id(code), None))


def _compiles_to(node, code):
    """Does the definition `node` compile to `code`'s instructions and constants (its nested functions' too)? The
    name and the line alone let a text with another body through: the gradient of `x * 4` for a function computing
    `x * 3`. (`_fingerprint` says what compiling it alone changes.)"""
    found = _alone(node, code)
    return found is None or _fingerprint(found) == _fingerprint(code)


def _alone(node, code):
    """The code object the definition `node` compiles to by itself, or None where it cannot be compiled alone (not
    judged then: the lowering reads it). It is compiled inside a function binding `code`'s free variables, so that its
    closure reads compile as they did, under the `__future__` features `code` was compiled with (`from __future__
    import annotations` makes a nested def's annotations strings)."""
    node = ast.fix_missing_locations(_undecorated(node))
    statement = ast.Assign([ast.Name("__zygote_lambda__", ast.Store())], node) if isinstance(node, ast.Lambda) \
        else node
    binds = [ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None)) for v in code.co_freevars]
    scope = ast.FunctionDef("__zygote_scope__", ast.arguments([], [], None, [], [], None, []), [*binds, statement],
                            [], None, None) if binds else statement
    try:
        compiled = compile(ast.fix_missing_locations(ast.Module([scope], [])), code.co_filename, "exec",
                           flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return None
    if binds:
        compiled = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    # (the definition's code is made last: a lambda among its defaults, `lambda x, f=lambda t: t: ...`, comes first)
    return next((c for c in reversed(compiled.co_consts) if isinstance(c, types.CodeType) and c.co_name == code.co_name),
                None)


_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, f).compiler_flag
                                                for f in __future__.all_feature_names), 0)


def _read_as_run(node, code, lines):
    """Does the definition `node`, read from a file, compile to the names, constants and local variables `code`, the
    code that runs, uses (its nested functions' too)? The file's text is read when the function is differentiated: an
    edit since it was imported that keeps the layout (`np.sin` made `np.cos`) passes the position check, and would be
    differentiated in place of the code that runs. Instructions are not compared (tools that compile the text
    themselves differ there). Code that pytest rewrote (its assertions use names starting with "@") need only use
    everything the text does. Checked once per code object and text (`_CHECKED`)."""
    key = id(code)
    known = _CHECKED.get(key)
    if known is not None and known[0]() is code and known[1] is lines:
        return True
    found = _alone(node, code)
    if found is not None and not _same_names(found, code, _rewritten(code)):
        return False
    if len(_CHECKED) >= 4 * _MAX_FILES:
        _CHECKED.pop(next(iter(_CHECKED)))
    _CHECKED[key] = (weakref.ref(code), lines)
    return True


_CHECKED = {}  # id(code) -> (weak reference to the code, the lines it was found to match)


def _same_names(text, code, rewritten):
    """Do the code objects `text` (compiled from the file's text) and `code` (the one that runs) use the same names,
    constants and local variables, their nested code too? Private names are compared unmangled (compiled outside its
    class, `__x` is not `_C__x`)."""
    mine, theirs = _names(text), _names(code)
    if rewritten:
        if not all(a <= b for a, b in zip(mine[:2], theirs[:2])) or not set(mine[2]) <= set(theirs[2]):
            return False
    elif mine != theirs:
        return False
    nested = [c for c in text.co_consts if isinstance(c, types.CodeType)]
    running = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    if rewritten:
        running = [c for c in running if c.co_name in {n.co_name for n in nested}]
    return len(nested) == len(running) and all(_same_names(a, b, rewritten) for a, b in zip(nested, running))


def _names(code):
    return ({_unmangled(n) for n in code.co_names}, {_unmangled(n) for n in code.co_varnames},
            tuple(_constant(c) for c in code.co_consts if not isinstance(c, types.CodeType)))


def _constant(c):
    """A constant as compared: a local class's `__qualname__` (`test.<locals>.f.<locals>.Q`) by its part after the
    last function (`Q`): compiled alone, the path of functions above it differs."""
    if type(c) is str and "<locals>." in c:
        return str, c.rpartition("<locals>.")[2]
    return type(c), c


def _rewritten(code):
    """Was `code` compiled from a tree pytest rewrote (its assertions: names like `@py_assert1`, `@pytest_ar`)?"""
    return any(n.startswith("@") for n in (*code.co_names, *code.co_varnames)) or any(
        _rewritten(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _undecorated(node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
        node = type(node)(**{**{f: getattr(node, f) for f in node._fields}, "decorator_list": []})
    return node


def _fingerprint(code):
    """The instructions (by name and argument, jumps by name alone) and constants of `code` and its nested code,
    up to what compiling a definition outside its module and class changes: a method call on an imported module
    (`LOAD_ATTR` there, `LOAD_METHOD` alone, and so the jumps' offsets) and private names (`_C__x` there, `__x`)."""
    ops = tuple((_SAME_OP.get(i.opname, i.opname),
                 None if i.opcode in _JUMPS or isinstance(i.argval, types.CodeType)  # (nested code: in the constants)
                 else _unmangled(i.argval) if isinstance(i.argval, str) else repr(i.argval))
                for i in dis.get_instructions(code) if i.opname not in ("CACHE", "PRECALL", "PUSH_NULL"))
    return ops, tuple(_fingerprint(c) if isinstance(c, types.CodeType) else (type(c), c) for c in code.co_consts)


_SAME_OP = {"LOAD_METHOD": "LOAD_ATTR"}
_JUMPS = frozenset(dis.hasjrel + dis.hasjabs)


def _unmangled(name):
    head, sep, tail = name[1:].partition("__")
    return sep + tail if name.startswith("_") and sep and head and not tail.endswith("__") else name


def _forget(name, key=None):
    """Drop a registered text; runs when its code object dies, so ids are never reused while registered."""
    linecache.cache.pop(name, None)
    _PARSED.pop(name, None)
    if _REGISTERED.get(key, (None,))[0] == name:
        del _REGISTERED[key]


def _parse(fn, filename, lines):
    """Return ``(lines tuple, ast.Module)`` for the file, parsing only if its content changed since last time."""
    key = tuple(lines)
    hit = _PARSED.get(filename)
    if hit is not None and hit[0] == key:  # same string objects in the common case: an identity check per line
        return hit
    try:
        tree = ast.parse("".join(key), filename)
    except (SyntaxError, ValueError) as err:
        raise SourceUnavailable(fn, f"{filename} does not parse: {err}") from None
    _PARSED.pop(filename, None)
    if len(_PARSED) >= _MAX_FILES:
        _PARSED.pop(next(iter(_PARSED), None), None)
    _PARSED[filename] = entry = (key, tree)
    return entry


def _start(node):
    """First line of a node, counting decorators (a decorated def's code starts at its first decorator)."""
    decorators = getattr(node, "decorator_list", None)
    return decorators[0].lineno if decorators else node.lineno


def _is_candidate(node, code):
    if code.co_name == "<lambda>":
        return isinstance(node, ast.Lambda)
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name


def _find(tree, code):
    """The innermost candidate starting on ``co_firstlineno`` that contains all the code's positions, or None."""
    line = code.co_firstlineno
    found = []
    work = [tree]
    while work:
        for child in ast.iter_child_nodes(work.pop()):
            if hasattr(child, "end_lineno"):  # only nodes spanning `line` can hold a node that starts on it
                if not _start(child) <= line <= child.end_lineno:
                    continue
                if _is_candidate(child, code) and line in (child.lineno, _start(child)):
                    found.append(child)
            work.append(child)
    if hasattr(code, "co_positions"):
        positions = [p for p in code.co_positions() if None not in p[:2]]
    else:  # Python 3.10 has line numbers only
        positions = [(n, n, None, None) for _, _, n in code.co_lines() if n is not None]
    if any(p[2] is not None for p in positions):
        # Zero-width positions (RESUME, some RETURN_VALUEs: `line, line, 0, 0`) belong to no expression.
        positions = [p for p in positions if p[2] is not None and (p[0], p[2]) != (p[1], p[3])]
        fits = [n for n in found if all(_contains(n, p) for p in positions)]
        return min(fits, key=_size, default=None)
    # Python 3.10 or `-X no_debug_ranges`: only lines are known; lambdas sharing a line are told apart by compiling
    # each and comparing with the code object.
    fits = [n for n in found if all(_start(n) <= p[0] and p[1] <= n.end_lineno for p in positions)]
    if len(fits) > 1 and code.co_name == "<lambda>":
        fits = _matching_lambdas(fits, code)
    return fits[0] if len(fits) == 1 else None


def _matching_lambdas(candidates, code):
    """The candidate lambdas whose compiled code looks like ``code`` (same arguments and names; the bytecode too
    when it does not close over variables). Identical lambdas stay ambiguous but would share a transform."""
    def key(c):  # a captured variable compiles as a global when the lambda stands alone
        nested = [k.co_name for k in c.co_consts if isinstance(k, types.CodeType)]
        # (a nested function's qualified name, a constant on 3.10, starts with the enclosing function's: it differs)
        consts = tuple(k for k in c.co_consts if not isinstance(k, types.CodeType) and not (
            isinstance(k, str) and any(k == n or k.endswith("." + n) for n in nested)))
        return c.co_argcount, c.co_varnames, sorted({*c.co_names, *c.co_freevars}), consts

    matches = []
    for node in candidates:
        try:
            outer = compile(ast.fix_missing_locations(ast.Expression(body=node)), "<zygotepy>", "eval")
        except (SyntaxError, ValueError):
            continue
        inner = next((c for c in outer.co_consts if isinstance(c, types.CodeType)), None)
        if inner is not None and key(inner) == key(code) and (code.co_freevars or inner.co_code == code.co_code):
            matches.append(node)
    if len(matches) > 1 and len({ast.dump(m) for m in matches}) == 1:
        return matches[:1]
    return matches


def _contains(node, pos):
    """Whether an instruction position ``(line, end_line, col, end_col)`` lies in the node.

    A lambda's code is its body, compared with columns (two lambdas can share a line). A def is compared by lines
    only: ``register_source`` dedents, which shifts columns but not lines.
    """
    line, end_line, col, end_col = pos
    if isinstance(node, ast.Lambda):
        body = node.body
        return (body.lineno, body.col_offset) <= (line, col) and (end_line, end_col) <= (
            body.end_lineno,
            body.end_col_offset,
        )
    return _start(node) <= line and end_line <= node.end_lineno


def _size(node):
    return (node.end_lineno - node.lineno, node.end_col_offset - node.col_offset)


def kwdefaults_for(kwdefaults, code):
    """A method's keyword-only defaults under its generated forward's names: Python stores `def m(self, *, __s=2.0)`
    of class C as `_C__s`, and the forward, compiled outside the class, takes `__s`."""
    if not kwdefaults:
        return kwdefaults
    names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    private = {}  # a mangled key -> the name it hides
    for key in kwdefaults:
        head, sep, tail = key[1:].partition("__")
        if key.startswith("_") and sep and head and "__" + tail in names and key not in names:
            private[key] = "__" + tail
    return {private.get(k, k): v for k, v in kwdefaults.items()} if private else kwdefaults

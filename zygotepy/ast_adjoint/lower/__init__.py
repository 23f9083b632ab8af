"""lower(): a function's gast AST -> IR (`ir.Function`).

Accepts: the FunctionDef/Lambda node of a user function and its code object.
Guarantees: every operation is one `Assign(Var, Call)` whose arguments are atoms; `and`/`or`/`x if c else y` and
comparison chains are `If`s; `break`/`continue`/`return` are flags (the code after a statement that may jump runs under
`if not flag`); each local name is renamed to a fresh SSA name per assignment (the user's name first, then `name_2`, ...).
Unsupported syntax raises `UnsupportedSyntax` with the user's file and line before anything runs (so does a generator
expression, `map` or `filter` kept while a name its body reads is assigned again: late.py).
"""
import gast

from ...errors import UnsupportedSyntax
from .. import runtime as rt
from ..ir import Assign, Call, Const, Function, Var
from ..naming import Namer
from .calls import Calls
from .control import _RETURNED, _RETVAL, ControlFlow
from .jumps import walk
from .definitions import _COMPREHENSIONS, Definitions, captured_names
from .expressions import Expressions
from .late import late_read
from .lazy import LazyIterators
from .lineage import Lineages
from .loops import LoopTargets
from .mutation import Mutation
from .scan import nodes_no_defs, updated_in_place
from .statements import Statements
from .tries import Tries
from .updates import Updates

__all__ = ["Lowerer", "captured_names", "lower"]


class Lowerer(Expressions, Calls, Statements, Definitions, ControlFlow, Tries, Lineages, Mutation, Updates, LoopTargets,
              LazyIterators):
    """The state of one function's lowering and the helpers every part uses; each construct's lowering is a mixin's
    (expressions.py, calls.py, statements.py, definitions.py, control.py, tries.py, loops.py, lazy.py; updates in place: lineage.py,
    mutation.py, updates.py)."""

    def __init__(self, source, code, globals_=None):
        self.filename, self.code = source.filename, code
        self.source_node, self.source_lines = source.node, source.lines
        self.globals = globals_ if globals_ is not None else {}
        self.locals = set(code.co_varnames) | set(code.co_cellvars)
        self.cellvars, self.freevars = captured_names(code), list(code.co_freevars)
        reserved = {n.id for n in walk(source.node) if isinstance(n, gast.Name)}
        self.namer = Namer(reserved | set(code.co_freevars) | set(code.co_names))
        self.versions = {}
        self.env = {}
        self.region = []
        self.line = getattr(source.node, "lineno", 0)
        self.inner_codes = [c for c in code.co_consts if hasattr(c, "co_code")]
        # (before Python 3.12 a comprehension is a code object of its own: a lambda made inside it is one of its
        # constants, `[lambda t, k=k: t ** k for k in ks]`)
        self.inner_codes += [c for comp in self.inner_codes if comp.co_name in _COMPREHENSIONS
                             for c in comp.co_consts if hasattr(c, "co_code")]
        self.used_freevars = []
        self.loop_depth = 0
        self.special = {}  # names the lowering itself introduced, bound to runtime primitives
        self.statement_call = False  # lowering the call of an expression statement (its result is dropped)
        self.init_mutation()

    # --- helpers ------------------------------------------------------------------------------------------------------
    def fail(self, construct, node=None, hint=""):
        raise UnsupportedSyntax(construct, self.filename, getattr(node, "lineno", self.line), hint)

    def new_var(self, name):
        """A fresh SSA variable for the user's `name`: the name itself the first time, then name_2, name_3 ..."""
        if name not in self.versions and name != "_":  # Var("_") means "discarded" in the IR: never the user's `_`
            self.versions[name] = 1
            return Var(self.namer.reserve(name))
        self.versions.setdefault(name, 1)
        return Var(self.namer.fresh(name))

    def temp(self, hint="_t"):
        return Var(self.namer.fresh(hint))

    def emit(self, stmt):
        self.region.append(stmt)
        return stmt

    def call(self, fn, args, kwargs=(), star=None, hint="_t"):
        """Emit `out = fn(*args)`; `out` is a new version of the user's variable `hint`, or a temporary."""
        out = self.new_var(hint) if hint in self.locals and hint not in self.cellvars else self.temp(hint)
        self.emit(Assign(out, Call(fn, tuple(args), tuple(kwargs), star), self.line))
        return out

    def sub_region(self, build):
        """Run `build()` collecting its statements into a new region; returns (statements, env after)."""
        saved_region, saved_env = self.region, dict(self.env)
        self.region = []
        build()
        stmts, env = self.region, self.env
        self.region, self.env = saved_region, saved_env
        return stmts, env


def lower(source, code, globals_=None):
    """Lower the function in `source` (an `ast_adjoint.source.Source`) whose code object is `code`; `globals_` (the
    function's module globals) tells which global names are containers (see `Lowerer.global_container`)."""
    node = source.node
    low = Lowerer(source, code, globals_)
    if isinstance(node, gast.AsyncFunctionDef):
        low.fail("async def", node)
    late = late_read(node) if isinstance(node, gast.FunctionDef) else None
    if late is not None:
        obj, name, kept = late
        func = getattr(obj, "func", None)  # (a call: `map`, `itertools.accumulate`)
        what = "a generator expression" if func is None else f"{getattr(func, 'id', None) or func.attr}()"
        low.fail(f"{what} kept {f'in {kept!r} ' if kept else ''}whose body reads {name!r}, which is assigned again "
                 f"before it is used up", obj, "zygotepy runs its body when it is made, Python as it is consumed: "
                 "consume it at once (list(...)), or give the value it should read a name of its own")
    params = []
    a = node.args
    for arg in [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
                *([a.kwarg] if a.kwarg else [])]:
        var = low.new_var(arg.id)
        params.append(var)
        low.env[arg.id] = var
        low.env[f".param{len(params) - 1}"] = var  # follows the argument's object through updates in place
    # (a function that returns nothing, updating a parameter with `x += v`, means to update its object: `def step(x,
    # v, dt): v -= dt * x; x += dt * v`; one that returns a value may as well mean a number, `pow`'s `n -= 1`)
    returns = isinstance(node, gast.Lambda) or any(isinstance(n, gast.Return) and n.value is not None
                                                    for n in nodes_no_defs(node.body))
    updated = updated_in_place(node, {p.name for p in params}, augmented=not returns)
    low.tracked_params = {f".param{k}" for k, p in enumerate(params) if p.name in updated}
    _refuse_cell_clash(low, node)
    for name in sorted(low.cellvars):
        low.emit(Assign(Var(low.namer.reserve(f"{name}_cell")), Call(Const(rt.new_cell), ()), low.line))
    for name in code.co_freevars:
        low.namer.reserve(f"{name}_cell")
    for p in params:
        if p.name in low.cellvars:
            low.emit(Assign(low.temp("_"), Call(Const(rt.set_cell), (Var(f"{p.name}_cell"), p)), low.line))
    if isinstance(node, gast.Lambda):
        ret = low.expr(node.body, hint="_result")
    else:
        body = list(node.body)
        tail_return = body and isinstance(body[-1], gast.Return) and not any(
            low.jumps(s, (gast.Return,)) for s in body[:-1])
        if not tail_return:
            low.env[_RETURNED], low.env[_RETVAL] = Const(False), Const(None)
        if tail_return:
            low.block(body[:-1])
            last = body[-1]
            low.line = last.lineno
            ret = low.expr(last.value) if last.value is not None else Const(None)
        else:
            low.block(body)
            ret = low.env.get(_RETVAL, Const(None))
    # a function that updates an argument in place, or maybe did (through an object linked to it), also returns its
    # final version (see mutation.py)
    mutated = tuple(k for k, p in enumerate(params) if low.lineage.get(p) in low.mutated | low.reached
                    and isinstance(low.env.get(f".param{k}"), Var))
    maybe = tuple(k for k in mutated if low.lineage.get(params[k]) not in low.mutated)
    if mutated:
        ret = low.call(Const(rt.tuple_of), [ret, *(low.env[f".param{k}"] for k in mutated)], hint="_result")
    return Function(code.co_name if code.co_name != "<lambda>" else "lambda", params, list(low.used_freevars),
                    low.region, ret, a, source.filename, node.lineno, mutated, maybe_mutated=maybe), low.namer


def _refuse_cell_clash(low, node):
    """Refuse a name `x_cell` beside a captured variable `x`: the generated code holds `x` in a cell it names `x_cell`
    (the nested levels and the outer level's cotangents read cells by that name), so the user's `x_cell` would be the
    cell, or hide it, and its reads get a cell object (or nothing) instead of its value."""
    code = low.code
    captured = sorted({*low.cellvars, *code.co_freevars})
    used = {n.id for n in walk(node) if isinstance(n, gast.Name)}  # (co_names also holds attribute names)
    names = {*code.co_varnames, *code.co_cellvars, *code.co_freevars, *(used & set(code.co_names))}
    for name in captured:
        if f"{name}_cell" in names:
            low.fail(f"a name {name + '_cell'!r} beside the captured variable {name!r}", node,
                     f"zygotepy holds {name!r} in a cell it names {name + '_cell'!r}: rename {name + '_cell'!r}")

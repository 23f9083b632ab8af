"""speculate(): inline small user functions at their call sites, behind an identity guard.

A call `y = cell(a, x)` to a plain Python function goes, at run time, through `J`, the callee's own derived forward and
a pullback object: microseconds per call, where the callee's few scalar operations cost nanoseconds. When the global
`cell` names a small function (no closures, no defaults needed, no keywords; from another module only when every
global it reads names the same object in the caller's module), its IR is copied
into the caller, under fresh names:

    if cell is <the function seen at transform time> and cell.__code__ is <its code then>:
        ... cell's statements, its parameters replaced by the call's arguments ...
        y = <cell's result>
    else:
        y = cell(a, x)          # redefined since: the general call, differentiated at run time

so its operations get the caller's scalar fast paths. The guard keeps Python's semantics: a global rebound later, or
a function whose code was replaced (`%autoreload`), is called as it is then; a callee from another module is inlined
only while the globals it reads name the same objects in its module (`optimize/rebinding.py`). Recursive functions,
functions with nested `def`s, closures or cells, and functions whose source cannot be read or lowered are left as
calls (the run-time path reports their errors where they happen).

Accepts: a lowered Function (`lower()`). Guarantees: the same Function, with guarded inlined copies of small callees.
"""
import inspect
import operator
from collections import Counter
import re
import types
from dataclasses import replace

from ..adjoints import registry
from ..options import OPTIONS
from . import runtime as rt
from .analysis import callee_object
from .assumed_globals import resolve_global
from .compare_checks import check_comparisons
from .kept_lookups import check_kept_lookups
from .ir import Assign, Call, Carry, Const, Def, Global, If, Loop, Phi, Var, atoms, defines, out_vars, read_by, walk
from .lower import lower
from .source import get_source
from .text_checks import check_text_round_trips
from .optimize.loop_copies import clone
from .optimize.rebinding import callee_test, steady

MAX_STATEMENTS = 16  # a callee's size limit, counted over all its regions
MAX_DEPTH = 2        # inlined code may itself inline, this many levels deep

_LOWERED = {}  # id of the code object -> (code object, lowered Function or None when it cannot be inlined)


def _assigned(fn_ir):
    """Every Var a Function defines: parameters, assignments, phis, loop-carried values and targets."""
    names = {p.name for p in fn_ir.params}
    for s in walk(fn_ir.body):
        names |= defines(s)
    return names


def _globals_read(fn_ir):
    """The names of the globals a function reads (the first part of each Global path)."""
    found = [a for st in walk(fn_ir.body) for a in read_by(st)] + list(atoms(fn_ir.ret))
    return {a.path.split(".")[0] for a in found if isinstance(a, Global)}


def _lowered(fn):
    """The callee's IR if it is small and self-contained enough to inline, else None (cached per code object)."""
    code = fn.__code__
    known = _LOWERED.get(id(code))
    if known is not None and known[0] is code:  # by identity: equal code objects may differ in source and globals
        return known[1]
    ir = None
    plain = not (code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR
                                  | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR))
    if plain and not code.co_freevars and not code.co_cellvars and not code.co_kwonlyargcount:
        try:
            ir, _ = lower(get_source(fn), code, fn.__globals__)
            check_text_round_trips(ir, code, fn.__globals__)  # (the checks compile.py makes of every lowered body)
            check_kept_lookups(ir, code, fn.__globals__)
            check_comparisons(ir, code, fn.__globals__)
        except Exception:  # noqa: BLE001 - unreadable or unsupported: the run-time call reports it where it happens
            ir = None
    if ir is not None:
        stmts = list(walk(ir.body))
        params = set(ir.params)
        rebinds_param = any(isinstance(s, Assign) and params & set(out_vars(s.out)) for s in stmts)
        in_place = ir.mutated or any(  # updates in place keep the callee's own aliasing and versioning: not inlined
            isinstance(s, Assign) and isinstance(s.value, Call) and isinstance(s.value.fn, Const)
            and registry.is_mutating(s.value.fn.value, True) for s in stmts)
        if len(stmts) > MAX_STATEMENTS or ir.freevars or rebinds_param or in_place \
                or any(isinstance(s, Def) for s in stmts):
            ir = None
    _LOWERED[id(code)] = (code, ir)
    return ir


class _Renamer:
    """Copies a callee's statements into the caller: parameters become the call's arguments, every other Var a
    fresh caller name. Lines stay the callee's own when it shares the caller's file (comments and tracebacks point at
    them), else they become the call's `line`."""

    def __init__(self, mapping, line=None):
        self.mapping, self.line = mapping, line

    def atom(self, a):
        if isinstance(a, Var):
            return self.mapping.get(a.name, a)
        if isinstance(a, Call):
            return Call(self.atom(a.fn), tuple(self.atom(x) for x in a.args),
                        tuple((k, self.atom(v)) for k, v in a.kwargs), self.atom(a.star) if a.star is not None else None)
        if isinstance(a, tuple):
            return tuple(self.atom(x) for x in a)
        return a

    def block(self, stmts):
        for s in stmts:
            if self.line is not None:
                s.line = self.line
            if isinstance(s, Assign):
                s.out, s.value = self.atom(s.out), self.atom(s.value)
            elif isinstance(s, Def):  # a lambda or def made in a loop copied by `_Inliner.loop`
                s.out, s.cells, s.values = self.atom(s.out), self.atom(s.cells), self.atom(s.values)
                s.defaults = self.atom(s.defaults) if s.defaults is not None else None
                if s.kwdefaults is not None:
                    s.kwdefaults = {k: self.atom(v) for k, v in s.kwdefaults.items()}
            elif isinstance(s, If):
                s.cond = self.atom(s.cond)
                s.phis = [Phi(self.atom(p.out), self.atom(p.then), self.atom(p.orelse)) for p in s.phis]
                self.block(s.then)
                self.block(s.orelse)
            elif isinstance(s, Loop):
                s.carries = [Carry(self.atom(c.var), self.atom(c.init), self.atom(c.next)) for c in s.carries]
                s.iter, s.cond, s.exit, s.target = (self.atom(s.iter), self.atom(s.cond), self.atom(s.exit),
                                                    self.atom(s.target))
                self.block(s.test)
                self.block(s.body)
        return stmts


class _Inliner:
    def __init__(self, caller, code, globals_, namer):
        self.code, self.globals, self.namer = code, globals_, namer
        self.locals = _assigned(caller)

    def region(self, stmts, depth, stack, guards=None):
        out = []
        for s in stmts:
            if isinstance(s, If):
                s.then, s.orelse = self.region(s.then, depth, stack, guards), self.region(s.orelse, depth, stack, guards)
            elif isinstance(s, Loop):
                versions = self.loop(s, depth, stack) if depth == 0 and guards is None else None
                if versions is not None:
                    out += versions
                    continue
                s.test, s.body = self.region(s.test, depth, stack, guards), self.region(s.body, depth, stack, guards)
            elif isinstance(s, Assign) and isinstance(s.out, Var) and isinstance(s.value, Call):
                inlined = self.call(s, depth, stack, guards)
                if inlined is not None:
                    out += inlined
                    continue
            out.append(s)
        return out

    def loop(self, s, depth, stack):
        """A loop that calls small functions: two copies, chosen once at entry by identity guards: one with the
        callees inlined unguarded (straight-line code that loop versioning can then specialise), one with the calls
        as they are. Only for a loop that cannot rebind a callee while it runs (`rebinding.steady`)."""
        guards = {}
        fast = clone([s])[0]
        fast.test = self.region(fast.test, depth, stack, guards)
        fast.body = self.region(fast.body, depth, stack, guards)
        if not guards or not steady(fast, self.globals):  # (a body that may rebind a callee: guarded per call)
            return None
        general = clone([s])[0]
        inner = set()
        for st in walk([s]):
            inner |= defines(st)
        arms = []
        for copy in (fast, general):
            mapping = {n: Var(self.namer.fresh(re.sub(r"_\d+$", "", n))) for n in sorted(inner)}
            self.locals.update(v.name for v in mapping.values())
            arms.append((_Renamer(mapping).block([copy]), mapping))
        tests = []
        for fn, target in guards.items():
            g = Var(self.namer.fresh(f"{fn.path.replace('.', '_')}_is_known"))
            self.locals.add(g.name)
            tests.append(Assign(g, callee_test(fn, target, self.globals, _globals_read(_lowered(target))), s.line))
        flag = tests[0].out
        if len(tests) > 1:
            flag = Var(self.namer.fresh("callees_known"))
            tests.append(Assign(flag, Call(Const(rt.all_true), tuple(t.out for t in tests)), s.line))
        phis = [Phi(c.var, arms[0][1][c.var.name], arms[1][1][c.var.name]) for c in s.carries]
        return [*tests, If(flag, arms[0][0], arms[1][0], phis, s.line)]

    def call(self, s, depth, stack, guards=None):
        """Inline the call `s` behind its own identity guard, or, with `guards` (a dict filled with the Global and
        function each inlined call assumes), unguarded: the caller tests `guards` before the code runs."""
        call = s.value
        if not isinstance(call.fn, Global) or call.kwargs or call.star is not None or depth >= MAX_DEPTH:
            return None
        target = callee_object(call.fn, self.globals)
        if type(target) is not types.FunctionType \
                or target.__code__ in stack or target.__code__ is self.code \
                or target.__code__.co_argcount != len(call.args) \
                or registry.find_rule(target) is not None or registry.is_nondifferentiable(target):
            return None
        callee = _lowered(target)
        if callee is None:
            return None
        roots = _globals_read(callee)
        if roots & self.locals:  # a caller's local would shadow a global the callee reads
            return None
        if target.__globals__ is not self.globals and any(  # another module: its globals must mean the same here
                resolve_global(r, self.globals) is not resolve_global(r, target.__globals__)
                or resolve_global(r, self.globals) is None for r in roots):
            return None
        for r in roots:
            self.namer.reserve(r)
        mapping = {p.name: a for p, a in zip(callee.params, call.args, strict=True)}
        for name in sorted(_assigned(callee) - set(mapping)):
            mapping[name] = Var(self.namer.fresh(re.sub(r"_\d+$", "", name)))  # `_t_2` -> a fresh `_t_N`
        self.locals.update(v.name for v in mapping.values() if isinstance(v, Var))
        same_file = target.__code__.co_filename == self.code.co_filename
        renamer = _Renamer(mapping, None if same_file else s.line)
        body = renamer.block(clone(callee.body))
        body = self.region(body, depth + 1, stack | {target.__code__}, guards)
        if guards is not None:
            guards[call.fn] = target
            return [*body, Assign(s.out, renamer.atom(callee.ret), s.line)]
        guard = Var(self.namer.fresh(f"{call.fn.path.replace('.', '_')}_is_known"))
        general = Var(self.namer.fresh(re.sub(r"_\d+$", "", s.out.name)))
        self.locals.update((guard.name, general.name))
        test = Assign(guard, callee_test(call.fn, target, self.globals, roots), s.line)
        return [test, If(guard, body, [replace(s, out=general)], [Phi(s.out, renamer.atom(callee.ret), general)],
                         s.line, inlined=True)]


def _forward_tuples(stmts, known):
    """`k1u, k1v = f(...)` where an inlined `f` ends in `return a, b`: the unpacked items are `a` and `b` themselves
    (copies), so no tuple is built, taken apart and differentiated through rules. `known` maps a Var to the atoms of
    the tuple it holds; SSA (one definition per Var, which dominates its uses) lets one map serve all regions."""
    for s in walk(stmts):  # pre-order: every definition before its uses
        if isinstance(s, Assign) and isinstance(s.out, Var):
            v = s.value
            if isinstance(v, Var) and v in known:
                known[s.out] = known[v]
            elif isinstance(v, Call) and isinstance(v.fn, Const) and not v.kwargs and v.star is None:
                fn, args = v.fn.value, v.args
                if fn is rt.tuple_of:
                    known[s.out] = args
                elif fn is rt.unpack and args[0] in known and args[1] == Const(len(known[args[0]])):
                    known[s.out] = known[args[0]]
                elif fn is operator.getitem and args[0] in known and isinstance(args[1], Const) \
                        and type(args[1].value) is int and -len(known[args[0]]) <= args[1].value < len(known[args[0]]):
                    s.value = known[args[0]][args[1].value]


def _read(fn_ir):
    """How often each Var is read, anywhere in the function (values, conditions, phis, carries, the result)."""
    found = [a for st in walk(fn_ir.body) for a in read_by(st)] + list(atoms(fn_ir.ret))
    return Counter(a for a in found if isinstance(a, Var))


def _drop_dead_tuples(stmts, known, reads):
    """Remove the tuples `_forward_tuples` made unread (and their copies and unpackings), innermost first."""
    out = []
    for s in reversed(stmts):
        if isinstance(s, If):
            s.then, s.orelse = _drop_dead_tuples(s.then, known, reads), _drop_dead_tuples(s.orelse, known, reads)
        elif isinstance(s, Loop):
            s.test, s.body = _drop_dead_tuples(s.test, known, reads), _drop_dead_tuples(s.body, known, reads)
        elif isinstance(s, Assign) and isinstance(s.out, Var) and s.out in known and not reads.get(s.out):
            for a in (s.value.args if isinstance(s.value, Call) else (s.value,)):
                if isinstance(a, Var):
                    reads[a] -= 1
            continue
        out.append(s)
    return out[::-1]


def speculate(fn_ir, code, globals_, namer):
    """Inline small callees of `fn_ir` in place (see the module docstring); return it."""
    if OPTIONS.inline:
        fn_ir.body = _Inliner(fn_ir, code, globals_, namer).region(fn_ir.body, 0, frozenset())
        known = {}
        _forward_tuples(fn_ir.body, known)
        if known:
            fn_ir.body = _drop_dead_tuples(fn_ir.body, known, _read(fn_ir))
    return fn_ir

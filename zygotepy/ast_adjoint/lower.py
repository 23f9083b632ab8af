"""lower(): a function's gast AST -> IR (`ir.Function`).

Accepts: the FunctionDef/Lambda node of a user function and its code object.
Guarantees: every operation is one `Assign(Var, Call)` whose arguments are atoms; `and`/`or`/`x if c else y` and
comparison chains are `If`s; `break`/`continue`/`return` are flags (the code after a statement that may jump runs under
`if not flag`); each local name is renamed to a fresh SSA name per assignment (the user's name first, then `name_2`, ...).
Unsupported syntax raises `UnsupportedSyntax` with the user's file and line before anything runs.
"""
import builtins
import collections
import inspect
import operator
import os
import types

import gast
import numpy as np

from ..adjoints import registry
from ..errors import UnsupportedSyntax
from ..options import OPTIONS
from . import mutate as mt
from . import runtime as rt
from .ir import Assign, Call, Const, Def, Function, Global, Phi, Var
from .lower_control import _RETURNED, _RETVAL, ControlFlow, walk
from .lower_loops import LoopTargets
from .lower_mutation import MUTATING_METHODS, PURE_METHODS, Mutation, may_update_in_place, updated_in_place
from .naming import Namer

BINOPS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv,
          gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod, gast.Pow: operator.pow,
          gast.MatMult: operator.matmul, gast.LShift: operator.lshift, gast.RShift: operator.rshift,
          gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.BitAnd: operator.and_}
INPLACE = {gast.Add: operator.iadd, gast.Sub: operator.isub, gast.Mult: operator.imul, gast.Div: operator.itruediv,
           gast.FloorDiv: operator.ifloordiv, gast.Mod: operator.imod, gast.Pow: operator.ipow,
           gast.MatMult: operator.imatmul, gast.LShift: operator.ilshift, gast.RShift: operator.irshift,
           gast.BitOr: operator.ior, gast.BitXor: operator.ixor, gast.BitAnd: operator.iand}
_FOLDABLE = (int, float, bool)
_FOLDS = frozenset((operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
                    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne))


def _fold(fn, a, b):
    """`fn(a, b)` computed now, as a Const, when both are number literals (`5 - 1`, `5 != 0`: the inlined scalar
    derivatives of an inner level's generated code are full of them) and the operation is cheap and cannot fail;
    None otherwise. The same value Python would compute when the code runs; a literal carries no gradient."""
    if not (OPTIONS.fold_literals and type(a) is Const and type(b) is Const and type(a.value) in _FOLDABLE
            and type(b.value) in _FOLDABLE and fn in _FOLDS):
        return None
    if fn is operator.mul and type(a.value) is int and type(b.value) is int and abs(a.value) + abs(b.value) > 2 ** 31:
        return None
    try:
        return Const(fn(a.value, b.value))
    except ArithmeticError:  # 1 / 0 raises when the code runs, as Python would
        return None


UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_, gast.Invert: operator.invert}
COMPARE = {gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
           gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Is: operator.is_, gast.IsNot: operator.is_not,
           gast.In: rt.contained_in, gast.NotIn: rt.not_contained_in}
UNSUPPORTED = {gast.Try: "try/except", gast.AsyncWith: "async with",
               gast.AsyncFor: "async for", gast.AsyncFunctionDef: "async def", gast.Yield: "yield",
               gast.YieldFrom: "yield from", gast.Await: "await", gast.Global: "a global statement",
               gast.Nonlocal: "a nonlocal statement",
               gast.Import: "import inside a function",
               gast.ImportFrom: "import inside a function"}
if hasattr(gast, "Match"):
    UNSUPPORTED[gast.Match] = "match"
if hasattr(gast, "TryStar"):
    UNSUPPORTED[gast.TryStar] = "try/except*"







_BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))
_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _unwrapped(atom):
    """A default value as `Def.defaults` holds it: a Var or Global read when the def runs, or the constant itself."""
    return atom.value if isinstance(atom, Const) else atom


def captured_names(code):
    """The locals of `code` that nested functions capture. Python also compiles comprehensions as nested functions,
    but zygotepy lowers them inline, so what they alone read is an ordinary local here."""
    return _read_by_nested(code) & set(code.co_cellvars)


def _read_by_nested(code):
    """The free variables of the functions nested in `code`, looking through comprehensions (whose own code objects
    pass an enclosing variable on to a lambda made inside them)."""
    names = set()
    for inner in code.co_consts:
        if isinstance(inner, types.CodeType):
            names |= _read_by_nested(inner) if inner.co_name in _COMPREHENSIONS else set(inner.co_freevars)
    return names




_CONTAINERS = (list, dict, set, collections.deque, bytearray)

# callees whose result never holds (nor is, nor views) an argument: a call of one makes no "held" link
_FRESH_NP = ("zeros_like ones_like empty_like full_like zeros ones empty full sum prod mean std var max min amax amin "
             "argmax argmin dot vdot inner outer tensordot concatenate stack vstack hstack where clip cumsum cumprod "
             "linspace arange eye identity sort argsort diff kron cross tile repeat pad roll all any count_nonzero "
             "allclose isclose array_equal median percentile quantile average ptp trace interp convolve correlate "
             "searchsorted bincount cov corrcoef nansum nanmean nanmax nanmin copy").split()
_FRESH_LINALG = "norm inv solve det slogdet eigh eigvalsh svd qr cholesky eig pinv lstsq matrix_power".split()
_FRESH = {id(f) for f in [*(getattr(np, n, None) for n in _FRESH_NP),
                          *(getattr(np.linalg, n, None) for n in _FRESH_LINALG),
                          len, float, int, bool, abs, round, range, isinstance, print, repr, str, hash, id, callable,
                          divmod, pow, complex, all, any, hasattr] if f is not None}


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARY_PACKAGES = frozenset(("builtins", "numpy", "collections", "functools", "itertools", "typing", "dataclasses",
                               "torch", "jax", "jaxlib", "scipy", "cupy", "zygotepy"))


def _fresh(fn):
    return id(fn) in _FRESH or isinstance(fn, np.ufunc) or getattr(fn, "__module__", None) == "math"



_STORE_DUNDERS = {"__setitem__": mt.setitem, "__delitem__": mt.delitem}
_STORES = {id(operator.setitem): (mt.setitem, 3), id(operator.delitem): (mt.delitem, 2)}
_IN_PLACE_DUNDERS = {"__iadd__": "+", "__isub__": "-", "__imul__": "*", "__itruediv__": "/", "__ifloordiv__": "//",
                     "__imod__": "%", "__ipow__": "**", "__imatmul__": "@", "__iand__": "&", "__ior__": "|",
                     "__ixor__": "^", "__ilshift__": "<<", "__irshift__": ">>"}

class Lowerer(ControlFlow, Mutation, LoopTargets):
    def __init__(self, source, code, globals_=None):
        self.filename, self.code = source.filename, code
        self.source_node = source.node
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


    # --- expressions --------------------------------------------------------------------------------------------------
    def expr(self, node, hint="_t"):
        self.line = getattr(node, "lineno", self.line)
        kind = type(node)
        if kind in UNSUPPORTED:
            self.fail(UNSUPPORTED[kind], node)
        method = getattr(self, "expr_" + kind.__name__, None)
        if method is None:
            self.fail(f"the expression {kind.__name__}", node)
        return method(node, hint)

    def expr_Constant(self, node, hint):
        return Const(node.value)

    def expr_Name(self, node, hint):
        name = node.id
        if name in self.special:
            return self.special[name]
        if name in self.freevars:
            if name not in self.used_freevars:
                self.used_freevars.append(name)
            return self.env.get(name, Var(name))  # a captured object this function updated has new versions
        if name in self.updated_by_closures:
            self.fail(f"reading '{name}' after the nested function '{self.updated_by_closures[name]}' may have "
                      f"updated it in place", node, "pass it to that function as an argument instead")
        if name in self.locals:
            return self.env.get(name, Var(name))
        if self.global_container(name):  # refused if this differentiated call updated it in place (mutate.global_read)
            return self.call(Const(mt.global_read), [Global(name), Const(name), Const((self.filename, self.line))],
                             hint=hint)
        return Global(name)

    def global_container(self, name):
        """Is the module global `name` a container or a plain object that code may update in place?"""
        if name in self.locals or name in self.freevars or name in self.special or name not in self.globals:
            return False
        value = self.globals[name]
        return isinstance(value, _CONTAINERS) or (
            hasattr(value, "__dict__") and not callable(value) and not isinstance(value, types.ModuleType)
            and type(value).__module__ != "builtins")

    def mangle(self, attr):
        """`self.__x` inside class C means `self._C__x` (Python mangles it when compiling the class body)."""
        qual = getattr(self.code, "co_qualname", "").split(".<locals>.")[-1].split(".")
        if attr.startswith("__") and not attr.endswith("__") and len(qual) > 1:
            return f"_{qual[-2].lstrip('_')}{attr}"
        return attr

    def expr_Attribute(self, node, hint):
        obj = self.expr(node.value)
        attr = self.mangle(node.attr)
        if isinstance(obj, Global):
            return Global(f"{obj.path}.{attr}")
        out = self.call(Const(getattr), [obj, Const(attr)], hint=hint)
        self.note_child(out, "attr", obj, Const(attr))
        return out

    def expr_BinOp(self, node, hint):
        a, b = self.expr(node.left), self.expr(node.right)
        folded = _fold(BINOPS[type(node.op)], a, b)
        if folded is not None:
            return folded
        out = self.call(Const(BINOPS[type(node.op)]), [a, b], hint=hint)
        if isinstance(node.op, (gast.Add, gast.Mult)) and any(self.holds_objects(v) for v in (a, b)):
            # `[a] * 2`, `lst + lst`: a new list holding the same objects, so an update through one reaches the other
            self.note_held(out, [v for v in (a, b) if isinstance(v, Var)])
        return out

    def holds_objects(self, atom):
        """Is `atom` known to hold other values (a list or tuple display, a call's result that may keep them)?"""
        if not isinstance(atom, Var):
            return False
        lin = self.lineage_of(atom)
        return any(p == lin for links in self.parents.values() for _, p, _ in links)

    def expr_UnaryOp(self, node, hint):
        a = self.expr(node.operand)
        if isinstance(a, Const) and isinstance(node.op, gast.USub):
            return Const(-a.value)
        return self.call(Const(UNARY[type(node.op)]), [a], hint=hint)

    def expr_Compare(self, node, hint):
        left, pairs = self.expr(node.left), list(zip(node.ops, node.comparators, strict=True))

        def chain(left, pairs):
            op, right_node = pairs[0]
            right = self.expr(right_node)
            if len(pairs) == 1:
                folded = _fold(COMPARE[type(op)], left, right)
                if folded is not None:
                    return folded
            test = self.call(Const(COMPARE[type(op)]), [left, right], hint=hint)
            if len(pairs) == 1:
                return test
            out = {}
            self.join(test, lambda: out.setdefault("then", chain(right, pairs[1:])), lambda: None)
            phi = self.region[-1].phis
            result = self.temp(hint)
            phi.append(Phi(result, out["then"], test))
            return result
        return chain(left, pairs)

    def expr_BoolOp(self, node, hint):
        first = self.expr(node.values[0])
        if len(node.values) == 1:
            return first
        rest = gast.BoolOp(op=node.op, values=node.values[1:])
        gast.copy_location(rest, node.values[1])
        got = {}
        then_rest = lambda: got.setdefault("v", self.expr(rest))
        if isinstance(node.op, gast.And):
            stmt = self.join(first, then_rest, lambda: None)
            arms = (lambda: got["v"], lambda: first)
        else:
            stmt = self.join(first, lambda: None, then_rest)
            arms = (lambda: first, lambda: got["v"])
        out = self.temp(hint)
        stmt.phis.append(Phi(out, arms[0](), arms[1]()))
        self.join_link(out, arms[0](), arms[1]())
        return out

    def expr_IfExp(self, node, hint):
        test = self.expr(node.test)
        if OPTIONS.fold_literals and isinstance(test, Const) and type(test.value) in _FOLDABLE:  # `a if 5 != 0 else b` (an inlined derivative)
            taken, skipped = (node.body, node.orelse) if test.value else (node.orelse, node.body)
            if not any(isinstance(n, gast.NamedExpr) for n in gast.walk(skipped)):
                return self.expr(taken, hint)
        got = {}
        stmt = self.join(test, lambda: got.setdefault("a", self.expr(node.body)),
                         lambda: got.setdefault("b", self.expr(node.orelse)))
        out = self.temp(hint)
        stmt.phis.append(Phi(out, got["a"], got["b"]))
        self.join_link(out, got["a"], got["b"])
        return out

    def expr_NamedExpr(self, node, hint):
        value = self.expr(node.value, hint=node.target.id)
        self.bind(node.target.id, value)
        return self.env[node.target.id]

    def expr_Tuple(self, node, hint):
        if any(isinstance(e, gast.Starred) for e in node.elts):
            return self.splat(rt.splat, node.elts, hint)
        items = self.elements(node.elts)
        if all(isinstance(i, Const) for i in items):
            return Const(tuple(i.value for i in items))
        out = self.call(Const(rt.tuple_of), items, hint=hint)
        self.note_held(out, items)
        return out

    def expr_Set(self, node, hint):
        return self.call(Const(rt.set_of), self.elements(node.elts), hint=hint)

    def expr_List(self, node, hint):
        if any(isinstance(e, gast.Starred) for e in node.elts):
            return self.splat(rt.splat_list, node.elts, hint)
        items = self.elements(node.elts)
        out = self.call(Const(rt.list_of), items, hint=hint)
        self.note_held(out, items)
        return out

    def splat(self, helper, elts, hint):
        """`(a, *b)`: one call of `helper` with a constant mask of the starred items."""
        stars = tuple(isinstance(e, gast.Starred) for e in elts)
        items = [self.expr(e.value if isinstance(e, gast.Starred) else e) for e in elts]
        out = self.call(Const(helper), [Const(stars), *items], hint=hint)
        self.note_held(out, items)  # `[*W]` holds W's items: an update through either reaches the other
        return out

    def elements(self, elts):
        if any(isinstance(e, gast.Starred) for e in elts):
            self.fail("a starred element in a display", elts[0])
        return [self.expr(e) for e in elts]

    def expr_Dict(self, node, hint):
        if any(k is None for k in node.keys):  # `{**a, "k": v}`: the runs of plain pairs as dicts, then one merge
            parts, run = [], []
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    parts += [self.pairs(run, "_t")] if run else []
                    parts.append(self.expr(v))
                    run = []
                else:
                    run.append((k, v))
            parts += [self.pairs(run, "_t")] if run else []
            out = self.call(Const(rt.dict_merge), parts, hint=hint)
            self.note_held(out, parts)
            return out
        return self.pairs(list(zip(node.keys, node.values, strict=True)), hint)

    def pairs(self, pairs, hint):
        """A dict display of plain `key: value` pairs."""
        flat = [a for k, v in pairs for a in (self.expr(k), self.expr(v))]
        out = self.call(Const(rt.dict_of), flat, hint=hint)
        self.note_held(out, flat[1::2])
        return out

    def expr_Subscript(self, node, hint):
        obj, index = self.expr(node.value), self.expr(node.slice)
        out = self.call(Const(operator.getitem), [obj, index], hint=hint)
        self.note_child(out, "item", obj, index)
        return out

    def expr_Slice(self, node, hint):
        parts = [self.expr(p) if p is not None else Const(None) for p in (node.lower, node.upper, node.step)]
        if all(isinstance(p, Const) for p in parts):
            return Const(slice(*(p.value for p in parts)))
        return self.call(Const(slice), parts, hint="_slice")

    def expr_JoinedStr(self, node, hint):
        parts = []
        for v in node.values:
            if isinstance(v, gast.FormattedValue):
                spec = self.expr(v.format_spec) if v.format_spec is not None else Const("")
                parts.append(self.call(Const(rt.format_value), [self.expr(v.value), Const(v.conversion), spec]))
            else:
                parts.append(self.expr(v))
        return self.call(Const(rt.join_str), parts, hint=hint)

    def expr_Call(self, node, hint):
        func = node.func
        statement, self.statement_call = self.statement_call, False
        if isinstance(func, gast.Name) and func.id == "super" and not node.args and "__class__" in self.freevars:
            first = self.code.co_varnames[0] if self.code.co_argcount else None
            if first is None:
                self.fail("super() in a function without arguments", node)
            me = self.env.get(first, Var(first))
            out = self.call(Global("super"), [self.expr_Name(gast.Name("__class__", gast.Load(), None, None), hint),
                                              me], hint=hint)
            self.lineage[out] = self.lineage_of(me)  # a proxy of the object: updating it updates `self`
            return out
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.attr in MUTATING_METHODS \
                and self.global_container(func.value.id):  # `CACHE.append(v)` on a module global
            name, value = func.value.id, self.globals[func.value.id]
            if not isinstance(value, _CONTAINERS):  # a user object's own method: derived, updating `self` (logged)
                pass
            else:
                args, kwargs, star = self.arguments(node)
                return self.call(Const(mt.global_method), [Global(name), Const(name), Const(self.mangle(func.attr)),
                                                           Const((self.filename, self.line)), *args], kwargs, star, hint)
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.attr in MUTATING_METHODS \
                and func.value.id not in self.locals and func.value.id not in self.freevars \
                and type(self.globals.get(func.value.id)).__module__ == "numpy" \
                and not isinstance(self.globals.get(func.value.id), types.ModuleType):
            self.fail("updating a global or constant object in place", node, "pass it as an argument, or work on a copy")
        if isinstance(func, gast.Attribute) and func.attr in _STORE_DUNDERS and isinstance(func.value, gast.Name) \
                and func.value.id in self.locals and not node.keywords \
                and not any(isinstance(a, gast.Starred) for a in node.args):
            # `d.__setitem__(k, v)` (also as a value, which is None) is the store `d[k] = v`
            obj = self.expr(func.value)
            args, _, _ = self.arguments(node)
            if isinstance(obj, Var):
                self.mutate(obj, self.call(Const(_STORE_DUNDERS[func.attr]), [obj, *args], hint=self.user_name(obj)))
                return Const(None)
        if isinstance(func, gast.Attribute) and func.attr in _IN_PLACE_DUNDERS:
            # `y = a.__imul__(2)` updates `a` in place but reads as a plain call, so it would run unseen by the
            # mutation lowering (a silently wrong gradient); the augmented assignment is what it means
            self.fail(f"calling {func.attr} by name", node,
                      f"write the augmented assignment `x {_IN_PLACE_DUNDERS[func.attr]}= y` instead")
        if isinstance(func, gast.Attribute):
            obj = self.expr(func.value)
            if not isinstance(obj, Global):
                args, kwargs, star = self.arguments(node)
                fn, args = Const(rt.callmethod), [obj, Const(self.mangle(func.attr)), *args]
                if any(k == "out" for k, _ in kwargs):  # `y.clip(0, 1, out=y)`: computed, then written into `out`
                    kept = [(k, v) for k, v in kwargs if k != "out"]
                    return self.mutating_call(Const(mt.with_out), [fn, *args, dict(kwargs)["out"]], kept, star, hint,
                                              [len(args) + 1])
                if statement:  # `obj.step(x)`: may update its object and its arguments
                    # a module global's own method updates an object that outlives this call: run it as an update
                    # (logged), so that reading the global afterwards is refused (mutate.global_read), not ungraded
                    kept = [0] if isinstance(func.value, gast.Name) and self.global_container(func.value.id) else ()
                    return self.mutating_call(fn, args, kwargs, star, hint, [0, *range(2, len(args))], kept)
                if func.attr in MUTATING_METHODS:  # `y = lst.pop()`
                    return self.mutating_call(fn, args, kwargs, star, hint, [0])
                if self.updating_method(func.attr):  # `a = sim.decay()`: a user method that may update its object
                    return self.mutating_call(fn, args, kwargs, star, hint, [0, *range(2, len(args))], site=True)
                out = self.call(fn, args, kwargs, star, hint)
                self.note_held(out, [obj, *args[2:], *(v for _, v in kwargs)])  # `W.reshape(3)`, `W.T.copy()`
                return out
            fn = Global(f"{obj.path}.{self.mangle(func.attr)}")
        else:
            fn = self.expr(func)
        args, kwargs, star = self.arguments(node)
        store = _STORES.get(id(self.resolve(fn.path))) if isinstance(fn, Global) and star is None else None
        if store is not None and not kwargs and len(args) == store[1]:  # `operator.setitem(d, k, v)` is `d[k] = v`
            if isinstance(args[0], Var):
                self.mutate(args[0], self.call(Const(store[0]), args, hint=self.user_name(args[0])))
                return Const(None)
        if statement and isinstance(fn, Global) and fn.path in ("setattr", "delattr") and len(args) in (2, 3):
            prim = mt.setattr_ if fn.path == "setattr" else mt.delattr_
            if isinstance(args[0], Var):  # `setattr(obj, name, v)`: an attribute store
                self.mutate(args[0], self.call(Const(prim), args, hint=self.user_name(args[0])))
                return Const(None)
        if statement and isinstance(fn, Global) and fn.path in _BUILTIN_NAMES:  # print(x), ...: no updates
            return self.call(fn, args, kwargs, star, hint)
        if statement and self.code.co_filename.startswith("<zygotepy:"):
            # generated code being differentiated again (nesting): its call statements are the emitter's own helpers
            # (`_set_cell`, `_raise`), which update nothing the caller reads
            return self.call(fn, args, kwargs, star, hint)
        at = mt.positional_out(self.resolve(fn.path), len(args)) if isinstance(fn, Global) and star is None else None
        if at is not None and args[at] == Const(None):  # `np.sum(x, 0, None, None, False, ...)`: no out
            at = None
        if at is not None and at != len(args) - 1:  # more arguments (or outputs) after it
            self.fail("an out array passed by position here", node, "pass it as out=...")
        if at is not None:  # `np.multiply(a, b, y)` is `np.multiply(a, b, out=y)`
            args, kwargs = args[:at], [*kwargs, ("out", args[at])]
        if statement or any(k == "out" for k, _ in kwargs):  # `fill(out, x)`, `np.add(a, b, out=c)`
            if any(k == "out" for k, _ in kwargs):
                args = [*args, dict(kwargs)["out"]]
                kwargs = [(k, v) for k, v in kwargs if k != "out"]
                return self.mutating_call(Const(mt.with_out), [fn, *args], kwargs, star, hint, [len(args)])
            return self.mutating_call(fn, args, kwargs, star, hint, range(len(args)))
        if isinstance(fn, Global) and args and mt.updates_first_argument(self.resolve(fn.path)):
            return self.mutating_call(fn, args, kwargs, star, hint, [0])  # `r = np.add.at(y, i, v)`: updates y
        if self.updating_helper(fn):  # `loss = step(state, x)`, where step updates `state`: as a call statement
            return self.mutating_call(fn, args, kwargs, star, hint, range(len(args)), site=True)
        out = self.call(fn, args, kwargs, star, hint)
        # any call may keep its arguments (`make_holder(W)`, `np.asarray(W)`): an update of one later reaches it (and
        # back), found by identity at run time (put_held / refresh_held); known fresh results (np.zeros_like, ufuncs,
        # math) make no link
        if not (isinstance(fn, Global) and _fresh(self.resolve(fn.path))):
            self.note_held(out, [*args, *(v for _, v in kwargs), *([star] if star is not None else [])])
        return out

    @property
    def user_code(self):
        """Not code zygotepy wrote (generated code, or a rule's back, differentiated again at a higher order), whose
        calls update nothing their caller reads."""
        return not self.code.co_filename.startswith(("<zygotepy:", _PACKAGE_DIR))

    def updating_method(self, name):
        """May a method `name` called for its value update its object or arguments? Yes when a class of this module's
        namespace (the user's own, or imported by name) defines it in Python code that may update in place; the
        methods of built-in and NumPy types (`x.sum()`) never. Such a call then goes through `valuecall`."""
        if name in PURE_METHODS or not self.user_code:
            return False
        known = self.__dict__.setdefault("_updating_methods", {})  # (loops ask again for every call in their body)
        if name not in known:
            known[name] = any(
                type(method) is types.FunctionType and may_update_in_place(method)
                for value in self.globals.values()
                if isinstance(value, type) and value.__module__.partition(".")[0] not in _LIBRARY_PACKAGES
                for method in [inspect.getattr_static(value, name, None)]) or any(
                may_update_in_place(method) for method in self.local_methods(name))
        return known[name]

    def local_methods(self, name):
        """The methods `name` of the classes defined in this function's body (as functions of their own code, for
        reading their source: they do not exist until the class statement runs)."""
        classes = {n.name for n in gast.walk(self.source_node) if isinstance(n, gast.ClassDef)}
        return [types.FunctionType(method, self.globals, name, None,
                                   tuple(types.CellType() for _ in method.co_freevars))
                for body in self.code.co_consts if hasattr(body, "co_code") and body.co_name in classes
                for method in body.co_consts if hasattr(method, "co_code") and method.co_name == name]

    def has_updating_calls(self, nodes):
        """Does this code call, for its value, a helper or a method that `expr_Call` sends through `valuecall` (so a
        loop around it must carry every object, as for a call statement)? Any method of that name counts."""
        for n in nodes:
            if not isinstance(n, gast.Call):
                continue
            f = n.func
            if isinstance(f, gast.Attribute) and self.updating_method(f.attr):
                return True
            parts = []
            while isinstance(f, gast.Attribute):
                parts.append(f.attr)
                f = f.value
            if isinstance(f, gast.Name) and f.id not in self.locals \
                    and self.updating_helper(Global(".".join([f.id, *reversed(parts)]))):
                return True
        return False

    def updating_helper(self, fn):
        """Is `fn` a global Python function, with no rule, whose code may update its arguments in place? Its call,
        used as a value, then goes through `mutcall` too, which takes the updated arguments' versions back."""
        if not isinstance(fn, Global) or not self.user_code:
            return False
        target = self.resolve(fn.path)
        return type(target) is types.FunctionType and registry.find_rule(target) is None \
            and may_update_in_place(target)

    def resolve(self, path):
        """The object the global dotted `path` names now (None if it cannot be read)."""
        first, *rest = path.split(".")
        obj = self.globals.get(first, getattr(builtins, first, None)) if first not in self.locals else None
        for part in rest:
            obj = getattr(obj, part, None)
        return obj

    def arguments(self, node):
        args, star = [], None
        for a in node.args:
            if isinstance(a, gast.Starred):
                if star is not None:
                    self.fail("more than one *argument in a call", a)
                star = self.expr(a.value)
            elif star is not None:
                self.fail("a positional argument after *args", a)
            else:
                args.append(self.expr(a))
        kwargs = [(k.arg, self.expr(k.value)) for k in node.keywords]
        return args, kwargs, star

    def expr_Lambda(self, node, hint):
        return self.define(node, "<lambda>", hint)

    # --- statements ---------------------------------------------------------------------------------------------------

    def stmt(self, node):
        self.line = getattr(node, "lineno", self.line)
        self.latest.clear()  # temporaries' versions live within one statement
        kind = type(node)
        if kind in UNSUPPORTED:
            self.fail(UNSUPPORTED[kind], node)
        method = getattr(self, "stmt_" + kind.__name__, None)
        if method is None:
            self.fail(f"the statement {kind.__name__}", node)
        method(node)

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if not isinstance(node.value, gast.Constant):
            self.statement_call = isinstance(node.value, gast.Call)
            self.expr(node.value)

    def bind(self, name, value):
        """Bind local `name` to `value`; a cell variable (captured by a nested def) gets a real assignment."""
        if name in self.cellvars:
            # each assignment is a version, as for any local, and sets the cell; a nested function is differentiated
            # with the version current where it was made, so one called after a new assignment is refused when it
            # is called (dispatch.check_cells: made in a loop and called in the same iteration, or never called
            # again, is fine)
            var = self.new_var(name)
            self.emit(Assign(var, value, self.line))
            self.emit(Assign(self.temp("_"), Call(Const(rt.set_cell), (Var(f"{name}_cell"), var)), self.line))
            value = var
        self.env[name] = value

    def assign_to(self, target, value):
        if isinstance(target, gast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            stars = [k for k, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
            if stars:  # a, *b, c = value
                seq = self.call(Const(rt.unpack_starred), [value, Const(stars[0]),
                                                           Const(len(target.elts) - stars[0] - 1)], hint="_seq")
            else:
                seq = self.call(Const(rt.unpack), [value, Const(len(target.elts))], hint="_seq")
            for k, elt in enumerate(target.elts):
                elt = elt.value if isinstance(elt, gast.Starred) else elt
                hint = elt.id if isinstance(elt, gast.Name) else "_t"
                self.assign_to(elt, self.call(Const(operator.getitem), [seq, Const(k)], hint=hint))
        elif isinstance(target, gast.Subscript):
            self.store_item(target, value)
        elif isinstance(target, gast.Attribute):
            self.store_attr(target, value)
        else:
            self.fail(f"assignment to {type(target).__name__}", target)

    def stmt_Assign(self, node):
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, gast.Name) and target.id not in self.cellvars:
            value = self.expr(node.value, hint=target.id)
            self.bind(target.id, value)
            return
        if (len(node.targets) == 1 and isinstance(target, (gast.Tuple, gast.List))
                and isinstance(node.value, (gast.Tuple, gast.List)) and len(target.elts) == len(node.value.elts)
                and not any(isinstance(e, gast.Starred) for e in target.elts + node.value.elts)):
            values = [self.expr(v) for v in node.value.elts]
            live = [f".live{k}" for k in range(len(values))]  # a store may update a value not yet stored (a view:
            self.env.update(zip(live, values, strict=True))  # `y[1:], y[:-1] = y[:-1], y[1:]`): refreshed here
            for t, name in zip(target.elts, live, strict=True):
                self.assign_to(t, self.env.pop(name))
            return
        value = self.expr(node.value)
        for t in node.targets:
            self.assign_to(t, value)

    def stmt_AnnAssign(self, node):
        if node.value is not None:
            self.stmt_Assign(gast.copy_location(gast.Assign(targets=[node.target], value=node.value), node))

    def stmt_AugAssign(self, node):
        if isinstance(node.target, (gast.Subscript, gast.Attribute)):
            return self.augassign_item(node, INPLACE[type(node.op)])
        current = self.expr_Name(gast.Name(node.target.id, gast.Load(), None, None), "_t")
        value = self.expr(node.value)
        new = self.call(Const(INPLACE[type(node.op)]), [current, value], hint=node.target.id)
        self.region[-1].on_argument = self.lineage_of(current) in self.param_lineages()
        self.bind(node.target.id, new)
        if isinstance(current, Var) and node.target.id not in self.cellvars and (
                self.has_aliases(current, new) or self.lineage_of(current) in self.param_lineages(tracked=True)):
            self.mutate(current, new, maybe=True)  # a list or array `+=` updates in place: aliases see it

    def stmt_Raise(self, node):
        if node.exc is None:
            self.fail("a bare raise", node)
        self.call(Const(rt.raise_), [self.expr(node.exc)], hint="_")

    def stmt_Assert(self, node):
        test = self.expr(node.test)
        msg = node.msg
        self.join(test, lambda: None,
                  lambda: self.call(Const(rt.assertion_failed), [self.expr(msg) if msg else Const(None)], hint="_"))

    def fence(self, node):
        """Report unsupported syntax inside a nested function now, before anything runs."""
        for n in gast.walk(node):
            if type(n) in UNSUPPORTED and n is not node:
                self.fail(UNSUPPORTED[type(n)], n)

    def stmt_FunctionDef(self, node):
        self.fence(node)
        if node.decorator_list:
            self.fail("a decorated nested function", node)
        out = self.define(node, node.name, node.name)
        self.bind(node.name, out)

    def stmt_ClassDef(self, node):
        """A class defined inside the function: made at run time from the user's own class-body code object (its
        methods keep their source and are differentiated when called, as a module-level class's are). Its body and
        methods must not read the function's variables other than the class's own name: those would be cells the
        class creation hides from the data flow (a gradient to them would be lost), so that is refused, naming them."""
        line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        matches = [c for c in self.inner_codes if c.co_name == node.name and c.co_firstlineno == line]
        if not matches:
            self.fail(f"the class '{node.name}' (its code object was not found)", node)
        body = matches[0]
        read = [n for n in body.co_freevars if n != node.name]  # (its own name: `return Scale(...)` in a method)
        if read:
            read = ", ".join(f"'{n}'" for n in read)
            self.fail(f"a class defined inside a function whose body or methods read the function's variables ({read})",
                      node, "define the class at module level, or pass those values to its constructor")
        if node.keywords:
            self.fail("a class statement with keywords (metaclass=...) inside a function", node)
        self.inner_codes.remove(body)
        decorators = [self.expr(d) for d in node.decorator_list]
        bases = [self.expr(b) for b in node.bases]
        make_body = self.temp("_class_body")
        self.emit(Def(make_body, body, tuple(Var(f"{n}_cell") for n in body.co_freevars), None, None, line, ()))
        hint = node.name if not decorators else "_class"
        cls = self.call(Const(builtins.__build_class__), [make_body, Const(node.name), *bases], hint=hint)
        for k, decorator in enumerate(reversed(decorators)):
            cls = self.call(decorator, [cls], hint=node.name if k == len(decorators) - 1 else "_class")
        self.bind(node.name, cls)

    def define(self, node, name, hint):
        """A nested def/lambda: bound at run time from the user's own code object (so it keeps its source)."""
        line = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
        matches = [c for c in self.inner_codes if c.co_name == name and c.co_firstlineno == line]
        if not matches:
            self.fail(f"the nested function '{name}' (its code object was not found)", node)
        code = matches[0]
        self.inner_codes.remove(code)
        for n in updated_in_place(node, code.co_freevars):
            if n in self.cellvars:
                self.updated_by_closures[n] = name
        for default in node.args.kw_defaults:  # (positional defaults may be any value: `lambda t, i=i: ...`)
            if default is not None and not isinstance(default, gast.Constant):
                self.fail("a non-constant default value of a keyword-only parameter in a nested function", default)
        defaults = tuple(d.value if isinstance(d, gast.Constant) else _unwrapped(self.expr(d))
                         for d in node.args.defaults) or None
        kwdefaults = {a.id: d.value for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                      if d is not None} or None
        for n in code.co_freevars:
            if n not in self.cellvars and n not in self.freevars:  # a comprehension's own variable (3.11)
                self.fail(f"a nested function ('{name}') that reads the comprehension's variable '{n}'", node,
                          f"bind it as a default: lambda ..., {n}={n}: ...")
            if n in self.cellvars and n not in self.versions:
                self.fail(f"the nested function '{name}' reads '{n}' before it is assigned; assign it first", node)
        cells = tuple(Var(f"{n}_cell") for n in code.co_freevars)
        for n in code.co_freevars:
            if n in self.freevars and n not in self.used_freevars:
                self.used_freevars.append(n)
        named = isinstance(hint, str) and hint in self.locals and hint not in self.cellvars  # not a temp hint (_t)
        out = self.new_var(hint) if named else self.temp("_fn")
        values = tuple(self.env.get(n, Var(n)) if n in self.cellvars else Var(n) for n in code.co_freevars)
        self.emit(Def(out, code, cells, defaults, kwdefaults, node.lineno, values))
        return out

    def global_default(self, node):
        """Is a default value a module-level name such as `ALL` or `np.inf` (a constant of the differentiation)?"""
        while isinstance(node, gast.Attribute):
            node = node.value
        return isinstance(node, gast.Name) and node.id not in self.special and node.id not in self.freevars \
            and node.id not in self.locals






def lower(source, code, globals_=None):
    """Lower the function in `source` (an `ast_adjoint.source.Source`) whose code object is `code`; `globals_` (the
    function's module globals) tells which global names are containers (see `Lowerer.global_container`)."""
    node = source.node
    low = Lowerer(source, code, globals_)
    if isinstance(node, gast.AsyncFunctionDef):
        low.fail("async def", node)
    params = []
    a = node.args
    for arg in [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
                *([a.kwarg] if a.kwarg else [])]:
        var = low.new_var(arg.id)
        params.append(var)
        low.env[arg.id] = var
        low.env[f".param{len(params) - 1}"] = var  # follows the argument's object through updates in place
    updated = updated_in_place(node, {p.name for p in params}, augmented=False)
    low.tracked_params = {f".param{k}" for k, p in enumerate(params) if p.name in updated}
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
    # a function that updates an argument in place also returns its final version (see lower_mutation)
    mutated = tuple(k for k, p in enumerate(params) if low.lineage.get(p) in low.mutated
                    and isinstance(low.env.get(f".param{k}"), Var))
    if mutated:
        ret = low.call(Const(rt.tuple_of), [ret, *(low.env[f".param{k}"] for k in mutated)], hint="_result")
    return Function(code.co_name if code.co_name != "<lambda>" else "lambda", params, list(low.used_freevars),
                    low.region, ret, a, source.filename, node.lineno, mutated), low.namer

"""Expressions for lower(): each becomes calls whose arguments are atoms (`Const`, `Var`, `Global`); `and`/`or`,
`x if c else y` and comparison chains become `If`s; literals fold (`5 - 1`) when `OPTIONS.fold_literals` allows.
"""
import collections
import operator
import types

import gast
import numpy as np

from ...options import OPTIONS
from .. import mutate as mt
from .. import runtime as rt
from ..ir import Assign, Const, Global, Phi, Var

BINOPS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv,
          gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod, gast.Pow: operator.pow,
          gast.MatMult: operator.matmul, gast.LShift: operator.lshift, gast.RShift: operator.rshift,
          gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.BitAnd: operator.and_}
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
UNSUPPORTED = {gast.AsyncWith: "async with",
               gast.AsyncFor: "async for", gast.AsyncFunctionDef: "async def", gast.Yield: "yield",
               gast.YieldFrom: "yield from", gast.Await: "await", gast.Global: "a global statement",
               gast.Nonlocal: "a nonlocal statement"}
if hasattr(gast, "Match"):
    UNSUPPORTED[gast.Match] = "match"
if hasattr(gast, "TryStar"):
    UNSUPPORTED[gast.TryStar] = "try/except*"


def _calls(node):
    return any(isinstance(n, gast.Call) for n in gast.walk(node))


def unsupported(node):
    """What to call `node` in an UnsupportedSyntax error, or None where it is supported (a `try` without `except` is
    a try/finally)."""
    if type(node) is gast.Try and not node.handlers:
        return "try/finally"
    return UNSUPPORTED.get(type(node))

# module globals of these types are containers code may update in place (`global_container`)
_CONTAINERS = (list, dict, set, collections.deque, bytearray)


class Expressions:
    """The expressions part of the Lowerer (mixed into it)."""

    def expr(self, node, hint="_t"):
        self.line = getattr(node, "lineno", self.line)
        kind = type(node)
        if kind in UNSUPPORTED:
            self.fail(unsupported(node), node)
        method = getattr(self, "expr_" + kind.__name__, None)
        if method is None:
            self.fail(f"the expression {kind.__name__}", node)
        return method(node, hint)

    def expr_Constant(self, node, hint):
        return Const(node.value)

    def expr_Name(self, node, hint, checked=True):
        """A name's value; `checked` False: a name some path leaves unbound as it is, the placeholder included (the
        arguments of a `try` body's function, which may bind the name before reading it)."""
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
            value = self.env.get(name, Var(name))
            return self.checked_read(name, value) if checked and self.may_be_unbound(value) else value
        if self.global_container(name):  # refused if this differentiated call updated it in place (mutate.global_read)
            return self.call(Const(mt.global_read), [Global(name), Const(name), Const((self.filename, self.line))],
                             hint=hint)
        return Global(name)

    def may_be_unbound(self, atom):
        """May `atom` hold `rt.UNBOUND` at run time: a join or a loop's carry of a name some path left unbound? Not in
        generated code differentiated again (nesting), whose placeholders for such names are values it passes on."""
        if self.code.co_filename.startswith("<zygotepy:"):
            return False
        return type(atom) is Const and atom.value is rt.UNBOUND or atom in self.__dict__.get("maybe_unbound", ())

    def note_maybe_unbound(self, var, *sources):
        """`var` (a phi, a carried value) takes one of `sources`: it may be unbound where one of them may be."""
        if any(self.may_be_unbound(s) for s in sources):
            self.__dict__.setdefault("maybe_unbound", set()).add(var)

    def checked_read(self, name, value):
        """A read of `name`, which some path leaves unbound: Python's UnboundLocalError where it is unbound now
        (`check_bound`), else its value, as a copy that rebinds the name, so that later reads need no test."""
        self.call(Const(rt.check_bound), [value, Const(name)], hint="_")
        if type(value) is not Var:  # (unbound on every path here: the test raises)
            return value
        checked = self.new_var(name) if name not in self.cellvars else self.temp(name)
        self.emit(Assign(checked, value, self.line))
        self.rebind(value, checked)
        return checked

    def global_container(self, name):
        """Is the module global `name` a container, an array or a plain object that code may update in place (also
        through an alias: `b = get_buffer(); b[0] = v`)? A dotted name (`Reg.items`, `config.SIZES`: an attribute of a
        class or a module global) counts only if it is a container."""
        if "." in name:
            value = self.globals.get(name.split(".")[0])
            for attr in name.split(".")[1:]:
                value = getattr(value, attr, None)
            return isinstance(value, _CONTAINERS)
        if name in self.locals or name in self.freevars or name in self.special or name not in self.globals:
            return False
        value = self.globals[name]
        return isinstance(value, (*_CONTAINERS, np.ndarray)) or (
            hasattr(value, "__dict__") and not callable(value) and not isinstance(value, types.ModuleType)
            and type(value).__module__ != "builtins")

    def global_name(self, node):
        """The dotted name of a module global (`CACHE`) or of an attribute chain rooted at one (`Reg.items`), or None
        where `node` is anything else (a local, a captured name, a call)."""
        attrs = []
        while isinstance(node, gast.Attribute):
            attrs.append(self.mangle(node.attr))
            node = node.value
        if not isinstance(node, gast.Name) or node.id in self.locals or node.id in self.freevars \
                or node.id in self.special or node.id not in self.globals:
            return None
        return ".".join((node.id, *reversed(attrs)))

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
            path = f"{obj.path}.{attr}"
            if self.global_container(path):  # `Reg.items`: a class's (or a module's) list, shared like a global's
                return self.call(Const(mt.global_read), [Global(path), Const(path), Const((self.filename, self.line))],
                                 hint=hint)
            return Global(path)
        if attr == "__class__":  # (a value's class, whatever number type carries it: `rt.class_of`)
            return self.call(Const(rt.class_of), [obj], hint=hint)
        out = self.call(Const(getattr), [obj, Const(attr)], hint=hint)
        self.note_child(out, "attr", obj, Const(attr))
        return out

    def expr_BinOp(self, node, hint):
        a, b = self.in_order([node.left, node.right])
        folded = _fold(BINOPS[type(node.op)], a, b)
        if folded is not None:
            return folded
        out = self.call(Const(BINOPS[type(node.op)]), [a, b], hint=hint)
        if any(self.holds_objects(v) for v in (a, b)):
            # `[a] * 2`, `lst + lst`, `d | {"k": a}`: a new container holding the same objects, so an update through one
            # reaches the other; a user's operator (`g @ h`) may return a view of what its object keeps
            self.note_held(out, [v for v in (a, b) if isinstance(v, Var)])
        return out

    def holds_objects(self, atom):
        """Is `atom` known to hold other values (a list or tuple display, a call's result that may keep them, a
        comprehension's list)?"""
        if not isinstance(atom, Var):
            return False
        lin = self.lineage_of(atom)
        holders = {p for links in self.parents.values() for _, p, _ in links}
        # (or a loop's carried object whose last version in the body held them: a comprehension's list)
        return lin in holders or any(last in holders for last, carried in self.loop_joins.items() if lin in carried)

    def expr_UnaryOp(self, node, hint):
        a = self.expr(node.operand)
        if isinstance(a, Const) and isinstance(node.op, gast.USub):
            return Const(-a.value)
        out = self.call(Const(UNARY[type(node.op)]), [a], hint=hint)
        if self.may_be_users_object(a):  # its `__neg__` may return a view of what it keeps (`self.u[::-1]`): an
            self.note_held(out, [a])  # update of one reaches the other, found at run time, as a method call's result
        return out

    def may_be_users_object(self, atom):
        """Might `atom` be an object of a user's class (one that holds others, read out of another, or an argument),
        not a number or an array this function computed?"""
        if not isinstance(atom, Var):
            return False
        lin = self.lineage_of(atom)
        return self.holds_objects(atom) or lin in self.parents or lin in self.param_lineages()

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
        truth = self.truth(node.values[0], first)
        if isinstance(node.op, gast.And):
            stmt = self.join(truth, then_rest, lambda: None)
            arms = (lambda: got["v"], lambda: first)
        else:
            stmt = self.join(truth, lambda: None, then_rest)
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
        test = self.truth(node.test, test)
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
        items = self.in_order([e.value if isinstance(e, gast.Starred) else e for e in elts])
        out = self.call(Const(helper), [Const(stars), *items], hint=hint)
        self.note_held(out, items)  # `[*W]` holds W's items: an update through either reaches the other
        return out

    def elements(self, elts):
        if any(isinstance(e, gast.Starred) for e in elts):
            self.fail("a starred element in a display", elts[0])
        return self.in_order(elts)

    def in_order(self, nodes):
        """The atoms of `nodes`, evaluated left to right as Python does. One evaluated before a later one that calls
        something is kept under a hidden name meanwhile, so that an update in place that call makes reaches it as it
        reaches a named variable (`[a.add(x), a.add(y)]` of a method returning `self`: both entries are the object
        after both calls, not the first a stale version of it)."""
        calls_after, later = [], False  # (does a node right of k call something: one walk of each node)
        for node in reversed(nodes):
            calls_after.append(later)
            later = later or _calls(node)
        out, kept = [], []
        for k, node in enumerate(nodes):
            atom = self.expr(node)
            out.append(atom)
            if calls_after[len(nodes) - 1 - k]:
                kept.append((k, self.keep(atom)))
        for k, name in kept:
            out[k] = self.take(name, out[k])
        return out

    def keep(self, atom):
        """Hold `atom` under a hidden name until `take`, or None where it is no variable."""
        if not isinstance(atom, Var):
            return None
        self.kept_count += 1
        name = f".live_in{self.kept_count}"  # (a `.live` name: an update refreshes it as a user's name)
        self.env[name] = atom
        return name

    def take(self, name, atom):
        return atom if name is None else self.env.pop(name)

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
        flat = self.in_order([n for pair in pairs for n in pair])
        out = self.call(Const(rt.dict_of), flat, hint=hint)
        self.note_held(out, flat[1::2])
        return out

    def expr_Subscript(self, node, hint):
        obj, index = self.subscript(node, self.expr)
        out = self.call(Const(operator.getitem), [obj, index], hint=hint)
        self.note_child(out, "item", obj, index)
        return out

    def subscript(self, node, object_of):
        """The object and the index atom of `node`, `obj[index]`: `obj.flat[i]` is `obj[flat_index(obj, i)]` (a
        flatiter's reads and writes are the array's own)."""
        value = node.value
        if isinstance(value, gast.Attribute) and value.attr == "flat":
            obj = object_of(value.value)
            return obj, self.call(Const(rt.flat_index), [obj, self.expr(node.slice)], hint="_flat")
        return object_of(value), self.expr(node.slice)

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

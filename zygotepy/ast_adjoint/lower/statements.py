"""Statements for lower(): the dispatch to `stmt_<Kind>`, assignments (`bind`, unpacking, `x += v`), `raise` and
`assert`. Control flow is control.py's, nested definitions definitions.py's, `del` updates.py's.
"""
import operator

import gast

from .. import runtime as rt
from ..ir import Assign, Call, Const, Var
from .calls import VIEWS
from .expressions import UNSUPPORTED, unsupported

INPLACE = {gast.Add: operator.iadd, gast.Sub: operator.isub, gast.Mult: operator.imul, gast.Div: operator.itruediv,
           gast.FloorDiv: operator.ifloordiv, gast.Mod: operator.imod, gast.Pow: operator.ipow,
           gast.MatMult: operator.imatmul, gast.LShift: operator.ilshift, gast.RShift: operator.irshift,
           gast.BitOr: operator.ior, gast.BitXor: operator.ixor, gast.BitAnd: operator.iand}
_ITERATORS = {"zip", "map", "filter", "enumerate", "reversed"}


def _read_names(value):
    """The names a call's arguments (not the function's own name), or a generator expression, read (not the
    generator's own variables)."""
    parts = [value] if isinstance(value, gast.GeneratorExp) else [*value.args, *(k.value for k in value.keywords)]
    nodes = [n for part in parts for n in gast.walk(part) if isinstance(n, gast.Name)]
    return sorted({n.id for n in nodes if isinstance(n.ctx, gast.Load)} -
                  {n.id for n in nodes if isinstance(n.ctx, gast.Store)})


def _package(globals_):
    """The package a relative import in a module with these globals starts from, as Python finds it."""
    package = globals_.get("__package__")
    if package is None:
        spec = globals_.get("__spec__")
        name = globals_.get("__name__", "")
        package = spec.parent if spec is not None else name if "__path__" in globals_ else name.rpartition(".")[0]
    return package


class Statements:
    """The statements part of the Lowerer (mixed into it)."""

    def stmt(self, node):
        self.line = getattr(node, "lineno", self.line)
        self.latest.clear()  # temporaries' versions live within one statement
        kind = type(node)
        if kind in UNSUPPORTED:
            self.fail(unsupported(node), node)
        method = getattr(self, "stmt_" + kind.__name__, None)
        if method is None:
            self.fail(f"the statement {kind.__name__}", node)
        method(node)

    def stmt_Pass(self, node):
        pass

    def stmt_Import(self, node):
        """`import a.b [as c]` / `from m import x [as y]`: each name bound, when the statement runs, to what Python
        binds (`runtime.import_name`, a constant of the differentiation)."""
        module = node.module or "" if isinstance(node, gast.ImportFrom) else None
        level = getattr(node, "level", 0) or 0
        package = _package(self.globals) if level else None
        for alias in node.names:
            if alias.name == "*":
                self.fail("from ... import * inside a function", node)
            if module is None:  # import a.b: binds a; import a.b as c: binds a.b
                args = (alias.name, None if alias.asname is None else "")
            else:
                args = (module, alias.name)
            bound = alias.asname or (alias.name if module is not None else alias.name.split(".")[0])
            self.bind(bound, self.call(Const(rt.import_name), [Const(package), *map(Const, args), Const(level)],
                                       hint=bound))

    stmt_ImportFrom = stmt_Import

    def stmt_Expr(self, node):
        if not isinstance(node.value, gast.Constant):
            self.statement_call = isinstance(node.value, gast.Call)
            self.expr(node.value)

    def bind(self, name, value):
        """Bind local `name` to `value`; a cell variable (captured by a nested def) gets a real assignment."""
        if name in self.cellvars:
            # each assignment is a version, as for any local, and sets the cell; a nested function is differentiated
            # with the version current where it was made, so one called after a new assignment is refused when it
            # is called (call_checks.check_cells: made in a loop and called in the same iteration, or never called
            # again, is fine)
            var = self.new_var(name)
            self.emit(Assign(var, value, self.line))
            self.inherit(var, value)  # (`z = y`: one object, so an update of `y` in place reaches `z`'s cell)
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
                starred, elt = isinstance(elt, gast.Starred), elt.value if isinstance(elt, gast.Starred) else elt
                hint = elt.id if isinstance(elt, gast.Name) else "_t"
                item = self.call(Const(operator.getitem), [seq, Const(k)], hint=hint)
                # an item of `value`, or a list of its items (as `list(value)` is): found by identity at run time, so
                # that an update of one in place is value's
                self.note_held(*((item, [value]) if starred else (value, [item])))
                self.assign_to(elt, item)
        elif isinstance(target, gast.Subscript):
            self.store_item(target, value)
        elif isinstance(target, gast.Attribute):
            self.store_attr(target, value)
        else:
            self.fail(f"assignment to {type(target).__name__}", target)

    def stmt_Assign(self, node):
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, gast.Name) and target.id not in self.cellvars:
            self.refuse_iterators_taken_in_part(node.value, kept=True)  # (`g = (2 * v for v in it)`, `it` read later)
            sources = self.kept_iterator(node.value)
            if sources is not None:  # `pairs = zip(a, b)`: used up, and reading a and b, as it goes
                self.refuse_kept_draws(node.value)
                made = self.expr_ListComp(node.value, target.id) if isinstance(node.value, gast.GeneratorExp) \
                    else self.expr(node.value, hint=target.id)
                value = self.call(Const(rt.kept_iterator), [made, *sources], hint=target.id)
                self.note_held(value, [made])  # (its items are the list's: an update of one reaches their holders)
            else:
                value = self.expr(node.value, hint=target.id)
            self.bind(target.id, value)
            return
        if (len(node.targets) == 1 and isinstance(target, (gast.Tuple, gast.List))
                and isinstance(node.value, (gast.Tuple, gast.List)) and len(target.elts) == len(node.value.elts)
                and not any(isinstance(e, gast.Starred) for e in target.elts + node.value.elts)):
            live = [f".live{k}" for k in range(len(node.value.elts))]
            for name, v in zip(live, node.value.elts, strict=True):  # a store may update a value not yet stored (a
                self.env[name] = self.expr(v)  # view: `y[1:], y[:-1] = y[:-1], y[1:]`), and so may a later value's
                # call (`a, b = Layer(w0, net), Layer(w1, net)`, each appending itself to `net.layers`): refreshed here
            for t, name in zip(target.elts, live, strict=True):
                self.assign_to(t, self.env.pop(name))
            return
        named = len(node.targets) == 1 and isinstance(target, gast.Name) and isinstance(node.value, gast.Lambda)
        value = self.expr(node.value, hint=target.id) if named else self.expr(node.value)  # (a lambda calling itself)
        for t in node.targets:
            self.assign_to(t, value)

    def kept_iterator(self, value):
        """The objects an iterator a name keeps reads as it goes (`runtime.kept_iterator`), or None where `value` is
        none: a generator expression, a call of the builtin `zip`, `map`, `filter`, `enumerate` or `reversed` or of
        one of itertools' lazy iterators (the locals its arguments read, and the dicts of views among them), or `iter`
        of a dict's view (the dict)."""
        builtin = isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
            value.func.id not in self.locals and value.func.id not in self.globals
        if isinstance(value, gast.GeneratorExp) or builtin and value.func.id in _ITERATORS \
                or self.lazy_itertools(value):
            sources = [self.env[n] for n in _read_names(value) if isinstance(self.env.get(n), Var)]
            return sources + [d for d in self.viewed(sources) if d not in sources]
        if builtin and value.func.id == "iter" and len(value.args) == 1:
            arg = value.args[0]
            if isinstance(arg, gast.Call) and isinstance(arg.func, gast.Attribute) and arg.func.attr in VIEWS \
                    and isinstance(arg.func.value, gast.Name) and not arg.args:  # iter(d.values())
                arg = arg.func.value
                return [self.env[arg.id]] if isinstance(self.env.get(arg.id), Var) else None
            if isinstance(arg, gast.Name) and isinstance(self.env.get(arg.id), Var):  # iter(vals)
                return self.viewed([self.env[arg.id]]) or None
        return None

    def viewed(self, sources):
        """The dicts whose views (`vals = d.values()`) are among `sources`, as they are now."""
        dicts = (self.current(p) for s in sources for kind, p, _ in self.parents_of(self.lineage_of(s)) if kind == "view")
        return [d for d in dicts if isinstance(d, Var)]

    def stmt_AnnAssign(self, node):
        if node.value is not None:
            self.stmt_Assign(gast.copy_location(gast.Assign(targets=[node.target], value=node.value), node))

    def stmt_AugAssign(self, node):
        if isinstance(node.target, (gast.Subscript, gast.Attribute)):
            return self.augassign_item(node, INPLACE[type(node.op)])
        current = self.expr_Name(gast.Name(node.target.id, gast.Load(), None, None), "_t")
        value = self.expr(node.value)
        new = self.call(Const(INPLACE[type(node.op)]), [current, value], hint=node.target.id)
        if isinstance(node.op, (gast.Add, gast.BitOr)) and self.holds_objects(value):
            self.note_held(new, [value])  # `hist += [u]`, `d |= {"k": u}`: the result holds u itself, as `+` (expr_BinOp)
        self.region[-1].on_argument = self.lineage_of(current) in self.param_lineages()
        if node.target.id in getattr(self, "captured_so_far", ()) and node.target.id in self.cellvars \
                and isinstance(current, Var):  # a nested function made before reads the cell
            self.call(Const(rt.captured_updated), [current, new, Const(node.target.id), Const(self.filename),
                                                   Const(self.line)], hint="_")
        cell = node.target.id in self.cellvars
        if cell and self.updates_aliases(current, new):  # (first: the cell's copy of `new` must be of its lineage)
            self.mutate(current, new, maybe=True)
        self.bind(node.target.id, new)
        if not cell and self.updates_aliases(current, new):
            self.mutate(current, new, maybe=True)  # a list or array `+=` updates in place: aliases see it

    def updates_aliases(self, current, new):
        """Might `x += v` (`current` becoming `new`) be seen through another name, or by the caller?"""
        return isinstance(current, Var) and (
            self.has_aliases(current, new) or self.lineage_of(current) in self.param_lineages(tracked=True))

    def stmt_Raise(self, node):
        if node.exc is None:
            self.fail("a bare raise", node)
        if node.cause is not None:  # `raise B from e`
            self.call(Const(rt.raise_from), [self.expr(node.exc), self.expr(node.cause)], hint="_")
            return
        self.call(Const(rt.raise_), [self.expr(node.exc)], hint="_")

    def stmt_Assert(self, node):
        test = self.expr(node.test)
        msg = node.msg
        self.join(test, lambda: None,
                  lambda: self.call(Const(rt.assertion_failed), [self.expr(msg) if msg else Const(None)], hint="_"))

"""Nested definitions for lower(): a nested def, lambda or class is made at run time from the user's own code object
(so it keeps its source); the locals nested functions capture are cells (`captured_names`).
"""
import builtins
import types

import gast

from .. import runtime as rt
from ..ir import Const, Def, Var
from .expressions import unsupported
from .scan import updated_in_place

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


class Definitions:
    """The nested functions and classes part of the Lowerer (mixed into it)."""

    def expr_Lambda(self, node, hint):
        return self.define(node, "<lambda>", hint)

    def fence(self, node):
        """Report unsupported syntax inside a nested function now, before anything runs."""
        for n in gast.walk(node):
            if n is not node and unsupported(n) is not None:
                self.fail(unsupported(n), n)

    def stmt_FunctionDef(self, node):
        """A nested def; its decorators (evaluated first, as Python does) are calls applied to it, innermost first
        (`@functools.wraps(f)`, `@functools.lru_cache`)."""
        self.fence(node)
        decorators = [self.expr(d) for d in node.decorator_list]
        out = self.define(node, node.name, node.name if not decorators else "_fn")
        for k, decorator in enumerate(reversed(decorators)):
            out = self.call(decorator, [out], hint=node.name if k == len(decorators) - 1 else "_fn")
        self.bind(node.name, out)

    def stmt_ClassDef(self, node):
        """A class defined inside the function: made at run time from the user's own class-body code object (its
        methods keep their source and are differentiated when called, as a module-level class's are). Its body and
        methods must not read the function's variables other than the class's own name: those would be cells the
        class creation hides from the data flow (a gradient to them would be lost), so that is refused, naming them."""
        line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        matches = [c for c in self.inner_codes if c.co_name == node.name and c.co_firstlineno == line]
        if not matches:  # (as for a nested function: dropped as unreachable)
            self.bind(node.name, self.call(Const(rt.unreachable), [Const(f"the class '{node.name}'"),
                                                                   Const(self.filename), Const(line)], hint="_class"))
            return
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
        for default in node.args.kw_defaults:  # (positional defaults may be any value: `lambda t, i=i: ...`)
            if default is not None and not isinstance(default, gast.Constant):
                self.fail("a non-constant default value of a keyword-only parameter in a nested function", default)
        # the defaults first, as Python compiles them: a lambda among them (`lambda t, g=lambda s: s: ...`, one line,
        # one name) takes its own code object, which comes before this function's
        defaults = tuple(d.value if isinstance(d, gast.Constant) else _unwrapped(self.expr(d))
                         for d in node.args.defaults) or None
        matches = [c for c in self.inner_codes if c.co_name == name and c.co_firstlineno == line]
        if not matches:  # code CPython dropped as unreachable (after `return` or `break`, under `if False:`)
            return self.call(Const(rt.unreachable), [Const(f"the nested function '{name}'"), Const(self.filename),
                                                      Const(line)], hint="_fn")
        code = matches[0]
        self.inner_codes.remove(code)
        for n in updated_in_place(node, code.co_freevars):
            if n in self.cellvars:
                self.updated_by_closures[n] = name
        self.captured_so_far = {*getattr(self, "captured_so_far", ()), *code.co_freevars}  # (statements.py)
        kwdefaults = {a.id: d.value for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                      if d is not None} or None
        own = hint if name == "<lambda>" else name  # (`f = lambda t, n: ... f(...)` calls itself through `f`)
        itself = own if own in code.co_freevars and own in self.cellvars and hint == own else None  # recursive
        for n in code.co_freevars:
            if n not in self.cellvars and n not in self.freevars:  # a comprehension's own variable (3.11)
                self.fail(f"a nested function ('{name}') that reads the comprehension's variable '{n}'", node,
                          f"bind it as a default: lambda ..., {n}={n}: ...")
            if n in self.cellvars and n not in self.versions and n != itself and n == name:
                # (`@functools.lru_cache` over a def calling itself: its cell holds the decorated function)
                self.fail(f"a nested function ('{name}') that calls itself through a decorator", node,
                          f"define '{name}' at module level, passing what it reads as arguments (a memo dict too), "
                          f"or drop the decorator")
            if n in self.cellvars and n not in self.versions and n != itself:
                self.fail(f"a nested function ('{name}') made before '{n}', which it reads, is assigned", node,
                          f"assign '{n}' before the def")
        cells = tuple(Var(f"{n}_cell") for n in code.co_freevars)
        for n in code.co_freevars:
            if n in self.freevars and n not in self.used_freevars:
                self.used_freevars.append(n)
        named = isinstance(hint, str) and hint in self.locals and hint not in self.cellvars  # not a temp hint (_t)
        out = self.new_var(hint) if named else self.temp("_fn")
        values = tuple(Const(rt.ITSELF) if n == itself else self.env.get(n, Var(n)) if n in self.cellvars else Var(n)
                       for n in code.co_freevars)
        self.emit(Def(out, code, cells, defaults, kwdefaults, node.lineno, values))
        if itself:  # (its calls of itself nest their cotangents in its own: folded by this call's rule)
            out = self.call(Const(rt.recursive_closure), [out, Const(itself)], hint=itself)
        self.closure_reads[self.lineage_of(out)] = code.co_freevars  # (what a call of it may return: calls.py)
        # it holds its defaults: an update of one (`acc.append(x)` after `lambda t, acc=acc: ...`) makes it a new
        # version, whose calls go through J (call_checks.check_cells refuses them)
        self.note_held(out, [d for d in defaults or () if isinstance(d, Var)])
        return out

    def global_default(self, node):
        """Is a default value a module-level name such as `ALL` or `np.inf` (a constant of the differentiation)?"""
        while isinstance(node, gast.Attribute):
            node = node.value
        return isinstance(node, gast.Name) and node.id not in self.special and node.id not in self.freevars \
            and node.id not in self.locals


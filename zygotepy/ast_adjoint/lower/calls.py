"""Calls for lower(): a call becomes one IR call, or an update in place (a store spelled as a call, `out=`, a mutating
method, a helper or method that may update its arguments: `mutating_call`); and what a callee may do to its arguments
(a user's method or helper that may update them, a library function whose result is fresh).
"""
import builtins
import inspect
import operator
import os
import types

import gast
import numpy as np

from ...adjoints import registry
from ...adjoints.in_place import updates_first
from .. import mutate as mt
from .. import runtime as rt
from ..guards_runtime import isscalar, kept_iterator_taken_in_part
from ..call_checks import IN_PLACE_CALLS, IN_PLACE_DUNDERS
from ..ir import Const, Global, Var
from .expressions import _CONTAINERS, _calls
from .lineage import TAKES_OUT, TAKES_OUT_METHODS
from .scan import _LIBRARY_PACKAGES, CALLING_BACK, constructor_updates, may_update_in_place, positional_out, pure_method, \
    array_method_out, updating_method_name

_BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))

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
                          divmod, pow, complex, all, any, hasattr, rt.watch_lazy] if f is not None}


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


_BY_METHOD = {id(f) for f in (abs, round, pow, divmod)}  # (what they give is the object's method's: `__abs__`)


def _fresh(fn, args=(), users=None):
    """Is `fn`'s result a new object (no link to its arguments)? Not `abs(g)`, `round(g)`, `pow(g, 2)` of what may be
    a user's object (`users`: an argument's test), whose method may return a view of what it keeps."""
    if id(fn) in _BY_METHOD and any(users(a) for a in args):
        return False
    return id(fn) in _FRESH or isinstance(fn, np.ufunc) or getattr(fn, "__module__", None) == "math"


VIEWS = ("values", "items")
LAZY_BUILTINS = ("zip", "map", "filter", "enumerate", "reversed", "iter")  # (Python's take their items as asked)  # a dict's views whose rules make lists: an update of the dict makes them again

_STORE_DUNDERS = {"__setitem__": mt.setitem, "__delitem__": mt.delitem}
# the stores written as calls (`operator.setitem(d, k, v)`, `list.__setitem__(ys, i, v)`, `setattr(obj, name, v)`,
# `object.__setattr__(obj, name, v)`: the stores they are
_STORES = {id(f): (prim, n) for fs, prim, n in (
    ((operator.setitem, list.__setitem__, dict.__setitem__), mt.setitem, 3),
    ((operator.delitem, list.__delitem__, dict.__delitem__), mt.delitem, 2), ((setattr,), mt.setattr_, 3),
    ((delattr,), mt.delattr_, 2), ((object.__setattr__,), mt.object_setattr, 3),
    ((object.__delattr__,), mt.object_delattr, 2)) for f in fs}


class Calls:
    """The calls part of the Lowerer (mixed into it)."""

    def expr_Call(self, node, hint):
        func = node.func
        statement, self.statement_call = self.statement_call, False
        self.refuse_iterators_taken_in_part(node)  # `any(v > 0 for v in it)`, `it` read again later
        if isinstance(func, gast.Name) and func.id == "super" and not node.args and "__class__" in self.freevars:
            first = self.code.co_varnames[0] if self.code.co_argcount else None
            if first is None:
                self.fail("super() in a function without arguments", node)
            me = self.env.get(first, Var(first))
            out = self.call(Global("super"), [self.expr_Name(gast.Name("__class__", gast.Load(), None, None), hint),
                                              me], hint=hint)
            self.lineage[out] = self.lineage_of(me)  # a proxy of the object: updating it updates `self`
            return out
        if isinstance(func, gast.Name) and func.id in ("eval", "exec", "locals", "vars", "globals") \
                and func.id not in self.locals and func.id not in self.freevars and func.id not in self.globals \
                and (func.id != "vars" or not node.args):
            # (eval("x * 2") had the value, and no gradient: the code it runs is a string zygotepy never reads; locals()
            # would show the generated code's variables; a store into globals() rebinds a module's name, whose reads
            # are constants)
            self.fail(f"{func.id}() in a differentiated function", node, "write the code in the function itself")
        holder = self.global_name(func.value) if isinstance(func, gast.Attribute) else None
        if holder is not None and updating_method_name(func.attr) and self.global_container(holder):
            # `CACHE.append(v)` on a module global, `Reg.items.append(v)` on a class's list
            name = holder
            if "." not in name and not isinstance(self.globals[name], _CONTAINERS):
                pass  # a user object's own method: derived, updating `self` (logged)
            else:
                args, kwargs, star = self.arguments(node)
                args = [Global(name), Const(name), Const(self.mangle(func.attr)), Const((self.filename, self.line)),
                        *args]
                if "." in name and isinstance(self.resolve(name.rsplit(".", 1)[0]), type):
                    # a class's list is every instance's: its reads through one (`self.items`) go unchecked
                    return self.unseen_update(f"`{name}.{func.attr}(...)`", Const(mt.global_method), args, kwargs,
                                              star, hint)
                return self.call(Const(mt.global_method), args, kwargs, star, hint)
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and updating_method_name(func.attr) \
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
                self.stored(_STORE_DUNDERS[func.attr], [obj, *args])
                return Const(None)
        if isinstance(func, gast.Attribute) and func.attr in IN_PLACE_DUNDERS:
            # `y = a.__imul__(2)` updates `a` in place but reads as a plain call, so it would run unseen by the
            # mutation lowering (a silently wrong gradient); the augmented assignment is what it means
            self.fail(f"calling {func.attr} by name", node,
                      f"write the augmented assignment `x {IN_PLACE_DUNDERS[func.attr]}= y` instead")
        if isinstance(func, gast.Attribute) and func.attr != "__class__":  # (`x.__class__(v)`: the class, called)
            obj = self.expr(func.value)
            if not isinstance(obj, Global):
                kept = self.keep(obj) if any(_calls(a) for a in (*node.args, *node.keywords)) else None
                args, kwargs, star = self.arguments(node)
                obj = self.take(kept, obj)  # (`a.add(x).join(a.add(y))`: the object after both updates)
                now = self.env.get(func.value.id) if isinstance(func.value, gast.Name) else None
                if isinstance(obj, Var) and isinstance(now, Var) and now != obj and \
                        self.lineage.get(now) == self.lineage.get(obj):
                    obj = now  # an argument updated the object in place (`lst.append(lst.pop(0))`): the method sees it
                fn, args = Const(rt.callmethod), [obj, Const(self.mangle(func.attr)), *args]
                if any(k == "out" for k, _ in kwargs):  # `y.clip(0, 1, out=y)`: computed, then written into `out`
                    kept = [(k, v) for k, v in kwargs if k != "out"]
                    return self.mutating_call(Const(mt.with_out), [fn, *args, dict(kwargs)["out"]], kept, star, hint,
                                              range(len(args) + 1, len(args) + 2 + len(kept)))
                if not statement and star is None and array_method_out(func.attr, len(args) - 2):
                    # `r = X.sum(1, None, o)`: an ndarray method's out given by position, a call that may update its
                    # arguments (adjoints/mutation/positionals.py runs it as its keyword form where X is an array)
                    return self.mutating_call(fn, args, kwargs, star, hint, [0, *range(2, len(args) + len(kwargs))])
                if isinstance(obj, Var) and updating_method_name(func.attr) and not self.observable(obj) and not (
                        isinstance(func.value, gast.Name) and self.global_container(func.value.id)):
                    # `C().items.append(v)`, `get_cache().append(v)`: no name of this function reaches the object, so
                    # only state outside it (a class's attribute, a global a helper returns) can be read back later
                    return self.unseen_update(f"`.{func.attr}(...)`", fn, args, kwargs, star, hint)
                if statement:  # `obj.step(x)`: may update its object and its arguments
                    # a module global's own method updates an object that outlives this call: run it as an update
                    # (logged), so that reading the global afterwards is refused (mutate.global_read), not ungraded
                    kept = [0] if isinstance(func.value, gast.Name) and self.global_container(func.value.id) else ()
                    return self.mutating_call(fn, args, kwargs, star, hint, [0, *range(2, len(args) + len(kwargs))],
                                              kept)
                if updating_method_name(func.attr):  # `y = lst.pop()`
                    out = self.mutating_call(fn, args, kwargs, star, hint, [0, *range(2, len(args) + len(kwargs))])
                    if func.attr in TAKES_OUT_METHODS:
                        self.note_taken_out(out, obj)
                    return out
                if self.updating_method(func.attr) or self.object_attribute(func.attr):
                    # `a = sim.decay()`: a user method that may update its object; `self.cell(x)`: a callable object
                    return self.mutating_call(fn, args, kwargs, star, hint, [0, *range(2, len(args) + len(kwargs))],
                                              site=True)
                out = self.call(fn, args, kwargs, star, hint)
                self.note_held(out, [obj, *args[2:], *(v for _, v in kwargs)])  # `W.reshape(3)`, `W.T.copy()`
                if func.attr in VIEWS and len(args) == 2 and not kwargs and star is None:
                    self.note_child(out, "view", obj, Const(func.attr))  # a dict's view sees its later updates
                return out
            fn = Global(f"{obj.path}.{self.mangle(func.attr)}")
        else:
            fn = self.expr(func)
        if isinstance(fn, Var) and self.lineage_of(fn) not in self.closure_reads and self.updating_method("__call__") \
                and not any(isinstance(a, gast.Starred) for a in node.args) and all(k.arg is not None for k in node.keywords):
            # `h = cell(x)`, `cell(x)`: a callable object whose `__call__` may update it (not a def or lambda made here)
            args, kwargs, _ = self.arguments(node)
            out = self.mutating_call(Const(rt.callobject), [fn, *args], kwargs, None, hint,
                                     range(len(args) + 1 + len(kwargs)), site=True)
            self.note_held(out, self.captured_by(fn))  # (as for any call: `h = lambda: y; z = h()` may give y)
            return out
        if isinstance(fn, Global) and self.user_code and type(self.resolve(fn.path)) is types.BuiltinFunctionType \
                and self.resolve(fn.path) in IN_PLACE_CALLS:
            # `operator.iadd(y, v)` updates an array y in place but rebinds nothing: the augmented assignment is
            # what the lowering follows (a silently wrong gradient otherwise)
            self.fail(f"calling {fn.path}", node, "write the augmented assignment (`x += y`) instead")
        args, kwargs, star = self.arguments(node)
        if isinstance(fn, Global) and self.resolve(fn.path) is np.isscalar:
            fn = Const(isscalar)  # (a dual number's value, in hessian's reverse pass)
        store = _STORES.get(id(self.resolve(fn.path))) if isinstance(fn, Global) and star is None else None
        if store is not None and not kwargs and len(args) == store[1]:  # `operator.setitem(d, k, v)` is `d[k] = v`
            if isinstance(args[0], Var):
                self.stored(store[0], args)
                return Const(None)
        if isinstance(fn, Global) and self.resolve(fn.path) is getattr and len(args) == 2 and not kwargs and \
                star is None and isinstance(args[1], Const) and isinstance(args[1].value, str):
            out = self.call(Const(getattr), args, hint=hint)  # `getattr(p, "w")` is `p.w`: the attribute it reads
            self.note_child(out, "attr", args[0], args[1])
            return out
        if isinstance(fn, Global) and self.resolve(fn.path) is vars and len(args) == 1 and not kwargs \
                and star is None and isinstance(args[0], Var):  # `vars(obj)` is `obj.__dict__`, which holds its fields
            out = self.call(Const(getattr), [args[0], Const("__dict__")], hint=hint)
            self.note_child(out, "attr", args[0], Const("__dict__"))
            return out
        if statement and isinstance(fn, Global) and fn.path in _BUILTIN_NAMES \
                and not self.gives_updating_callable(fn, node):  # print(x), ...: no updates
            return self.call(fn, args, kwargs, star, hint)
        if statement and self.code.co_filename.startswith("<zygotepy:"):
            # generated code being differentiated again (nesting): its call statements are the emitter's own helpers
            # (`_set_cell`, `_raise`), which update nothing the caller reads
            return self.call(fn, args, kwargs, star, hint)
        at = positional_out(self.resolve(fn.path), len(args)) if isinstance(fn, Global) and star is None else None
        if at is not None and args[at] == Const(None):  # `np.sum(x, 0, None, None, False, ...)`: no out
            at = None
        if at is not None and at != len(args) - 1:  # more arguments (or outputs) after it
            self.fail("an out array passed by position here", node, "pass it as out=...")
        if at is not None:  # `np.multiply(a, b, y)` is `np.multiply(a, b, out=y)`
            args, kwargs = args[:at], [*kwargs, ("out", args[at])]
        # (`out=` of a class or a user's Python function is an argument like any other: `dict(out=w)`, `Box(out=w)`)
        target = self.resolve(fn.path) if isinstance(fn, Global) else None
        outs = any(k == "out" for k, _ in kwargs) and not isinstance(target, type) and not (
            type(target) is types.FunctionType and target.__module__.partition(".")[0] not in _LIBRARY_PACKAGES)
        if statement or outs:  # `fill(out, x)`, `np.add(a, b, out=c)`
            if outs:
                args = [*args, dict(kwargs)["out"]]
                kwargs = [(k, v) for k, v in kwargs if k != "out"]
                return self.mutating_call(Const(mt.with_out), [fn, *args], kwargs, star, hint,
                                          range(len(args), len(args) + 1 + len(kwargs)))
            return self.mutating_call(fn, args, kwargs, star, hint, range(len(args) + len(kwargs)))
        if isinstance(fn, Global) and args and updates_first(self.resolve(fn.path)):  # `r = np.add.at(y, i, v)`
            out = self.mutating_call(fn, args, kwargs, star, hint, [0],  # (a user's updating rule: always its own,
                                     site=registry.is_user_rule(self.resolve(fn.path)))  # user_updates.py)
            if self.resolve(fn.path) in TAKES_OUT:  # `_, _, top = heapq.heappop(h)`
                self.note_taken_out(out, args[0])
            return out
        if self.updating_helper(fn) or self.updating_nested(func) or self.gives_updating_callable(fn, node):
            # (`sorted(xs, key=k)`, `list(map(cell, xs))`: what it calls may update in place, `k` itself included)
            # `loss = step(state, x)`, where step updates `state`: as a call statement
            out = self.mutating_call(fn, args, kwargs, star, hint, range(len(args) + len(kwargs)), site=True)
            if not (isinstance(fn, Global) and isinstance(self.resolve(fn.path), type)):
                for arg in args:  # (`o = take(todo)`, a helper popping an item: see note_taken_out; a class's
                    self.note_taken_out(out, arg)  # constructor gives a new object)
            return out
        out = self.call(fn, args, kwargs, star, hint)
        # any call may keep its arguments (`make_holder(W)`, `np.asarray(W)`): an update of one later reaches it (and
        # back), found by identity at run time (put_held / refresh_held); known fresh results (np.zeros_like, ufuncs,
        # math) make no link
        if not (isinstance(fn, Global) and _fresh(self.resolve(fn.path), args, self.may_be_users_object)):
            self.note_held(out, [*args, *(v for _, v in kwargs), *([star] if star is not None else []),
                                 *self.captured_by(fn)])
        return out

    def refuse_iterators_taken_in_part(self, node, kept=False):
        """Where `node` takes items of a local iterator lazily in Python and all at once here (zygotepy computes a
        generator's items when it is made), and the function reads that iterator again: a check that refuses it at
        run time where it is an iterator (`it = iter(xs)`; a list walked so is left as it is). `node` is
        `any`/`all`/`next` of a generator expression, or (`kept`: assigned to a name, and so maybe taken in part
        later) a generator expression or a call of zip, map, filter, enumerate, reversed or iter."""
        for source in self.iterators_taken_in_part(node, kept):
            self.call(Const(kept_iterator_taken_in_part), [self.expr(source), Const(source.id), Const(self.filename),
                                                          Const(self.line)], hint="_")

    def iterators_taken_in_part(self, node, kept):
        sources = []
        if isinstance(node, gast.GeneratorExp) and kept:
            sources = [node.generators[0].iter]
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id not in self.locals \
                and node.func.id not in self.globals:
            name, args = node.func.id, node.args
            if name in ("any", "all", "next") and args and isinstance(args[0], gast.GeneratorExp):
                sources = [args[0].generators[0].iter]
            elif kept and name in LAZY_BUILTINS:
                sources = args[1:] if name in ("map", "filter") else args
        elif kept and self.lazy_itertools(node):  # (`c = itertools.chain(it, ys)`: the run-time check skips non-iterators)
            sources = node.args
        sources = [s for s in sources if isinstance(s, gast.Name) and s.id in self.locals]
        if not sources:
            return []
        end = getattr(node, "end_lineno", node.lineno)
        return [source for source in sources if self.read_again(source.id, end, {id(source)}) is not None]

    def captured_by(self, fn):
        """What a call of the local object `fn` may return besides its arguments: what it holds (`g = make(y); z =
        g()`), and, for a nested function made here, the objects it reads from its cells, as they are now (`h =
        lambda: y; z = h()`); an update through the result reaches them, and back."""
        if not isinstance(fn, Var):
            return []
        lin = self.lineage.get(fn)
        names = set(self.closure_reads.get(lin, ()))
        if not names and lin is not None and self.closure_reads and self.user_code:
            # taken out of a container or object (`fs = [h]; z = fs[0]()`): any nested function made here that one
            # of its holders holds (walks up the links only: the way down reads every link)
            holders = set(self.related(lin, True, ()))
            for made, reads in self.closure_reads.items() if holders else ():
                if not holders.isdisjoint(self.related(made, True, ())):
                    names.update(reads)
        return [fn, *(self.env[n] for n in sorted(names) if n in self.cellvars and isinstance(self.env.get(n), Var))]

    @property
    def user_code(self):
        """Not code zygotepy wrote (generated code, or a rule's back, differentiated again at a higher order), whose
        calls update nothing their caller reads."""
        return not self.code.co_filename.startswith(("<zygotepy:", _PACKAGE_DIR))

    def updating_method(self, name):
        """May a method `name` called for its value update its object or arguments? Yes when a class of this module's
        namespace (the user's own, or imported by name) defines it in Python code that may update in place; the
        methods of built-in and NumPy types (`x.sum()`) never. Such a call then goes through `valuecall`."""
        if pure_method(name) or not self.user_code:
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

    def object_attribute(self, name):
        """Is `obj.name(...)` perhaps the call of a callable object an attribute holds (`self.cell(x)`), whose
        `__call__` may update it? Yes when some class here has such a `__call__`, and none has a method `name`."""
        if pure_method(name) or not self.updating_method("__call__"):
            return False
        return not any(isinstance(value, type) and inspect.getattr_static(value, name, None) is not None
                       for value in self.globals.values()) and not self.local_methods(name)

    def local_methods(self, name):
        """The methods `name` of the classes defined in this function's body (as functions of their own code, for
        reading their source: they do not exist until the class statement runs)."""
        classes = {n.name for n in gast.walk(self.source_node) if isinstance(n, gast.ClassDef)}
        return [self.readable(method) for body in self.code.co_consts
                if hasattr(body, "co_code") and body.co_name in classes
                for method in body.co_consts if hasattr(method, "co_code") and method.co_name == name]

    def readable(self, code):
        """A function of the code object `code` (a def of this function's body, not made yet), for reading its
        source; its cells are empty."""
        return types.FunctionType(code, self.globals, code.co_name, None, tuple(types.CellType() for _ in
                                                                                code.co_freevars))

    def has_updating_calls(self, nodes):
        """Does this code call, for its value, a helper or a method that `expr_Call` sends through `valuecall` (so a
        loop around it must carry every object, as for a call statement)? Any method of that name counts."""
        for n in nodes:
            if not isinstance(n, gast.Call):
                continue
            f = n.func
            if isinstance(f, gast.Attribute) and (self.updating_method(f.attr) or self.object_attribute(f.attr)):
                return True
            parts = []
            while isinstance(f, gast.Attribute):
                parts.append(f.attr)
                f = f.value
            if isinstance(f, gast.Name) and f.id not in self.locals and (
                    self.updating_helper(Global(".".join([f.id, *reversed(parts)])))
                    or self.gives_updating_callable(Global(".".join([f.id, *reversed(parts)])), n)):
                return True
            if not parts and (self.updating_nested(f) or not (isinstance(f, gast.Name) and f.id not in self.locals)
                              and self.updating_method("__call__")):  # `cell(x)`, `cells[0](x)`: an object's call
                return True
        return False

    def updating_helper(self, fn):
        """Is `fn` a global Python function, with no rule, whose code may update its arguments in place? Its call,
        used as a value, then goes through `mutcall` too, which takes the updated arguments' versions back."""
        if not isinstance(fn, Global) or not self.user_code:
            return False
        target = self.resolve(fn.path)
        if isinstance(target, type) and target.__module__.partition(".")[0] not in _LIBRARY_PACKAGES:
            return constructor_updates(target)  # (`Edge(a, b)`, whose __init__ appends to `a.edges`)
        return type(target) is types.FunctionType and registry.find_rule(target) is None \
            and may_update_in_place(target)

    def updating_nested(self, func):
        """Is `func` the name of a function a `def` in this function's body makes, whose code may update its arguments
        in place (`acc = add(v, acc)`, where `add` appends to `acc`)? Its call, used as a value, then goes through
        `mutcall`, as a global helper's does (else the derived callee's update is refused at run time). A name a `def`
        makes may be bound to something else at run time: `mutcall` takes any callee."""
        if not isinstance(func, gast.Name) or func.id not in self.locals or not self.user_code:
            return False
        known = self.__dict__.setdefault("_updating_nested", {})
        if func.id not in known:
            known[func.id] = any(may_update_in_place(f) for f in self.local_functions(func.id))
        return known[func.id]

    def gives_updating_callable(self, fn, node):
        """Is this a call of a builtin that calls what it is given (`map`, `sorted(key=)`, `functools.reduce`, ...),
        given a local name of a callable that may update in place (a function a `def` here makes, or an object whose
        class's `__call__` may update it), or a global helper that may? Its call then goes through `mutcall`, which
        gives every argument a new version: the update is then refused at run time (`J_mutating`'s checks), where
        it would have run unseen, its gradient silently missing."""
        if not isinstance(fn, Global) or not self.user_code or not _calls_back(self.resolve(fn.path)):
            return False
        for a in (*node.args, *(k.value for k in node.keywords)):
            if isinstance(a, gast.Name) and (self.updating_nested(a) or a.id in self.locals and self.updating_method(
                    "__call__") or a.id not in self.locals and self.updating_helper(Global(a.id))):
                return True
        return False

    def local_functions(self, name):
        """The functions `name` that `def` statements of this function's body make, as functions of their own code
        (for reading their source; they do not exist until the `def` runs)."""
        return [self.readable(body) for body in self.code.co_consts if hasattr(body, "co_code")
                and body.co_name == name and body.co_flags & inspect.CO_NEWLOCALS]

    def stored(self, store, args):
        """A store written as a call (`setattr(p, "w", a)`, `d.__setitem__(k, v)`, `operator.setitem(d, k, v)`): the
        object's new version, and the value stored linked to it as the statement's store links it (`a += x` after it
        reaches `p.w`: it was unseen)."""
        new = self.call(Const(store), args, hint=self.user_name(args[0]))
        self.mutate(args[0], new)
        if store in (mt.setitem, mt.setattr_, mt.object_setattr) and len(args) == 3:
            self.note_child(args[2], "item" if store is mt.setitem else "attr", new, args[1])

    def resolve(self, path):
        """The object the global dotted `path` names now (None if it cannot be read)."""
        first, *rest = path.split(".")
        obj = self.globals.get(first, getattr(builtins, first, None)) if first not in self.locals else None
        for part in rest:
            obj = getattr(obj, part, None)
        return obj

    def arguments(self, node):
        plain, star = [], []
        for k, a in enumerate(node.args):
            if isinstance(a, gast.Starred):
                rest = node.args[k:]
                # `g(*p, *q)`, `g(*p, x)`: what follows the first star is one tuple display, `g(*(*p, *q))`
                star = [a.value if len(rest) == 1 else gast.Tuple(elts=rest, ctx=gast.Load())]
                break
            plain.append(a)
        # (`out=(b,)`, a ufunc's tuple of one output, is `out=b`: the array the update goes into)
        values = [k.value.elts[0] if k.arg == "out" and isinstance(k.value, gast.Tuple) and len(k.value.elts) == 1
                  and not isinstance(k.value.elts[0], gast.Starred) else k.value for k in node.keywords]
        atoms = self.in_order(plain + star + values)
        kwargs = list(zip([k.arg for k in node.keywords], atoms[len(plain) + len(star):], strict=True))
        return atoms[:len(plain)], kwargs, atoms[len(plain)] if star else None


def _calls_back(target):
    try:
        return target in CALLING_BACK
    except TypeError:  # (an unhashable callable: a ctypes C function pointer, a user's object)
        return False

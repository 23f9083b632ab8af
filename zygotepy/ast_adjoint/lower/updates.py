"""The updates in place for lower(): `x[i] = v`, `obj.a = v`, `del x[i]`, `x[i] += v`, a store to a module global's
item, and a call that may update its arguments (`mutcall`), each giving the updated object a new version (`mutate`).
"""
import operator

import gast

from .. import mutate as mt
from .. import runtime as rt
from ..ir import Const, Global, Var


class Updates:
    """The statements and calls that update objects in place (mixed into the Lowerer)."""

    def target_object(self, node):
        obj = self.expr(node)
        if not isinstance(obj, Var) or isinstance(node, gast.Name) and self.global_container(node.id):
            self.fail("updating a global or constant object in place", node,
                      "pass it as an argument, or work on a copy")
        return obj

    def unseen_update(self, what, fn, args, kwargs=(), star=None, hint=None):
        """`fn(*args)` updates an object no name of this function reaches (`get_buf()[0] = v`): run through
        `mutate.unseen_update`, whose rule refuses it where a value that carries a gradient takes part (its later reads,
        through state outside this function, would get none)."""
        where = Const((self.filename, self.line, what))
        return self.call(Const(mt.unseen_update), [where, fn, *args], kwargs, star, hint)

    def store_item(self, target, value):
        if self.global_item(target, value):
            return
        obj, index = self.subscript(target, self.target_object)
        if not self.observable(obj):
            self.unseen_update("this store of an item", Const(mt.setitem), [obj, index, value], hint="_")
            return
        new = self.call(Const(mt.setitem), [obj, index, value], hint=self.user_name(obj))
        self.mutate(obj, new)
        self.note_child(value, "item", new, index)

    def global_item(self, target, value):
        """`G[k] = v` (`value`: v, or a function of the index atom building it) on a module global container `G`:
        runs as `runtime.global_store`, which refuses a v that carries a gradient and otherwise just stores (a
        counter, a flag, a cache of data). True if it was one."""
        name = target.value.id if isinstance(target.value, gast.Name) else None
        if name is None or not self.global_container(name):
            return False
        index = self.expr(target.slice)
        value = value(index) if callable(value) else value
        self.call(Const(rt.global_store), [Global(name), Const(name), Const((self.filename, self.line)), index, value],
                  hint="_")
        return True

    def global_attr(self, target, value):
        """`C.a = v` (`value`: v, or a function of the current value building it, for `C.a += v`) on a module global
        `C` (a class's counter of instances): runs as `runtime.global_attr_store`, which refuses a v that carries a
        gradient. True if it was one."""
        name = self.global_name(target.value) if isinstance(target.value, (gast.Name, gast.Attribute)) else None
        if name is None:
            return False
        attr = Const(self.mangle(target.attr))
        if callable(value):
            value = value(self.call(Const(getattr), [Global(name), attr]))
        self.call(Const(rt.global_attr_store), [Global(name), Const(name), Const((self.filename, self.line)), attr,
                                                 value], hint="_")
        return True

    def store_attr(self, target, value):
        if self.global_attr(target, value):
            return
        obj = self.target_object(target.value)
        attr = Const(self.mangle(target.attr))
        if not self.observable(obj):
            self.unseen_update("this store of an attribute", Const(mt.setattr_), [obj, attr, value], hint="_")
            return
        new = self.call(Const(mt.setattr_), [obj, attr, value], hint=self.user_name(obj))
        self.mutate(obj, new)
        self.note_child(value, "attr", new, attr)

    def stmt_Delete(self, node):
        for t in node.targets:
            if isinstance(t, gast.Subscript):
                obj = self.target_object(t.value)
                index = self.expr(t.slice)
                self.mutate(obj, self.call(Const(mt.delitem), [obj, index], hint=self.user_name(obj)))
            elif isinstance(t, gast.Attribute):
                obj = self.target_object(t.value)
                self.mutate(obj, self.call(Const(mt.delattr_), [obj, Const(self.mangle(t.attr))],
                                           hint=self.user_name(obj)))
            elif isinstance(t, gast.Name) and t.id in self.locals and t.id not in self.cellvars:
                value = self.env.get(t.id, Var(t.id))
                if self.may_be_unbound(value):  # (`del y` of an unbound name raises, as a read does)
                    self.checked_read(t.id, value)
                self.env[t.id] = Const(rt.UNBOUND)  # (a later read raises Python's UnboundLocalError)
            else:
                self.fail(f"del of {type(t).__name__}", t)

    def augassign_item(self, node, inplace):
        """`x[i] += v` is `t = x[i]; t += v; x[i] = t` (one read, Python's in-place operator, one write), as Python runs
        it: an item that is itself an array or a list is updated in place, so a name that holds it sees the update
        (the store's `refresh` of the container's children routes their cotangents); likewise for attributes."""
        t = node.target
        if isinstance(t, gast.Attribute) and self.global_attr(t, lambda cur: self.call(Const(inplace), [
                cur, self.expr(node.value)])):
            return
        if isinstance(t, gast.Subscript) and self.global_item(t, lambda index: self.call(Const(inplace), [
                self.call(Const(operator.getitem), [self.expr(t.value), index]), self.expr(node.value)])):
            return
        if isinstance(t, gast.Subscript):
            obj, index = self.subscript(t, self.target_object)
            cur = self.call(Const(operator.getitem), [obj, index])
            new = self.call(Const(inplace), [cur, self.expr(node.value)])
            self.held_item_updated(obj, index, cur, new)
            self.mutate(obj, self.call(Const(mt.setitem), [obj, index, new], hint=self.user_name(obj)))
        else:
            obj = self.target_object(t.value)
            attr = Const(self.mangle(t.attr))
            cur = self.call(Const(getattr), [obj, attr])
            new = self.call(Const(inplace), [cur, self.expr(node.value)])
            self.mutate(obj, self.call(Const(mt.setattr_), [obj, attr, new], hint=self.user_name(obj)))

    def held_item_updated(self, obj, index, cur, new):
        """`acc["k"] += r["f"]` where a loop stored items of another object in `acc` (`acc["k"] = r["f"]` of `for r in
        rows`: lineage.py `holds_items_of`): the item may be one of rows' arrays, updated in place, so the update is
        passed on to rows too (found by identity at run time), not only stored back into `acc`."""
        if isinstance(obj, Var) and isinstance(cur, Var) and self.holds_items_of.get(self.lineage_of(obj)):
            self.note_child(cur, "item", obj, index)
            self.mutate(cur, new, maybe=True)

    def mutating_call(self, fn, args, kwargs, star, hint, updated, kept_anyway=(), site=False):
        """A call that may update the arguments at positions `updated` (of the positional arguments, then the keyword
        arguments' values): `_r = mutcall(fn, *args, **kwargs)` gives `(result, *args, *kwargs.values())`; each of
        those arguments that is a local value gets the returned version. Positions in `kept_anyway` count as updated
        even when no later code of this function sees them (a global's object). `site`: a mutcall even when no later
        code sees an updated argument (`step({"x": x}, n)`), so that the callee's updates of it are allowed (nothing
        reads their final versions)."""
        given = [*args, *(v for _, v in kwargs)]
        updated = [k for k in updated if k in kept_anyway or self.observable(given[k])]
        kept = [*args, *(v for _, v in kwargs), *([star] if star is not None else [])]
        if fn == Const(rt.callmethod):
            kept = [args[0], *kept[2:]]
        # `self.forward(*args)`: the object may be updated and is taken back; the starred arguments cannot be
        objectcall = star is not None and fn == Const(rt.callmethod) and 0 in updated
        # (`out=` given a temporary updates nothing observable, but still goes through mutcall: with_out's rule)
        if star is not None and not objectcall or not updated and not site and fn != Const(mt.with_out):
            out = self.call(fn, args, kwargs, star, hint)
            self.note_held(out, kept)
            return out
        splat = any(k is None for k, _ in kwargs)  # `f(x, **opts)`: the keywords' objects cannot be given versions
        if splat or objectcall:
            updated = [k for k in updated if k < (1 if objectcall else len(args))]
        wrapper = mt.objectcall if objectcall else mt.splatcall if splat else mt.valuecall if site else mt.mutcall
        out = self.call(Const(wrapper), [fn, *args], kwargs, star, hint="_r")
        result = self.call(Const(operator.getitem), [out, Const(0)], hint=hint)
        seen, versions = set(), {}
        method = fn == Const(rt.callmethod)
        for k in updated:
            a = given[k]
            if isinstance(a, Var) and a not in seen:
                seen.add(a)
                versions[k] = self.call(Const(operator.getitem), [out, Const(k + 1)], hint=self.user_name(a))
                self.by_call, self.update_root = True, versions[k]
                try:
                    # a method's arguments (not its object) are seldom updated (`d.update(kw)`): a parameter given
                    # to one maybe was, which the call checks ask the log (`Function.maybe_mutated`)
                    self.mutate(a, versions[k], refreshed=method and k >= 2)
                finally:
                    self.by_call, self.update_root = False, Const(None)
        # what it updated may now keep the other arguments (`rows.append(row)`, `store(lst, W)`), and its result may
        # be one of them or held in one (`d.setdefault(k, W)`, `lst.pop()`)
        for k, v in versions.items():
            self.note_held(v, [a for a in kept if a is not given[k]])
        self.note_held(result, [versions.get(k, a) for k, a in enumerate(given) if isinstance(a, Var)] +
                       kept[len(given):])
        if site:  # (`c = attach(root, Node(b))`, `c = Node(b, parent=root)`: the new node, now in `root.kids`)
            for v in versions.values():
                self.note_child(result, "held", v, Const(self.line))
        return result

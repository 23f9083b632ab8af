"""Mutation for lower(): `x[i] = v`, `obj.a = v`, `del x[i]`, `x[i] += v`, mutating method calls and calls that may
update their arguments, as SSA versions of the mutated object.

The object really is mutated (aliases in user code see Python's semantics), and the IR gives it a new name:
`x[i] = v` becomes `x_2 = setitem(x, i, v)`, whose rule routes cotangents (the slot's to `v`, the rest to `x`). Every
name that refers to the same object is a *lineage*: a mutation rebinds all names of its lineage to the new version
(`b = a; a[0] = v` updates `b` too). An object read out of another (`row = m[0]`, `w = self.W`, `v = x[1:]`) remembers its
parent: mutating it also gives the parent a new version (`put_item`/`put_attr`, whose forward does nothing), and
mutating a parent refreshes its live named children (`refresh`: a NumPy view sees the write, and so does an object
still in the slot it was read from, e.g. an array in a list after `lst[0] *= 2`; a number read out does not).
A function that updates one of its parameters returns the final versions too (`Function.mutated`), so the caller's
cotangents of those objects after the call reach the callee's backward (`mutate.mutcall`, `dispatch.J_mutating`); so
does one that may have updated a parameter through an object linked to it, found at run time (`maybe_mutated`).

Here: `mutate`, which gives the updated object and those linked to it new versions; the links are lineage.py's, the
statements and calls that update in place updates.py's, the syntax scans scan.py's.
"""
from .. import mutate as mt
from .. import runtime as rt
from ..call_checks import captured_object_updated, captured_unchanged, captured_update, own_code
from ..ir import Const, Var


_STEPS = 4000  # updates (with the holders, parents and children each reaches) one function's lowering follows: the
# test suite's largest takes under 300; SciPy's solve_ivp took tens of thousands, for minutes, and did not finish


class Mutation:
    """The mutation part of the Lowerer (mixed into it): an update gives its object, and the objects linked to it, new
    versions."""

    def mutate(self, old, new, came_from=None, maybe=False, chain=None, refreshed=False):
        """See `_mutate`. An update that may not have happened (`maybe`, `refreshed`, a call's: `by_call`) makes the
        updates it implies (of holders, parents, children) uncertain too."""
        self.mutation_steps += 1
        if self.mutation_steps > _STEPS:
            self.fail("updates in place that reach one another through more links than zygotepy follows (a long "
                      "function updating many linked objects)",
                      hint="differentiate a smaller function, or give the library function a rule with @adjoint")
        outer, origin = self.by_call, self.updated_name
        self.by_call = outer or maybe or refreshed
        if came_from is None or origin is None:  # (the name the update was made through, for refusals; `x += v`
            self.updated_name = self.user_name(old)  # has bound it to `new` already)
            if self.updated_name == "_t":
                self.updated_name = self.user_name(new)
        walk = chain is None and self.walk_links is None  # (an update's whole walk: no link is made during it)
        if walk:
            self.walk_links = {}
        try:
            self._mutate(old, new, came_from, maybe, chain, refreshed)
        finally:
            self.by_call, self.updated_name = outer, origin
            if walk:
                self.walk_links = None

    def slot_toward(self, lin, came_from):
        """The (kind, key) of the direct child of `lin` through which the lineage `came_from` is linked to it (an item
        or attribute of it, or held deeper there), or None."""
        seen, work = set(), [came_from]
        while work:
            clin = work.pop()
            if clin in seen:
                continue
            seen.add(clin)
            for kind, plin, key in self.parents.get(clin, ()):
                if plin == lin and kind in ("item", "attr"):
                    return kind, key
                work.append(plin)
        return None

    def _mutate(self, old, new, came_from=None, maybe=False, chain=None, refreshed=False):
        """`new` is the next version of the object `old` names: rebind its names, update its parent, refresh its live
        named children. `maybe`: `new` is the same object only if the operation (`+=`) ran in place. `chain`: the
        lineages this update already reached (links can form cycles)."""
        lin = self.lineage_of(old)
        if chain is None:  # (an update's first call: the objects it refreshes, `refresh_again`'s candidates)
            self.refreshed_lins, self.refreshed_again, self.told_again = set(), set(), {}
        chain = {lin} if chain is None else chain
        chain.add(lin)
        placed = []

        def updated():
            """What the holders of the object are told was updated: `new`, or after a maybe update that made a new
            object (`shape += (n,)` on a tuple read out of an array), nothing (mutate.NOT_IN_PLACE)."""
            if not maybe:
                return new
            if not placed:
                placed.append(self.call(Const(mt.same_or), [Const(mt.NOT_IN_PLACE), old, new], hint="_placed"))
            return placed[0]
        if self.freevars and not own_code(self.filename) and not self.code.co_filename.startswith("<zygotepy:"):
            reached = {lin, *self.related(lin, True, ())}  # (the object, and what holds it: `d["a"].append(v)`)
            for name in self.freevars:
                var = self.env.get(name, Var(name))
                if self.lineage.get(var) in reached:
                    self.call(Const(captured_object_updated), [new if self.lineage.get(var) == lin else var,
                                                               Const(name), Const(self.code.co_qualname),
                                                               Const(self.filename), Const(self.line)], hint="_")
        for name in self.freevars:  # a captured object: this function's later reads see the new version (the
            if self.lineage.get(self.env.get(name, Var(name))) == lin:  # enclosing function refuses to read it)
                self.env[name] = new
        self.lineage[new] = lin
        self.latest[lin] = new
        # a child refreshed from its holder (refresh_held) is updated only if it is linked there at run time
        # (`d.get(k).append(v)`, `a.reshape(-1)[0] = v`): a helper's parameter updated that way maybe was, and its
        # final version goes back to the caller too (the rule logs it where it was, for the call checks)
        (self.reached if refreshed else self.mutated).add(lin)
        through = self.updated_name
        was_split = lin in self.split
        for name, var in list(self.env.items()):
            if isinstance(var, Var) and self.lineage.get(var) == lin and var != new:
                if name in self.cellvars and (came_from is not None or self.loop_depth or own_code(self.filename)):
                    # a captured object updated in place: in the user's code, followed as any (a closure called
                    # after the update is refused then: call_checks.check_cells, which the journal's log tells of
                    # an update of the object itself); one made through a view or an item of it (`came_from`),
                    # which the log names by that object, one in a loop (whose carried values are not cells'), and
                    # any in zygotepy's rules, which an outer level of nesting transforms and turns to its other
                    # route on this refusal, are refused now
                    if not self.by_call:
                        self.fail(captured_update(name, through))
                    # an update that may not have happened (a call that may update it, `x += v`, an update of what
                    # may hold it): most often it did not (a number, a helper's `p *= 2`), which is checked now
                    self.call(Const(captured_unchanged), [var, Const(name), Const(self.filename),
                                                             Const(self.line), self.update_root, Const(through)],
                              hint="_")
                    continue
                if maybe:
                    moved = new
                    if was_split and var != old:  # (an earlier maybe update may have left it another object: `b =
                        # a; a += y` where `+=` made a new `a`, then `a += t` in place leaves `b` alone)
                        moved = self.call(Const(mt.same_as), [var, old, new], hint=self.user_name(var))
                    alias = self.call(Const(mt.same_or), [var, old, moved], hint=self.user_name(var))
                    self.lineage[alias] = lin
                    self.env[name] = alias
                    self.split.add(lin)
                else:
                    self.env[name] = self.same_as(var, old, new, lin)
        direct, made = {}, {}
        for clin, links in self.parents.items():
            for kind, plin, key in links:
                if plin == lin:
                    (made if kind == "held" else direct).setdefault(clin, (kind, key))
        # its direct children first, before any holder's update reaches them by a vaguer route (held by an object
        # made from them): what they are is known exactly (`row = m[0]`, `w = self.W`: a view sees the write, an
        # item does not change)
        below = self.related(lin, False, {came_from})
        refreshed = []
        for clin in [c for c in below if c in direct and c not in chain]:
            child = self.named_child(clin)
            if child is not None:
                chain.add(clin)
                kind, key = direct[clin]
                if kind == "iter":
                    fresh = self.call(Const(mt.refresh_iter), [child, new, self.where(child, key)],
                                      hint=self.user_name(child))
                elif kind == "view":  # `vals = d.values()`: Python's view shows `d` as it is now, also where it is
                    fresh = self.call(Const(rt.view_refreshed), [child, new, key], hint=self.user_name(child))
                    self.refreshed_lins.add(clin)
                    refreshed.append((child, fresh))  # held (`w = [vals]`): shown again in place, an update of it
                    continue
                else:
                    fresh = self.call(Const(mt.refresh), [child, new, Const(kind), key], hint=self.user_name(child))
                self.rebind(child, fresh, whole_lineage=True)
                # and what holds or shares the child passes it on (`v = w.reshape(3)` of `w = b[0]`: a view of it)
                self.refreshed_lins.add(clin)
                refreshed.append((child, fresh))
                if came_from is not None and self.slot_toward(lin, came_from) == direct[clin]:
                    # the update came through the very slot that holds it (`self.parent = parent`, then
                    # `self.parent.children.append(self)`): a parameter held so goes back to the caller too
                    self.reached.add(clin)
        for clin in [c for c in below if c not in direct]:
            child = self.named_child(clin)
            if child is None:
                continue
            if clin in chain:
                self.refresh_again(clin, child, new, came_from, chain)
                continue
            # held here, however deep (`lst = [W]; lst[0][0] = 5` changes W): found in `new` at run time, and its
            # own holders see the change too, once every child has its own new version (a child's holder may be
            # another child: `p = o.step(b)` links o and b to p, and o to b). Before the holders pass the update on:
            # a child they hold too (`c = x * v` of `v = x.reshape(-1)`) is found in `new`, not in them
            chain.add(clin)
            fresh = self.call(Const(mt.refresh_held), [child, new, self.where(child, made.get(clin, (0, None))[1])],
                              hint=self.user_name(child))
            refreshed.append(self.pend(clin, child, fresh))
        holders = False
        for kind, plin, key in list(self.parents_of(lin)):
            if plin == came_from:
                continue
            if kind == "held":  # (a holder this update reached by another route, first, is told again below:
                holders = holders or key  # `p1 = [W]; p2 = [W]; a = f(p1, x); b = f(p2, x)`, then `p1[0] *= 2`
                continue  # reaches `p2` from `b` through `x` before from `W`)
            if plin in chain:
                continue
            if kind == "view":  # (a view's items are its dict's values: their updates reach it as held items)
                continue
            parent = self.current(plin)
            if parent is not None:
                chain.add(plin)
                args = [parent, self.where(parent, key), updated()] if kind == "iter" else [parent, key, updated()]
                self.mutate(parent, self.call(Const({"item": mt.put_item, "attr": mt.put_attr, "iter": mt.put_iter}[
                    kind]), args, hint=self.user_name(parent)), lin, chain=chain)
            else:  # read out of an object no name refers to now (`W.reshape(2, 2)[0]`, `cur = cur[1:]` in a loop):
                holders = holders or Const(self.line)  # whatever holds that, or shares its memory, finds it at run time
        if holders:  # every named object that may hold this one, however deep (`lst = [Holder(W)]`), finds it there
            for hlin in self.related(lin, True, {came_from}):
                parent = self.current(hlin, named=True)
                if parent is not None:
                    again = hlin in chain
                    where = self.where(parent, holders)
                    if again and hlin in self.pending:
                        # refreshed from this object, which it holds too (`c.parent`, `root.kids` linked by a
                        # helper): the refreshed version is told, as a direct child is, and passes that on after
                        parent = self.told_again.get(hlin, self.pending[hlin])
                    chain.add(hlin)
                    put = self.call(Const(mt.put_held), [parent, where, updated()], hint=where.value[2])
                    if again:
                        self.rebind(parent, put)
                        self.told_again[hlin] = put
                        continue
                    outer, self.by_call = self.by_call, True  # it may not hold it: found (or not) at run time
                    try:
                        self.mutate(parent, put, lin, chain=chain)
                    finally:
                        self.by_call = outer
        for clin in self.through_unnamed(lin, {came_from}):
            # a sibling (`z = (y, x)[0]`, `v = a[1:] if c else a[:1]`) or a view's own parent (`t = [y[1:]]`,
            # `np.squeeze(x[None])`), linked only through an object no name refers to now: it may be the updated
            # object, sit inside it or share its memory, which is found at run time
            child = self.first_user_var(clin)
            if clin in chain:
                self.refresh_again(clin, child, new, came_from, chain)
                continue
            chain.add(clin)
            fresh = self.call(Const(mt.refresh_held), [child, new, self.where(child, Const(self.line))],
                              hint=self.user_name(child))
            refreshed.append(self.pend(clin, child, fresh))
        # every object this update may reach has its new version before any of them passes its own update on: one
        # passed on from another (a number held beside it: `[(ys[0], b)]`) would be found in the wrong object
        for child, fresh in refreshed:
            held = self.pending.pop(self.lineage_of(child), None) is not None
            # (from its newest version: a holder told again since it was refreshed has a later one, `parent_5` of
            # `self.parent = parent; parent.children.append(self); self.W = W`, which passing `fresh` on would drop;
            # a view refreshed, `vals = d.values()`, is shown again, not told)
            told = self.told_again.pop(self.lineage_of(child) if held else self.lineage_of(fresh), None)
            self.mutate(child, fresh if told is None else told, lin, chain=chain, refreshed=True)

    def refresh_again(self, clin, child, new, came_from, chain):
        """`child`, which this update reached first by another route (a call's result that may hold it: `p = [w[:2]];
        t = f(w, p)`, then `w *= 2` reaches `p` from `t` before through the view), may also sit in `new`, found at run
        time: refreshed from it too."""
        if self.filename.startswith("<zygotepy:") or own_code(self.filename):
            return  # (code an outer level of nesting transforms: the inner level's links already route at run time)
        lin = self.lineage_of(new)
        if clin not in self.refreshed_lins or clin in self.pending or (clin, lin) in self.refreshed_again \
                or lin in self.related(clin, False, ()):
            return  # (only a child this update refreshed, whose cotangent its holder routes: the updated object
            # and its holders have theirs from the update; one refreshed, not passed on yet, has its version from
            # the update's object; each pair once; one holding the object, a cycle of parent pointers, has its
            # route through it)
        self.refreshed_again.add((clin, lin))
        fresh = self.call(Const(mt.refresh_held), [child, new, self.where(child, Const(self.line))],
                          hint=self.user_name(child))
        # and its holders see this version (`a = O(w); b = O(w[:2])`, `t = a.f() + b.f()`, then `b.w *= 2`: `w`
        # refreshed from `t`, told to `a`, then refreshed from `b`): once per pair, so a cycle of links ends
        self.mutate(child, fresh, lin, chain=chain, refreshed=True)

    def pend(self, clin, child, fresh):
        """(child, fresh): a child refreshed by this update, which passes the update on once every object it
        reaches has its new version; noted in `pending` until then."""
        self.pending[clin] = fresh
        self.refreshed_lins.add(clin)
        return child, fresh

    def first_user_var(self, clin):
        """The Var of lineage `clin` the first of the user's names (not `.param`, which keeps a parameter's first
        object) holding it in `env` holds now. The names by lineage are made once for an update's walk, in which a
        name keeps its lineage (a scan of `env` per object made nested gradients of long functions slow to lower)."""
        if "names" not in self.walk_links:
            names_of = self.walk_links["names"] = {}
            for name, var in self.env.items():
                if isinstance(var, Var) and not name.startswith("."):
                    names_of.setdefault(self.lineage.get(var), []).append(name)
        for name in self.walk_links["names"].get(clin, ()):
            var = self.env.get(name)
            if isinstance(var, Var) and self.lineage.get(var) == clin:
                return var
        return next(v for n, v in self.env.items() if isinstance(v, Var) and self.lineage.get(v) == clin
                    and not n.startswith("."))  # (a name bound since the index was made)

    def named_child(self, clin):
        """A Var of lineage `clin` some name (a user's, or a loop's live copy) holds now, or None."""
        return next((v for n, v in self.env.items() if isinstance(v, Var) and self.lineage.get(v) == clin
                     and (not n.startswith(".") or n.startswith(".live"))), None)

    def through_unnamed(self, lin, skip):
        """The named lineages linked to `lin` only through objects no name refers to now, by a path that goes both
        to a parent and to a child (the plain walks up and down, `related`, reach the others)."""
        cache = self.walk_links  # (set by `mutate` for the update's whole walk)
        if "up" not in cache:  # (made once per update's walk: the links and the names' lineages stay as they are)
            up, down = cache["up"], cache["down"] = {}, {}
            for c, links in self.parents.items():
                for _, p, _ in links:
                    up.setdefault(c, set()).add(p)
                    down.setdefault(p, set()).add(c)
            cache["named"] = {self.lineage.get(v) for n, v in self.env.items()
                              if isinstance(v, Var) and not n.startswith(".")}
        up, down, named = cache["up"], cache["down"], cache["named"]
        found, seen, work = [], {(lin, frozenset())}, [(lin, frozenset())]
        while work:
            cur, dirs = work.pop()
            for way, nxt in (("up", up.get(cur, ())), ("down", down.get(cur, ()))):
                for n in nxt:
                    state = (n, dirs | {way})
                    if n == lin or state in seen:
                        continue
                    seen.add(state)
                    if n not in named:
                        work.append(state)
                    elif len(state[1]) == 2 and cur not in named and n not in skip and n not in found:
                        found.append(n)
        return found

    def rebind(self, old, new, whole_lineage=False):
        """Names holding `old` now hold `new`; with `whole_lineage`, every name of its object (a loop carries two
        names of one object, `z = y`, as two variables: a refresh of one must reach the other)."""
        lin = self.lineage_of(old)
        self.lineage[new] = lin
        self.latest[lin] = new
        for name, var in list(self.env.items()):
            if var == old or whole_lineage and isinstance(var, Var) and self.lineage.get(var) == lin:
                self.env[name] = self.same_as(var, old, new, lin)

    def same_as(self, var, old, new, lin):
        """What a name of `old`'s lineage holding `var` holds once `old` became `new`: `new`, or where a maybe-in-place
        update may have split the lineage (see `split`), `new` only if `var` is `old`'s object at run time."""
        if var == old or var == new or lin not in self.split:
            return new
        alias = self.call(Const(mt.same_as), [var, old, new], hint=self.user_name(var))
        self.lineage[alias] = lin
        return alias

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
cotangents of those objects after the call reach the callee's backward (`mutate.mutcall`, `dispatch.J_mutating`).
"""
import operator

import gast
import numpy as np

from . import mutate as mt
from . import runtime as rt
from .ir import Const, Global, Var

MUTATING_METHODS = frozenset((
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "sort", "reverse",
    "add", "discard", "fill", "put", "resize", "itemset", "partition"))

# methods of the built-in and NumPy types that update nothing: any other method called for its value may be a user
# method that updates its object or arguments (`a = sim.decay()`), so such a call goes through mutcall
_OWN_TYPES = (np.ndarray, np.generic, list, tuple, dict, set, frozenset, str, bytes, int, float, complex, range)
PURE_METHODS = frozenset(name for t in _OWN_TYPES for name in dir(t) if callable(getattr(t, name))
                         and (not name.startswith("_") or name in ("__call__", "__getitem__", "__len__"))) \
    - MUTATING_METHODS - {"setfield", "setflags", "byteswap", "symmetric_difference_update", "intersection_update",
                          "difference_update"}


# library functions that update their first argument wherever their call stands (mutate.updates_first_argument)
_UPDATING_FUNCTIONS = frozenset(("at", "place", "putmask", "put_along_axis", "fill_diagonal", "copyto", "setitem",
                                 "delitem", "__setitem__", "__delitem__"))

def mutation_syntax(stmts, nodes=None):
    """Does this code (not entering nested functions) contain an item/attribute store, `del`, a call statement or a
    mutating method call, any of which may give objects new versions? `nodes`: the code's nodes (`nodes_no_defs`),
    when the caller has listed them already."""
    return any(map(_may_mutate, nodes if nodes is not None else nodes_no_defs(stmts)))


_UPDATES_IN_PLACE = {}  # code object -> may the function's own code update an object in place?


def may_update_in_place(fn):
    """Could a call of the Python function `fn` update its arguments in place (its code stores items or attributes,
    calls a mutating method, or makes a call statement, which may)? False for code zygotepy cannot read, whose call
    is reported where it runs. Cached per code object."""
    from .source import get_source  # (source imports this package's lowering helpers)
    code = fn.__code__
    hit = _UPDATES_IN_PLACE.get(code)
    if hit is None:
        try:
            body = get_source(fn).node.body
            nodes = nodes_no_defs(body)
            hit = mutation_syntax(body, nodes) or bool(augmented_names(body, nodes))
        except Exception:  # noqa: BLE001 - no source, or not Python the parser reads: not ours to report here
            hit = False
        _UPDATES_IN_PLACE[code] = hit
    return hit


def _may_mutate(n):
    if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store, gast.Del)):
        return True
    if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
        return True
    if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and (
            n.func.attr in MUTATING_METHODS or n.func.attr in _UPDATING_FUNCTIONS):
        return True
    return isinstance(n, gast.Call) and any(k.arg == "out" for k in n.keywords)


def augmented_names(stmts, nodes=None):
    """Names that `x += ...` rebinds in this code (not entering nested functions); `nodes` as for `mutation_syntax`."""
    return {n.target.id for n in (nodes if nodes is not None else nodes_no_defs(stmts))
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def nodes_no_defs(stmts):
    """The nodes of `stmts`, not entering nested functions, lambdas or classes (their own nodes are included)."""
    work, out = list(stmts), []
    while work:
        n = work.pop()
        out.append(n)
        if not isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            work.extend(gast.iter_child_nodes(n))
    return out


def updated_in_place(node, names, augmented=True):
    """The `names` whose objects the code of `node` (a nested function) may update in place (`augmented` False: not
    counting `name += v`, which updates in place only arrays and lists)."""
    found = set()
    for n in gast.walk(node):
        target = None
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store, gast.Del)):
            target = n.value
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and n.func.attr in MUTATING_METHODS:
            target = n.func.value
        elif isinstance(n, gast.AugAssign) and (augmented or not isinstance(n.target, gast.Name)):
            target = n.target
        while isinstance(target, (gast.Subscript, gast.Attribute)):
            target = target.value
        if isinstance(target, gast.Name) and target.id in names:
            found.add(target.id)
    return found


class Mutation:
    """The mutation half of the Lowerer (mixed into it)."""

    def init_mutation(self):
        self.lineage = {}      # Var -> lineage id (the object it names)
        self.parents = {}      # lineage -> [(kind "item"/"attr"/"held", parent lineage, key atom)], newest last
        self.latest = {}       # lineage -> its newest Var (for temporaries no name refers to)
        # the `.param{k}` entries of parameters the function surely updates in place (an item store, a mutating
        # method): they follow maybe-in-place updates too (`y *= 0.1`), so the final version returned to the caller
        # includes them; other parameters' `x += v` is caught at run time (dispatch._check_updates)
        self.tracked_params = set()
        self.by_call = False   # the update being lowered may not have happened (a call's, `x += v`: see `mutate`)
        self.mutated = set()   # lineages given a new version somewhere
        # lineages a maybe-in-place update (`z *= 0.5`) may have split in two: on JAX arrays and numbers `z` names a
        # new object and its aliases keep the old one, so a later update reaches a name only if it names that object
        self.split = set()
        self.updated_by_closures = {}  # captured local -> the nested function that may update it in place
        self.next_lineage = 0

    def lineage_of(self, atom):
        if not isinstance(atom, Var):
            return None
        if atom not in self.lineage:
            self.next_lineage += 1
            self.lineage[atom] = self.next_lineage
        return self.lineage[atom]

    def inherit(self, out, *sources):
        """`out` (a phi or loop-carried value) names the same object as `sources` when they all name one object."""
        if sources and all(isinstance(s, Var) for s in sources):
            ids = {self.lineage_of(s) for s in sources}
            if len(ids) == 1:
                self.lineage[out] = ids.pop()

    def join_link(self, out, a, b):
        """`out` (an if's or a conditional expression's join) is `a`'s object or `b`'s: their one object if they name
        the same, else one that either may be, so an update through `out` reaches the arm's object it is (found by
        identity at run time: put_held / refresh_held) and an update of an arm's object reaches `out`."""
        self.inherit(out, a, b)
        if out not in self.lineage:
            for arm in (a, b):
                self.note_child(out, "held", arm, Const(self.line))

    def note_child(self, child, kind, parent, key):
        """`child`'s object is (or is a view of) `parent[key]`, `parent.key`, or held somewhere in `parent` ("held":
        put there by a display, `append`, ...): an update of the child reaches the parent."""
        if isinstance(child, Var) and isinstance(parent, Var) and child != parent:
            entry = (kind, self.lineage_of(parent), key)
            links = self.parents.setdefault(self.lineage_of(child), [])
            if entry not in links and not (kind == "held" and any(k == kind and p == entry[1] for k, p, _ in links)):
                links.append(entry)

    def note_held(self, holder, items):
        """`holder` may keep `items` inside it (a display, `append`, any call: `h = make_holder(W)`), so an update of
        one reaches the other (put_held / refresh_held find where at run time, by identity)."""
        for item in items:
            self.note_child(item, "held", holder, Const(self.line))

    def related(self, lin, up, skip):
        """The lineages reachable from `lin` through links, nearest first: its holders and their holders (`up`), or
        what it holds and what those hold; `skip` is not entered."""
        out, seen, work = [], set(skip) | {lin}, [lin]
        while work:
            cur, work = work[0], work[1:]
            nxt = [p for _, p, _ in self.parents_of(cur)] if up else \
                [c for c, links in self.parents.items() if any(p == cur for _, p, _ in links)]
            for n in nxt:
                if n not in seen:
                    seen.add(n)
                    out.append(n)
                    work.append(n)
        return out

    def where(self, other, key):
        """(file, line of the update, the other object's name, line of the statement that linked them)."""
        return Const((self.filename, self.line, self.user_name(other), key.value if isinstance(key, Const) else None))

    def parents_of(self, lin):
        return self.parents.get(lin, ())

    def current(self, lin, named=False):
        """The Var naming the object `lin` now: a local name's, else (`named` False) the newest version made by the
        statement being lowered (`a[0][1] = v` updates the temporary `a[0]`). A user's name comes first: a `.param`
        entry may still hold the version before an update that only maybe aliased it (`b = a` after `a += t` in one
        arm of an if named the parameter's old version, and the gradient skipped the update's back)."""
        hidden = None
        for name, var in self.env.items():
            if isinstance(var, Var) and self.lineage.get(var) == lin and not name.startswith(".flag"):
                if not name.startswith("."):
                    return var
                hidden = var if hidden is None else hidden
        if hidden is not None:
            newest = self.latest.get(lin)
            if named and newest is not None and newest != hidden:
                # the parameter's object was updated (`a += t`) where it is not named now, in one arm of a branch:
                # no variable holds its version after the join, and the old one would skip that update's gradient
                self.fail("updating an argument in place in one arm of a branch and then, after the branch, updating "
                          "an object that may share it (its gradient would skip the first update)",
                          hint="copy the argument first (a = a.copy()), or update it out of place (a = a + t)")
            return hidden
        return None if named else self.latest.get(lin)

    def aliases_of(self, names):
        """Other local names that share an object with one of `names` (`x += y` in place updates them too)."""
        lins = {self.lineage_of(self.env.get(n)) for n in names} - {None}
        return [n for n, v in self.env.items() if isinstance(v, Var) and n not in names and not n.startswith(".")
                and self.lineage_of(v) in lins]

    def param_lineages(self, tracked=False):
        return {self.lineage.get(v) for n, v in self.env.items() if n.startswith(".param") and isinstance(v, Var)
                and (not tracked or n in self.tracked_params)}

    def observable(self, atom):
        """Can code after this point see `atom`'s object again (a local name refers to it, or to its parent)?"""
        if not isinstance(atom, Var):
            return False
        if atom.name in self.freevars and atom == Var(atom.name):  # a captured variable: its owner sees it
            return True
        work, seen = [self.lineage_of(atom)], set()
        while work:
            lin = work.pop()
            if lin in seen:
                continue
            seen.add(lin)
            if any(isinstance(v, Var) and self.lineage.get(v) == lin for n, v in self.env.items()
                   if not n.startswith(".") or n.startswith(".param")):
                return True
            work += [plin for _, plin, _ in self.parents_of(lin)]
            # what a call's result may hold (`d.setdefault(k, []).append(v)`, `helper(d).append(v)`): the result is
            # linked to its arguments as their holder, and through them the update is seen
            work += [c for c, links in self.parents.items() if any(k == "held" and p == lin for k, p, _ in links)]
        return False

    def linked(self, name):
        """Is the object `name` refers to linked to another (a parent it was read from, a child read from it, a holder):
        then an update of it in place gives those new versions too."""
        var = self.env.get(name)
        if not isinstance(var, Var):
            return False
        lin = self.lineage_of(var)
        return lin in self.parents or any(p == lin for ls in self.parents.values() for _, p, _ in ls)

    def user_name(self, var):
        names = [n for n, v in self.env.items() if v == var and not n.startswith(".")]
        return names[0] if names else "_t"

    def has_aliases(self, old, new):
        """Does another name, a parent or a child share `old`'s object (so an update in place must reach it)?"""
        lin = self.lineage_of(old)
        return lin in self.parents or any(p[1] == lin for ps in self.parents.values() for p in ps) or any(
            isinstance(v, Var) and v != new and self.lineage.get(v) == lin for n, v in self.env.items()
            if not n.startswith(".param"))  # an argument updated by `+=` is caught at run time (dispatch)

    def mutate(self, old, new, came_from=None, maybe=False, chain=None, refreshed=False):
        """See `_mutate`. An update that may not have happened (`maybe`, `refreshed`, a call's: `by_call`) makes the
        updates it implies (of holders, parents, children) uncertain too."""
        outer = self.by_call
        self.by_call = outer or maybe or refreshed
        try:
            self._mutate(old, new, came_from, maybe, chain, refreshed)
        finally:
            self.by_call = outer

    def _mutate(self, old, new, came_from=None, maybe=False, chain=None, refreshed=False):
        """`new` is the next version of the object `old` names: rebind its names, update its parent, refresh its live
        named children. `maybe`: `new` is the same object only if the operation (`+=`) ran in place. `chain`: the
        lineages this update already reached (links can form cycles)."""
        lin = self.lineage_of(old)
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
        for name in self.freevars:  # a captured object: this function's later reads see the new version (the
            if self.lineage.get(self.env.get(name, Var(name))) == lin:  # enclosing function refuses to read it)
                self.env[name] = new
        self.lineage[new] = lin
        self.latest[lin] = new
        if not refreshed:  # a refreshed holder's child (refresh_held) is updated only if it is found there at run
            self.mutated.add(lin)  # time: a helper's argument updated that way is caught then (dispatch)
        for name, var in list(self.env.items()):
            if isinstance(var, Var) and self.lineage.get(var) == lin and var != new \
                    and not (maybe and name.startswith(".param") and name not in self.tracked_params):
                if name in self.cellvars:
                    if not self.by_call:
                        self.fail(f"updating '{name}' in place, which a nested function captures")
                    # an update that may not have happened (a call that may update it, `x += v`, an update of what
                    # may hold it): most often it did not (a number, a helper's `p *= 2`), which is checked now
                    self.call(Const(mt.captured_unchanged), [var, Const(name), Const(self.filename),
                                                             Const(self.line)], hint="_")
                    continue
                if maybe:
                    alias = self.call(Const(mt.same_or), [var, old, new], hint=self.user_name(var))
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
        for clin in [c for c in below if c in direct and c not in chain]:
            child = self.named_child(clin)
            if child is not None:
                chain.add(clin)
                kind, key = direct[clin]
                fresh = self.call(Const(mt.refresh_iter), [child, new, self.where(child, key)],
                                  hint=self.user_name(child)) if kind == "iter" else \
                    self.call(Const(mt.refresh), [child, new, Const(kind), key], hint=self.user_name(child))
                self.rebind(child, fresh, whole_lineage=True)
        holders = False
        for kind, plin, key in list(self.parents_of(lin)):
            if plin == came_from or plin in chain:
                continue
            if kind == "held":
                holders = holders or key
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
                    chain.add(hlin)
                    put = self.call(Const(mt.put_held), [parent, self.where(parent, holders), updated()],
                                    hint=self.user_name(parent))
                    if again:
                        self.rebind(parent, put)
                        continue
                    outer, self.by_call = self.by_call, True  # it may not hold it: found (or not) at run time
                    try:
                        self.mutate(parent, put, lin, chain=chain)
                    finally:
                        self.by_call = outer
        for clin in [c for c in below if c not in direct]:
            if clin in chain:
                continue
            child = self.named_child(clin)
            if child is None:
                continue
            # held here, however deep (`lst = [W]; lst[0][0] = 5` changes W): found in `new` at run time, and its
            # own holders see the change too
            chain.add(clin)
            fresh = self.call(Const(mt.refresh_held), [child, new, self.where(child, made.get(clin, (0, None))[1])],
                              hint=self.user_name(child))
            self.mutate(child, fresh, lin, chain=chain, refreshed=True)
        for clin in self.through_unnamed(lin, chain | {came_from}):
            # a sibling (`z = (y, x)[0]`, `v = a[1:] if c else a[:1]`) or a view's own parent (`t = [y[1:]]`,
            # `np.squeeze(x[None])`), linked only through an object no name refers to now: it may be the updated
            # object, sit inside it or share its memory, which is found at run time
            if clin in chain:
                continue
            child = next(v for n, v in self.env.items() if isinstance(v, Var) and self.lineage.get(v) == clin
                         and not n.startswith("."))  # a user's name: `.param` keeps a parameter's first object
            chain.add(clin)
            fresh = self.call(Const(mt.refresh_held), [child, new, self.where(child, Const(self.line))],
                              hint=self.user_name(child))
            self.mutate(child, fresh, lin, chain=chain, refreshed=True)

    def named_child(self, clin):
        """A Var of lineage `clin` some name (a user's, or a loop's live copy) holds now, or None."""
        return next((v for n, v in self.env.items() if isinstance(v, Var) and self.lineage.get(v) == clin
                     and (not n.startswith(".") or n.startswith(".live"))), None)

    def through_unnamed(self, lin, skip):
        """The named lineages linked to `lin` only through objects no name refers to now, by a path that goes both
        to a parent and to a child (the plain walks up and down, `related`, reach the others)."""
        up, down = {}, {}
        for c, links in self.parents.items():
            for _, p, _ in links:
                up.setdefault(c, set()).add(p)
                down.setdefault(p, set()).add(c)
        named = {self.lineage.get(v) for n, v in self.env.items() if isinstance(v, Var) and not n.startswith(".")}
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

    def target_object(self, node):
        obj = self.expr(node)
        if not isinstance(obj, Var) or isinstance(node, gast.Name) and self.global_container(node.id):
            self.fail("updating a global or constant object in place", node,
                      "pass it as an argument, or work on a copy")
        return obj

    def store_item(self, target, value):
        if self.global_item(target, value):
            return
        obj = self.target_object(target.value)
        index = self.expr(target.slice)
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

    def store_attr(self, target, value):
        obj = self.target_object(target.value)
        attr = Const(self.mangle(target.attr))
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
                self.env.pop(t.id, None)
            else:
                self.fail(f"del of {type(t).__name__}", t)

    def augassign_item(self, node, inplace):
        """`x[i] += v` is `t = x[i]; t += v; x[i] = t` (one read, Python's in-place operator, one write), as Python runs
        it: an item that is itself an array or a list is updated in place, so a name that holds it sees the update
        (the store's `refresh` of the container's children routes their cotangents); likewise for attributes."""
        t = node.target
        if isinstance(t, gast.Subscript) and self.global_item(t, lambda index: self.call(Const(inplace), [
                self.call(Const(operator.getitem), [self.expr(t.value), index]), self.expr(node.value)])):
            return
        obj = self.target_object(t.value)
        if isinstance(t, gast.Subscript):
            index = self.expr(t.slice)
            cur = self.call(Const(operator.getitem), [obj, index])
            new = self.call(Const(inplace), [cur, self.expr(node.value)])
            self.mutate(obj, self.call(Const(mt.setitem), [obj, index, new], hint=self.user_name(obj)))
        else:
            attr = Const(self.mangle(t.attr))
            cur = self.call(Const(getattr), [obj, attr])
            new = self.call(Const(inplace), [cur, self.expr(node.value)])
            self.mutate(obj, self.call(Const(mt.setattr_), [obj, attr, new], hint=self.user_name(obj)))

    def mutating_call(self, fn, args, kwargs, star, hint, updated, kept_anyway=(), site=False):
        """A call that may update the arguments at positions `updated`: `_r = mutcall(fn, *args)` gives
        `(result, *args)`; each of those arguments that is a local value gets the returned version. Positions in
        `kept_anyway` count as updated even when no later code of this function sees them (a global's object).
        `site`: a mutcall even when no later code sees an updated argument (`step({"x": x}, n)`), so that the
        callee's updates of it are allowed (nothing reads their final versions)."""
        updated = [k for k in updated if k in kept_anyway or self.observable(args[k])]
        kept = [*args, *(v for _, v in kwargs), *([star] if star is not None else [])]
        if fn == Const(rt.callmethod):
            kept = [args[0], *kept[2:]]
        # (`out=` given a temporary updates nothing observable, but still goes through mutcall: with_out's rule)
        if star is not None or not updated and not site and fn != Const(mt.with_out):
            out = self.call(fn, args, kwargs, star, hint)
            self.note_held(out, kept)
            return out
        out = self.call(Const(mt.valuecall if site else mt.mutcall), [fn, *args], kwargs, hint="_r")
        result = self.call(Const(operator.getitem), [out, Const(0)], hint=hint)
        seen, versions = set(), {}
        for k in updated:
            a = args[k]
            if isinstance(a, Var) and a not in seen:
                seen.add(a)
                versions[k] = self.call(Const(operator.getitem), [out, Const(k + 1)], hint=self.user_name(a))
                self.by_call = True
                try:
                    self.mutate(a, versions[k])
                finally:
                    self.by_call = False
        # what it updated may now keep the other arguments (`rows.append(row)`, `store(lst, W)`), and its result may
        # be one of them or held in one (`d.setdefault(k, W)`, `lst.pop()`)
        for k, v in versions.items():
            self.note_held(v, [a for a in kept if a is not args[k]])
        self.note_held(result, [versions.get(k, args[k]) if k < len(args) else args[k] for k in range(len(args))
                                if isinstance(args[k], Var)] + kept[len(args):])
        return result

"""Lineages for lower(): which names refer to one object (a *lineage*), and the links between objects (an object read
out of another, `row = m[0]`; one held in another, `lst = [W]`), which an update in place follows (see mutation.py).
"""
import collections
import heapq

from ..ir import Const, Var

# the calls that give back an item they take out of their first argument (`o = todo.pop(0)`, `k, v = d.popitem()`,
# `_, _, top = heapq.heappop(h)`): a method by its name, whatever its object, or a library function
TAKES_OUT_METHODS = frozenset(("pop", "popitem", "popleft"))
TAKES_OUT = frozenset((heapq.heappop, heapq.heappushpop, heapq.heapreplace))


def _slice_key(key):
    """Is the item key `key` (an atom) a slice (`objs[:]`, `objs[1:]`): what it reads a copy of the items?"""
    return isinstance(getattr(key, "value", None), slice)


class Lineages:
    """The bookkeeping part of the mutation lowering (mixed into the Lowerer)."""

    def init_mutation(self):
        self.lineage = {}      # Var -> lineage id (the object it names)
        self.parents = {}      # lineage -> [(kind "item"/"attr"/"iter"/"view"/"held", parent lineage, key atom)], newest last
        self.latest = {}       # lineage -> its newest Var (for temporaries no name refers to)
        self.walk_links = None  # while an update's walk is lowered: the links read both ways, made once (mutation.py)
        # the `.param{k}` entries of parameters the function surely updates in place (an item store, a mutating
        # method): they follow maybe-in-place updates too (`y *= 0.1`), so the final version returned to the caller
        # includes them; other parameters' `x += v` is caught at run time (dispatch._check_updates)
        self.tracked_params = set()
        self.by_call = False   # the update being lowered may not have happened (a call's, `x += v`: see `mutate`)
        self.update_root = Const(None)  # the argument a call may have updated, whose update is being followed
        self.mutated = set()   # lineages given a new version somewhere
        self.reached = set()   # lineages given one only if linked at run time to an updated object (refresh_held)
        # lineages a maybe-in-place update (`z *= 0.5`) may have split in two: on JAX arrays and numbers `z` names a
        # new object and its aliases keep the old one, so a later update reaches a name only if it names that object
        self.split = set()
        self.pending = {}      # lineage refreshed by an update in place -> its fresh version, until passed on
        self.refreshed_lins = set()  # the lineages the update being lowered refreshed (mutation.py)
        self.refreshed_again = set()  # (lineage, from lineage) pairs it refreshed by a second route
        self.told_again = {}   # lineage -> its version a holder told again made, to pass on instead of its refresh
        self.updated_by_closures = {}  # captured local -> the nested function that may update it in place
        self.closure_reads = {}  # lineage of a nested function made here -> the names it captures
        self.updated_name = None  # the name the update being lowered was made through (for its refusals)
        self.loop_joins = {}   # lineage of a loop body's last version of a carried object -> the carry's lineages
        self.joins = set()     # lineages of joins (an if's result) that may be either arm's object (`join_link`)
        self.next_lineage = 0
        self.mutation_steps = 0  # `mutate` calls so far (mutation.py `_STEPS`)
        self.holds_items_of = {}  # lineage -> lineages whose items a loop's body stored in it (`stored_items`)
        self.kept_count = 0    # hidden names of values an expression holds while it evaluates the rest (`in_order`)

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
            self.joins.add(self.lineage_of(out))

    def note_child(self, child, kind, parent, key):
        """`child`'s object is (or is a view of) `parent[key]`, `parent.key`, or held somewhere in `parent` ("held":
        put there by a display, `append`, ...): an update of the child reaches the parent."""
        if isinstance(child, Var) and isinstance(parent, Var) and child != parent:
            entry = (kind, self.lineage_of(parent), key)
            links = self.parents.setdefault(self.lineage_of(child), [])
            if entry not in links and not (kind == "held" and any(k == kind and p == entry[1] for k, p, _ in links)):
                links.append(entry)
            for holder in self.holds_items_of.get(entry[1], ()) if kind in ("item", "attr", "iter") else ():
                # (read out of a dict a loop stored items of `rows` in: it may be one of them, held in rows too)
                if holder != self.lineage_of(child) and not any(p == holder for _, p, _ in links):
                    links.append(("held", holder, Const(self.line)))

    def note_held(self, holder, items):
        """`holder` may keep `items` inside it (a display, `append`, any call: `h = make_holder(W)`), so an update of
        one reaches the other (put_held / refresh_held find where at run time, by identity)."""
        for item in items:
            self.note_child(item, "held", holder, Const(self.line))

    def note_taken_out(self, result, container):
        """`result` was taken out of `container` (`o = todo.pop(0)`, `_, _, top = heapq.heappop(h)`), so it is no
        longer there at run time: an update of it passed on through the container (to which the call links it:
        lower/updates.py `mutating_call`) would reach none of the objects that still hold it (`objs` of
        `todo = [objs[0], objs[1]]` or of `todo = objs[:]`, the objects in a heap's tuples). The objects no name
        refers to that the container held when the call began (`objs[0]`, a heap's tuples) are linked as held in
        `result` (it may be one of them, or hold it), so its update reaches them and their holders (found by
        identity at run time: put_held / refresh_held), and theirs reach it; a named one is reached through the
        container's own link already. And `result` is held in what the container is a slice of (`todo = objs[:]`
        holds the items of `objs`)."""
        if not isinstance(result, Var) or not isinstance(container, Var):
            return
        rlin = self.lineage_of(result)
        same = self.same_objects(self.lineage_of(container))
        named = {self.lineage.get(v) for n, v in self.env.items() if isinstance(v, Var) and not n.startswith(".")}
        entry = ("held", rlin, Const(self.line))
        for child, links in list(self.parents.items()):
            if child != rlin and child not in same and child not in named \
                    and any(p in same and k != "view" for k, p, _ in links) \
                    and not any(k == "held" and p == rlin for k, p, _ in links):  # (a dict's view: made again)
                links.append(entry)
        copied = {p for lin in same for k, p, key in self.parents_of(lin) if k == "item" and _slice_key(key)}
        links = self.parents.setdefault(rlin, [])
        for parent in sorted(copied - same - {rlin}):
            if not any(k == "held" and p == parent for k, p, _ in links):
                links.append(("held", parent, Const(self.line)))

    def same_objects(self, lin):
        """`lin` and the lineages that may name its object too: a loop body's last version of it (a comprehension's
        list, filled by `append`: `loop_joins`) or the carried one of that, an if's arms where it is their join
        (`joins`)."""
        same, work = {lin}, [lin]
        while work:
            cur = work.pop()
            more = [last for last, carried in self.loop_joins.items() if cur in carried]
            more += self.loop_joins.get(cur, [])
            if cur in self.joins:
                more += [p for k, p, _ in self.parents_of(cur) if k == "held"]
            for other in more:
                if other not in same:
                    same.add(other)
                    work.append(other)
        return same

    def related(self, lin, up, skip):
        """The lineages reachable from `lin` through links, nearest first: its holders and their holders (`up`), or
        what it holds and what those hold; `skip` is not entered."""
        out, seen, work = [], set(skip) | {lin}, collections.deque([lin])
        below = None if up else self.holdings()
        while work:
            cur = work.popleft()
            nxt = [p for _, p, _ in self.parents_of(cur)] if up else below.get(cur, ())
            for n in nxt:
                if n not in seen:
                    seen.add(n)
                    out.append(n)
                    work.append(n)
        return out

    def holdings(self):
        """{lineage: the lineages linked to it as held, items, attributes, views, ..., in the order of `parents`}: the
        links read downwards, made once for a whole walk (reading `parents` for each object made a long function's
        lowering quadratic in its objects: SciPy's solve_ivp did not finish)."""
        if self.walk_links is not None and "below" in self.walk_links:
            return self.walk_links["below"]
        below = {} if self.walk_links is None else self.walk_links.setdefault("below", {})
        for child, links in self.parents.items():
            for _, parent, _ in links:
                kids = below.setdefault(parent, [])
                if not kids or kids[-1] != child:
                    kids.append(child)
        return below

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
        hidden = hidden_name = None
        for name, var in self.env.items():
            if isinstance(var, Var) and self.lineage.get(var) == lin and not name.startswith(".flag"):
                if not name.startswith("."):
                    return var
                if hidden is None:
                    hidden, hidden_name = var, name
        if hidden is not None:
            newest = self.latest.get(lin)
            if named and newest is not None and newest != hidden and hidden_name.startswith(".param"):
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
            if any(self.lineage.get(self.env.get(n, Var(n))) == lin for n in self.freevars):
                return True  # (held by a captured object: `d["a"].append(v)`, d captured)
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

"""Loop variables for lower(): a `for` loop's variable is an item of what the loop walks, so updating it in place
updates that container (`for r in Y: r *= 2` changes Y's rows, `for v in arrs: v[0] = 0` the arrays in `arrs`,
`for p in objs: p.w[0] = 1` the objects), and a loop that rebinds a name to a part of its old object
(`b = b[1:]`) leaves that name naming a part of the object it started as.

When the body may update the loop variable in place (directly or through a name derived from it), or may update
anything (a later iteration then reads an item changed since the loop started: `for r in Y: Y[2] *= 2`,
`for v in [a, a]: v *= k`), or code anywhere in the function may update something (after the loop the name is still
the last item), each target name is linked to its container as an "iter" child (`Mutation.mutate` places `put_iter`/`refresh_iter`, whose rules
find the item at run time: an array's row by its address, anything else by identity). `enumerate(X)`, `zip(X1, X2)`,
`d.values()` and `d.items()` link each name to the container whose items it takes. A container no local name refers
to (`for v in [a, b]`) gets a hidden local, so the loop carries its versions. Each iteration reads its item from the
container as it is then (`refresh_iter`; dropped when the body never gives the container a new version). A loop over
a new list or tuple made from another container (`reversed(lst)`, `sorted(lst)`, `list(lst)`, `lst[::-1]`,
`net.parameters()`) may update the items in its body: the update's links find them in what made the copy (the call's
result holds its arguments' items) and route their cotangents there. The loop variable of such a copy updated after
the loop, which no iteration links, is refused when it runs (`mutate.loop_copied`).

A name the body rebinds and that names an object when the loop starts (`b = a; for ...: b = b[1:]`) is carried as its
own object, linked the same way to the one it starts as (found there at run time: itself, a row, an item; a view of
another part is refused): not as an alias of it, which after the body it may no longer be.
"""
import gast

from .. import mutate as mt
from .. import runtime as rt
from ..ir import Const, Var
from .scan import augmented_names, mutation_syntax, nodes_no_defs, updating_method_name

_HELPERS = {"enumerate": enumerate, "zip": zip}
def _names(node):
    return [n.id for n in gast.walk(node) if isinstance(n, gast.Name)]


def _seen_by(fn):
    """The names a nested function mentions, but its own parameters (`key=lambda p: p[0]` sees no outer `p`)."""
    a = fn.args
    own = {p.id for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if isinstance(p, gast.Name)}
    return [name for name in _names(fn) if name not in own]


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute, gast.Starred)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


_STORING_METHODS = {"append", "appendleft", "insert", "extend", "extendleft", "add", "remove", "discard"}


def _may_update(stmts):
    """Names whose objects this code may update in place: bases of item/attribute stores and `del`, `+=` targets,
    objects of mutating methods, arguments of call statements and `out=`, and every name a nested function sees."""
    work, found = list(stmts), set()
    while work:
        n = work.pop()
        bases = []
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store, gast.Del)):
            bases.append(n.value)
        elif isinstance(n, gast.AugAssign):
            bases.append(n.target)
        elif isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
            func = n.value.func  # (a container's own method, `out.append(v)`, updates its object, not `v`)
            if not (isinstance(func, gast.Attribute) and func.attr in _STORING_METHODS):
                bases += [*n.value.args, *(k.value for k in n.value.keywords)]
            bases.append(func)
        elif isinstance(n, gast.Call):
            if isinstance(n.func, gast.Attribute) and updating_method_name(n.func.attr):
                bases.append(n.func.value)
            bases += [k.value for k in n.keywords if k.arg == "out"]
        elif isinstance(n, (gast.FunctionDef, gast.Lambda)):
            found.update(_seen_by(n))
            continue
        found.update(r for r in map(_root, bases) if r is not None)
        work.extend(gast.iter_child_nodes(n))
    return found


def _derived(stmts):
    """name -> the names assigned from expressions that mention it (`s = r[1:]`, `w = p.w`, an inner loop's target)."""
    edges = {}
    for n in (m for s in stmts for m in gast.walk(s)):
        if isinstance(n, gast.Assign):
            pairs = [(t, n.value) for t in n.targets]
        elif isinstance(n, gast.For):
            pairs = [(n.target, n.iter)]
        elif isinstance(n, gast.NamedExpr):
            pairs = [(n.target, n.value)]
        else:
            continue
        for target, value in pairs:
            stored = [m.id for m in gast.walk(target) if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store)]
            for src in _names(value):
                edges.setdefault(src, set()).update(stored)
    return edges


def updated_targets(node, stmts=None):
    """The names of the `for` loop `node`'s target whose objects its body (or the code `stmts`) may update in place."""
    stmts = node.body if stmts is None else stmts
    updated, edges = _may_update(stmts), _derived(stmts)
    out = []
    for name in _names(node.target):
        seen, work = {name}, [name]
        while work:
            cur = work.pop()
            if cur in updated:
                out.append(name)
                break
            for nxt in edges.get(cur, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    work.append(nxt)
    return out


class LoopTargets:
    """The loop-variable part of the Lowerer (mixed into it)."""

    def iter_helper(self, node):
        """"enumerate", "zip", "values" or "items" if `node` calls that helper plainly, else None."""
        if not isinstance(node, gast.Call) or any(isinstance(a, gast.Starred) for a in node.args):
            return None
        f = node.func
        if isinstance(f, gast.Name) and f.id in _HELPERS and f.id not in self.locals \
                and self.resolve(f.id) is _HELPERS[f.id] and (f.id == "zip" or 1 <= len(node.args) <= 2):
            return f.id
        if isinstance(f, gast.Attribute) and f.attr in ("values", "items") and not node.args and not node.keywords:
            return f.attr
        return None

    def unpacked(self, node):
        """`for a, b in pairs:` as `for _item in pairs: a, b = _item` (`for k, (a, b) in enumerate(pairs)` as `for k,
        _item in ...`, and so on through `zip` and `.items()`): the item is linked to its container whole, read from it
        as it is when the iteration begins (by position, or a row), and only then unpacked. Names linked as parts of an
        item (an element of a pair, a number of a row) kept the item of the start and sent their cotangents there.
        A new node: the parsed source is shared by every transform of the function."""
        unpacks = []

        def whole(t):
            hide = self.namer.fresh("_item")
            self.locals.add(hide)
            unpacks.append(gast.Assign(targets=[t], value=gast.Name(hide, gast.Load(), None, None), type_comment=None))
            return gast.Name(hide, gast.Store(), None, None)

        def split(t, it):
            helper, elts = self.iter_helper(it), t.elts if isinstance(t, (gast.Tuple, gast.List)) else None
            if elts is None:
                return t
            if not any(isinstance(e, gast.Starred) for e in elts):
                if helper == "enumerate" and len(elts) == 2:
                    return gast.Tuple([elts[0], split(elts[1], it.args[0])], gast.Store())
                if helper == "zip" and len(elts) == len(it.args):
                    return gast.Tuple([split(e, a) for e, a in zip(elts, it.args, strict=True)], gast.Store())
                if helper == "items" and len(elts) == 2:
                    return gast.Tuple([elts[0], split(elts[1], None)], gast.Store())
            return whole(t)
        target = split(node.target, node.iter) if not self._is_range(node.iter) else node.target
        if not unpacks:
            return node
        new = gast.For(target=target, iter=node.iter, body=[*unpacks, *node.body], orelse=node.orelse,
                       type_comment=None)
        if hasattr(node, "comprehension"):
            new.comprehension = node.comprehension
        for n in (new, target, *unpacks, *(m for u in unpacks for m in gast.walk(u))):
            gast.copy_location(n, node)
            n.end_lineno = node.lineno
        return new

    def item_sources(self, target, it):
        """[(target name, the expression whose items its values are)] for the names of `target`."""
        helper = self.iter_helper(it)
        elts = target.elts if isinstance(target, (gast.Tuple, gast.List)) else None
        if helper == "values":
            return self.item_sources(target, it.func.value) if isinstance(target, gast.Name) else \
                [(n, it.func.value) for n in _names(target)]
        if elts is not None and not any(isinstance(e, gast.Starred) for e in elts):
            if helper == "enumerate" and len(elts) == 2:
                return self.item_sources(elts[1], it.args[0])
            if helper == "zip" and len(elts) == len(it.args):
                return [p for e, a in zip(elts, it.args, strict=True) for p in self.item_sources(e, a)]
            if helper == "items" and len(elts) == 2:
                return [(n, it.func.value) for n in _names(elts[1])]
        return [(n, it) for n in _names(target)]

    def lower_iterable(self, node, wanted, found):
        """Lower the iterable `node`, recording in `found` the Vars of the subexpressions in `wanted` (by id)."""
        helper = self.iter_helper(node)
        inner = {id(m) for m in gast.walk(node) if m is not node}
        if helper is None or not inner & wanted:
            out = self.expr(node)
        elif helper in ("values", "items"):
            obj = self.lower_iterable(node.func.value, wanted, found)
            self.line = getattr(node, "lineno", self.line)
            out = self.call(Const(rt.callmethod), [obj, Const(node.func.attr)])
            self.note_held(out, [obj])
        else:
            fn = self.expr(node.func)
            args = [self.lower_iterable(a, wanted, found) for a in node.args]
            kwargs = [(k.arg, self.expr(k.value)) for k in node.keywords]
            self.line = getattr(node, "lineno", self.line)
            out = self.call(fn, args, kwargs)
            self.note_held(out, [*args, *(v for _, v in kwargs)])
        found[id(node)] = out
        return out

    def function_updates(self):
        """The names this function's code updates in place anywhere (see `_may_update`)."""
        if not hasattr(self, "_function_updates"):
            body = self.source_node.body
            body = body if isinstance(body, list) else [body]  # a lambda's
            self._function_updates = (_may_update(body), body)
        return self._function_updates

    def items_may_change(self, node):
        """May the body of the `for` loop `node` update what it walks (or an item of it), so that a later
        iteration reads an item changed since the loop started (`for r in Y: Y[2] *= 2`, `for v in [a, a]`)?"""
        if mutation_syntax(node.body) or self.has_updating_calls(nodes_no_defs(node.body)):  # (`z = fill(x, v)`)
            return True
        for name in augmented_names(node.body):  # `t += v`: in place if `t` names an array, a list, ...
            if self._plain_rebind(node.body, name):  # which object it names is not known here
                return True
            var = self.env.get(name)
            if not isinstance(var, Var):
                continue
            if self.linked(name) or self.aliases_of([name]) or self.lineage_of(var) in self.param_lineages():
                return True
        return False

    @staticmethod
    def _plain_rebind(stmts, name):
        aug = {id(n.target) for m in stmts for n in gast.walk(m) if isinstance(n, gast.AugAssign)}
        return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store) and id(n) not in aug
                   for m in stmts for n in gast.walk(m))

    def _is_range(self, src):
        return isinstance(src, gast.Call) and isinstance(src.func, gast.Name) and src.func.id not in self.locals \
            and self.resolve(src.func.id) is range

    def for_iterable(self, node):
        """Lower the iterable of the `for` loop `node`: (the loop to lower, `unpacked`; the iterable's Var, [(target
        name, container lineage)], hidden names, whether the body may update an item or the container)."""
        self.check_lazy_sources(node)
        self.check_resumed_iterators(node)
        node = self.unpacked(node)
        lowered = self.link_items(node)
        self.watch_lazy_sources(node)
        return (node, *lowered)

    def link_items(self, node):
        """The iterable's Var and the links of the target's names to the containers whose items they are."""
        self.copied_checks = getattr(self, "copied_checks", {})
        self.copied_checks[id(node)] = []
        if not isinstance(node.target, (gast.Name, gast.Tuple, gast.List)) or self._is_range(node.iter):
            return self.expr(node.iter), [], [], False  # (a range's items are numbers: nothing to link, no walks)
        names = updated_targets(node)
        changing = bool(names) or self.items_may_change(node)
        updates, _ = self.function_updates()
        # every target name is linked when the body may change what later iterations read, or when code anywhere
        # may update the item or the container (after the loop, the name is still the last item); a range's items
        # are numbers nothing updates
        wanted = set(_names(node.target)) if changing or updates else set()
        pairs = [(n, src) for n, src in self.item_sources(node.target, node.iter)
                 if n in names or n in wanted and not self._is_range(src)]
        if not pairs:
            return self.expr(node.iter), [], [], False
        found = {}
        it = self.lower_iterable(node.iter, {id(src) for _, src in pairs}, found)
        self.line = node.lineno
        links, hidden, copies = [], [], []
        updated = set(names) | (set(updated_targets(node, self.function_updates()[1]))  # (not a comprehension's
                                if updates and not getattr(node, "comprehension", False) else set())  # own name)
        for name, src in pairs:
            var = found.get(id(src))
            if not isinstance(var, Var):
                continue
            lin, kept = self.lineage_of(var), ()
            if self.current(lin, named=True) is None:  # `for v in [a, b]`: a hidden local, carried by the loop
                hide = self.namer.fresh("_iter")
                hidden.append(hide)
                self.locals.add(hide)
                self.env[hide] = var
                # what made it may keep the items elsewhere (`reversed(lst)`, `sorted(arrs, key=...)`)
                kept = [c for c, ls in self.parents.items() if any(k == "held" and p == lin for k, p, _ in ls)]
                # (an item of a copy `lst[::-1]` is its original's too)
                made = kept + [p for k, p, _ in self.parents_of(lin) if k == "item" and p not in kept]
                if made and name in updated and name not in names:  # (one updated in the body is found in
                    copies.append((name, lin, made))  # what made the copy: shared.py `shared_contents`)
            links.append((name, lin, kept))
        self.copied_checks[id(node)] = copies
        return it, links, hidden, changing

    def check_copies(self, node):
        """In the loop's body: an updated item must not come from a copy of a container (see `mt.loop_copied`), nor
        an object a lazy iterator walks have been updated since the loop began (`check_watches`, lazy.py)."""
        self.check_watches(node)
        for name, lin, made in getattr(self, "copied_checks", {}).get(id(node), ()):
            item, container = self.env.get(name), self.current(lin, named=True)
            holders = [(self.current(m, named=True), m) for m in made]
            holders = [(h, self.user_name(h)) for h, _ in holders if h is not None]
            if isinstance(item, Var) and container is not None and holders:
                self.call(Const(mt.loop_copied), [item, container, Const(
                    (self.filename, node.lineno, name, tuple(n for _, n in holders))), *(h for h, _ in holders)],
                    hint="_")

    def link_targets(self, links, line, after=False, position=None):
        """In the loop's body, after its target is bound: each linked name is an item of its container, read from
        the container as it is now (a refresh, dropped by `drop_refreshes` if the body never changes it). `after`:
        after the loop, the name is still the last item it took. `position`: the iteration's index (an array's items
        that are numbers are found by it)."""
        refreshes = []
        for name, lin, kept in links:
            item, container = self.env.get(name), self.current(lin, named=True)
            if isinstance(item, Var) and container is not None and self.lineage_of(item) != lin:
                if not after:  # an earlier iteration may have changed this item: `for v in [a, a]`, `Y[2] *= 2`
                    at = [position] if position is not None else []
                    fresh = self.call(Const(mt.refresh_iter), [item, container, self.where(item, Const(line)), *at],
                                      hint=name)
                    refreshes.append((self.region[-1], container))
                    self.rebind(item, fresh)
                    item = fresh
                self.note_child(item, "iter", container, Const(line))
                for klin in kept:
                    holder = self.current(klin, named=True)
                    if holder is not None:
                        self.note_child(item, "held", holder, Const(line))
        return refreshes

    @staticmethod
    def drop_refreshes(refreshes, carries):
        """The refreshes of items from containers the loop's body never gives a new version: read as they were."""
        changed = {c.var for c in carries if c.next != c.var}
        for stmt, container in refreshes:
            if container not in changed:
                stmt.value.args = (stmt.value.args[0], Const(None), *stmt.value.args[2:])

    def end_for(self, node, hidden):
        self.copied_checks.pop(id(node), None)
        self.end_watches(node)
        for name in hidden:
            var = self.env.pop(name, None)
            self.locals.discard(name)
            if isinstance(var, Var) and self.lineage.get(var) is not None:  # (its newest version is the carried
                self.latest[self.lineage[var]] = var  # name, not one its body made: an update after the loop)

    def carry_rebound(self, carries, rebound):
        """Carries of names the body rebinds (`b = b[1:]`): their own object, held by the one the name starts as."""
        for c, name in carries:
            if name in rebound and isinstance(c.init, Var) and self.lineage.get(c.var) == self.lineage.get(c.init):
                self.next_lineage += 1
                self.lineage[c.var] = self.next_lineage
                self.note_child(c.var, "iter", c.init, Const(self.line))

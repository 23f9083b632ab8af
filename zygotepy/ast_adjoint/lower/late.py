"""Generator expressions, `map` and `filter` kept for later, for lower(): Python runs their bodies as they are consumed,
zygotepy when they are made (a generator expression is lowered as a list, `map` and `filter` as the comprehensions
they mean). The two read the same values unless a local name the body reads (not the generator's first iterable,
which Python too reads when it is made) is assigned again between the two: `g = (t * k for t in xs); k = y; sum(g)`,
or `gens.append(v * k for v in xs)` in a loop over `k`. That is refused before anything runs (`late_read`).

The object is consumed at once where it is an argument of a call (`sum(...)`, `list(...)`) or what a `for` loop walks;
kept where it is assigned to a name (then consumed where the name is read: a later assignment of what it reads is a
hazard only before such a read, or anywhere in a loop around it that the read does not follow in the same iteration),
put into a container (a display, `lst.append(...)`, an element of a comprehension) or handed on (`zip(g, ys)` kept):
then any assignment of what it reads after it, or in a loop around it, is.
"""
import gast

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_HANDING_ON = {"zip", "enumerate", "reversed", "iter", "map", "filter"}  # lazy: they keep what they are given


def _pos(node):
    return node.lineno, node.col_offset


def _end(node):
    return node.end_lineno, node.end_col_offset


def _called(node):
    f = node.func if isinstance(node, gast.Call) else None
    return f.id if isinstance(f, gast.Name) else f"{f.value.id}.{f.attr}" if isinstance(f, gast.Attribute) \
        and isinstance(f.value, gast.Name) else None


# the function argument's position in the calls whose function Python runs as their items are taken (itertools'
# names, bare as imported or dotted)
_CALLING = {"map": 0, "filter": 0, "accumulate": 1, "starmap": 0, "filterfalse": 0, "takewhile": 0, "dropwhile": 0}


def _calling(call):
    """The position of the function a lazy call runs as it is consumed (`map(f, xs)`, `accumulate(xs, f)`), or None."""
    name = _called(call) or ""
    return _CALLING.get(name.removeprefix("itertools."))


def _hands_on(call):
    name = _called(call) or ""
    return name in _HANDING_ON or name.startswith("itertools.")


def _kept(expr):
    """The generator expressions and `map`/`filter` calls (and itertools' that call a function: `_CALLING`) inside
    `expr`, a value that is kept, that are kept with it
    (not consumed by a call such as `sum(...)` on the way)."""
    if isinstance(expr, gast.GeneratorExp):
        yield expr
        yield from _kept(expr.generators[0].iter)
    elif isinstance(expr, gast.Call) and _hands_on(expr):
        if _calling(expr) is not None:
            yield expr
        for a in expr.args:
            yield from _kept(a)
    elif isinstance(expr, (gast.Tuple, gast.List, gast.Set)):
        for e in expr.elts:
            yield from _kept(e)
    elif isinstance(expr, gast.Dict):
        for e in expr.values:
            yield from _kept(e)
    elif isinstance(expr, gast.IfExp):
        yield from _kept(expr.body)
        yield from _kept(expr.orelse)
    elif isinstance(expr, (gast.Starred, gast.NamedExpr)):
        yield from _kept(expr.value)


def _loads(parts, bound=()):
    nodes = [n for p in parts for n in gast.walk(p) if isinstance(n, gast.Name)]
    own = {n.id for n in nodes if not isinstance(n.ctx, gast.Load)}
    return {n.id for n in nodes if isinstance(n.ctx, gast.Load)} - own - set(bound)


class _Index:
    """One walk of the function: each node's parent, each statement's block and place in it, the enclosing loops,
    and where each local name is assigned (not a comprehension's own variables, nor a nested scope's)."""

    def __init__(self, fn):
        self.parent, self.block, self.stores, self.loads, self.defs = {}, {}, {}, {}, {}
        self.statements = []
        self._visit(fn, None, True)

    def _visit(self, node, parent, own):
        self.parent[id(node)] = parent
        if isinstance(node, gast.Name):
            table = self.loads if isinstance(node.ctx, gast.Load) else self.stores if own else {}
            table.setdefault(node.id, []).append(node)
        if parent is not None and isinstance(node, _SCOPES):
            if own and not isinstance(node, gast.Lambda):
                self.stores.setdefault(node.name, []).append(node)
                self.defs[node.name] = node
            own = False
        if isinstance(node, gast.Assign) and own and isinstance(node.value, gast.Lambda) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name):
            self.defs[node.targets[0].id] = node.value
        if own and isinstance(node, gast.stmt) and parent is not None:
            self.statements.append(node)
        for field, value in gast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], gast.stmt):
                for k, s in enumerate(value):
                    self.block[id(s)] = (id(value), k)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, gast.AST):
                    # (a comprehension's variables are its own: not the function's)
                    self._visit(child, node, own and not (isinstance(node, gast.comprehension) and field == "target"))

    def ancestors(self, node):
        while (node := self.parent.get(id(node))) is not None:
            yield node

    def loops(self, stmt):
        return [a for a in self.ancestors(stmt) if isinstance(a, (gast.For, gast.While))]

    def dominates(self, stmt, node):
        """Does `stmt` run before `node` whenever `node` runs in the block that holds `stmt` (a later statement of
        that block, or inside one)?"""
        where = self.block.get(id(stmt))
        for a in [node, *self.ancestors(node)]:
            at = self.block.get(id(a))
            if at is not None and where is not None and at[0] == where[0]:
                return at[1] > where[1]
        return False


def _lazy_names(idx, obj):
    """The names `obj`'s body reads when it is consumed."""
    if isinstance(obj, gast.GeneratorExp):
        gens = obj.generators
        return _loads([obj.elt, *(c for g in gens for c in g.ifs), *(g.iter for g in gens[1:])],
                      {n.id for g in gens for n in gast.walk(g.target) if isinstance(n, gast.Name)})
    at = _calling(obj)
    fn = obj.args[at] if len(obj.args) > at else next((k.value for k in obj.keywords if k.arg == "func"), None)
    if isinstance(fn, gast.Name):
        fn = idx.defs.get(fn.id)
    if isinstance(fn, (gast.Lambda, gast.FunctionDef)):
        a = fn.args
        params = {p.id for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]}
        return _loads(fn.body if isinstance(fn.body, list) else [fn.body], params)
    return set()


def _consumed_at(idx, load):
    """Where the object a name read here holds is consumed: the read itself (an argument of a call that uses it up,
    a `return`), the end of the loop that walks it; None where it is handed on (kept again, in a container, ...)."""
    parent = idx.parent.get(id(load))
    if isinstance(parent, gast.Starred):
        load, parent = parent, idx.parent.get(id(parent))
    if isinstance(parent, gast.Call) and load in parent.args and not _hands_on(parent) and not (
            isinstance(parent.func, gast.Attribute) and parent.func.attr in ("append", "extend", "insert", "add")):
        return _pos(load)
    if isinstance(parent, gast.Return):
        return _pos(load)
    if isinstance(parent, gast.For) and parent.iter is load:
        return _end(parent)
    return None


def _hazard(idx, stmt, name, kept):
    """Can `name` be assigned between `stmt`, which keeps the lazy object (in the name `kept`, or elsewhere), and its
    consumption?"""
    stores = [_pos(p) for p in idx.stores.get(name, ())]
    loops = idx.loops(stmt)
    in_loop = lambda p, loop: _pos(loop) <= p <= _end(loop)  # noqa: E731
    reads = [] if kept is None else [r for r in idx.loads.get(kept, ()) if not _pos(stmt) <= _pos(r) <= _end(stmt)]
    uses = [_consumed_at(idx, r) for r in reads]
    if kept is None or None in uses:  # anywhere after it, or in a loop around it
        return any(p > _end(stmt) or any(in_loop(p, lp) for lp in loops) for p in stores)
    for read, use in zip(reads, uses, strict=True):
        if any(_end(stmt) < p < use for p in stores):
            return True
        for lp in loops:  # a later iteration, or after the loop, read the object of an earlier one
            if any(in_loop(p, lp) for p in stores) and (
                    not in_loop(_pos(read), lp) and _pos(read) > _end(lp) or
                    in_loop(_pos(read), lp) and not idx.dominates(stmt, read)):
                return True
    return False


def _expressions(stmt):
    """The expressions of the statement `stmt` itself (not of the statements in its body, nor of a nested scope)."""
    work = [v for f, v in gast.iter_fields(stmt) if f not in ("body", "orelse", "handlers", "finalbody")]
    while work:
        n = work.pop()
        if isinstance(n, list):
            work.extend(n)
        elif isinstance(n, gast.AST) and not isinstance(n, _SCOPES):
            yield n
            work.extend(gast.iter_child_nodes(n))


def late_read(fn):
    """The first lazy object of the function `fn` (its gast node) kept while a name its body reads may be assigned
    again before it is consumed: (node, name, what keeps it), or None."""
    if not any(isinstance(n, gast.GeneratorExp) or isinstance(n, gast.Call) and _calling(n) is not None
               for n in gast.walk(fn)):
        return None
    idx = _Index(fn)
    for stmt in idx.statements:
        kept = []  # (value, the name it is kept in or None)
        if isinstance(stmt, (gast.Assign, gast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            one = targets[0].id if len(targets) == 1 and isinstance(targets[0], gast.Name) else None
            kept.append((stmt.value, one))
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and isinstance(
                stmt.value.func, gast.Attribute) and stmt.value.func.attr in ("append", "extend", "insert", "add"):
            kept += [(a, None) for a in stmt.value.args]
        for n in _expressions(stmt):
            if isinstance(n, _COMPREHENSIONS):  # its elements are kept in what it makes
                kept += [(e, None) for e in ([n.key, n.value] if isinstance(n, gast.DictComp) else [n.elt])]
            elif isinstance(n, gast.NamedExpr):
                kept.append((n.value, n.target.id))
        for value, name in kept:
            for obj in _kept(value):
                comps = []  # the comprehensions in the statement whose elements hold it: over a name it reads
                for a in idx.ancestors(obj):
                    if a is stmt:
                        break
                    if isinstance(a, _COMPREHENSIONS):
                        comps.append(a)
                over = {n.id for c in comps for g in c.generators for n in gast.walk(g.target)
                        if isinstance(n, gast.Name)}
                for read in sorted(_lazy_names(idx, obj) & (idx.stores.keys() | over)):
                    if read in over or _hazard(idx, stmt, read, name):
                        return obj, read, name
    return None

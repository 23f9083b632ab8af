"""Syntax summaries for the control flow of lower(): which jumps (`return`, `break`, `continue`) a statement may make
that leave it, and which names a block binds; each asked of every statement of nested blocks, so each node is looked
at once (`_summaries`' memo).
"""
import gast

_BITS = {gast.Return: 1, gast.Break: 2, gast.Continue: 4}
SCOPES = (gast.FunctionDef, gast.Lambda, gast.ClassDef)
LOOPS = (gast.For, gast.While)


def _walk_no_defs(node):
    """Nodes under `node`, not entering nested functions, lambdas or classes."""
    work = _child_nodes(node)
    while work:
        n = work.pop()
        yield n
        work += _child_nodes(n) if not isinstance(n, SCOPES) else []


def _child_nodes(node):
    """`gast.iter_child_nodes`, as a list, without its generators."""
    out = []
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, gast.AST):
            out.append(value)
        elif type(value) is list:
            out += [v for v in value if isinstance(v, gast.AST)]
    return out


def walk(node):
    """Every node of the tree under `node`, `node` included (`gast.walk`'s nodes, in another order)."""
    work = [node]
    while work:
        n = work.pop()
        yield n
        work += _child_nodes(n)


def _summaries(node, memo):
    """`(own, deep, local)` bit sets of the jumps in `node`'s children (`_BITS`): `own` of node itself, `deep` of its
    children's trees without nested functions, `local` of them without nested loops either; each node is looked at
    once (memo: id -> (node, summary)), so asking about every statement of nested blocks stays linear."""
    hit = memo.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    work, order = [node], []
    while work:  # pre-order; its reverse has every node after its children
        n = work.pop()
        if memo.get(id(n), (None,))[0] is not n:
            children = _child_nodes(n)
            order.append((n, children))
            work += children
    for n, children in reversed(order):
        deep = local = 0
        for c in children:
            own, c_deep, c_local = memo[id(c)][1]
            if not isinstance(c, SCOPES):
                deep |= c_deep
                if not isinstance(c, LOOPS):
                    local |= c_local
                else:
                    local |= _else_bits(c, memo)
            deep |= own
            local |= own
        memo[id(n)] = (n, (_BITS.get(type(n), 0), deep, local))
    return memo[id(node)][1]


def _else_bits(loop, memo):
    """The jumps of a loop's `else` clause: it runs outside the loop, so its break/continue leave the enclosing one."""
    bits = 0
    for e in loop.orelse:
        own, _, local = _summaries(e, memo)
        bits |= own | local
    return bits


def has_jumps(node, kinds, memo=None, body_only=False):
    """Does `node` contain a jump of one of `kinds` that leaves it (break/continue stop at nested loops)? Nested
    functions are not searched, except when `node` is one. `body_only`: in a loop's body, not counting the loop."""
    memo = {} if memo is None else memo
    bits = 0
    for k in kinds:
        bits |= _BITS[k]
    own, deep, local = _summaries(node, memo)
    if body_only:
        found = 0
        for s in node.body:
            s_own, s_deep, s_local = _summaries(s, memo)
            inside = 0 if isinstance(s, SCOPES) else s_deep if gast.Return in kinds else \
                _else_bits(s, memo) if isinstance(s, LOOPS) else s_local
            found |= s_own | inside
        return bool(found & bits)
    return bool((own | (deep if gast.Return in kinds else local)) & bits)


def flat_nodes(stmts):
    """Each statement and its nodes, not entering nested functions (a def statement's own body is entered): the
    nodes `assigned_names` and `plainly_assigned` look at, listed once for both."""
    return [n for s in stmts for n in [s, *_walk_no_defs(s)]]


def assigned_names(stmts, flat=None):
    names, seen = [], set()
    for n in flat if flat is not None else flat_nodes(stmts):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            bound = [n.id]
        elif isinstance(n, gast.FunctionDef):
            bound = [n.name]
        elif isinstance(n, (gast.Import, gast.ImportFrom)):  # (`try: from m import f` / `except: from n import f`)
            bound = [a.asname or (a.name if isinstance(n, gast.ImportFrom) else a.name.split(".")[0])
                     for a in n.names if a.name != "*"]
        else:
            continue
        for name in bound:
            if name not in seen:
                seen.add(name)
                names.append(name)
    return names


def plainly_assigned(stmts, flat=None):
    """Names bound in this code by something other than an augmented assignment (`o = out`, a loop target)."""
    flat = flat if flat is not None else flat_nodes(stmts)
    aug_targets = {id(n.target) for n in flat if isinstance(n, gast.AugAssign)}
    return {n.id for n in flat
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in aug_targets}


def test_in_body(node, ran_out=None):
    """The `while` loop `node` as `while True: if not <test>: break` followed by its body: a condition that updates an
    object in place (`while advance(state):`, `while lst and lst.pop() > t:`) then runs, updates included, as a
    statement of each iteration, the last test that ends the loop too. `ran_out`: a name the `break` sets to True
    first (the loop's `else` clause runs where it is, as where the condition failed). New nodes, at the test's line
    (the parsed source is shared by every transform of the function)."""
    def at(n, where):
        for m in walk(n):
            if not hasattr(m, "lineno") or getattr(m, "lineno", None) is None:
                gast.copy_location(m, where)
        return n
    stop = [gast.Break()]
    if ran_out is not None:
        stop.insert(0, gast.Assign([gast.Name(ran_out, gast.Store(), None, None)], gast.Constant(True, None), None))
    check = at(gast.If(gast.UnaryOp(gast.Not(), node.test), stop, []), node.test)
    return at(gast.While(gast.Constant(True, None), [check, *node.body], []), node)

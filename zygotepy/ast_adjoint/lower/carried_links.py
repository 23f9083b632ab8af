"""Links between a loop's carried objects that its body made, for the body's second pass (lower/control.py `loop`):
an object a carry names when an iteration ends that another carried object holds then (`traj.append(x)`,
`hist = hist + [u]`, `hist = hist + [u[1:]]`, `hist = hist + [o.w]`, `d = d | {i: u}`) is held by it when the next
iteration begins, so an update of either then (`u *= s` first in the body) must reach the other. The first pass saw
no such link where that update was lowered."""
from ..ir import Const, Var

_LINKS_BETWEEN = 6  # (how many links a path from one carried object to another may take)
_WALKED = ("held", "item", "attr")  # (up: not a loop's item to what it walks, which the loop links itself)
_READ_OUT = ("item", "attr", "iter")


def _sliced(key):
    """Is the item key `key` (an atom) a slice, or a tuple holding one: what it reads is a view?"""
    value = getattr(key, "value", None)
    return isinstance(value, slice) or isinstance(value, tuple) and any(isinstance(k, slice) for k in value)


def carried_ahead(low, carries, names, body_env):
    """The lineage of a carry's object at the end of an iteration -> its lineage when the next begins."""
    ahead = {}
    for c, name in zip(carries, names):
        nxt = body_env.get(name, c.var)
        if isinstance(nxt, Var):
            ahead.setdefault(low.lineage_of(nxt), low.lineage_of(c.var))
        ahead[low.lineage_of(c.var)] = low.lineage_of(c.var)
    return ahead


def neighbours(low, known):
    """lineage -> [(a lineage linked to it, whether the body made that link, the link's kind where it is a step down)]:
    its holders and parents, the objects read out of it (`u[1:]`, `o.w`, a loop's item), the ifs' joins that may be
    it, and an inner loop's carried object and its body's last version (`loop_joins`). Not what it holds otherwise: a
    holder's other items are no route between two carried objects (`[(r, b)]`, a bound method's object)."""
    out = {}
    for child, links in low.parents.items():
        for link in links:
            made = link not in known.get(child, ())
            if link[0] in _WALKED:
                out.setdefault(child, []).append((link[1], made, None))
            if link[0] in _READ_OUT or child in low.joins and link[0] == "held":  # (`v = a if c else b`: it may be b)
                down = ("view" if _sliced(link[2]) else "part") if link[0] == "item" else \
                    link[0] if link[0] in _READ_OUT else None
                out.setdefault(link[1], []).append((child, made, down))
    for last, carried in low.loop_joins.items():
        for c in carried:
            out.setdefault(last, []).append((c, False, None))
            out.setdefault(c, []).append((last, False, None))
    return out


def links_made(low, known, carries, names, body_env, line, augmented=()):
    """`(child lineage, ("held", parent lineage, line))` for each pair of carried objects a path of links joins, one
    of them made by the body (`known`: the links before it), where the body updates the held one (`augmented`: names
    it updates by `x += v`, in place only of an object something holds, which the first pass could not know), or the
    holder where the body makes it anew (`hist[-1] *= s` before `hist = hist + [u]`). From a carried object, a path
    goes down to what is read out of the object itself (`hist + [u[1:]]`, `[o.w]`, `[d["w"]]`), not to a loop's
    item; from an object no carry names, to a loop's item too (a comprehension's, `[v for v in [u]]`). A link found
    where the object read is a number or a copy costs a check at run time (`refresh_held` finds it held nowhere)."""
    ahead = carried_ahead(low, carries, names, body_env)
    updated = low.mutated | {low.lineage_of(c.var) for c, name in zip(carries, names) if name in augmented}
    remade = {start for end, start in ahead.items() if end != start}
    near = neighbours(low, known)
    out, linked = [], set()
    for child, start in ahead.items():
        work, seen = [(child, 0, False)], {child}
        while work:
            cur, hops, made_before = work.pop()
            for nxt, made, down in near.get(cur, ()):
                if down is not None and cur in ahead and (cur != child or down == "iter"):
                    continue  # (from a carried object: to what is read out of itself only; its loop's items are
                    # the loop's)
                made = made or made_before
                other = ahead.get(nxt)
                if made and other is not None and other != start \
                        and (start in updated or other in updated and other in remade) \
                        and (start, other) not in linked and not any(p == other for _, p, _ in known.get(start, ())):
                    linked.add((start, other))
                    out.append((start, ("held", other, Const(line))))
                if hops + 1 < _LINKS_BETWEEN and nxt not in seen:
                    seen.add(nxt)
                    work.append((nxt, hops + 1, made))
    return out


def carried_items(low, carries, names, body_env, outer_env, line, augmented=()):
    """`(carried lineage, ("held", holder lineage, line))` for each carried object the body updates and binds anew to
    an object read out of one that outlives the loop (`prev["x"] += r["x"]; prev = r` of `for r in rows`: from the
    second iteration on, `prev` is an item of rows): linked as held in those holders when an iteration begins, so its
    update reaches them (found by identity at run time: put_held)."""
    outer = {low.lineage.get(v) for v in outer_env.values() if isinstance(v, Var)}
    out = []
    for c, name in zip(carries, names):
        nxt, lin = body_env.get(name, c.var), low.lineage_of(c.var)
        if not isinstance(nxt, Var) or low.lineage_of(nxt) == lin or lin not in low.mutated and name not in augmented:
            continue  # (`acc += r` after `acc = r`: in place on arrays, which the first pass could not know)
        for holder in low.related(low.lineage_of(nxt), True, ()):
            if holder in outer and holder != lin and not any(p == holder for _, p, _ in low.parents_of(lin)):
                out.append((lin, ("held", holder, Const(line))))
    return out


def stored_items(low, known, outer_env):
    """{holder lineage: lineages that outlive the loop whose items the body stored in it} (`first[r["g"]] = r` of `for
    r in rows`), for those not yet known (`known`: the links before the loop; `Lowerer.holds_items_of`): an object
    read out of the holder in a later iteration (`first[g]["x"] += r["x"]`) may be one of rows' items, so its update
    must reach rows too (lineage.py `note_child` links it as held there)."""
    outer = {low.lineage.get(v) for v in outer_env.values() if isinstance(v, Var)}
    out = {}
    for child, links in low.parents.items():
        made = [p for k, p, _ in links if k in ("item", "attr", "held") and (k, p) not in
                {(k2, p2) for k2, p2, _ in known.get(child, ())}]
        if not made:
            continue
        # (only an object read out of rows, not one a call may have kept it in: `replace(r, y=...)` is a new record,
        # whose fields, the same float objects as r's, a search by identity would take for r's)
        ups = [h for h in _read_out_of(low, child) if h in outer and h != child]
        for holder in made:
            above = _read_out_of(low, holder)
            for h in ups:
                if h not in above and h not in low.holds_items_of.get(holder, ()):
                    out.setdefault(holder, set()).add(h)
    return out


def _read_out_of(low, lin):
    """`lin` and the lineages it was read out of (an item, attribute, view or loop item of, and theirs): an update of
    what is read out of `lin` reaches those through it already."""
    seen, work = {lin}, [lin]
    while work:
        for kind, parent, _ in low.parents_of(work.pop()):
            if kind in _READ_OUT + ("view",) and parent not in seen:
                seen.add(parent)
                work.append(parent)
    return seen

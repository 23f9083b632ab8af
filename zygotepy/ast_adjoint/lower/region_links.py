"""The links between objects after an `if`, made from what each arm linked, and after a loop, from what its body
linked (lower/control.py `join`, `loop`).

Each arm is lowered knowing only the links made before the `if` and in itself: a link the other arm made holds only
on that arm's path (`if c: L[1] = r` / `else: L[0] = r`: `r` is `L[1]` on one path, `L[0]` on the other). After the
join, a link both arms hold is kept; a link of an item or an attribute that the arms hold with other keys, or that one
arm does not hold, is kept once with its key `mutate.UNKNOWN_SLOT`: `refresh` and `put_item` then look for the object
by identity at run time, as a held object's links do, and find it where the arm that ran put it (`a, b = L` then
`if swap: L[0], L[1] = b, a` leaves `a` in `L` on either path), or nowhere. (The arm's own key may be a value only
that arm computed, `y[len(x) - 1] = s`, which the other path never defines.) A link found at run time by identity
(held, a loop's item, a dict's view) is kept as either arm made it: where it does not hold, the search finds
nothing."""
from .. import mutate as mt
from ..ir import Const, Var

_KEYED = ("item", "attr")


def link_sizes(parents):
    """How many links each object has before an arm: the arms only append (newest last)."""
    return {child: len(links) for child, links in parents.items()}


def cut_arm_links(parents, sizes):
    """The links an arm added ({child: [link, ...]}), cut off `parents`, which is left as it was before the arm."""
    added = {}
    for child, links in list(parents.items()):
        n = sizes.get(child)
        if n is None:
            added[child] = parents.pop(child)
        elif len(links) > n:
            added[child] = links[n:]
            del links[n:]
    return added


def merge_arm_links(parents, then_added, else_added):
    """Into `parents` (the links before the `if`), the links after it, from what each arm added."""
    for child in {**then_added, **else_added}:
        a, b = then_added.get(child, []), else_added.get(child, [])
        out = [link for link in a if link in b or link[0] not in _KEYED]
        out += [link for link in b if link not in out and link[0] not in _KEYED]
        for kind, parent, _ in a + b:
            either = (kind, parent, Const(mt.UNKNOWN_SLOT))
            if kind in _KEYED and either not in out and any(link[:2] == (kind, parent) and link not in out
                                                            for link in a + b):
                out.append(either)
        if out:
            parents.setdefault(child, []).extend(out)


def links_after_loop(parents, before):
    """The links after a loop, from those its body ended with (`parents`) and those before it: a link of an item or
    an attribute the body made with a key it computed (`y[len(x) - 1 - i] = s`) holds after the loop only if the body
    ran, and only for the last iteration's key, which a loop that never ran leaves undefined; its slot is found at run
    time instead (`mutate.UNKNOWN_SLOT`: by identity, wherever the iterations put the object)."""
    for child, links in parents.items():
        known = before.get(child, ())
        for k, (kind, parent, key) in enumerate(links):
            if kind in _KEYED and isinstance(key, Var) and (kind, parent, key) not in known:
                links[k] = (kind, parent, Const(mt.UNKNOWN_SLOT))
    return parents

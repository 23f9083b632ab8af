"""Rules for dicts: displays (`{k: v}`, `{**a, **b}`), `d[k] = v`, and the methods that read a dict (`items`,
`values`, `get`, `keys`, `copy`); and the cotangents of keys read back out of a dict (`keys_read`, `key_cotangent`),
which the stores that put the keys in hand to the keys. A dict's cotangent is a dict keyed by its keys."""
import collections
import sys

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.dispatch import call_site, differentiable
from ...errors import ZygoteError
from ...runtime.context import current
from ..registry import adjoint, nondifferentiable


# A dict's cotangent is keyed by its keys, so it has no room for a key's own cotangent. A key read back out of the
# dict (iteration, keys(), items(), list(d), sorted(d)) can receive one, which must reach whatever computed the key.
# Keys are immutable values, so the key object itself says where it came from: the backs of those reads file each
# key's cotangent under the key object (and give the dict a cotangent, `{}` if nothing else, so that the backs of the
# stores that put the keys in run), and the back of the store that put that key object in (a display, `d[k] = v`,
# dict(pairs), setdefault) takes it and hands it to the key. Backward runs reads before the stores they read from, and
# a taken entry is gone, so each read's cotangent reaches the key once. A key of a dict given as an input is never
# taken: like its other keys, it has no gradient.
# (The filed cotangents are this thread's: `current().read_keys`, id(key) -> (key, cotangent), while an entry point
# runs: keys read back out of a dict, not yet taken.)


def keys_read(keys, grads):
    """The dict cotangent for reads of `keys` whose cotangents are `grads`, filing each key's for its store."""
    filed = False
    read_keys = current().read_keys
    for k, g in zip(keys, grads):
        if g is not None and differentiable(k):
            held = read_keys.get(id(k))
            read_keys[id(k)] = (k, g if held is None or held[0] is not k else rt.acc(held[1], g))
            filed = True
    return {} if filed else None


def key_cotangent(key):
    """The cotangent filed for the key object `key` by reads of it out of a dict (None if none), taken."""
    read_keys = current().read_keys
    held = read_keys.get(id(key))
    if held is None or held[0] is not key:
        return None
    del read_keys[id(key)]
    return held[1]


def inserted_by_lookup(key):
    """Note that a defaultdict's lookup (`d[k]` of a missing key, `__missing__`) put in the key object `key`: its
    cotangent, filed by later reads of the dict's keys, goes to the first store under it (`d[x] += 1.0`: the store's
    back hands it on as if the store had put the key in); one no store takes is refused (`untaken_lookup_keys`)."""
    current().lookup_keys[id(key)] = (key, call_site())


def took_lookup_key(key):
    """Was `key` (a key object already in the dict a store writes to) put in by a lookup, with no store since? This
    store takes it over."""
    lookup_keys = current().lookup_keys
    held = lookup_keys.get(id(key)) if lookup_keys else None
    if held is None or held[0] is not key:
        return False
    del lookup_keys[id(key)]
    return True


def untaken_lookup_keys(ctx):
    """At the end of a backward: a key a defaultdict's lookup put in, never stored under, whose reads out of the dict
    filed a cotangent, which no back can hand to the key (`d[x].append(v)`, then `sum(d)`): refused."""
    for key, where in ctx.lookup_keys.values():
        held = ctx.read_keys.get(id(key))
        if held is not None and held[0] is key:
            ctx.lookup_keys.clear()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate a key that carries a "
                              f"gradient put in a defaultdict by a lookup (`d[k]` of a missing key) and read back out "
                              f"of the dict: store it yourself (`d[k] = d.get(k, [])`, `d.setdefault(k, [])`)")
    ctx.lookup_keys.clear()


def has_read_keys(d):
    """Were keys of `d` read back out with a cotangent (so a merge or copy of `d` must give it `{}`, not None)?"""
    read_keys = current().read_keys
    return bool(read_keys) and any(read_keys.get(id(k), (None,))[0] is k for k in d)


nondifferentiable(keys_read, has_read_keys, inserted_by_lookup, took_lookup_key)


@adjoint(key_cotangent)
def _key_cotangent_nested(key):
    """An outer level of nesting differentiating a back that hands a key its cotangent: not followed yet (a back with
    no key cotangent to hand, the common case, passes)."""
    if key_cotangent(key) is None:
        return None, lambda dy: (None,)
    raise ZygoteError("nested differentiation through the gradient of a dict key is not supported; keep the value in "
                      "the dict's values (a list of (key, value) pairs), or make the key a constant (dropgrad)")


@adjoint(rt.dict_of)
def dict_of(*flat):
    def back(dy):
        if dy is None:
            return (None,) * len(flat)
        keys = flat[::2]
        last = {k: i for i, k in enumerate(keys)}  # `{"a": x, "a": y}` keeps y: x receives nothing
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # ... but the dict keeps the first key object
        return tuple(g for i, k in enumerate(keys)
                     for g in (key_cotangent(k) if first[k] == i else None, dy.get(k) if last[k] == i else None))
    return rt.dict_of(*flat), back


@adjoint(rt.dict_merge)
def dict_merge(*parts):
    """`{**a, **b}`: each key's cotangent goes to the part whose entry won it (the last part holding the key)."""
    keys = [list(p.keys()) for p in parts]

    def back(dy):
        if dy is None:
            return (None,) * len(parts)
        last = {k: i for i, ks in enumerate(keys) for k in ks}
        return tuple(_part_cotangent(p, {k: dy.get(k) if last[k] == i else None for k in ks})
                     for i, (p, ks) in enumerate(zip(parts, keys)))
    return rt.dict_merge(*parts), back


def _part_cotangent(part, d):
    """A merged part's dict cotangent, None when no entry has one; a mapping that is not a dict has no dict-shaped
    cotangent, so a gradient that would reach one is an error, not a gradient dropped."""
    if all(g is None for g in d.values()):
        return {} if has_read_keys(part) else None
    if type(part) is not dict:
        raise ZygoteError(f"zygotepy cannot differentiate `{{**m}}` of a {type(part).__name__}: its cotangent has no "
                          f"dict to go to; unpack dict(m) instead")
    return d


@adjoint(rt.dict_put)
def dict_put(d, key, value):
    overwritten = key in d

    def back(dy):
        if dy is None:
            return (None, None, None)
        g = dy.get(key)
        if overwritten:  # the earlier value under `key` was replaced: it receives nothing (its key object stays)
            dy = {k: None if k == key else v for k, v in dy.items()}  # no `**` display: nesting transforms this
            return (dy, None, g)
        return (dy, key_cotangent(key), g)
    return rt.dict_put(d, key, value), back


@adjoint(dict.items)
def dict_items(d):
    """`d.items()` as a list of pairs; a pair's cotangent `(None, dv)` goes back to `d[k]`."""
    pairs = list(d.items())

    def back(dy):
        if dy is None:
            return (None,)
        keys = keys_read([k for k, _ in pairs], [None if p is None else p[0] for p in dy])
        return ({k: p[1] for (k, _), p in zip(pairs, dy) if p is not None and p[1] is not None} or keys,)
    return _noted(d, pairs, "items"), back


def _noted(d, view, method):
    """`view` (a list) is what `d.<method>()` gave: kept for this forward, so that an update of `d` finds it where it
    has gone (adjoints/mutation/views.py)."""
    views = current().dict_views
    noted = views.get(id(d))
    if noted is None or noted[0] is not d:
        noted = views[id(d)] = (d, {}, [16])
    lists = noted[1]
    if len(lists) >= noted[2][0]:  # (a loop's `sum(d.values())`: those only this note holds now are let go; the
        for key in [k for k, (v, _) in lists.items() if sys.getrefcount(v) <= 3]:  # next pass when twice as many)
            del lists[key]
        noted[2][0] = max(16, 2 * len(lists))
    lists[id(view)] = (view, method)
    return view


@adjoint(dict.values)
def dict_values(d):
    keys = list(d)

    def back(dy):
        return (None if dy is None else view_cotangent("values", keys, dy),)
    return _noted(d, list(d.values()), "values"), back


@adjoint(dict.get)
def dict_get(d, key, *default):
    found = key in d

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in default))
        return ({key: dy} if found else None, None, *((None if found else dy) for _ in default))
    return d.get(key, *default), back


@adjoint(dict.copy)
def dict_copy(d):
    """`d.copy()`: a new dict of the same values, linked to `d` by the caller as `list.copy` is."""
    return d.copy(), lambda dy: (None if dy is None else dict(dy),)  # `{}` when only keys were read: d's stores run


@adjoint(dict.fromkeys, optional=True)
def dict_fromkeys(keys, value=None):
    """`dict.fromkeys(keys, v)`: one value under every key, whose cotangent is the sum of theirs (keys are data)."""
    y = dict.fromkeys(keys, value)

    def back(dy):
        total = None
        for g in (dy or {}).values():
            total = rt.acc(total, g)
        return (_keys_cotangent(keys), total)
    return y, back


def _keys_cotangent(keys):
    """The cotangent of a list or tuple of keys a dict was made from: each key object the dict kept (the first of
    equal ones) gets what reads of it out of the dict filed (`sum(d)` iterates its keys), the others nothing."""
    if not isinstance(keys, (list, tuple)):
        return None
    first = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    grads = [key_cotangent(k) if first[k] == i else None for i, k in enumerate(keys)]
    return type(keys)(grads) if any(g is not None for g in grads) else None


@adjoint(dict.keys)
def dict_keys(d):
    """`d.keys()`: its cotangent is the list of its keys' (iterating the view), which pass nothing back into `d`."""
    keys = list(d)
    return d.keys(), lambda dy: (None if dy is None else keys_read(keys, list(dy)),)


for _name, _rule in (("items", dict_items), ("values", dict_values), ("keys", dict_keys), ("copy", dict_copy)):
    adjoint(getattr(collections.OrderedDict, _name))(_rule)  # (its own methods, which read it as a dict's do)


@adjoint(rt.view_refreshed, updates=True)
def view_refreshed(view, mapping, method):
    """The list of `d.values()` or `d.items()` shown again after `d` was updated in place, in place (a list or object
    holding it sees the change, as it sees Python's live view): its cotangent is the new version's, none of it goes
    to the old contents'."""
    if type(mapping) is not dict or type(view) is not list:
        return view, lambda dy: (dy, None, None)
    entry = mt.journal_whole(view)
    view[:] = getattr(mapping, method)()
    keys = list(mapping)

    def back(dy):
        entry.undo(lambda: list(view))
        return (None, None if dy is None else view_cotangent(method, keys, dy), None)
    return view, back


def view_cotangent(method, keys, dy):
    """The dict's cotangent from that of the list its `values()` or `items()` rule made (`keys`: the dict's then)."""
    if method == "values":
        return {k: g for k, g in zip(keys, dy) if g is not None}
    return {k: p[1] for k, p in zip(keys, dy) if p is not None and p[1] is not None}

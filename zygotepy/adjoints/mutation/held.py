"""Where an object sits inside another, found by identity at run time through lists, tuples, dicts and attributes (an
array by its memory: overlap.py), and the routing of cotangents by that place: `_split` takes a child's part out of its
parent's cotangent, `_place` puts a child's cotangent where it sits in its parent. A copy of a container (`list(W)`,
`W[:]`, `dict(d)`) holds the original's items, not the original: its items are looked up one by one (`_where_items`).
A holder the search cannot follow (a closure cell, a `partial`, a `__slots__` attribute) raises a ZygoteError naming
the update, never a wrong gradient.
"""
import collections
import functools
import operator
import types

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...errors import ZygoteError
from ...structgrad import StructGrad
from ..objects import as_fields
from ..structures.common import like
from .overlap import Overlap, _is_array, overlap


_ATOMS = (int, float, complex, bool, str, bytes, type(None), types.ModuleType, type, types.BuiltinFunctionType)
SEARCH_DEPTH = 40
"""How many steps down the searches for an object by identity go (a list of `[value, children]` nodes takes two a
level; each object is visited once, so the depth costs only in structures that deep, a linked list's)."""


class _Searching:
    """The mark of an object whose search is under way (met again below it: a cycle), at its depth."""
    __slots__ = ("depth",)

    def __init__(self, depth):
        self.depth = depth


class _Tangled(ZygoteError):
    """More than `_VISITS` objects visited in one search: objects holding each other in too many ways to follow."""


_LOW, _COUNT = "low", "visits"  # (the searches' bookkeeping, kept beside the ids in their `seen` dict)
_VISITS = 20000
_NEVER = 1 << 30


def _enter(seen, key, depth):
    """Mark `key` as searched now; -> the shallowest mark met again so far, which its search starts afresh."""
    seen[_COUNT] = seen.get(_COUNT, 0) + 1
    if seen[_COUNT] > _VISITS:
        raise _Tangled(f"zygotepy cannot differentiate this update in place: the objects around the updated one hold "
                       f"each other in too many ways to follow (more than {_VISITS} steps of search); keep the links "
                       f"as indices (lists of ints, arrays of ids) rather than objects holding each other")
    seen[key] = _Searching(depth)
    outer, seen[_LOW] = seen.get(_LOW, _NEVER), _NEVER
    return outer


def _met_again(seen, mark):
    seen[_LOW] = min(seen.get(_LOW, _NEVER), mark.depth)


def _leave(seen, key, depth, result, outer):
    """Keep `result` for `key` where its search met no object above it again; else forget it: it lacks the places
    reached through that object, which a search reaching `key` another way finds (in objects that hold each other,
    `v1.nbrs = [v0, v4]` beside `v0.nbrs = [v1, v2]`, `v4` searched first below `v1` seemed not to hold `v2`)."""
    low = seen[_LOW]
    if low >= depth:
        seen[key] = result
        low = _NEVER
    else:
        del seen[key]
    seen[_LOW] = min(outer, low)
    return result


def _where_held(parent, child, depth=0, seen=None):
    """Where `child` sits inside `parent`, found by identity through lists, tuples, dicts and attributes: "self",
    (kind "seq"/"dict"/"obj", [(key, item, plan), ...]), "view" (an array sharing `child`'s data), "opaque" (held
    where a cotangent cannot be routed: a closure's cell, a `partial`, a `__slots__` object), or None (not held).
    Each place is found along every path without a cycle."""
    if parent is child:
        return "self"
    if _is_array(parent):
        return overlap(parent, child)
    if depth > SEARCH_DEPTH or isinstance(parent, _ATOMS):
        return None
    seen = {} if seen is None else seen
    known = seen.get(id(parent), seen)
    if known is not seen:  # (an object held in two places has both)
        if type(known) is _Searching:
            _met_again(seen, known)
            return None
        return known
    outer = _enter(seen, id(parent), depth)
    if isinstance(parent, (list, tuple, collections.deque)):  # (a deque's cotangent: a list)
        kind, items = "seq", enumerate(parent)
    elif isinstance(parent, dict):
        kind, items = "dict", parent.items()
    elif isinstance(parent, (types.FunctionType, types.MethodType, functools.partial)) or \
            not hasattr(parent, "__dict__"):
        found = "opaque" if any(_where_held(v, child, depth + 1, seen) for v in _opaque_parts(parent)) else None
        return _leave(seen, id(parent), depth, found, outer)
    else:
        kind, items = "obj", vars(parent).items()
    found = [(k, v, plan) for k, v in list(items) if (plan := _where_held(v, child, depth + 1, seen)) is not None]
    return _leave(seen, id(parent), depth, (kind, found) if found else None, outer)


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


_SCALARS = _ATOMS + (np.generic,)


def _root(a):
    """What memory `a` is part of: its last array base, or the non-array object that one exposes (np.frombuffer)."""
    r = mt.base_of(a)
    return id(r.base) if r.base is not None else id(r)


def _where_each(parent, targets, roots, depth=0, seen=None):
    """`_where_held` for many children in one walk of `parent`: {id(child): plan} for each of `targets` (id -> object)
    found there. Arrays are matched by address only against targets on the same memory (`roots`: root -> arrays), so
    the walk costs the size of `parent`, not that times the number of targets (a copy of a long list is searched on
    every write through it)."""
    hits = {id(parent): "self"} if id(parent) in targets else {}
    if isinstance(parent, np.ndarray) or _is_array(parent):  # (hessian's dual arrays, by their memory too)
        for t in roots.get(_root(mt.host_memory(parent)), ()) if np.size(mt.host_memory(parent)) else ():
            if t is not parent and (plan := overlap(parent, t)) is not None:
                hits.setdefault(id(t), plan)
        return hits
    if depth > SEARCH_DEPTH or isinstance(parent, _ATOMS):
        return hits
    seen = {} if seen is None else seen
    known = seen.get(id(parent), seen)  # (the hits found in an object met before: one held in two places has both)
    if known is not seen:
        if type(known) is _Searching:
            _met_again(seen, known)
            return hits
        return known
    outer = _enter(seen, id(parent), depth)
    if isinstance(parent, (list, tuple, collections.deque)):  # (a deque's cotangent: a list)
        kind, items = "seq", enumerate(parent)
    elif isinstance(parent, dict):
        kind, items = "dict", parent.items()
    elif isinstance(parent, (types.FunctionType, types.MethodType, functools.partial)) or \
            not hasattr(parent, "__dict__"):
        for v in _opaque_parts(parent):
            for t in _where_each(v, targets, roots, depth + 1, seen):
                hits.setdefault(t, "opaque")
        return _leave(seen, id(parent), depth, hits, outer)
    else:
        kind, items = "obj", vars(parent).items()
    found = {}
    for k, v in list(items):
        for t, plan in _where_each(v, targets, roots, depth + 1, seen).items():
            found.setdefault(t, []).append((k, v, plan))
    for t, places in found.items():
        hits.setdefault(t, (kind, places))
    return _leave(seen, id(parent), depth, hits, outer)


def _opaque_parts(parent):
    """What a function, bound method, `partial` or `__slots__` object keeps (where a cotangent cannot be routed)."""
    if isinstance(parent, types.MethodType):
        return [parent.__self__, parent.__func__]
    if isinstance(parent, functools.partial):
        return [parent.func, parent.args, parent.keywords]
    if isinstance(parent, types.FunctionType):
        return [c.cell_contents for c in parent.__closure__ or () if _filled(c)] + list(parent.__defaults__ or ())
    slots = [getattr(c, "__slots__", ()) for c in type(parent).__mro__]
    return [getattr(parent, n, None) for s in slots for n in ([s] if isinstance(s, str) else s)]


def may_hold_deeper(items, child):
    """May one of `items` hold `child` other than as itself (a list, dict or object that could hold it, or a view that
    could share its memory)? No, for numbers and arrays owning their data, the common case, where identity finds
    every place: decided by C loops (map, set), since a store into a container asks this of all its items."""
    kinds = set(map(type, items))
    if kinds <= _ATOMIC_TYPES:
        return False
    if not kinds <= _ATOMIC_TYPES | {np.ndarray} or isinstance(child, np.ndarray) and child.base is not None:
        return True
    arrays = items if kinds == {np.ndarray} else [v for v in items if type(v) is np.ndarray]
    return set(map(type, map(_BASE, arrays))) != {type(None)}


_ATOMIC_TYPES = frozenset((int, float, complex, bool, str, bytes, type(None), np.float64, np.float32, np.int64))
_BASE = operator.attrgetter("base")


def _where_items(parent, child, depth=0):
    """Where the items of the list, tuple or dict `child` sit in `parent` (a copy: `list(W)`, `W[:]`, `sorted(W)`,
    `[*W]`, `dict(d)`, which holds the items but not `child` itself), or the fields of the plain object `child` (made
    from another's: `q = Box(p.w)`): ("items", type (StructGrad for an object), n, [(key, plan of child[key]), ...],
    flat), or None. `flat` is {key: positions} when `parent` is a list or tuple holding those items at its top
    level and nothing else they could be inside (the usual copy of a list of arrays; then `places` is None and the
    cotangents move in one pass). An item that is not in `parent` itself has its own items looked for there (a plan
    of this kind for it: `{"all": [l.W for l in layers]}`). Numbers and strings are left out: no update in place
    changes them, so where they sit carries no gradient."""
    if type(child) in (list, tuple) or isinstance(child, dict):  # (an OrderedDict's cotangent is a dict too)
        seq, entries = (dict, child.items()) if isinstance(child, dict) else (type(child), enumerate(child))
    elif hasattr(child, "__dict__") and not isinstance(child, _NOT_PLAIN):
        seq, entries = StructGrad, vars(child).items()
    else:
        return None
    pairs = [(k, v) for k, v in entries
             if type(v) is not float and not isinstance(v, _SCALARS)]  # (a list of floats: nothing to look for)
    if not pairs:
        return None
    n = len(child) if seq is not StructGrad else len(pairs)
    flat = _top_level(parent, pairs) if type(parent) in (list, tuple) else None
    if flat is not None:
        return ("items", seq, n, None, flat) if flat else None
    targets, roots = {}, {}
    for _, v in pairs:
        if id(v) not in targets:
            targets[id(v)] = v
            if isinstance(v, np.ndarray):
                roots.setdefault(_root(v), []).append(v)
    found = _where_each(parent, targets, roots)
    places = [(k, found[id(v)]) for k, v in pairs if id(v) in found]
    if depth < 4:
        places += [(k, sub) for k, v in pairs if id(v) not in found and
                   (sub := _where_items(parent, v, depth + 1)) is not None]
    return ("items", seq, n, places, None) if places else None


_NOT_PLAIN = (types.FunctionType, types.MethodType, types.ModuleType, type, functools.partial, np.ndarray)


def _top_level(parent, pairs):
    """{key: positions of the child's item `key` in the list or tuple `parent`} in one quick pass, when the child's
    items and `parent`'s are numbers and arrays owning their data (so an array can be in another only as itself);
    None when the full search is needed (a container, an object or a view among them). A copy of a long list is
    searched on every write through it: this keeps that linear in the list's length."""
    ids = {}
    for key, v in pairs:
        if type(v) is not np.ndarray or v.base is not None:
            return None
        ids.setdefault(id(v), []).append(key)
    flat = {}
    for k, v in enumerate(parent):
        if type(v) is np.ndarray and v.base is None:
            for key in ids.get(id(v), ()):
                flat.setdefault(key, []).append(k)
        elif not isinstance(v, _SCALARS):
            return None
    return flat


def _items_grad(seq, n, grads):
    """A cotangent of a `seq` (list, tuple, dict, or StructGrad for an object) of `n` items from {key: cotangent}; None
    when all are None."""
    grads = {k: g for k, g in grads.items() if g is not None}
    if not grads:
        return None
    return grads if seq is dict else StructGrad(grads) if seq is StructGrad else seq(grads.get(k) for k in range(n))


def _where(parent, child):
    """`_where_held`, or where `child`'s items sit when `parent` holds its items but not `child` itself (a copy)."""
    plan = _where_held(parent, child)
    return plan if plan is not None else _where_items(parent, child)


def _held_error(where, plan):
    file, line, other, made = where or ("<unknown>", "?", "its holder", None)
    what = "a value zygotepy cannot look into (a closure's cell, a partial's argument, a __slots__ attribute, or a " \
        "view of the array's bytes as another dtype)"
    made = f" (linked at line {made})" if made is not None else ""
    other = "a comprehension's result" if other.startswith("_comp") else f"'{other}'"  # lower/control.py's accumulator
    return ZygoteError(f"{file}:{line}: zygotepy cannot differentiate this update in place: it changes an array that "
                       f"{other}{made} shares as {what}, and the gradient cannot be routed through that; copy the "
                       f"array before it is kept (W.copy()), or make the update before")


def seq_items(parent, dy):
    """The cotangent `dy` of the list, tuple or namedtuple `parent` as a list of its items' (a namedtuple's is a
    StructGrad keyed by field: structures/common.py `like`)."""
    if isinstance(dy, dict) and hasattr(type(parent), "_fields"):
        return [dy.get(f) for f in parent._fields]
    return list(dy)


def _split(plan, parent, dy, where):
    """`parent`'s cotangent `dy` -> (the part not at `child`'s places, the sum of the parts at them)."""
    if dy is None:
        return None, None
    if plan == "self":
        return None, dy
    if isinstance(plan, Overlap):
        return plan.split(dy)
    if not isinstance(plan, tuple):
        raise _held_error(where, plan)
    if plan[0] == "items":  # each of the child's items takes the parent's cotangent where it sits
        _, seq, n, places, flat = plan
        dchild = {}
        if flat is not None:
            dp = seq_items(parent, dy)
            for key, ks in flat.items():
                for k in ks:
                    dchild[key], dp[k] = rt.acc(dchild.get(key), dp[k]), None
            return type(parent)(dp), _items_grad(seq, n, dchild)
        for k, sub in places:
            dy, dchild[k] = _split(sub, parent, dy, where)  # taken from dy: an item twice in the child counts once
        return dy, _items_grad(seq, n, dchild)
    kind, found = plan
    dchild = None
    if kind == "seq":
        dp = seq_items(parent, dy)
        for k, item, sub in found:
            dp[k], d = _split(sub, item, dp[k], where)
            dchild = rt.acc(dchild, d)
        return (type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp)), dchild
    dp = dict(as_fields(parent, dy) if kind == "obj" else dy)
    for k, item, sub in found:
        dp[k], d = _split(sub, item, dp.get(k), where)
        dchild = rt.acc(dchild, d)
    rest = {k: v for k, v in dp.items() if v is not None}
    return ((StructGrad(rest) if kind == "obj" else rest) or None), dchild


def _place(plan, parent, dy, where):
    """`child`'s cotangent `dy` -> (the part for elements `parent` does not hold, a cotangent of `parent` holding the
    rest at the places where `child` (or memory it shares) sits: each element's at the first such place)."""
    if plan == "self":
        return None, dy
    if isinstance(plan, Overlap):
        return plan.place(dy)
    if not isinstance(plan, tuple):
        raise _held_error(where, plan)
    if plan[0] == "items":  # each item's cotangent goes where that item sits in the parent
        _, seq, n, places, flat = plan
        rest, dparent = dict(dy) if seq is dict or seq is StructGrad else dict(enumerate(dy)), None
        if flat is not None:  # each item's at its first place
            dp = [None] * len(parent)
            for key, ks in flat.items():
                dp[ks[0]], rest[key] = rt.acc(dp[ks[0]], rest.get(key)), None
            return _items_grad(seq, n, rest), type(parent)(dp)
        for k, sub in places:
            if rest.get(k) is not None:
                rest[k], dp = _place(sub, parent, rest[k], where)
                dparent = rt.acc(dparent, dp)
        return _items_grad(seq, n, rest), dparent
    kind, found = plan
    dp = [None] * len(parent) if kind == "seq" else {}
    for k, item, sub in found:
        if dy is None:
            break
        dy, dp[k] = _place(sub, item, dy, where)
    if kind == "seq":
        return dy, type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp)
    return dy, StructGrad(dp) if kind == "obj" else dp


def holding_arguments(obj, args):
    """The arguments of a container method (`r.children.append(k)`) that hold its object `obj` (k holds r, whose
    `children` is `obj`: a parent pointer set before the child is added), with where: `[(k, plan), ...]`. The method
    leaves them as they were, but what they hold changed: their cotangents after the call, where they reach `obj`, are
    `obj`'s after the call (`hand_to_object`), not theirs before it (which would hand them to `obj` as it was)."""
    held = []
    for k, a in enumerate(args):
        if a is not obj and (hasattr(a, "__dict__") or type(a) in (list, dict, tuple)) and not _is_array(a):
            plan = _where_held(a, obj)
            if isinstance(plan, tuple):
                held.append((k, plan))
    return held


def hand_to_object(held, args, after, dobj):
    """`holding_arguments`' cotangents after the call (`after`, one per argument) split: the parts at the object join
    `dobj`, its cotangent after the call. -> (the arguments' rest, dobj)."""
    after = list(after)
    for k, plan in held:
        after[k], part = _split(plan, args[k], after[k], None)
        dobj = rt.acc(dobj, part)
    return after, dobj

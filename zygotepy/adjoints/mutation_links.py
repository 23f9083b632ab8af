"""Rules that carry an update in place across the links between objects: a child updated in place gives its parent
a new version (`put_item`, `put_attr`, and `put_held` for an object held anywhere in another: an item, a value, an
attribute), and a parent updated in place gives the children read out of it before (`refresh`, `refresh_held`) their
new versions. The lowering (ast_adjoint/lower_mutation.py) places these calls; their backs route each cotangent to
the version it belongs to. A holder the search cannot follow (a view, a closure cell, a `partial`, a `__slots__`
attribute) raises a ZygoteError naming the update, never a wrong gradient. Arrays that share memory (a view, a
view of a view, `W.T`, `W.reshape(3)[0]`, however it was made) are matched element by element by address at run time
(`Overlap`), so a cotangent reaches exactly the elements an update through either of them changed.
"""
import functools
import types

import numpy as np

from ..ast_adjoint import mutate as mt
from ..ast_adjoint import runtime as rt
from ..backends import is_array_type, namespace, on as device_of
from ..errors import ZygoteError
from ..runtime.context import current
from ..structgrad import StructGrad
from .objects import as_fields
from .registry import adjoint
from .structures import like


def _zeros_like(x):
    return np.zeros(np.shape(x), dtype=x.dtype if getattr(x, "dtype", None) is not None and x.dtype.kind in "fc"
                    else np.float64)


def _dict_without(dy, key):
    """`dy` less `key`'s entry; `{}`, not None, while read keys wait for their stores' backs (structures.keys_read)."""
    return None if dy is None else {k: v for k, v in dy.items() if k != key} or ({} if current().read_keys else None)


def _is_view_of(child, parent):
    return isinstance(child, np.ndarray) and isinstance(parent, np.ndarray) and child.base is not None \
        and mt.base_of(child) is mt.base_of(parent)


def _device_view(x):
    """An array of another library that no NumPy view can show (on a GPU) and that is a view itself."""
    return type(x) is not np.ndarray and is_array_type(type(x)) and (
        getattr(x, "_base", None) is not None or getattr(x, "base", None) is not None)


def _is_array(x):
    return isinstance(x, np.ndarray) or isinstance(mt.host_memory(x), np.ndarray)


def _by_parts(method):
    """An `Overlap` method applied to a dual cotangent part by part (its primal and tangent share its positions), and
    to another library's array (in host memory: `overlap` refuses views on a device) through NumPy, its results made
    in that library again."""
    def on(self, dy):
        if getattr(type(dy), "__zygote_number__", False) and hasattr(dy, "tangent"):
            (a, b), (c, d) = on(self, dy.primal), on(self, dy.tangent)
            return type(dy)(dy.tag, a, c), type(dy)(dy.tag, b, d)
        if type(dy) is not np.ndarray and is_array_type(type(dy)):
            xp = namespace(dy)
            return tuple(xp.asarray(part, dtype=dy.dtype, **device_of(dy)) for part in method(self, np.asarray(dy)))
        return method(self, dy)
    on.__doc__ = method.__doc__
    return on


class Overlap:
    """The elements of two arrays that share memory: flat positions `p` in the parent and `c` in the child of the same
    addresses (found now, from data pointers and strides; a view made any way at all is matched)."""
    __slots__ = ("c", "child_shape", "p", "parent_shape")

    def __init__(self, parent, child, p, c):
        self.parent_shape, self.child_shape, self.p, self.c = parent.shape, child.shape, p, c

    @_by_parts
    def split(self, dy):
        """The parent's cotangent -> (the part not at the shared elements, the child's cotangent from them)."""
        dy = np.asarray(dy)
        dchild = np.zeros(int(np.prod(self.child_shape)), dtype=dy.dtype)
        np.add.at(dchild, self.c, dy.reshape(-1)[self.p])
        rest = dy.copy()
        rest.reshape(-1)[self.p] = 0
        return rest, dchild.reshape(self.child_shape)

    @_by_parts
    def place(self, dy):
        """The child's cotangent -> (the part not at the shared elements, the parent's cotangent from them)."""
        dy = np.asarray(dy)
        c, first = np.unique(self.c, return_index=True)  # an element the parent sees twice gets it once
        dparent = np.zeros(int(np.prod(self.parent_shape)), dtype=dy.dtype)
        dparent[self.p[first]] = dy.reshape(-1)[c]
        rest = dy.copy()
        rest.reshape(-1)[c] = 0
        return rest, dparent.reshape(self.parent_shape)


def _addresses(a):
    off = np.zeros(a.shape, dtype=np.intp)
    for k, (n, stride) in enumerate(zip(a.shape, a.strides, strict=True)):
        off = off + (np.arange(n, dtype=np.intp) * stride).reshape((1,) * k + (n,) + (1,) * (a.ndim - k - 1))
    return a.__array_interface__["data"][0] + off.reshape(-1)


def overlap(parent, child):
    """An `Overlap` of two arrays sharing memory, None if they share none, "opaque" if their elements do not line up
    (a `.view(dtype)`, `.real` of a complex array)."""
    parent, child = mt.host_memory(parent), mt.host_memory(child)
    if _device_view(parent) or _device_view(child):
        raise ZygoteError(f"zygotepy cannot follow an update in place through a view of a {type(parent).__name__} on "
                          f"a device (where its elements live cannot be read); copy the view before updating it, or "
                          f"update out of place")
    if not (isinstance(parent, np.ndarray) and isinstance(child, np.ndarray)) or parent.size == 0 or \
            child.size == 0 or not np.may_share_memory(parent, child):
        return None
    if parent.dtype != child.dtype:
        return "opaque"
    pa, ca = _addresses(parent), _addresses(child)
    order = np.argsort(pa, kind="stable")
    ps = pa[order]
    lo, hi = np.searchsorted(ps, ca, "left"), np.searchsorted(ps, ca, "right")
    counts = hi - lo
    inside = (ca >= ps[0]) & (ca < ps[-1] + parent.itemsize)
    if ((ca[inside] - ps[0]) % parent.itemsize).any():  # elements offset by part of one: bytes reinterpreted
        return "opaque"
    if not counts.any():
        return None
    c = np.repeat(np.arange(ca.size), counts)
    within = np.arange(c.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return Overlap(parent, child, order[np.repeat(lo, counts) + within], c)


def _is_slot(parent, key, child):
    """Is the array `child` exactly the memory of `parent[key]` (`row = m[0]`), not just some view of it?"""
    try:
        slot = parent[key]
    except (IndexError, TypeError, ValueError):
        return False
    return isinstance(slot, np.ndarray) and slot.base is not None and slot.shape == child.shape and \
        slot.strides == child.strides and slot.__array_interface__["data"][0] == child.__array_interface__["data"][0] \
        and not any(n > 1 and st == 0 for n, st in zip(slot.shape, slot.strides, strict=True))


def _holds(parent, kind, key, child):
    """Is `child` (or a view of its data) what `parent[key]` / `parent.key` is?"""
    if isinstance(parent, np.ndarray):
        return _is_view_of(child, parent)
    try:
        current = getattr(parent, key) if kind == "attr" else parent[key]
    except (KeyError, IndexError, AttributeError, TypeError):
        return False
    return current is child


def _to_first(dy):
    """The back of a link that links nothing: to a number (equal numbers may be one object by chance, a cached
    constant or a helper's argument returned, which says nothing about where their gradients go), or to what a maybe
    update in place did not update (mutate.NOT_IN_PLACE). The cotangent stays where it is."""
    return (dy, None, None)


def _put(kind):
    def put(parent, key, child):
        if child is mt.NOT_IN_PLACE:  # `x += v` made a new object: `parent` still holds the old one, unchanged
            return parent, _to_first
        if _is_array(parent):
            plan = "self" if parent is child else overlap(parent, child)
            direct = kind == "item" and isinstance(plan, Overlap) and _is_slot(parent, key, child)
        else:
            plan = _holds(parent, kind, key, child) or None
            if plan is None and kind == "item":  # `out = W[:]`: a copy holding W's items, found where they sit now
                plan = _where_items(parent, child)
            direct = False
        if plan == "opaque":
            raise ZygoteError(f"zygotepy cannot differentiate this update in place: it writes through a view whose "
                              f"elements do not line up with its array's ({kind} {key!r} of a {parent.dtype} array "
                              f"seen as {child.dtype}: .real/.imag of a complex array, .view(dtype)); update the "
                              f"array itself (z[0] = complex(v, z[0].imag)), or copy the view first")
        if plan is not None and mt.may_have_changed(child):
            current().log.append(id(parent))  # updated through its item or attribute (dispatch checks arguments' updates)

        def back(dy):
            if dy is None or plan is None:
                return (dy, None, None)
            if _is_array(parent) and not direct or isinstance(plan, tuple):
                rest, dchild = _split(plan, parent, dy, None)
                return (rest, None, dchild)
            if kind == "attr" and key == "__dict__" and child is getattr(parent, "__dict__", None):
                return (None, None, dict(as_fields(parent, dy)))  # its fields are the dict's entries
            if kind == "attr":
                dy = as_fields(parent, dy)
                places = [n for n, v in vars(parent).items() if v is child] if hasattr(parent, "__dict__") else [key]
                rest = {k: v for k, v in dy.items() if k not in places and v is not None}
                dchild = _sum(dy.get(k) for k in places)
                return (StructGrad(rest) if rest else None, None, dchild)
            if isinstance(parent, np.ndarray):
                dchild = dy[key]
                dp = dy.copy()
                dp[key] = 0
                return (dp, None, dchild)
            if isinstance(parent, dict):  # the same object may sit under other keys too: all of them are its
                places = [k for k, v in parent.items() if v is child]
                return ({k: v for k, v in dy.items() if k not in places} or None, None,
                        _sum(dy.get(k) for k in places))
            dp = list(dy)
            places = [k for k, v in enumerate(parent) if v is child]
            dchild = _sum(dp[k] for k in places)
            for k in places:
                dp[k] = None
            return (type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp), None, dchild)
        return parent, back
    return put


def _sum(grads):
    total = None
    for g in grads:
        total = rt.acc(total, g)
    return total


adjoint(mt.put_item)(_put("item"))
adjoint(mt.put_attr)(_put("attr"))


_ATOMS = (int, float, complex, bool, str, bytes, type(None), types.ModuleType, type, types.BuiltinFunctionType)


def _where_held(parent, child, depth=0, seen=None):
    """Where `child` sits inside `parent`, found by identity through lists, tuples, dicts and attributes: "self",
    (kind "seq"/"dict"/"obj", [(key, item, plan), ...]), "view" (an array sharing `child`'s data), "opaque" (held
    where a cotangent cannot be routed: a closure's cell, a `partial`, a `__slots__` object), or None (not held)."""
    if parent is child:
        return "self"
    if _is_array(parent):
        return overlap(parent, child)
    if depth > 8 or isinstance(parent, _ATOMS):
        return None
    seen = set() if seen is None else seen
    if id(parent) in seen:
        return None
    seen.add(id(parent))
    if isinstance(parent, (list, tuple)):
        kind, items = "seq", enumerate(parent)
    elif isinstance(parent, dict):
        kind, items = "dict", parent.items()
    elif isinstance(parent, (types.FunctionType, types.MethodType, functools.partial)):
        inner = [parent.__self__, parent.__func__] if isinstance(parent, types.MethodType) else \
            [parent.func, parent.args, parent.keywords] if isinstance(parent, functools.partial) else \
            [c.cell_contents for c in parent.__closure__ or () if _filled(c)] + list(parent.__defaults__ or ())
        return "opaque" if any(_where_held(v, child, depth + 1, seen) for v in inner) else None
    elif hasattr(parent, "__dict__"):
        kind, items = "obj", vars(parent).items()
    else:
        slots = [n for c in type(parent).__mro__ for n in getattr(c, "__slots__", ())]
        inner = [getattr(parent, n, None) for n in ([slots] if isinstance(slots, str) else slots)]
        return "opaque" if any(_where_held(v, child, depth + 1, seen) for v in inner) else None
    found = [(k, v, plan) for k, v in list(items) if (plan := _where_held(v, child, depth + 1, seen)) is not None]
    return (kind, found) if found else None


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
    if isinstance(parent, np.ndarray):
        for t in roots.get(_root(parent), ()) if parent.size else ():
            if t is not parent and (plan := overlap(parent, t)) is not None:
                hits.setdefault(id(t), plan)
        return hits
    if depth > 8 or isinstance(parent, _ATOMS):
        return hits
    seen = set() if seen is None else seen
    if id(parent) in seen:
        return hits
    seen.add(id(parent))
    if isinstance(parent, (list, tuple)):
        kind, items = "seq", enumerate(parent)
    elif isinstance(parent, dict):
        kind, items = "dict", parent.items()
    elif isinstance(parent, (types.FunctionType, types.MethodType, functools.partial)) or \
            not hasattr(parent, "__dict__"):
        for v in _opaque_parts(parent):
            for t in _where_each(v, targets, roots, depth + 1, seen):
                hits.setdefault(t, "opaque")
        return hits
    else:
        kind, items = "obj", vars(parent).items()
    found = {}
    for k, v in list(items):
        for t, plan in _where_each(v, targets, roots, depth + 1, seen).items():
            found.setdefault(t, []).append((k, v, plan))
    for t, places in found.items():
        hits.setdefault(t, (kind, places))
    return hits


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


def _where_items(parent, child):
    """Where the items of the list, tuple or dict `child` sit in `parent` (a copy: `list(W)`, `W[:]`, `sorted(W)`,
    `[*W]`, `dict(d)`, which holds the items but not `child` itself): ("items", type, n, [(key, plan of child[key]),
    ...], flat), or None. `flat` is {key: positions} when `parent` is a list or tuple holding those items at its top
    level and nothing else they could be inside (the usual copy of a list of arrays; then `places` is None and the
    cotangents move in one pass). Numbers and strings are left out: no update in place changes them, so where they
    sit carries no gradient."""
    if type(child) not in (list, tuple, dict) or not child:
        return None
    pairs = [(k, v) for k, v in (child.items() if type(child) is dict else enumerate(child))
             if type(v) is not float and not isinstance(v, _SCALARS)]  # (a list of floats: nothing to look for)
    if not pairs:
        return None
    flat = _top_level(parent, pairs) if type(parent) in (list, tuple) else None
    if flat is not None:
        return ("items", type(child), len(child), None, flat) if flat else None
    targets, roots = {}, {}
    for _, v in pairs:
        if id(v) not in targets:
            targets[id(v)] = v
            if isinstance(v, np.ndarray):
                roots.setdefault(_root(v), []).append(v)
    found = _where_each(parent, targets, roots)
    places = [(k, found[id(v)]) for k, v in pairs if id(v) in found]
    return ("items", type(child), len(child), places, None) if places else None


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
    """A cotangent of a `seq` (list, tuple or dict) of `n` items from {key: cotangent}; None when all are None."""
    grads = {k: g for k, g in grads.items() if g is not None}
    if not grads:
        return None
    return grads if seq is dict else seq(grads.get(k) for k in range(n))


def _where(parent, child):
    """`_where_held`, or where `child`'s items sit when `parent` holds its items but not `child` itself (a copy)."""
    plan = _where_held(parent, child)
    return plan if plan is not None else _where_items(parent, child)


def _held_error(where, plan):
    file, line, other, made = where or ("<unknown>", "?", "its holder", None)
    what = "a value zygotepy cannot look into (a closure's cell, a partial's argument, a __slots__ attribute, or a " \
        "view of the array's bytes as another dtype)"
    made = f" (linked at line {made})" if made is not None else ""
    other = "a comprehension's result" if other.startswith("_comp") else f"'{other}'"  # lower_control's accumulator
    return ZygoteError(f"{file}:{line}: zygotepy cannot differentiate this update in place: it changes an array that "
                       f"{other}{made} shares as {what}, and the gradient cannot be routed through that; copy the "
                       f"array before it is kept (W.copy()), or make the update before")


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
            dp = list(dy)
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
        dp = list(dy)
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
        rest, dparent = dict(dy) if seq is dict else dict(enumerate(dy)), None
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


@adjoint(mt.put_held)
def put_held(parent, where, child):
    """`child` may sit somewhere in `parent` (found by identity now, at any depth): the cotangents there are
    `child`'s. Or `child` holds `parent`'s items (`boxes = [Box(a) for a in W]`, then `boxes[0].w *= 2` changes
    `W[0]`): `parent`'s cotangents of those items are `child`'s where they sit in it. `where` is (file, line of the
    update, parent's name, line of the call that made the link)."""
    if mt.is_number(child) or child is mt.NOT_IN_PLACE:  # a number is never updated in place: one found
        return parent, _to_first  # in `parent` is there by chance
    plan = _where(parent, child) if parent is not child else "self"
    inside = _where_items(child, parent) if plan is None else None
    if (plan is not None or inside is not None) and mt.may_have_changed(child):
        current().log.append(id(parent))

    def back(dy):
        if dy is None or plan is None and inside is None:
            return (dy, None, None)
        if inside is not None:
            rest, dchild = _place(inside, child, dy, where)
            return (rest, None, dchild)
        rest, dchild = _split(plan, parent, dy, where)
        return (rest, None, dchild)
    return parent, back


@adjoint(mt.refresh_held)
def refresh_held(child, parent, where):
    """`child` may sit somewhere in `parent`, which was updated in place: `child`'s cotangent is `parent`'s there. Or
    `child` holds `parent`'s items (`boxes = [Box(a) for a in W]`, then `W[0] *= 2`): its cotangents where they sit
    are `parent`'s cotangents of those items."""
    if mt.is_number(child):  # a number sitting in `parent` keeps its value whatever `parent`'s update did
        return child, _to_first
    plan = _where(parent, child)
    inside = _where_items(child, parent) if plan is None else None
    # or `parent` sits in `child`: a call handed back part of an object (`p = box.get()`, `getattr(o, "w")`), then
    # updated in place: `child`'s cotangent at that place is `parent`'s
    holds = _where(child, parent) if plan is None and inside is None and child is not parent else None
    if plan is None and inside is None and holds is None:  # not held there: `parent`'s update left it as it was, so
        mt.passed_through((child,), len(current().log))  # its own holders' links (put_*) need not assume it changed

    def back(dy):
        if dy is None:
            return (None, None, None)
        if inside is not None:
            rest, dparent = _split(inside, child, dy, where)
            return (rest, dparent, None)
        if holds is not None:
            rest, dparent = _split(holds, child, dy, where)
            return (rest, dparent, None)
        if plan is None:
            return (dy, None, None)
        rest, dparent = _place(plan, parent, dy, where)
        return (rest, dparent, None)
    return child, back


_IMMUTABLE = (int, float, complex, bool, str, bytes, tuple, frozenset, type(None), np.generic)


def _slot_of(parent, kind, key, child):
    """When the mutable object `child` is still `parent[key]` / `parent.key` (a list, dict or plain object holding
    it): the function giving `parent`'s cotangent from a cotangent of that slot; else None."""
    if isinstance(child, _IMMUTABLE) or isinstance(parent, np.ndarray) or not _holds(parent, kind, key, child):
        return None
    if kind == "attr":
        if not hasattr(parent, "__dict__") or vars(parent).get(key) is not child:
            return None
        return lambda dy: StructGrad({key: dy})
    if type(parent) is dict:
        return lambda dy: {key: dy}
    if type(parent) in (list, tuple) and type(key) is int:
        def place(dy):
            dp = [None] * len(parent)
            dp[key] = dy
            return type(parent)(dp)
        return place
    return None


@adjoint(mt.refresh)
def refresh(child, parent, kind, key):
    """A NumPy view is `parent[key]` again after the parent's update (its elements the parent's, matched by address:
    `W.T`, `y.real`); a mutable object still in the slot it was read from (`a = lst[0]`, then `lst[0] *= 2` updates
    that array) has the slot's value, so its cotangent goes to the slot; anything else is unchanged by it."""
    plan = "self" if child is parent else overlap(parent, child) if _is_array(child) else None
    if plan == "opaque":
        raise ZygoteError(f"zygotepy cannot differentiate reading the view .{key} of an array after the array was "
                          f"updated in place (its elements do not line up with the array's); take the view after "
                          f"the update, or copy it")
    direct = kind == "item" and isinstance(plan, Overlap) and _is_slot(parent, key, child)
    slot = plan is None and _slot_of(parent, kind, key, child)
    if plan is None and not slot:  # `out = W[:]`: the items of the copy that the parent holds are the parent's there
        plan = _where_items(parent, child)

    def back(dy):
        if dy is None:
            return (None, None, None, None)
        if slot:  # still the very object in `parent`'s slot (`a = lst[0]`, then `lst[0] *= 2` on an array or list):
            return (None, slot(dy), None, None)  # its later value is the slot's, so its cotangent is the slot's
        if plan is None:
            return (dy, None, None, None)
        if direct:  # `row = m[0]`: the whole view is the slot
            dp = _zeros_like(parent)
            dp[key] = dy
            return (None, dp, None, None)
        rest, dp = _place(plan, parent, dy, None)
        return (rest, dp, None, None)
    return child, back

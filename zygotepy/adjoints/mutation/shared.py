"""What an updated object holds that its holder also holds elsewhere: `ds = [{"w": s}, {"w": s}]`, then
`ds[0]["w"] *= 0.5` changes `ds[1]["w"]` too, and tied layers (`dec.w = enc.w.T`), a module's arrays walked through
the list `net.parameters()` makes. The links of an update (`put_item`, `put_attr`, `put_held`, `put_iter`) hand the
holder's cotangents at those other places to the updated object (`shared_contents`, `split_shared`); a structure of
parent pointers, whose cycle would route them back, is left to the lowering's links, or refused where a loop's item
surely updated an array of its own shared there.
"""
import collections

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...errors import ZygoteError
from ...structgrad import StructGrad
from ..structures.common import like
from .held import _ATOMIC_TYPES, _BASE, _NOT_PLAIN, _SCALARS, SEARCH_DEPTH, _root, _split, _where_each
from .overlap import _is_array


def shared_contents(parent, child, where=None):
    """The arrays, lists, dicts and objects inside the container or object `child` (at any depth) that `parent` also
    holds outside `child`: `ds = [{"w": s}, {"w": s}]`, then `ds[0]["w"] *= 0.5` updates `ds[1]["w"]` too; tied
    layers (`dec.w = enc.w.T`). [(path in `child`, plan in `parent`)], outer first, or None. An update of `child` in
    place may be an update of them wherever they sit, so `split_shared` hands `parent`'s cotangents there to `child`
    at their paths (where they are `child`'s items now, the update's result). Numbers are left out (no update in
    place changes them); quick C-level checks leave out the common case of nothing shared. `where` (file, line, the
    parent's name, ...), given where `child` surely was updated (a loop's item), refuses an array of its own shared in
    a structure of parent pointers."""
    others = _values(parent)
    if others is None:
        return None
    others = [v for v in others if v is not child]
    kinds = set(map(type, others))
    if kinds <= _ATOMIC_TYPES:
        return None
    inner = _values(child)
    if not inner:
        return None
    inner_kinds = set(map(type, inner))
    if inner_kinds <= _ATOMIC_TYPES:
        return None
    plain = _ATOMIC_TYPES | {np.ndarray}
    if kinds <= plain and inner_kinds <= plain and _own_data(others) and _own_data(inner) and \
            not set(map(id, inner)) & set(map(id, others)):  # (arrays owning their data: only as themselves)
        return None
    contents = {}
    if not _collect(child, (), contents, {id(child)}, 0, parent):  # (`child` holds `parent`: parent pointers,
        # whose cycle would route the parent's cotangents back to it by the child's path; an array of its own it
        # shares elsewhere in the parent is refused)
        own = {id(v): v for v in inner if isinstance(v, np.ndarray)} if where is not None else None
        if own and _places_elsewhere(parent, child, own):
            holder = "the container the loop walks" if where[2].startswith("_") else f"'{where[2]}'"
            raise ZygoteError(f"{where[0]}:{where[1]}: zygotepy cannot differentiate this update in place: it "
                              f"changes an array that another object in {holder} also holds, in a structure "
                              f"whose objects refer back to their holders (parent pointers); give each object its "
                              f"own array (w.copy()), or update the array where it is first held")
        return None
    places = _places_elsewhere(parent, child, {i: obj for i, (obj, _) in contents.items()})
    kind = "seq" if isinstance(parent, (list, tuple, collections.deque)) else "dict" if isinstance(parent, dict) \
        else "obj"
    shared = [(path, (kind, places[i])) for i, (_, path) in contents.items() if i in places]
    return shared or None


def _places_elsewhere(parent, child, targets):
    """{id: [(key, item, plan), ...]}: where each of `targets` (id -> object) sits in the list, dict or object
    `parent` other than in `child`."""
    roots = {}
    for obj in targets.values():
        if _is_array(obj):
            roots.setdefault(_root(mt.host_memory(obj)), []).append(obj)
    entries = enumerate(parent) if isinstance(parent, (list, tuple, collections.deque)) else \
        parent.items() if isinstance(parent, dict) else vars(parent).items()
    seen = {id(child): {}}  # (inside `child` itself: its own places, which the caller routes)
    places = {}
    for k, v in list(entries):
        if v is not child:
            for t, plan in _where_each(v, targets, roots, 1, seen).items():
                places.setdefault(t, []).append((k, v, plan))
    return places


def _values(x):
    """The items of a list, tuple or deque, the values of a dict, the fields of a plain object; None for others."""
    if isinstance(x, (list, tuple, collections.deque)):
        return list(x)
    if isinstance(x, dict):
        return list(x.values())
    if hasattr(x, "__dict__") and not isinstance(x, _NOT_PLAIN):
        return list(vars(x).values())
    return None


def _own_data(items):
    arrays = [v for v in items if type(v) is np.ndarray]
    return not arrays or set(map(type, map(_BASE, arrays))) == {type(None)}


def _collect(obj, path, contents, seen, depth, parent):
    """`contents[id(o)] = (o, path)` for each array, list, dict and plain object inside `obj` (first path found);
    False where `parent` is among them."""
    if depth > SEARCH_DEPTH:
        return True
    if isinstance(obj, (list, tuple, collections.deque)):
        step, entries = ("seq", obj, len(obj)), enumerate(obj)
    elif isinstance(obj, dict):
        step, entries = ("dict", None, None), obj.items()
    elif hasattr(obj, "__dict__") and not isinstance(obj, _NOT_PLAIN):
        step, entries = ("obj", None, None), vars(obj).items()
    else:
        return True
    for k, v in list(entries):
        if v is parent:
            return False
        if isinstance(v, _SCALARS) or id(v) in seen:
            continue
        seen.add(id(v))
        at = path + ((*step, k),)
        if isinstance(v, np.ndarray) or _values(v) is not None or _is_array(v):  # (hessian's dual arrays too)
            contents[id(v)] = (v, at)
            if not _collect(v, at, contents, seen, depth + 1, parent):
                return False
    return True


def split_shared(shared, parent, dy, dchild):
    """`shared_contents`' routing: `parent`'s cotangent `dy` at the places of `child`'s contents joins `child`'s
    `dchild` at their paths. -> (the rest of `dy`, dchild)."""
    for path, plan in shared:
        dy, part = _split(plan, parent, dy, None)
        if part is not None:
            for kind, holder, n, key in reversed(path):
                if kind == "seq":
                    items = [None] * n
                    items[key] = part
                    part = type(holder)(items) if type(holder) in (list, tuple) else like(holder, items)
                else:
                    part = {key: part} if kind == "dict" else StructGrad({key: part})
            dchild = rt.acc(dchild, part)
    return dy, dchild

"""Objects that hold themselves: `a.me = a`, or `a.nb = b` beside `b.nb = a`. A cotangent of such an object may carry
a part at a path that comes back to the object itself (`me.value`, `nb.nb.value`): that part is the object's own
cotangent at the time of the read. A store into one of its fields (`a.value = a.value * 3.0`) routes its cotangent by
field, so a read after it through the cycle (`a.me.value`) would reach the value from before the store: each part
that comes back to the object is folded into its top level first (`fold_self_paths`). The cycle may run through lists
and tuples (`a.bonds.append((b, w))` beside `b.bonds.append((a, w))`, `a.kids = [a]`): each is a step."""
import numpy as np

from ...ast_adjoint import runtime as rt
from ...structgrad import StructGrad

_DEPTH = 8  # how far a cycle is looked for, and folded (a parent pointer's is two steps; `a.bonds[0][0].bonds[0][0]` six)
_VISITS = 64
_ITEMS = 64  # a longer list or tuple is not walked at every store (numbers in it cannot lead back)
_SEQUENCES = (list, tuple)


def holds_itself(obj):
    """Can `obj` be reached from its own fields, or their fields, `_DEPTH` steps down? (Objects, dicts, and lists and
    tuples of at most `_ITEMS` items; `_VISITS` of them at most: a large model's are not walked at every store.)"""
    work, seen = [(obj, 0)], set()
    while work and len(seen) < _VISITS:
        cur, depth = work.pop()
        for v in _fields(cur):
            if v is obj:
                return True
            if depth + 1 < _DEPTH and id(v) not in seen and _walkable(v):
                seen.add(id(v))
                work.append((v, depth + 1))
    return False


def _walkable(v):
    return type(v) is dict or type(v) in _SEQUENCES and len(v) <= _ITEMS or \
        hasattr(v, "__dict__") and not isinstance(v, (type, np.ndarray)) and not callable(v)


def _fields(obj):
    if type(obj) is dict:
        return list(obj.values())
    if type(obj) in _SEQUENCES:
        return obj if len(obj) <= _ITEMS else ()
    return list(vars(obj).values()) if _walkable(obj) else ()


def fold_self_paths(obj, d):
    """`d` (a cotangent of `obj`'s fields) with every part at a path that reaches `obj` again added to its top
    level."""
    for _ in range(_DEPTH * 4):  # (each round takes the parts found at least one step closer)
        found = []
        d = _strip(d, obj, obj, 0, found)
        if not found:
            return d
        for part in found:
            d = rt.acc(d, part)
    return d


def _strip(d, inner, obj, depth, found):
    """`d`, the cotangent of `inner`, without its parts at paths that reach `obj` (put in `found`)."""
    if d is None:
        return None
    if depth and inner is obj:
        found.append(d)
        return None
    if depth >= _DEPTH or not _walkable(inner):
        return d
    if type(inner) in _SEQUENCES:  # (a list's cotangent is a list or tuple of its items' cotangents)
        if not isinstance(d, _SEQUENCES) or len(d) != len(inner):
            return d
        return type(d)(_strip(v, child, obj, depth + 1, found) for v, child in zip(d, inner))
    if not isinstance(d, (StructGrad, dict)):
        return d
    out = {}
    for k, v in dict(d).items():
        try:
            child = inner[k] if type(inner) is dict else getattr(inner, k)
        except (AttributeError, KeyError, TypeError):
            out[k] = v
            continue
        out[k] = _strip(v, child, obj, depth + 1, found)
    return type(d)(out) if isinstance(d, StructGrad) else out

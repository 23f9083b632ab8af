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
from ..errors import ZygoteError
from ..structgrad import StructGrad
from .objects import as_fields
from .registry import adjoint
from .structures import like


def _zeros_like(x):
    return np.zeros(np.shape(x), dtype=x.dtype if getattr(x, "dtype", None) is not None and x.dtype.kind in "fc"
                    else np.float64)


def _dict_without(dy, key):
    return None if dy is None else {k: v for k, v in dy.items() if k != key} or None


def _is_view_of(child, parent):
    return isinstance(child, np.ndarray) and isinstance(parent, np.ndarray) and child.base is not None \
        and mt.base_of(child) is mt.base_of(parent)


class Overlap:
    """The elements of two arrays that share memory: flat positions `p` in the parent and `c` in the child of the same
    addresses (found now, from data pointers and strides; a view made any way at all is matched)."""
    __slots__ = ("c", "child_shape", "p", "parent_shape")

    def __init__(self, parent, child, p, c):
        self.parent_shape, self.child_shape, self.p, self.c = parent.shape, child.shape, p, c

    def split(self, dy):
        """The parent's cotangent -> (the part not at the shared elements, the child's cotangent from them)."""
        dy = np.asarray(dy)
        dchild = np.zeros(int(np.prod(self.child_shape)), dtype=dy.dtype)
        np.add.at(dchild, self.c, dy.reshape(-1)[self.p])
        rest = dy.copy()
        rest.reshape(-1)[self.p] = 0
        return rest, dchild.reshape(self.child_shape)

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


def _put(kind):
    def put(parent, key, child):
        if isinstance(parent, np.ndarray):
            plan = "self" if parent is child else overlap(parent, child)
            direct = kind == "item" and isinstance(plan, Overlap) and _is_slot(parent, key, child)
        else:
            plan = _holds(parent, kind, key, child) or None
            direct = False
        if plan == "opaque":
            raise ZygoteError(f"zygotepy cannot differentiate this update in place: it writes through a view whose "
                              f"elements do not line up with its array's ({kind} {key!r} of a {parent.dtype} array "
                              f"seen as {child.dtype}: .real/.imag of a complex array, .view(dtype)); update the "
                              f"array itself (z[0] = complex(v, z[0].imag)), or copy the view first")
        if plan is not None:
            mt.LOG.append(id(parent))  # updated through its item or attribute (dispatch checks arguments' updates)

        def back(dy):
            if dy is None or plan is None:
                return (dy, None, None)
            if isinstance(parent, np.ndarray) and not direct:
                rest, dchild = _split(plan, parent, dy, None)
                return (rest, None, dchild)
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
    if isinstance(parent, np.ndarray):
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


def _held_error(where, plan):
    file, line, other, made = where
    what = "a value zygotepy cannot look into (a closure's cell, a partial's argument, a __slots__ attribute, or a " \
        "view of the array's bytes as another dtype)"
    made = f" (linked at line {made})" if made is not None else ""
    return ZygoteError(f"{file}:{line}: zygotepy cannot differentiate this update in place: it changes an array that "
                       f"'{other}'{made} shares as {what}, and the gradient cannot be routed through that; copy the "
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
    `child`'s. `where` is (file, line of the update, parent's name, line of the call that made the link)."""
    plan = _where_held(parent, child) if parent is not child else "self"
    if plan is not None:
        mt.LOG.append(id(parent))

    def back(dy):
        if dy is None or plan is None:
            return (dy, None, None)
        rest, dchild = _split(plan, parent, dy, where)
        return (rest, None, dchild)
    return parent, back


@adjoint(mt.refresh_held)
def refresh_held(child, parent, where):
    """`child` may sit somewhere in `parent`, which was updated in place: `child`'s cotangent is `parent`'s there."""
    plan = _where_held(parent, child)

    def back(dy):
        if dy is None:
            return (None, None, None)
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
    plan = "self" if child is parent else overlap(parent, child) if isinstance(child, np.ndarray) else None
    if plan == "opaque":
        raise ZygoteError(f"zygotepy cannot differentiate reading the view .{key} of an array after the array was "
                          f"updated in place (its elements do not line up with the array's); take the view after "
                          f"the update, or copy it")
    direct = kind == "item" and isinstance(plan, Overlap) and _is_slot(parent, key, child)
    slot = plan is None and _slot_of(parent, kind, key, child)

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

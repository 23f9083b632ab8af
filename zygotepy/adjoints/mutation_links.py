"""Rules that carry an update in place across the links between objects: a child updated in place gives its parent
a new version (`put_item`, `put_attr`, and `put_held` for an object held anywhere in another: an item, a value, an
attribute), and a parent updated in place gives the children read out of it before (`refresh`, `refresh_held`) their
new versions. The lowering (ast_adjoint/lower_mutation.py) places these calls; their backs route each cotangent to
the version it belongs to. A holder the search cannot follow (a view, a closure cell, a `partial`, a `__slots__`
attribute) raises a ZygoteError naming the update, never a wrong gradient.
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
        holds = _holds(parent, kind, key, child)
        if holds:
            mt.LOG.append(id(parent))  # updated through its item or attribute (dispatch checks arguments' updates)

        def back(dy):
            if dy is None or not holds:
                return (dy, None, None)
            if kind == "attr":
                dy = as_fields(parent, dy)
                rest = {k: v for k, v in dy.items() if k != key and v is not None}
                return (StructGrad(rest) if rest else None, None, dy.get(key))
            if isinstance(parent, np.ndarray):
                dchild = dy[key]
                dp = dy.copy()
                dp[key] = 0
                return (dp, None, dchild)
            if isinstance(parent, dict):
                return (_dict_without(dy, key), None, dy.get(key))
            dp = list(dy)
            dchild, dp[key] = dp[key], None
            return (type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp), None, dchild)
        return parent, back
    return put


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
        return "view" if isinstance(child, np.ndarray) and np.may_share_memory(parent, child) else None
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
    what = "a view of its data" if plan == "view" else "a value zygotepy cannot look into (a closure's cell, a " \
        "partial's argument, a __slots__ attribute)"
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
    """A cotangent of `parent` that is `dy` at the first place where `child` sits, nothing elsewhere."""
    if plan == "self":
        return dy
    if not isinstance(plan, tuple):
        raise _held_error(where, plan)
    kind, ((k, item, sub), *_) = plan
    inner = _place(sub, item, dy, where)
    if kind == "seq":
        dp = [None] * len(parent)
        dp[k] = inner
        return type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp)
    return StructGrad({k: inner}) if kind == "obj" else {k: inner}


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
        return (None, _place(plan, parent, dy, where), None)
    return child, back


@adjoint(mt.refresh)
def refresh(child, parent, kind, key):
    """A NumPy view is `parent[key]` again after the parent's update; anything else is unchanged by it."""
    view = kind in ("item", "attr") and _is_view_of(child, parent)  # `x[1:]`, `W.T`

    def back(dy):
        if dy is None:
            return (None, None, None, None)
        if not view:
            return (dy, None, None, None)
        dp = _zeros_like(parent)
        if kind == "item":
            dp[key] = dy
            return (None, dp, None, None)
        target = getattr(dp, key, None)
        if not (isinstance(target, np.ndarray) and target.shape == np.shape(dy) and np.shares_memory(target, dp)):
            raise ZygoteError(f"zygotepy cannot differentiate reading the view .{key} of an array after the array "
                              f"was updated in place; take the view after the update, or copy it")
        target[...] = dy
        return (None, dp, None, None)
    return child, back

"""Slots whose value the user's Python code computes each time they are read: `g.interior` where `interior` is a
property returning `self.u[1:]`, a descriptor's `__get__`, `__getattr__`, a class's `__getattribute__`, and `g[1:]`
through a `__getitem__` of the user's. What such a read gave is no object `g` keeps in that slot (the next read makes
another view), so an update in place of it is not found there by identity; it may still be an object `g` keeps deeper,
or share memory with an array `g` keeps. The links of such a read (`put_attr`/`put_item`, `refresh`) are followed as a
holder's are (`put_held`/`refresh_held`: by identity at any depth, and by memory), as an explicit method call's result
(`g.interior_view()`) is."""
import inspect
import types

import numpy as np

from ...backends import is_array_type

_MISSING = object()


def computed_slot(parent, kind, key):
    """Is `parent.key` (`kind` "attr") or `parent[key]` ("item") computed by Python code of `parent`'s class?"""
    cls = type(parent)
    if isinstance(parent, (np.ndarray, type)) or kind not in ("attr", "item") or is_array_type(cls):
        return False  # (an array type's own views: overlap.py, which refuses those a device hides)
    if kind == "item":
        return isinstance(getattr(cls, "__getitem__", None), types.FunctionType)
    if not isinstance(key, str):
        return False
    if isinstance(cls.__getattribute__, types.FunctionType):
        return True
    static = inspect.getattr_static(parent, key, _MISSING)  # (the instance's own field first, as Python reads it)
    if static is _MISSING:
        return isinstance(getattr(cls, "__getattr__", None), types.FunctionType)
    if isinstance(static, property):
        return True
    # a user's descriptor (a plain function's `__get__`, which binds a method, is C code: not taken)
    return isinstance(getattr(type(static), "__get__", None), types.FunctionType)


def where_unknown(parent, key):
    """The `where` a holder's link rule names in its errors, for a link the lowering made as an item's or attribute's
    (which names no line: the traceback does)."""
    return ("<zygotepy>", "?", f"{type(parent).__name__}.{key}" if isinstance(key, str) else type(parent).__name__,
            None)

"""Slots whose value the user's Python code computes each time they are read: `g.interior` where `interior` is a
property returning `self.u[1:]`, a descriptor's `__get__`, `__getattr__`, a class's `__getattribute__`, and `g[1:]`
through a `__getitem__` of the user's. What such a read gave is no object `g` keeps in that slot (the next read makes
another view), so an update in place of it is not found there by identity; it may still be an object `g` keeps deeper,
or share memory with an array `g` keeps. The links of such a read (`put_attr`/`put_item`, `refresh`) are followed as a
holder's are (`put_held`/`refresh_held`: by identity at any depth, and by memory), as an explicit method call's result
(`g.interior_view()`) is."""
import types

import numpy as np

from ...ast_adjoint.class_lookup import ABSENT, by_class
from ...backends import is_array_type


def _python_get(found):
    """Does `found` (what the class's lookup found) bind through a `__get__` written in Python (a property, a user's
    descriptor), and does it take precedence over the instance's own field (a data descriptor)? `(binds, data)`. A
    plain function's `__get__`, which binds a method, is C code: not taken."""
    if isinstance(found, property):
        return True, True
    kind = type(found)
    if not isinstance(getattr(kind, "__get__", None), types.FunctionType):
        return False, False
    return True, hasattr(kind, "__set__") or hasattr(kind, "__delete__")


@by_class
def _class_answer(cls, name, found):
    """How `obj.name` is answered on an instance of `cls`: True (a getter always runs), False (never: a constant of
    the class, a method, a C descriptor), "field" (a Python descriptor that the instance's own field hides) or
    "absent" (the instance's field, else the class's `__getattr__`)."""
    if found is ABSENT:
        return "absent"
    binds, data = _python_get(found)
    return data if not binds or data else "field"


def _own_field(obj, name):
    try:
        return name in object.__getattribute__(obj, "__dict__")
    except AttributeError:  # (`__slots__`)
        return False


def computed_slot(parent, kind, key):
    """Is `parent.key` (`kind` "attr") or `parent[key]` ("item") computed by Python code of `parent`'s class? Asked
    as Python's lookup answers it (data descriptors first, then the instance's field, then the class), through the
    per-class answers class_lookup.py keeps until the class changes."""
    cls = type(parent)
    if isinstance(parent, (np.ndarray, type)) or kind not in ("attr", "item") or is_array_type(cls):
        return False  # (an array type's own views: overlap.py, which refuses those a device hides)
    if kind == "item":
        return isinstance(getattr(cls, "__getitem__", None), types.FunctionType)
    if not isinstance(key, str):
        return False
    if isinstance(cls.__getattribute__, types.FunctionType):
        return True
    answer = _class_answer(cls, key)
    if answer == "field":
        return not _own_field(parent, key)
    if answer == "absent":
        return not _own_field(parent, key) and isinstance(getattr(cls, "__getattr__", None), types.FunctionType)
    return answer


def where_unknown(parent, key):
    """The `where` a holder's link rule names in its errors, for a link the lowering made as an item's or attribute's
    (which names no line: the traceback does)."""
    return ("<zygotepy>", "?", f"{type(parent).__name__}.{key}" if isinstance(key, str) else type(parent).__name__,
            None)

"""Rules for tuples, lists and sets: displays (starred items too), unpacking (`a, *b = xs`), `append`, copies
(`list.copy`, `copy.copy` of containers and plain objects, `copy.deepcopy`), and sets (whose cotangent is a dict from
element to cotangent). A tuple's or list's cotangent is a tuple or list of its items' (`None` where no gradient
flows)."""
import collections
import copy
import types

import numpy as np

from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...ast_adjoint.dispatch import J
from ...errors import ZygoteError
from ...structgrad import StructGrad
from ..registry import adjoint, code_rule, nondifferentiable
from .common import Items, like


@adjoint(rt.tuple_of)
def tuple_of(*items):
    def back(dy):
        return tuple(dy) if dy is not None else (None,) * len(items)
    return items, back


@adjoint(rt.list_of)
def list_of(*items):
    def back(dy):
        return tuple(dy) if dy is not None else (None,) * len(items)
    return list(items), back


@adjoint(rt.unpack)
def unpack(value, n):
    if isinstance(getattr(type(value), "__iter__", None), types.FunctionType):
        # `w, x, y, z = q` of a user class's object: walked by its `__iter__`, derived, as `list(q)` is (its items'
        # cotangents had no way back: refused in the backward, naming no line)
        items, items_back = J(list, value)

        def back_through_iter(dy):
            return (None if dy is None else items_back(list(dy))[1], None)
        return rt.unpack(items, n), back_through_iter

    def back(dy):
        return (like(value, list(dy)) if dy is not None else None, None)
    return rt.unpack(value, n), back


def _splat_back(stars, items, dy, sizes):
    """Cotangents of a display's items from the display's: a starred item gets its slice (`sizes`: how many items each
    gave), in its own container."""
    if dy is None:
        return (None,) * (1 + len(items))
    out, k = (None,), 0  # built by concatenation, not `append`: an outer level transforms this code (nesting/)
    for star, item, n in zip(stars, items, sizes):
        if star:
            part = dy[k:k + n]
            out = out + (None if all(g is None for g in part) else like(item, list(part)),)
            k = k + n
        else:
            out = out + (dy[k],)
            k = k + 1
    return out


def _sizes(stars, items):
    """How many items each starred item of a display gives: an iterator (`*(v for v in xs)`) what it has left."""
    return tuple((len(item.items) - item.at if type(item) is Items else len(item)) if star else 1
                 for star, item in zip(stars, items))


def _walkable(stars, items):
    """The items, with a starred iterator other than `Items` (one no gradient flows through) made a list: its size."""
    return tuple(list(item) if star and type(item) is not Items and not hasattr(item, "__len__") else item
                 for star, item in zip(stars, items))


nondifferentiable(_sizes)


@adjoint(_walkable)
def _walkable_rule(stars, items):
    """The items it returns as they are pass their cotangents through: an outer level of nesting transforms `splat`'s
    rule below, and a `_walkable` run as a constant there dropped every starred item's gradient (a fifth derivative
    of x^5 by a loop gave 112, not 120)."""
    out = _walkable(stars, items)

    def back(dy):
        if dy is None:
            return (None, None)
        return (None, tuple(d if o is i else None for o, i, d in zip(out, items, dy)))
    return out, back


@adjoint(rt.splat)
def splat(stars, *items):
    items = _walkable(stars, items)
    sizes = _sizes(stars, items)
    return rt.splat(stars, *items), lambda dy: _splat_back(stars, items, dy, sizes)


@adjoint(rt.splat_list)
def splat_list(stars, *items):
    items = _walkable(stars, items)
    sizes = _sizes(stars, items)
    return rt.splat_list(stars, *items), lambda dy: _splat_back(stars, items, dy, sizes)


@adjoint(rt.unpack_starred)
def unpack_starred(value, before, after):
    parts = rt.unpack_starred(value, before, after)

    def back(dy):
        if dy is None:
            return (None, None, None)
        middle = dy[before] if dy[before] is not None else (None,) * len(parts[before])
        return (like(value, [*dy[:before], *middle, *dy[before + 1:]]), None, None)
    return parts, back


@adjoint(rt.append)
def append(lst, value):
    n = len(lst)

    def back(dy):  # dy covers the final list; entries past n belong to later appends and are ignored upstream
        if dy is None:
            return (None, None)
        return (dy, dy[n] if n < len(dy) else None)
    return rt.append(lst, value), back


@adjoint(list.copy)
def list_copy(lst):
    """`W.copy()` (and `copy.copy(W)`, which calls it): a new list of the same items. The caller links the copy to `W`
    like any call's result, so an item updated in place through either is seen through the other (mutation_links)."""
    return lst.copy(), lambda dy: (None if dy is None else list(dy),)


@adjoint(copy.copy)
def shallow_copy(x):
    """`copy.copy(x)`: what Python's shallow copy makes, a new list, dict, array or plain object holding the same items
    (a tuple, number or string is itself). The caller links the copy to `x` like any call's result, so an item updated
    in place through either is seen through the other. A class with a `__copy__` of its own runs it as derived code;
    one that copies itself another way (`__reduce_ex__`, `__slots__`) raises a ZygoteError naming the call."""
    t = type(x)
    if t is list or t is dict or t is np.ndarray:
        return x.copy(), lambda dy: (None if dy is None else list(dy) if t is list else dict(dy) if t is dict else dy,)
    if t is tuple or t in _PLAIN_LEAVES or t is frozenset:
        return x, lambda dy: (dy,)
    if getattr(t, "__zygote_number__", False):  # forward mode's dual numbers (hessian): a copy of both parts
        return copy.copy(x), lambda dy: (dy,)
    own = getattr(t, "__copy__", None)
    if isinstance(own, types.FunctionType):
        y, pb = J(own, x)
        return y, lambda dy: (pb(dy)[1],)
    if not hasattr(x, "__dict__") or hasattr(t, "__slots__") or t.__reduce_ex__ is not object.__reduce_ex__ \
            or t.__reduce__ is not object.__reduce__ or isinstance(x, (types.FunctionType, type, types.ModuleType)):
        raise ZygoteError(f"{call_site() or 'copy.copy'}: zygotepy cannot differentiate copy.copy of a {t.__name__}: "
                          f"only lists, dicts, arrays and plain objects (their attributes shared, as Python's shallow "
                          f"copy shares them) are; build the copy explicitly")
    y = object.__new__(t)
    y.__dict__.update(x.__dict__)

    def back(dy):
        if dy is None:
            return (None,)
        fields = dy if isinstance(dy, dict) else vars(dy)  # (an object of the class may stand for its cotangent)
        return (StructGrad(fields) if fields else None,)
    return y, back


@adjoint(copy.deepcopy)
def deepcopy(x, *memo):
    """`copy.deepcopy(x)` of lists, tuples, dicts and plain objects of arrays and numbers: new objects all the way
    down, so the cotangent of the copy is the original's, entry by entry (field by field). (Objects that define
    their own `__deepcopy__` or `__reduce__` may copy something else: they raise.)"""
    if not _plain_tree(x):
        raise ZygoteError(f"copy.deepcopy of a {type(x).__name__} (or of a container holding one) is not "
                          f"differentiated: only lists, tuples, dicts and plain objects of NumPy arrays and numbers "
                          f"are; build the copy explicitly (a new object from copies of its arrays)")
    return copy.deepcopy(x, *memo), lambda dy: (dy, *(None for _ in memo))


_PLAIN_LEAVES = frozenset((float, int, bool, complex, str, bytes, type(None), np.ndarray, np.float64, np.float32,
                           np.int64, np.complex128))


def _plain_tree(x, depth=0):
    """Lists, tuples (namedtuples too), dicts and plain objects (a `__dict__` of attributes, copied by Python's
    default protocol: no `__deepcopy__`, `__reduce__` or `__slots__` of their own) of arrays and numbers."""
    t = type(x)
    if depth > 32:
        return False
    if t is list or t is tuple or isinstance(x, tuple) and hasattr(t, "_fields"):
        return all(_plain_tree(v, depth + 1) for v in x)
    if t is dict:
        return all(type(k) in _PLAIN_LEAVES and _plain_tree(v, depth + 1) for k, v in x.items())
    if t in _PLAIN_LEAVES or getattr(t, "__zygote_number__", False):
        return True
    return hasattr(x, "__dict__") and not hasattr(t, "__slots__") and not hasattr(t, "__deepcopy__") \
        and t.__reduce_ex__ is object.__reduce_ex__ and t.__reduce__ is object.__reduce__ \
        and not isinstance(x, (types.FunctionType, type, types.ModuleType)) \
        and all(_plain_tree(v, depth + 1) for v in vars(x).values())


# --- sets: a set's cotangent is a dict from element to cotangent (elements are values, not positions) ---------------

@adjoint(rt.set_of)
def set_of(*items):
    def back(dy):
        if dy is None:
            return (None,) * len(items)
        # an element given twice is stored once: the first gets its cotangent
        return tuple(dy.get(v) if v not in items[:k] else None for k, v in enumerate(items))
    return set(items), back


@adjoint(rt.set_add)
def set_add(s, value):
    fresh = value not in s

    def back(dy):
        if dy is None or not fresh:
            return (dy, None)
        return ({k: g for k, g in dy.items() if k != value} or None, dy.get(value))
    return rt.set_add(s, value), back


# every namedtuple class has its own `_make` classmethod, all made from this one code object
_MAKE = collections.namedtuple("_Probe", "a")._make.__func__.__code__


@code_rule(_MAKE)
def namedtuple_make(cls, iterable):
    """`P._make(items)`, of any namedtuple class: `tuple.__new__(P, items)` (its source calls that C function, which
    has no rule). The iterable is taken once; each field's cotangent goes back to the item that set it."""
    items = list(iterable)
    y = cls._make(items)  # (a wrong number of items: Python's TypeError)

    def back(dy):
        if dy is None:
            return (None, None)
        grads = list(dy) if isinstance(dy, (tuple, list)) else [dy.get(f) for f in cls._fields]
        return (None, like(iterable, grads))
    return y, back

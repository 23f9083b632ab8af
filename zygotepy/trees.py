"""Nested structures of arrays ("trees"): what an update step and a Hessian over several arguments walk.

A tree is a tuple, list, dict, namedtuple, dataclass, plain object (its `__dict__`) or `StructGrad`, nested to any
depth; anything else is a leaf. `tree_map` is the update-step helper users expect from JAX
(`params = tree_map(lambda p, g: p - lr * g, params, grads)`): a gradient of a dict is a dict, of an object a
`StructGrad` keyed by field name, and `None` (no gradient) may stand where the first tree has a whole subtree.
"""
import collections
import copy
import dataclasses
import functools
import types
from typing import Any, Callable

import numpy as np

from .structgrad import StructGrad

__all__ = ["tree_map", "leaves", "unflatten"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _fields(x):
    """`(kind, keys, children)` of a tree node, or None for a leaf."""
    if isinstance(x, dict):  # (a StructGrad, a defaultdict, a user's dict subclass too)
        return "dict", list(x), list(x.values())
    if _is_namedtuple(x):
        return "namedtuple", list(x._fields), list(x)
    if isinstance(x, (tuple, list)):
        return "tuple" if isinstance(x, tuple) else "list", list(range(len(x))), list(x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = [f.name for f in dataclasses.fields(x)]
        return "object", names, [getattr(x, n) for n in names]
    if isinstance(x, (type, types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial)) \
            or hasattr(x, "shape") or callable(x) and type(x).__module__ == "builtins":
        return None  # (a callable object of the user's, a layer holding weights, is a tree, as its gradient is)
    if hasattr(x, "__dict__"):
        return "object", list(vars(x)), list(vars(x).values())
    slots = [n for c in type(x).__mro__ for n in getattr(c, "__slots__", ()) if hasattr(x, n)] \
        if type(x).__module__ != "builtins" else []
    if slots:  # (a `__slots__` object: its gradient is a StructGrad of its slots, as any object's)
        return "object", slots, [getattr(x, n) for n in slots]
    return None


def _child(tree, kind, key, position):
    """The entry `key` (at `position`) of another tree matched against a node of kind `kind` (None where it has
    none): a namedtuple's by name or, in a plain tuple or list, by position."""
    if tree is None:
        return None
    if kind in ("dict",):
        return tree.get(key) if isinstance(tree, dict) else getattr(tree, key, None)
    if kind in ("namedtuple", "object"):
        if isinstance(tree, dict):  # an object's gradient: a StructGrad keyed by field name
            return tree.get(key)
        if kind == "namedtuple" and isinstance(tree, (tuple, list)) and not _is_namedtuple(tree):
            return tree[position] if position < len(tree) else None
        return getattr(tree, key, None)
    return tree[key] if key < len(tree) else None


def like_container(node, items):
    """`items` (a list, or a dict's key-value pairs) in a container of `node`'s type. A subclass too: a tuple's is
    called with them; a list's or a dict's is copied and refilled, never called (a `defaultdict` keeps its factory, a
    dict subclass whose constructor takes other arguments is not handed the items as those). Its base type where that
    fails."""
    base = dict if isinstance(node, dict) else tuple if isinstance(node, tuple) else list
    if type(node) is base:
        return base(items)
    return _subclass_like(node, base, items)


def _subclass_like(node, base, items):
    """`like_container` of a subclass (a function of its own: its `try` would keep zygotepy from differentiating
    `tree_map` inside a loss, which reaches only the plain containers' branch)."""
    try:
        if base is tuple:
            return type(node)(items)
        new = copy.copy(node)
        if base is dict:
            new.clear()
            # (a Counter's own update adds counts, and counts the pairs of an iterable: dict's sets the values)
            (dict.update if isinstance(new, collections.Counter) else type(new).update)(new, items)
        else:
            new[:] = items
        return new
    except Exception:  # noqa: BLE001 - a subclass that cannot be made so: its base type
        return base(items)


def _rebuild(node, kind, keys, children):
    if kind == "dict":
        return like_container(node, zip(keys, children, strict=True))
    if kind == "namedtuple":
        return type(node)(*children)
    if kind in ("tuple", "list"):
        return like_container(node, children)
    given = dict(zip(keys, children, strict=True))
    if dataclasses.is_dataclass(node):
        late = {f.name for f in dataclasses.fields(node) if not f.init}  # (set by `__post_init__`: put back after)
        new = dataclasses.replace(node, **{k: v for k, v in given.items() if k not in late})
        for k in late:
            object.__setattr__(new, k, given[k])
        return new
    new = copy.copy(node)  # (its class's own way of copying: `types.SimpleNamespace` has no plain `__new__`)
    for k, v in given.items():
        object.__setattr__(new, k, v)
    return new


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """`fn` applied leaf by leaf to `tree` and the matching leaves of `rest` (trees of the same structure, such as
    gradients: a gradient of a dict is a dict, of an object a StructGrad; `None` where a tree has no entry, or stands
    for a whole subtree, is passed to `fn` as None). The result has `tree`'s structure: containers are rebuilt, never
    updated in place (dataclasses through `dataclasses.replace`, other objects as shallow copies).

    >>> tree_map(lambda p, g: p if g is None else p - 0.1 * g, {"w": 1.0, "n": 3}, {"w": 2.0, "n": None})
    {'w': 0.8, 'n': 3}
    """
    node = _fields(tree)
    if node is None:
        return fn(tree, *rest)
    kind, keys, children = node
    mapped = [tree_map(fn, child, *(_child(r, kind, key, i) for r in rest))
              for i, (key, child) in enumerate(zip(keys, children, strict=True))]
    return _rebuild(tree, kind, keys, mapped)


def leaves(tree: Any) -> list:
    """The leaves of `tree`, depth first, in the order `unflatten` takes them back."""
    node = _fields(tree)
    if node is None:
        return [tree]
    return [leaf for child in node[2] for leaf in leaves(child)]


def unflatten(tree: Any, values: list) -> Any:
    """`tree`'s structure with its leaves replaced, in order, by `values`."""
    it = iter(values)
    out = _refill(tree, it)
    if next(it, it) is not it:
        raise ValueError("unflatten: more values than leaves")
    return out


def matched(tree, other):
    """The entries of `other` (a gradient, a tree of blocks) at the leaves of `tree`, in `leaves(tree)` order (None
    where it has none): a walk that builds nothing (`tree_map` would make objects, running their `__post_init__`)."""
    node = _fields(tree)
    if node is None:
        return [other]
    kind, keys, children = node
    return [v for i, (key, child) in enumerate(zip(keys, children, strict=True))
            for v in matched(child, _child(other, kind, key, i))]


def _refill(tree, it):
    """`unflatten`'s walk: an object is a copy with its fields set (no `__init__`, no `__post_init__`: the values are
    Jacobian blocks or dual numbers, which a user's checks of the fields would not take), as `tree_map` does not."""
    node = _fields(tree)
    if node is None:
        return next(it)
    kind, keys, children = node
    filled = [_refill(child, it) for child in children]
    if kind != "object":
        return _rebuild(tree, kind, keys, filled)
    new = copy.copy(tree)
    for k, v in zip(keys, filled, strict=True):
        object.__setattr__(new, k, v)
    return new


def distinct_arrays(grads, held=None):
    """No two arrays among the gradients are one array (`x + y` hands both the same cotangent, and so does
    `xs[0] + xs[1]` to two entries of a list), nor one of the arrays in `held` (the cotangent a caller gave `back`,
    passed through by `lambda x, z: (x, z)`): a user scaling one in place (`gx *= 0.5`) would change the other."""
    if held is None and len(set(map(id, grads))) == len(grads) and _CONTAINERS.isdisjoint(map(type, grads)):
        return grads  # (the common case, asked in C: every one a different object, none a container)
    seen = set()
    _shared(held, seen)  # (the caller's arrays: seen before any gradient)
    if not _shared(grads, seen):
        return grads
    seen.clear()
    _shared(held, seen)
    return tuple(_unshared(g, seen) for g in grads)



_CONTAINERS = frozenset((list, tuple, dict, StructGrad, collections.OrderedDict, collections.defaultdict))


def _shared(tree, seen):
    """Does an array appear twice in `tree` (counting those in `seen`)?"""
    if type(tree) is np.ndarray:
        if id(tree) in seen:
            return True
        seen.add(id(tree))
        return False
    if isinstance(tree, (list, tuple)):
        return any(_shared(g, seen) for g in tree)
    if isinstance(tree, dict):
        return any(_shared(g, seen) for g in tree.values())
    return False


def _unshared(tree, seen):
    """`tree` with a copy of each array met a second time."""
    if type(tree) is np.ndarray:
        if id(tree) in seen:
            return tree.copy()
        seen.add(id(tree))
        return tree
    if isinstance(tree, (list, tuple)):
        items = [_unshared(g, seen) for g in tree]
        return type(tree)(*items) if hasattr(type(tree), "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        return type(tree)((k, _unshared(g, seen)) for k, g in tree.items())
    return tree

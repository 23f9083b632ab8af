"""Nested structures of arrays ("trees"): what an update step and a Hessian over several arguments walk.

A tree is a tuple, list, dict, namedtuple, dataclass, plain object (its `__dict__`) or `StructGrad`, nested to any
depth; anything else is a leaf. `tree_map` is the update-step helper users expect from JAX
(`params = tree_map(lambda p, g: p - lr * g, params, grads)`): a gradient of a dict is a dict, of an object a
`StructGrad` keyed by field name, and `None` (no gradient) may stand where the first tree has a whole subtree.
"""
import dataclasses
from typing import Any, Callable

from .structgrad import StructGrad

__all__ = ["tree_map", "leaves", "unflatten"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _fields(x):
    """`(kind, keys, children)` of a tree node, or None for a leaf."""
    if isinstance(x, StructGrad) or type(x) is dict:
        return "dict", list(x), list(x.values())
    if _is_namedtuple(x):
        return "namedtuple", list(x._fields), list(x)
    if isinstance(x, (tuple, list)):
        return type(x).__name__, list(range(len(x))), list(x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = [f.name for f in dataclasses.fields(x)]
        return "object", names, [getattr(x, n) for n in names]
    if hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x) and not hasattr(x, "shape"):
        return "object", list(vars(x)), list(vars(x).values())
    return None


def _child(tree, kind, key):
    """The entry `key` of another tree matched against a node of kind `kind` (None where it has none)."""
    if tree is None:
        return None
    if kind in ("dict",):
        return tree.get(key) if isinstance(tree, dict) else getattr(tree, key, None)
    if kind in ("namedtuple", "object"):
        if isinstance(tree, dict):  # an object's gradient: a StructGrad keyed by field name
            return tree.get(key)
        return getattr(tree, key, None)
    return tree[key]


def _rebuild(node, kind, keys, children):
    if kind == "dict":
        return type(node)(zip(keys, children, strict=True))
    if kind == "namedtuple":
        return type(node)(*children)
    if kind in ("tuple", "list"):
        return type(node)(children)
    if dataclasses.is_dataclass(node):
        return dataclasses.replace(node, **dict(zip(keys, children, strict=True)))
    new = object.__new__(type(node))
    vars(new).update(vars(node))
    vars(new).update(zip(keys, children, strict=True))
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
    mapped = [tree_map(fn, child, *(_child(r, kind, key) for r in rest)) for key, child in zip(keys, children,
                                                                                              strict=True)]
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
    out = tree_map(lambda _: next(it), tree)
    if next(it, it) is not it:
        raise ValueError("unflatten: more values than leaves")
    return out

"""Selections among several arrays by conditions or indices: `np.select(condlist, choicelist, default)` and
`np.choose(a, choices)` (and `a.choose(choices)`). Each entry of the result is one entry of one choice (or of the
default), so that choice's entry takes the cotangent; the conditions and indices are data.
"""
import numpy as np

from ..backends import unbroadcast
from .numpy_fills import serving_other_libraries
from .registry import adjoint


def _like_sequence(template, grads):
    """Cotangents of the items of a list/tuple argument in its container (None when none has one)."""
    if all(g is None for g in grads):
        return None
    if isinstance(template, np.ndarray):  # the choices given as one array: their first axis
        return np.stack([np.zeros(template.shape[1:], dtype=float) if g is None else g for g in grads])
    return type(template)(grads) if type(template) in (list, tuple) else list(grads)


def _real(x):
    return np.asarray(x).dtype.kind in "fc"


def _part(dy, mask, like):
    """The cotangent of the choice `like` from the entries `mask` of the result's cotangent."""
    if not _real(like):
        return None
    return unbroadcast(np.where(mask, dy, 0.0), like)


@adjoint(np.select)
def select(condlist, choicelist, *args, **kwargs):
    y = np.select(condlist, choicelist, *args, **kwargs)
    default = args[0] if args else kwargs.get("default", 0)

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        dy = np.asarray(dy)
        taken = np.zeros(dy.shape, dtype=bool)
        grads = []
        for cond, choice in zip(condlist, choicelist, strict=True):
            mask = np.broadcast_to(cond, dy.shape) & ~taken  # the first true condition picks
            grads.append(_part(dy, mask, choice))
            taken = taken | mask
        ddefault = _part(dy, ~taken, default) if args else None  # (a default given by keyword is a constant)
        return (None, _like_sequence(choicelist, grads), *((ddefault,) if args else ()))
    return y, back


def _index(a, n, mode):
    a = np.asarray(a)
    if mode == "wrap":
        return a % n
    if mode == "clip":
        return np.clip(a, 0, n - 1)
    return a


@adjoint(np.choose)
def choose(a, choices, *args, **kwargs):
    y = np.choose(a, choices, *args, **kwargs)
    mode = args[1] if len(args) > 1 else kwargs.get("mode", "raise")

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        dy = np.asarray(dy)
        index = np.broadcast_to(_index(a, len(choices), mode), dy.shape)
        grads = [_part(dy, index == k, choice) for k, choice in enumerate(choices)]
        return (None, _like_sequence(choices, grads), *(None for _ in args))
    return y, back


@adjoint(np.ndarray.choose)
def choose_method(a, choices, *args, **kwargs):
    """`a.choose(choices)`: np.choose(a, choices)."""
    return choose(a, choices, *args, **kwargs)


def _not_torch(args, kwargs):
    return not any("torch" in type(a).__module__ for a in args)


select.__zygote_foreign__ = serving_other_libraries(select, _not_torch)
choose.__zygote_foreign__ = serving_other_libraries(choose, _not_torch)

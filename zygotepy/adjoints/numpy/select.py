"""Selections by conditions or indices: `np.where(cond, a, b)` and `np.clip(x, lo, hi)` (each entry's cotangent goes to
the operand it came from), `np.select(condlist, choicelist, default)` and `np.choose(a, choices)` (and `a.choose`,
`a.clip`). The conditions and indices are data.
"""
import numpy as np

from ...backends import namespace, namespace_of, unbroadcast
from ..registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic
from .common import _call, arrayed, real_floating
from .fills import serving_other_libraries


# --- where and clip: each entry comes from one operand ----------------------------------------------------------------
@adjoint(np.where)
def where(cond, *ab):
    if not ab:  # np.where(cond): the indices of the true entries
        return np.where(cond), lambda dy: (None,)
    a, b = ab

    def back(dy):
        if dy is None:
            return (None, None, None)
        xp = namespace_of(dy, a, b)
        zero = xp.zeros_like(dy) if xp is not np else 0
        return None, unbroadcast(xp.where(cond, dy, zero), a), unbroadcast(xp.where(cond, zero, dy), b)
    return _call(np.where, cond, a, b), back


@keyword_rule
@adjoint(np.clip)
def clip(x, *bounds, **kwargs):
    """clip(x, lo, hi) = minimum(maximum(x, lo), hi): each entry's cotangent goes to the one of x, lo, hi it equals
    (x at the boundaries); bounds given by keyword (a_min=/a_max=, or NumPy 2's min=/max=) get theirs there."""
    if type(x) in (list, tuple):  # (a list of numbers: the array NumPy clips)
        x = np.asarray(x)
    y = _call(np.clip, x, *bounds, **kwargs)
    names = [k if k in kwargs else k[2:] for k in ("a_min", "a_max")[len(bounds):]]
    lo, hi = (*bounds, *(kwargs.get(k) for k in names))

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *(None for _ in bounds)), kwargs)
        xp = namespace(x)
        zero = 0 if xp is np else xp.zeros_like(dy)
        raised = x < lo if lo is not None else False
        lowered = (_call(np.maximum, x, lo) if lo is not None else x) > hi if hi is not None else False
        raised = raised & ~lowered if hi is not None else raised
        inside = ~(raised | lowered)
        grads = (unbroadcast(xp.where(raised, dy, zero), lo) if lo is not None else None,
                 unbroadcast(xp.where(lowered, dy, zero), hi) if hi is not None else None)
        by_name = dict(zip(names, grads[len(bounds):]))
        return keyword_cotangents((unbroadcast(xp.where(inside, dy, zero), x), *grads[:len(bounds)]), kwargs,
                                  **by_name)
    return y, back


@keyword_rule
@adjoint(np.ndarray.clip)
def clip_method(x, *bounds, **kwargs):
    """`x.clip(lo)`: the method's one positional bound is the lower one (np.clip wants both: it raised)."""
    if len(bounds) == 1 and not kwargs:
        y, back = clip(x, bounds[0], None)
        return y, lambda dy: back(dy)[:2]
    return clip(x, *bounds, **kwargs)
namespace_generic(np.where, np.clip)


# --- select and choose: each entry comes from one of several choices --------------------------------------------------
def _like_sequence(template, grads):
    """Cotangents of the items of a list/tuple argument in its container (None when none has one)."""
    if all(g is None for g in grads):
        return None
    if isinstance(template, np.ndarray):  # the choices given as one array: their first axis
        return np.stack([np.zeros(template.shape[1:], dtype=float) if g is None else g for g in grads])
    return type(template)(grads) if type(template) in (list, tuple) else list(grads)


def _part(dy, mask, like):
    """The cotangent of the choice `like` from the entries `mask` of the result's cotangent."""
    if not real_floating(like):
        return None
    return unbroadcast(np.where(mask, dy, 0.0), like)


@adjoint(np.select)
def select(condlist, choicelist, *args, **kwargs):
    y = np.select(condlist, choicelist, *args, **kwargs)
    default = args[0] if args else kwargs.get("default", 0)

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        dy = arrayed(dy)
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
        dy = arrayed(dy)
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

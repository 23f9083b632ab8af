"""Sets of differentiable values: the operators `|`, `&`, `-`, `^` and their in-place forms, and the methods that
update a set in place.

A set's cotangent is a dict from element to cotangent (sequences.py `set_of`: elements are values, not positions).
Each element of a combination came from one operand: it is given back to the first operand that holds it (of two
equal elements Python keeps one object; which one is a tie no finite difference can tell apart). On anything but
two sets these operators carry no gradient (bits, masks). A method that updates a set holding differentiable values
has no rule but `add`: it is refused rather than run unseen.
"""
import operator

from ...ast_adjoint import mutate as mt
from ...ast_adjoint.dispatch import differentiable
from ...errors import ZygoteError
from ..in_place import updates_in_place
from ..registry import adjoint
from .common import KEYS_VIEW, Items, like

_SETS = (set, frozenset)
SET_LIKE = (set, frozenset, KEYS_VIEW)  # what combines as a set (`d.keys() | s`)
_MAKERS = (list, tuple, set, frozenset, dict, KEYS_VIEW)  # what `set(...)` is followed from


def _routed(a, b, y, dy):
    """The cotangents of `a` and `b` from `dy`, that of the set `y` made of their elements."""
    if not dy:
        return None, None
    da = {e: dy[e] for e in a if e in y and e in dy}
    db = {e: dy[e] for e in b if e in y and e in dy and e not in a}
    return da or None, db or None


def combined(fn, a, b):
    """`fn(a, b)` for two sets or dicts' key views: `(y, back)`. A view's cotangent is the list of its keys' (the keys
    of the view when `fn` ran: the dict may change later)."""
    y = fn(a, b)
    keys_a, keys_b = (list(v) if type(v) is KEYS_VIEW else None for v in (a, b))
    sets = (set(keys_a) if keys_a is not None else a, set(keys_b) if keys_b is not None else b)

    def back(dy):
        return tuple(d if keys is None or d is None else [d.get(k) for k in keys]
                     for d, keys in zip(_routed(*sets, y, dy), (keys_a, keys_b)))
    return y, back


def set_like(a, b):
    """Do `a` and `b` combine as sets (sets, or a dict's keys view with a set or view) under `|`, `&`, `-`, `^`?"""
    return isinstance(a, SET_LIKE) and isinstance(b, SET_LIKE)


def _bits(fn):
    @adjoint(fn)
    def rule(a, b):
        if set_like(a, b):
            return combined(fn, a, b)
        return fn(a, b), lambda dy: (None, None)
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


and_rule, xor_rule = _bits(operator.and_), _bits(operator.xor)


def _made(kind):
    @adjoint(kind, optional=True)
    def rule(items=()):
        """`set(items)` / `frozenset(items)` of a list, tuple, set or dict (its keys): an element given twice is
        stored once, and the first gets its cotangent. A generator expression or `iter(...)` (`Items`) is taken once,
        as a list, whose cotangent goes back to the positions of the items it had left."""
        if type(items) is Items:
            taken = list(items)
            y, listed = rule(taken)

            def items_back(dy):
                grads = listed(dy)[0]
                return (None if grads is None else like(items, list(grads)),)
            return y, items_back
        if not isinstance(items, _MAKERS) and differentiable(items):
            raise ZygoteError(f"zygotepy cannot differentiate {kind.__name__}() of a {type(items).__name__}; make it "
                              f"from a list, a tuple or a set")
        y = kind(items)
        keys = list(items) if type(items) is KEYS_VIEW else None  # (the view's keys now: the dict may change)

        def back(dy):
            if not dy or not isinstance(items, _MAKERS):
                return (None,)
            if isinstance(items, (list, tuple)):
                return (like(items, [dy.get(v) if v not in items[:k] else None for k, v in enumerate(items)]),)
            if keys is not None:
                return (like(items, [dy.get(v) for v in keys]),)
            return (like(items, [dy.get(v) for v in items]),)
        return y, back
    rule.__qualname__ = f"{kind.__name__}_rule"
    return rule


set_rule, frozenset_rule = _made(set), _made(frozenset)


def updated(fn, a, b):
    """`a op= b` on a set `a`: updated in place, as Python does (an alias sees it); the back undoes that."""
    before = set(a)
    entry = mt.journal_whole(a)
    fn(a, b)
    after = set(a)

    def back(dy):
        entry.undo(lambda: set(a))
        return _routed(before, b, after, dy)
    return a, back


def _holds_gradients(s, args):
    return any(differentiable(e) for e in s) or any(differentiable(a) for a in args) or any(
        isinstance(a, _SETS) and any(differentiable(e) for e in a) for a in args)


def _refused(name):
    def rule(s, *args):
        if _holds_gradients(s, args):
            raise ZygoteError(f"zygotepy cannot differentiate set.{name} on a set of differentiable values, which "
                              f"updates it in place; build a new set with an operator (s = s | t, s = s - t)")
        getattr(set, name)(s, *args)

        def back(dr, ds):
            return (ds, *(None for _ in args))
        return None, back
    return rule


for _name in ("discard", "remove", "pop", "clear", "update", "difference_update", "intersection_update",
              "symmetric_difference_update"):
    updates_in_place(set, _name)(_refused(_name))


@updates_in_place(set, "add")
def _set_add(s, value):
    fresh = value not in s
    entry = mt.journal_whole(s)
    s.add(value)

    def back(dr, ds):
        entry.undo(lambda: set(s))
        if not ds or not fresh:
            return (ds, None)
        return ({k: g for k, g in ds.items() if k != value} or None, ds.get(value))
    return None, back

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
from .common import like

_SETS = (set, frozenset)
_MAKERS = (list, tuple, set, frozenset, dict)  # what `set(...)` is followed from


def _routed(a, b, y, dy):
    """The cotangents of `a` and `b` from `dy`, that of the set `y` made of their elements."""
    if not dy:
        return None, None
    da = {e: dy[e] for e in a if e in y and e in dy}
    db = {e: dy[e] for e in b if e in y and e in dy and e not in a}
    return da or None, db or None


def combined(fn, a, b):
    """`fn(a, b)` for two sets: `(y, back)`."""
    y = fn(a, b)
    return y, lambda dy: _routed(a, b, y, dy)


def _bits(fn):
    @adjoint(fn)
    def rule(a, b):
        if isinstance(a, _SETS) and isinstance(b, _SETS):
            return combined(fn, a, b)
        return fn(a, b), lambda dy: (None, None)
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


and_rule, xor_rule = _bits(operator.and_), _bits(operator.xor)


def _made(kind):
    @adjoint(kind, optional=True)
    def rule(items=()):
        """`set(items)` / `frozenset(items)` of a list, tuple, set or dict (its keys): an element given twice is
        stored once, and the first gets its cotangent."""
        if not isinstance(items, _MAKERS) and differentiable(items):
            raise ZygoteError(f"zygotepy cannot differentiate {kind.__name__}() of a {type(items).__name__}; make it "
                              f"from a list, a tuple or a set")
        y = kind(items)

        def back(dy):
            if not dy or not isinstance(items, _MAKERS):
                return (None,)
            if isinstance(items, (list, tuple)):
                return (like(items, [dy.get(v) if v not in items[:k] else None for k, v in enumerate(items)]),)
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

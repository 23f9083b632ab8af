"""The standard library's C routines that reorder a list in place (`heapq.heappush/heappop/heapify/heappushpop/
heapreplace`, `bisect.insort`): differentiated as the permutation they make of the list's items and the items they
are given. The permutation is found by running the same routine on stand-ins that compare as the items do (one
`__lt__` each way, as the routine asks it), so it takes the very same steps, ties included; the list itself is then
reordered by the routine as written. The back routes each cotangent of the list afterwards (and of a popped item) to
the item it came from. A heapq-based Dijkstra whose edge weights carry gradients, a priority queue of floats, a
sorted insertion, all run.
"""
import bisect
import heapq

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt

REORDERS = frozenset((heapq.heappush, heapq.heappop, heapq.heapify, heapq.heappushpop, heapq.heapreplace, bisect.insort,
                      bisect.insort_left, bisect.insort_right))


class _StandIn:
    """Item `i` of `values`, compared as that item is (`key`: insort's key function, applied to it)."""
    __slots__ = ("values", "i", "key")

    def __init__(self, values, i, key):
        self.values, self.i, self.key = values, i, key

    def __lt__(self, other):
        return self.key(self.values[self.i]) < self.key(other.values[other.i])


def reorder(fn, args, kwargs):
    """`fn(lst, *items, **kwargs)` as `mutcall` gives it: `(result, lst, *items)`, whose back takes the cotangents of the
    result, of the list afterwards and of the items, and gives those of the list before and of the items."""
    lst, items = args[0], args[1:]
    values = [*lst, *items]
    key = kwargs.get("key") or (lambda v: v)
    stand = [_StandIn(values, i, key) for i in range(len(values))]
    shadow = stand[:len(lst)]
    out = fn(shadow, *stand[len(lst):], **{k: v for k, v in kwargs.items() if k != "key"},
             **({"key": lambda s: s} if "key" in kwargs else {}))
    popped = out.i if isinstance(out, _StandIn) else None
    order = [s.i for s in shadow]  # the list afterwards: which value went where
    entry = mt.journal_whole(lst)
    result = fn(lst, *items, **kwargs)

    def back(dy):
        if entry is not None:
            entry.undo(lambda: mt.snapshot(lst))
        grads = [None] * len(values)
        if dy is not None:
            after = dy[1] if dy[1] is not None else [None] * len(order)
            for pos, i in enumerate(order):
                grads[i] = rt.acc(grads[i], after[pos])
            if popped is not None:
                grads[popped] = rt.acc(grads[popped], dy[0])
        before = list(grads[:len(lst)]) if any(g is not None for g in grads[:len(lst)]) else None
        rest = [rt.acc(g, d) for g, d in zip(grads[len(lst):], dy[2:] if dy is not None else [None] * len(items))]
        return (None, before, *rest, *((None,) * len(kwargs)))
    return (result, lst, *items, *kwargs.values()), back

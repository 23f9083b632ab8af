"""functools.reduce and the itertools a numeric code folds with, differentiated as the Python they mean.

Each C function gets a twin: a few lines of plain Python computing the same result (as a list where the C function
returns an iterator: an iterator has no place for a cotangent to go back through). The rule differentiates the twin
with `J`, so gradients reach the items and whatever a folding function closes over through the ordinary transform;
a folding function that is a C function with a rule (`operator.mul`) is used through that rule.
"""
import functools
import itertools
import operator

from ..ast_adjoint.dispatch import J
from .registry import adjoint, keyword_cotangents, keyword_rule
from .structures.common import like


def reduce_twin(fn, seq, *initial):
    items = list(seq)
    if initial:
        acc = initial[0]
    elif items:
        acc = items[0]
        items = items[1:]
    else:
        raise TypeError("reduce() of empty iterable with no initial value")
    for item in items:
        acc = fn(acc, item)
    return acc


def accumulate_twin(seq, fn):
    out = []
    for item in seq:
        if out:
            item = fn(out[-1], item)
        out.append(item)
    return out


def chain_twin(*seqs):
    return [item for seq in seqs for item in seq]


def chain_from_iterable_twin(seqs):
    return [item for seq in seqs for item in seq]


def starmap_twin(fn, seq):
    return [fn(*items) for items in seq]


def product_twin(*seqs):
    rows = [()]
    for seq in seqs:
        rows = [row + (item,) for row in rows for item in list(seq)]
    return rows


def _through(twin, *args):
    """`twin(*args)` and a back giving the cotangents of `args` (the twin closes over nothing of its own)."""
    y, pb = J(twin, *args)
    return y, lambda dy: pb(dy)[1:]


@adjoint(functools.reduce)
def reduce_(fn, seq, *initial):
    return _through(reduce_twin, fn, seq, *initial)


@keyword_rule
@adjoint(itertools.accumulate, optional=True)
def accumulate(seq, fn=None, *, initial=None):
    """`initial=` is the first item of the running fold, and its cotangent that item's."""
    given = {} if initial is None else {"initial": initial}
    y, back = _through(accumulate_twin, [initial, *seq] if given else seq, operator.add if fn is None else fn)

    def accumulate_back(dy):
        ditems, dfn = back(dy)
        dinitial = None
        if given and ditems is not None:
            dinitial, *rest = ditems
            ditems = like(seq, rest) if isinstance(seq, (list, tuple)) else rest
        return keyword_cotangents((ditems,) if fn is None else (ditems, dfn), given, initial=dinitial)
    return y, accumulate_back


@adjoint(itertools.chain)
def chain(*seqs):
    return _through(chain_twin, *seqs)


@adjoint(itertools.chain.from_iterable)
def chain_from_iterable(seqs):
    return _through(chain_from_iterable_twin, seqs)


@adjoint(itertools.starmap)
def starmap(fn, seq):
    return _through(starmap_twin, fn, seq)


@adjoint(itertools.product)
def product(*seqs, repeat=1):
    """`product(xs, repeat=2)` is `product(xs, xs)`: each copy's cotangent is added into the sequence's own."""
    y, back = _through(product_twin, *(seqs * repeat))

    def product_back(dy):
        grads = back(dy)
        return tuple(functools.reduce(_add_items, grads[k::len(seqs)]) for k in range(len(seqs)))
    return y, product_back


def _add_items(a, b):
    """Two cotangents of one sequence (lists or tuples of item cotangents, or None), added item by item."""
    if a is None or b is None:
        return b if a is None else a
    return like(a, [q if p is None else p if q is None else p + q for p, q in zip(a, b, strict=True)])

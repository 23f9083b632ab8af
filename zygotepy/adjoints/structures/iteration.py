"""Iteration: what a `for` loop walks (`iterate`: a user class's `__iter__` or `__getitem__` differentiated, an
array's rows, a dict's keys), `iter` and `next` (the `Items` iterator, which knows how far it has got), `enumerate` and
`zip`. An iterator's cotangent is the list of its items' cotangents, which `iter`'s rule maps back to its sequence."""
import itertools
import operator
import types

import numpy as np

from ...ast_adjoint import runtime as rt
from ...ast_adjoint.dispatch import J, differentiable
from ...ast_adjoint.guards_runtime import carries_gradient
from ...backends import is_array_type
from ...errors import ZygoteError
from ...structgrad import StructGrad
from ..registry import adjoint
from ...ast_adjoint.call_checks import call_site
from .common import Items, like
from ..numpy.iterators import nditer_refused
from .dicts import keys_read


def python_iter(value):
    """The `__iter__` of a user class (Python code, differentiated), or for a class that is a sequence through its
    `__getitem__` alone (Python's old iteration protocol) `_by_index`; else None."""
    cls = type(value)
    if is_array_type(cls) or cls is Items:
        return None
    method = getattr(cls, "__iter__", None)
    if isinstance(method, types.FunctionType):
        return method
    if method is None and isinstance(getattr(cls, "__getitem__", None), types.FunctionType):
        return _by_index
    return None


def _by_index(value):
    """Python's iteration of an object by `obj[0], obj[1], ...` until IndexError, each item differentiated."""
    items, pbs, i = [], [], 0
    while True:
        try:
            item, pb = J(type(value).__getitem__, value, i)
        except IndexError:
            break
        items.append(item)
        pbs.append(pb)
        i += 1
    return items, pbs


@adjoint(rt.iterate)
def iterate(value):
    """What a `for` loop walks. A user class's `__iter__` is differentiated (the object's cotangent comes back through
    it); another library's array (`for row in t`, a torch tensor) gets its rows' cotangents stacked; an iterator's
    cotangent is the list of its items' (which `iter`'s rule maps back to its sequence)."""
    if type(value) is np.nditer:  # (its items are views into its buffer, gone once it is used up)
        raise nditer_refused(call_site())
    method = python_iter(value)
    if method is _by_index:
        items, pbs = _by_index(value)

        def indexed_back(dy):
            total = None
            for g, pb in zip(dy or (), pbs):
                if g is not None:
                    total = rt.acc(total, pb(g)[1])
            return (total,)
        return items, indexed_back
    if method is not None:
        it, pb = J(method, value)
        if it is value:  # its own iterator (was a RecursionError): its __next__ updates its state in place
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate iterating a "
                              f"{type(value).__name__}, which is its own iterator (__next__ updates its state); give "
                              f"the class an __iter__ that returns iter(a list of its items)")
        items, inner = iterate(it)

        def back(dy):
            dit = None if dy is None else inner(dy)[0]
            return (None if dit is None else pb(dit)[1],)
        return items, back
    items = rt.iterate(value)
    if isinstance(value, dict):  # its keys: they carry no gradient back into the dict (was a crash: a list for it)
        return items, lambda dy: (None if dy is None else keys_read(items, dy),)
    if isinstance(value, (set, frozenset, Items)) or items is not value and hasattr(value, "shape"):
        # a set's cotangent is keyed by its elements; an array's rows are stacked
        return items, lambda dy: (like(value, list(dy)) if dy is not None else None,)
    return items, lambda dy: (dy,)


def make_items(items, watch):
    """`Items(items)`, as a function with a rule: an outer level of nesting transforms `iter_` below, and the level
    above that has no twin for a class's constructor (a third derivative through a generator expression, which the
    lowering hands out as `iter(list)`, raised MissingAdjoint for Items). `watch`: the sequence's `rt.watch_lazy`."""
    return Items(items, watch)


@adjoint(make_items)
def _make_items_rule(items, watch):
    return make_items(items, watch), lambda dy: (_item_cotangents(dy), None)


@adjoint(rt.kept_iterator)
def kept_iterator(items, *sources):
    """The list the rule of zip, map, filter, enumerate or reversed made, as the iterator Python's is: taken once,
    and reading `sources` as it goes (an item taken after an update of one in place is refused: see Items)."""
    listed = type(items) is list
    fresh = type(items) is Items and items.at == 0  # iter(...)'s: watching its sequence, and now `sources` too
    read = (*sources, *_captured(sources))
    watch = rt.watch_lazy(len(read), *read) if listed or fresh else None
    if fresh and items.watch is not None:
        watch.ids += items.watch.ids
        watch.stored = {**items.watch.stored, **watch.stored}
    it = make_items(items, watch) if listed else Items(items.items, watch) if fresh else items
    return it, lambda dy: (_item_cotangents(dy) if listed else dy, *(None for _ in sources))


def _captured(sources):
    """The containers and arrays the functions among `sources` capture (`m = map(scale, xs)`, `scale` reading a dict
    of the caller's): Python's iterator calls them as it goes, so they are read as it goes too."""
    return [c.cell_contents for s in sources if type(s) is types.FunctionType and s.__closure__
            for c in s.__closure__ if _holds_container(c)]


def _holds_container(cell):
    try:
        return isinstance(cell.cell_contents, (list, dict, set, np.ndarray))
    except ValueError:  # (an empty cell)
        return False


@adjoint(iter)
def iter_(*args):
    """`iter(seq)`: its iterator's cotangent is the list of its items' (see `iterate` and `next_`)."""
    if len(args) != 1:
        if any(differentiable(a) for a in args) or _reads_gradient(args[0]):
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate iter(callable, sentinel) "
                              f"whose callable reads (or whose sentinel is) a value carrying a gradient: Python calls it "
                              f"as the items are taken, where zygotepy sees none of it; write a while loop calling it")
        return iter(*args), lambda dy: (None,) * len(args)
    seq = args[0]
    method = python_iter(seq)
    if method is _by_index:
        items, back = iterate(seq)
        return make_items(items, None), lambda dy: back(_item_cotangents(dy))
    if method is not None:
        it, pb = J(method, seq)
        return it, lambda dy: (None if dy is None else pb(dy)[1],)
    items = list(seq)
    # (`_item_cotangents(dy)`, not `dy["items"]`: a third level of nesting has no twin for an operator on a StructGrad)
    if isinstance(seq, dict):  # its keys
        return make_items(items, None), lambda dy: (
            None if _item_cotangents(dy) is None else keys_read(items, _item_cotangents(dy)),)
    # (Python's iterator reads the items as they are taken: an update of `seq` before then is refused, see Items)
    watch = rt.watch_lazy(1, seq) if isinstance(seq, (list, np.ndarray)) else None
    return make_items(items, watch), lambda dy: (
        None if _item_cotangents(dy) is None else like(seq, _item_cotangents(dy)),)


def _reads_gradient(fn):
    """May the callable of `iter(callable, sentinel)` return a value carrying a gradient? Its closure, defaults, object
    or partial's arguments (`carries_gradient`), or the object a built-in method is bound to (`it.__next__`,
    `vals.pop`)."""
    owner = getattr(fn, "__self__", None)
    return carries_gradient(fn) or not isinstance(owner, types.ModuleType) and differentiable(owner)


def _item_cotangents(dy):
    """The list of item cotangents in an `Items` iterator's cotangent, or None. A call that unpacked the iterator
    (`f(*(g(a) for a in xs))`) gives one cotangent per item, in a tuple."""
    if dy is None or type(dy) in (tuple, list):
        return None if dy is None else list(dy)
    return dy.get("items")


@adjoint(next)
def next_(it, *default):
    """`next(it)`: on an iterator made by `iter` (`Items`), its item's cotangent goes to the item's position; an
    exhausted one returns `default`, which takes the cotangent."""
    if type(it) is list:
        raise ZygoteError("zygotepy makes the iterators of zip, map, filter, enumerate, reversed and itertools lists, "
                          "so next() cannot take their first item; index the list instead (list(zip(a, b))[0]), or "
                          "call iter() on it first")
    at = it.at if type(it) is Items else None
    y = next(it, *default)
    if at is None or it.at == at:
        if at is None and differentiable(y):
            raise ZygoteError(f"zygotepy cannot differentiate next() on a {type(it).__name__}: it cannot tell which "
                              f"item came out; iterate a list (iter(list(...))) or use a for loop")
        return y, lambda dy: (None, *(dy for _ in default))
    n = len(it.items)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in default))
        return (StructGrad({"items": [None] * at + [dy] + [None] * (n - at - 1)}), *(None for _ in default))
    return y, back


@adjoint(enumerate, optional=True)
def enumerate_(seq, start=0):
    def back(dy):
        if dy is None:
            return (None, None)
        return (like(seq, [d[1] if d is not None else None for d in dy]), None)
    return list(enumerate(seq, start)), back


class _Taken:
    """An `Items` argument of zip, noting the position of each item it gives: zip may take them in any order
    (`zip(it, it)`, the grouper idiom), and may take one more item of it than it makes rows."""

    def __init__(self, items):
        self.items, self.taken = items, []

    def __iter__(self):
        return self

    def __next__(self):
        at = self.items.at
        item = next(self.items)
        self.taken.append(at)
        return item


def refuse_endless(name, seqs):
    """The rules of map and filter make lists: refused where every sequence they walk is endless
    (`itertools.count()`, `cycle`, `repeat` without a number of times), which no list can hold."""
    if seqs and all(type(s) in (itertools.count, itertools.cycle) or type(s) is itertools.repeat
                    and operator.length_hint(s, -1) < 0 for s in seqs):
        raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate {name}() of an endless "
                          f"iterator ({type(seqs[0]).__name__}): it takes the items of {name} when it is called; "
                          f"bound it (itertools.islice, or zip with a list), or loop over the endless iterator itself")


@adjoint(zip)
def zip_(*seqs, strict=False):
    walked = [_Taken(s) if type(s) is Items else s for s in seqs]

    def taken_back(s, dy):
        """The cotangent of the `Items` s: its items' at the positions they were taken from, by any argument that
        is s (`zip(it, it)`); given once, to the first."""
        items = [None] * len(s.items)
        for k, (t, w) in enumerate(zip(seqs, walked)):
            if t is s:
                for at, d in zip(w.taken, dy):
                    items[at] = None if d is None else d[k]
        return None if all(g is None for g in items) else StructGrad({"items": items})

    def back(dy):
        if dy is None:
            return (None,) * len(seqs)
        # (one without a length, `itertools.count()`: the items zip took, the rows; nothing of what it has left)
        return tuple(like(s, [d[k] if d is not None else None for d in dy]
                          + [None] * (len(s) - len(dy) if hasattr(s, "__len__") else 0)) if type(w) is not _Taken
                     else None if any(t is s for t in seqs[:k]) else taken_back(s, dy)
                     for k, (s, w) in enumerate(zip(seqs, walked)))
    # (no keyword unless it matters: an outer level of nested differentiation transforms this rule, and an inner call
    # with keywords is what it refuses)
    return list(zip(*walked, strict=True) if strict else zip(*walked)), back

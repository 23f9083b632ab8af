"""The run-time watch of a loop over a lazy iterator (lower/lazy.py): the objects it walks must not be updated in
place, nor the lists `enumerate` or `zip` walk change their length, while the loop runs. Part of the runtime helpers
generated code calls (re-exported by runtime.py, which generated code and the rules reach as `rt.<name>`).
"""
import collections
import itertools
import operator

import numpy as np

from ..errors import UnsupportedSyntax
from ..runtime.context import current
from .mutate import ATOMIC


class LazyWatch:
    """The objects a loop over a lazy iterator walks (`reversed(y)`, `map(f, y)`, a generator over `y`), and how far
    the log of updates in place had got; and the lists `enumerate` or `zip` walk, with their lengths. zygotepy takes
    such an iterator's items when the loop begins (the rules of `reversed`, `map` and `filter` make lists; a generator
    expression is lowered as one), Python as the loop reaches them: an update of one of those objects during the loop,
    in a helper whose code the lowering of the loop cannot see, would leave the items after it stale, and a list whose
    length changes would give another number of iterations. `lazy_unchanged` refuses both before the next item. And
    the dicts and sets the loop walks (`for k, v in d.items()`), whose size Python's iterator checks at each item it
    gives, raising RuntimeError, where zygotepy's list of them, taken when the loop begins, would go on. `slots`: for
    a list or tuple walked by `reversed(y)` or `iter(y)` alone, (it, its items when the loop began) (else None): those
    iterators give the objects its slots hold, so an update logged for it that left every slot holding the same object
    (an update of an item's field, which the links log for the list holding it) leaves zygotepy's items right."""
    __slots__ = ("ids", "idle", "seen", "sized", "slots", "stored", "views")

    def __init__(self, ids, seen, sized, stored, views=(), slots=()):
        self.ids, self.seen, self.sized, self.stored, self.views = ids, seen, sized, stored, views
        self.slots = slots
        # (nothing to check at each iteration: a loop over a list where the lowering watches for a dict or a set)
        self.idle = not any(ids) and all(v is None for v in sized) and all(v is None for v in views)


def watch_lazy(lazy, *sources):
    """Before a loop: what `lazy_unchanged` checks at each iteration. The first `lazy` of `sources` are what lazy
    iterators walk (watched for any update in place: by their ids, and their base's for a view), the rest lists whose
    length is watched. `lazy` may be a triple instead: (that, how many lists (or dicts) enumerate or zip walk, how many
    dicts and sets the loop walks, last), or a quadruple of those and which of the lazy ones `reversed` or `iter` alone
    walks (`LazyWatch.slots`)."""
    by_reference = ()
    if type(lazy) is tuple:
        lazy, walked, _, *rest = lazy
        by_reference = rest[0] if rest else ()
    else:
        walked = len(sources) - lazy
    ctx = current()
    ids = tuple(() if isinstance(s, ATOMIC) else
                (id(s), id(s.base)) if isinstance(s, np.ndarray) and s.base is not None else (id(s),)
                for s in sources[:lazy])
    return LazyWatch(ids, len(ctx.log), tuple((s, len(s)) if isinstance(s, (list, dict)) else None
                                              for s in sources[lazy:lazy + walked]), _stored(ctx, ids),
                     tuple(map(_view, sources[lazy + walked:])),
                     tuple((s, tuple(s)) if ref and type(s) in (list, tuple) else None
                           for s, ref in zip(sources[:lazy], by_reference)))


_NO_KEY = object()


def _view(walked):
    """What a loop over a dict (its keys, values or items) or a set keeps of it: (it, its size, a dict's last key), as
    Python's iterator keeps its size; None for anything else (a list walked directly is walked as it is now)."""
    if isinstance(walked, dict):
        return walked, len(walked), next(reversed(walked)) if walked else _NO_KEY
    return (walked, len(walked), _NO_KEY) if isinstance(walked, set) else None


def _stored(ctx, ids):
    """{id: (its ItemRun, the stores it had made)} of the watched arrays whose stores a loop's fast path makes without
    a log entry each (an enclosing loop's run; a run made after the watch, for the watched loop itself, starts at 0)."""
    runs = ctx.item_arrays
    return {i: (runs[i], _stores(runs[i])) for group in ids for i in group if i in runs} if runs else {}


def _stores(run):
    """How many item stores an `ItemRun` has made (once its loop is over, its count: its record may be the whole
    array, `indices` then Ellipsis)."""
    return run.count if run.indices is Ellipsis else len(run.indices)


def lazy_unchanged(watch, where):
    """At the start of an iteration of a loop `watch_lazy` watches: refuse when an object a lazy iterator walks was
    updated in place since the loop began, or a list it walks by `enumerate` or `zip` changed its length (`where`:
    file, line, the names of the objects, in the order `watch_lazy` had them); raise Python's RuntimeError where a dict
    or a set the loop walks changed its size. After a loop left by no `break` (`where` has a fourth part, saying which
    of those dicts and sets Python's iterator is asked for one more item then), those alone."""
    if watch.idle:
        return
    if len(where) > 3:
        _views_unchanged(watch, where, where[3])
        return
    _views_unchanged(watch, where, (True,) * len(watch.views))
    changed = lazy_changed(watch)
    if changed is not None:
        name = where[2][changed]
        raise UnsupportedSyntax(
            f"a loop over a lazy iterator of {name!r} whose body updates {name!r} in place through a call", where[0],
            where[1], hint="zygotepy takes the iterator's items when the loop begins, Python as the loop reaches them: "
            "loop by index, or over list(...) of the iterator for the items of the start")
    for k, held in enumerate(watch.sized):
        if held is not None and len(held[0]) != held[1]:
            name = where[2][len(watch.ids) + k]
            raise UnsupportedSyntax(
                f"a loop over enumerate() or zip() of {name!r} whose body changes the length of {name!r}", where[0],
                where[1], hint="zygotepy takes their items when the loop begins, so the number of iterations is "
                "fixed then; loop over the list itself, or by index with a while loop")


def _views_unchanged(watch, where, asked):
    """Raise as Python's iterator of a dict or a set does, asked for an item after the loop's body changed its size
    (`asked`: which of the watched ones it is asked); refuse a dict whose keys were replaced at the same size (the
    last key differs), which Python's iterator walks as they are then, or refuses with RuntimeError too."""
    names = where[2][len(watch.ids) + len(watch.sized):]
    for view, name, ask in zip(watch.views, names, asked):
        if view is None or not ask:
            continue
        walked, size, last = view
        if len(walked) != size:
            raise RuntimeError("Set changed size during iteration" if isinstance(walked, set) else
                               "OrderedDict mutated during iteration" if isinstance(walked, collections.OrderedDict)
                               else "dictionary changed size during iteration")
        if last is not _NO_KEY and next(reversed(walked)) is not last and next(reversed(walked)) != last:
            raise UnsupportedSyntax(
                f"a loop over the dict {name!r} whose body replaces its keys", where[0], where[1],
                hint="Python's iterator walks the keys as they are then (or raises RuntimeError), zygotepy those of "
                "the start: loop over list(...) of its items")


def lazy_changed(watch):
    """The position among its lazy sources of one updated in place since `watch` last looked, or None: by the log, or
    by the item stores of a loop's fast path into one (`x[2] += v` where the loop walks `iter(x[1:])`), which the log
    hears of only when that loop is over."""
    ctx = current()
    log = ctx.log
    if len(log) != watch.seen:
        new, watch.seen = log[watch.seen:], len(log)
        for k, ids in enumerate(watch.ids):
            if any(i in new for i in ids) and not _same_slots(watch, k):
                return k
    runs = ctx.item_arrays
    if runs:
        for k, ids in enumerate(watch.ids):
            for i in ids:
                run = runs.get(i)
                if run is not None:
                    base = watch.stored.get(i)
                    if _stores(run) > (base[1] if base is not None and base[0] is run else 0):
                        return k
    return None


def _same_slots(watch, k):
    """Does the list the watch's `k`th lazy source is, walked by `reversed` or `iter` alone, hold the very objects it
    held when the loop began, slot by slot (`LazyWatch.slots`)?"""
    kept = watch.slots[k] if k < len(watch.slots) else None
    if kept is None:
        return False
    source, held = kept
    return len(source) == len(held) and all(a is b for a, b in zip(source, held))


def bounded_generator(iterable, file, line):
    """What a generator expression walks first: its items are all computed when it is made (it is lowered as a list),
    so an endless iterator (`next(v * x for v in itertools.count())`) would never give one; refused instead."""
    if type(iterable) in (itertools.count, itertools.cycle) or type(iterable) is itertools.repeat \
            and operator.length_hint(iterable, -1) < 0:
        raise UnsupportedSyntax(f"a generator expression over an endless iterator ({type(iterable).__name__})", file,
                                line, "zygotepy computes a generator's items when it is made; bound it "
                                "(itertools.islice), or write the loop itself")
    return iterable


def kept_iterator(it, *sources):
    """`pairs = zip(a, b)` (`map`, `filter`, `enumerate`, `reversed`, a generator expression, lowered as a list): the
    iterator a name keeps. Its rule (adjoints/structures/iteration.py) turns the list the call's rule made into an
    iterator that is used up as Python's is, and that refuses an item taken after one of `sources` was updated in
    place (Python's would read the new value)."""
    return iter(it)

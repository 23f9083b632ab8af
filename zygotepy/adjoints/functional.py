"""functools.reduce, the itertools a numeric code folds with, and `operator.itemgetter` / `attrgetter` /
`methodcaller`, differentiated as the Python they mean.

Each C function gets a twin: a few lines of plain Python computing the same result (as a list where the C function
returns an iterator: an iterator has no place for a cotangent to go back through). The rule differentiates the twin
with `J`, so gradients reach the items and whatever a folding function closes over through the ordinary transform;
a folding function that is a C function with a rule (`operator.mul`) is used through that rule.
"""
import functools
import heapq
import itertools
import numbers
import operator
import types

from ..ast_adjoint.dispatch import J
from ..errors import ZygoteError
from .in_place import updating_names
from .registry import adjoint, keyword_cotangents, keyword_rule
from .scalar import IN_PLACE
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


def product_twin(repeat, *seqs):
    """Each argument taken once, up front, as `itertools.product` does (a generator or `iter(...)` is used up by its
    first walk), then walked once per row it extends; `repeat` copies of them."""
    pools = [list(seq) for seq in seqs]
    rows = [()]
    for _ in range(repeat):
        for pool in pools:
            rows = [row + (item,) for row in rows for item in pool]
    return rows


def itemgetter_twin(keys, obj):
    return obj[keys[0]] if len(keys) == 1 else tuple(obj[k] for k in keys)


def attribute_path(obj, name):
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def attrgetter_twin(names, obj):
    return attribute_path(obj, names[0]) if len(names) == 1 else tuple(attribute_path(obj, n) for n in names)


def methodcaller_twin(name, args, kwargs, obj):
    return getattr(obj, name)(*args, **kwargs)


def _through(twin, *args):
    """`twin(*args)` and a back giving the cotangents of `args` (the twin closes over nothing of its own)."""
    y, pb = J(twin, *args)
    return y, lambda dy: pb(dy)[1:]


def _folding(fn, first):
    """`reduce(operator.iadd, [y, z])` updates its first item `y` in place, which no code of the caller's shows (a
    silently wrong gradient for a later read of `y`): refused where that item is a list or an array; on numbers the
    operator in place is the plain one."""
    plain = IN_PLACE.get(fn)
    if plain is None or type(first) in (int, float, complex, bool) or isinstance(first, numbers.Number):
        return plain or fn
    raise ZygoteError(f"zygotepy cannot differentiate a fold with operator.{fn.__name__}, which updates the first "
                      f"item ({type(first).__name__}) in place; fold with operator.{plain.__name__} (or sum(...))")


@adjoint(functools.reduce)
def reduce_(fn, seq, *initial):
    if type(fn) is types.BuiltinFunctionType and fn in IN_PLACE:
        seq = list(seq)
        fn = _folding(fn, initial[0] if initial else seq[0] if seq else None)
    return _through(reduce_twin, fn, seq, *initial)


@keyword_rule
@adjoint(itertools.accumulate, optional=True)
def accumulate(seq, func=None, *, initial=None):
    """`initial=` is the first item of the running fold, and its cotangent that item's. (The parameter names are
    Python's, so that `func=` by keyword reaches it.)"""
    given = {} if initial is None else {"initial": initial}
    if type(func) is types.BuiltinFunctionType and func in IN_PLACE:
        seq = list(seq)
        func = _folding(func, initial if given else seq[0] if seq else None)
    y, back = _through(accumulate_twin, [initial, *seq] if given else seq, operator.add if func is None else func)

    def accumulate_back(dy):
        ditems, dfn = back(dy)
        dinitial = None
        if given and ditems is not None:
            dinitial, *rest = ditems
            ditems = like(seq, rest) if isinstance(seq, (list, tuple)) or hasattr(seq, "shape") else rest
        return keyword_cotangents((ditems,) if func is None else (ditems, dfn), given, initial=dinitial)
    return y, accumulate_back


def nsmallest_twin(n, iterable, key):
    return sorted(iterable, key=key)[:n]


def nlargest_twin(n, iterable, key):
    return sorted(iterable, key=key, reverse=True)[:n]


def _selection(twin):
    """`heapq.nsmallest`/`nlargest(n, iterable, key=None)`: Python documents them as `sorted(...)[:n]`, which is
    what is differentiated (their C helpers reorder a list zygotepy never sees: the gradient went to the first n
    items)."""
    def rule(n, iterable, *args, **kwargs):
        key = args[0] if args else kwargs.get("key")
        y, back = _through(twin, n, iterable, key)

        def selection_back(dy):
            dn, ditems, dkey = back(dy)
            return keyword_cotangents((dn, ditems, *((dkey,) if args else ())), kwargs, key=dkey)
        return y, selection_back
    rule.__qualname__ = f"{twin.__name__[:-5]}_rule"
    return keyword_rule(rule)


adjoint(heapq.nsmallest)(_selection(nsmallest_twin))
adjoint(heapq.nlargest)(_selection(nlargest_twin))


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
    """`product(xs, repeat=2)` is `product(xs, xs)`: the twin walks each sequence's items `repeat` times, and the
    transform adds up the cotangents of each item's uses."""
    y, back = _through(product_twin, repeat, *seqs)
    return y, lambda dy: back(dy)[1:]


@adjoint(operator.itemgetter.__call__)
def _itemgetter_call(getter, obj):
    """A call of an `itemgetter(...)` (its keys are its pickling arguments): the items through their rules."""
    y, back = _through(itemgetter_twin, getter.__reduce__()[1], obj)
    return y, lambda dy: (None, back(dy)[1])


@adjoint(operator.attrgetter.__call__)
def _attrgetter_call(getter, obj):
    y, back = _through(attrgetter_twin, getter.__reduce__()[1], obj)
    return y, lambda dy: (None, back(dy)[1])


@adjoint(operator.methodcaller.__call__)
def _methodcaller_call(caller, obj):
    """A call of a `methodcaller(name, *args, **kwargs)`: the method, called as code would call it. One that updates
    its object in place (`methodcaller("append", v)`) is refused: no code of the caller's shows the update."""
    made, given = caller.__reduce__()  # (methodcaller, (name, *args)), or (partial(methodcaller, name, **kw), args)
    if isinstance(made, functools.partial):
        name, args, kwargs = made.args[0], given, made.keywords
    else:
        name, args, kwargs = given[0], given[1:], {}
    if name in updating_names():
        raise ZygoteError(f"zygotepy cannot differentiate operator.methodcaller({name!r}, ...): the method may update "
                          f"its object in place, which the code calling it does not show; call obj.{name}(...) in "
                          f"the function itself")
    y, back = _through(methodcaller_twin, name, args, kwargs, obj)
    return y, lambda dy: (None, back(dy)[3])


@keyword_rule
@adjoint(functools.update_wrapper, optional=True)
def update_wrapper(wrapper, wrapped=None, *rest, **kwargs):
    """`functools.update_wrapper(wrapper, wrapped)` (what `@functools.wraps(f)` calls): the wrapper itself, its name
    and docstring copied from `wrapped`; its cotangent is the wrapper's (metadata carries none)."""
    given = (wrapped,) if "wrapped" not in kwargs else ()
    own = _zygote_marks(wrapper)
    y = functools.update_wrapper(wrapper, *given, *rest, **kwargs)
    if hasattr(y, "__dict__"):  # (what zygotepy noted of the wrapped function, `__zygote_made__`, is not the wrapper's)
        for k in _zygote_marks(y):
            del y.__dict__[k]
        y.__dict__.update(own)
    return y, lambda dy: keyword_cotangents((dy, *(None for _ in given), *(None for _ in rest)), kwargs)


def _zygote_marks(fn):
    return {k: v for k, v in getattr(fn, "__dict__", {}).items() if k.startswith("__zygote_")}

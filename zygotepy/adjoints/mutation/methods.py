"""Rules for the methods of lists, dicts and arrays that update their object in place (`lst.append(v)`, ...), each
declared where it is defined (adjoints/in_place.py: the lowering reads the declared names).

Each takes the object and the method's arguments and returns `(result, back)`, where `back(d_result, d_object_after)`
undoes the update (mutate.Journal) and returns `(d_object_before, *d_arguments)`. calls.py's `mutcall` rule dispatches
to them.
"""
import collections
import random

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...ast_adjoint.dispatch import differentiable
from ...errors import ForwardModeError, ZygoteError
from ..in_place import METHODS, UNDECLARED, updates_in_place, updates_without_rule
from ..structures.common import like
from ..structures.dicts import key_cotangent


def _zeros_like(x):
    return np.zeros(np.shape(x), dtype=x.dtype if getattr(x, "dtype", None) is not None and x.dtype.kind in "fc"
                    else np.float64)


def _dict_without(dy, key):
    return None if dy is None else {k: v for k, v in dy.items() if k != key} or None


# --- methods that mutate: (result, back(d_result, d_object_after) -> (d_object_before, *d_args)) -----------------------

def _refuse_holding_itself(x):
    """`lst.append(lst)`: a cotangent of the list would hold itself, at every depth (the backward crashed)."""
    where = call_site()
    raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate a {type(x).__name__} put into "
                      f"itself (lst.append(lst)): its cotangent would hold itself; keep the items in a list of their own")


@updates_in_place(list, "append")
def _list_append(x, v):
    if v is x:
        _refuse_holding_itself(x)
    n = len(x)
    x.append(v)
    # the state kept is the tail from position n (empty before): no copy of the list per append
    entry = mt.Entry(lambda tail: x.__setitem__(slice(n, None), tail), [], x)

    def back(dr, dx):
        entry.undo(lambda: x[n:])
        if dx is None:
            return (None, None)
        return (list(dx[:n]) if any(g is not None for g in dx[:n]) else None, dx[n])
    return None, back


@updates_in_place(list, "extend")
def _list_extend(x, seq):
    n = len(x)
    entry = mt.journal_whole(x)
    items = list(seq)
    x.extend(items)

    def back(dr, dx):
        entry.undo(lambda: list(x))
        if dx is None:
            return (None, None)
        return (list(dx[:n]), like(seq, list(dx[n:])) if not hasattr(seq, "shape") else np.stack(
            [_zeros_like(seq[k]) if g is None else g for k, g in enumerate(dx[n:])]))
    return None, back


@updates_in_place(list, "insert")
def _list_insert(x, i, v):
    if v is x:
        _refuse_holding_itself(x)
    n = len(x)
    entry = mt.journal_whole(x)
    x.insert(i, v)
    pos = min(max(i + n if i < 0 else i, 0), n)

    def back(dr, dx):
        entry.undo(lambda: list(x))
        if dx is None:
            return (None, None, None)
        return (list(dx[:pos]) + list(dx[pos + 1:]), None, dx[pos])
    return None, back


@updates_in_place(list, "pop")
def _list_pop(x, i=-1):
    n = len(x)
    pos = i + n if i < 0 else i
    entry = mt.journal_whole(x)
    r = x.pop(i)

    def back(dr, dx):
        entry.undo(lambda: list(x))
        if dx is None and dr is None:
            return (None, None)
        dx = list(dx) if dx is not None else [None] * (n - 1)
        return (dx[:pos] + [dr] + dx[pos:], None)
    return r, back


@updates_in_place(list, "remove")
def _list_remove(x, v):
    _, back = _list_pop(x, x.index(v))
    return None, lambda dr, dx: (back(None, dx)[0], None)


@updates_in_place(list, "clear")
def _list_clear(x):
    entry = mt.journal_whole(x)
    x.clear()

    def back(dr, dx):
        entry.undo(lambda: list(x))
        return (None,)
    return None, back


@updates_in_place(list, "reverse")
def _list_reverse(x):
    entry = mt.journal_whole(x)
    x.reverse()

    def back(dr, dx):
        entry.undo(lambda: list(x))
        return (None if dx is None else list(dx)[::-1],)
    return None, back


@updates_in_place(list, "sort")
def _list_sort(x, key=None, reverse=False):
    entry = mt.journal_whole(x)
    order = sorted(range(len(x)), key=(lambda k: x[k]) if key is None else (lambda k: key(x[k])), reverse=reverse)
    x.sort(key=key, reverse=reverse)

    def back(dr, dx):
        entry.undo(lambda: list(x))
        if dx is None:
            return (None,)
        out = [None] * len(order)
        for j, k in enumerate(order):
            out[k] = dx[j]
        return (out,)
    return None, back


@updates_in_place(dict, "update")
def _dict_update(d, *other, **kw):
    entry = mt.journal_whole(d)
    given = other  # (pairs taken once: a generator expression or `iter(...)` gives them once)
    other = tuple(o if isinstance(o, dict) or hasattr(o, "keys") else list(o) for o in other)
    new = dict(*other, **kw)
    added = {k: k for k in new if k not in d}  # (the key objects `d` takes from the update: a pair's first)
    d.update(new)

    def key_of(k):
        """A pair's key object's cotangent: what reads of it out of `d` filed, if `d` holds this very object."""
        return key_cotangent(k) if added.get(k, _NONE) is k else None

    def back(dr, dd):
        entry.undo(lambda: dict(d))
        if dd is None:
            pairs = tuple(None if isinstance(o, dict) else [(key_of(k), None) for k, _ in o] for o in other)
            return (None, *(None if p is None or all(g is None for g, _ in p) else like(g, p)
                            for g, p in zip(given, pairs)), dict.fromkeys(kw))
        rest = {k: v for k, v in dd.items() if k not in new}
        dother = tuple({k: dd.get(k) if k not in kw else None for k in o} if isinstance(o, dict)
                       else _pair_cotangents(g, o, dd, kw, key_of) for g, o in zip(given, other))
        return (rest or None, *dother, {k: dd.get(k) for k in kw})
    return None, back


_NONE = object()


def _pair_cotangents(given, pairs, dd, kw, key_of):
    """The cotangent of the pairs `update` took (`given`, in its form): a key's cotangent goes to the last pair with
    that key, the value `update` keeps (`[("a", x), ("a", y)]` keeps y: x has none), and to none where a keyword
    overrode it."""
    kept = {k: i for i, (k, _) in enumerate(pairs)}
    return like(given, [(key_of(k), dd.get(k) if k not in kw and kept[k] == i else None)
                        for i, (k, _) in enumerate(pairs)])


@updates_in_place(dict, "setdefault")
def _dict_setdefault(d, key, default=None):
    if key in d:
        def back(dr, dd):
            return (rt.acc(dd, {key: dr} if dr is not None else None), None, None)
        return d[key], back
    entry = mt.journal_whole(d)
    d[key] = default

    def back(dr, dd):
        entry.undo(lambda: dict(d))
        g = rt.acc(dr, None if dd is None else dd.get(key))
        return (_dict_without(dd, key), key_cotangent(key), g)
    return default, back


@updates_in_place(dict, "pop")
def _dict_pop(d, key, *default):
    had = key in d
    entry = mt.journal_whole(d)
    r = d.pop(key, *default)

    def back(dr, dd):
        entry.undo(lambda: dict(d))
        if had:
            return (rt.acc(dd, {key: dr} if dr is not None else None), None, *(None for _ in default))
        return (dd, None, dr)
    return r, back


@updates_in_place(dict, "popitem")
def _dict_popitem(d, *last):
    """`k, v = d.popitem()`: the last pair out of `d` (an OrderedDict's first with `last=False`); the value's cotangent
    goes back to its entry."""
    if d and differentiable(next(reversed(d) if not last or last[0] else iter(d))):  # (a float key's gradient would
        raise ZygoteError(f"zygotepy cannot differentiate {type(d).__name__}.popitem of a key that carries a "
                          f"gradient; use d.pop(k) with the key")  # have nowhere to go)
    entry = mt.journal_whole(d)
    key, value = d.popitem(*last)

    def back(dr, dd):
        entry.undo(lambda: dict(d))
        dv = None if dr is None else dr[1]
        return (rt.acc(dd, {key: dv} if dv is not None else None), *(None for _ in last))
    return (key, value), back


@updates_in_place(dict, "clear")
def _dict_clear(d):
    entry = mt.journal_whole(d)
    d.clear()

    def back(dr, dd):
        entry.undo(lambda: dict(d))
        return (None,)
    return None, back


def _ordered_popitem(d, *given, **kw):
    """`od.popitem(last)`, `od.popitem(last=False)`: `_dict_popitem` with a cotangent for each argument given."""
    y, back = _dict_popitem(d, *given, *kw.values())
    if not kw:
        return y, back
    return y, lambda dr, dd: (*back(dr, dd)[:1 + len(given)], dict.fromkeys(kw))


def _move_to_end(d, key, *given, **kw):
    """`od.move_to_end(k)`: the same entries in another order; a dict's cotangent has none."""
    entry = mt.journal_whole(d)
    d.move_to_end(key, *given, **kw)

    def back(dr, dd):
        entry.undo(lambda: dict(d))
        return (dd, None, *(None for _ in given)) + ((dict.fromkeys(kw),) if kw else ())
    return None, back


for _name, _rule in (("update", _dict_update), ("setdefault", _dict_setdefault), ("pop", _dict_pop),
                     ("popitem", _ordered_popitem), ("clear", _dict_clear), ("move_to_end", _move_to_end)):
    updates_in_place(collections.OrderedDict, _name)(_rule)  # (its own methods, which update it as a dict's do)


@updates_in_place(np.ndarray, "fill")
def _array_fill(x, v):
    entry = mt.journal_whole(x)
    x.fill(v)

    def back(dr, dx):
        entry.undo(lambda: x.copy())
        return (None, None if dx is None else dx.sum())
    return None, back


@updates_in_place(np.ndarray, "sort")
def _array_sort(x, *args, **kwargs):
    """`x.sort(axis)`: x's entries permuted in place; the cotangent goes back through the permutation."""
    axis = args[0] if args else kwargs.get("axis", -1)
    order = np.argsort(x, axis=axis, kind="stable")  # (ties are equal values: any order of them sorts the same)
    entry = mt.journal_whole(x)
    x.sort(*args, **kwargs)

    def back(dr, dx):
        entry.undo(lambda: x.copy())
        if dx is None or x.dtype.kind not in "fc":
            return (None, *(None for _ in args))
        g = np.zeros(x.shape, dtype=np.result_type(np.asarray(dx).dtype, x.dtype))
        np.put_along_axis(g, order, dx, axis)
        return (g, *(None for _ in args))
    return None, back


updates_without_rule(np.ndarray, "resize", "itemset", "partition")  # (`put`: overwrites.py)
updates_without_rule(list, "__setitem__")
for _cls in (list, dict, set):  # `list.__init__(ys, items)` refills the object in place
    updates_without_rule(_cls, "__init__")
# (a set's updates: structures/sets.py)


_SHUFFLERS = (np.random.Generator, np.random.RandomState, random.Random)


def method_call(obj, name, args, kwargs):
    """`obj.name(*args)` for a list/dict/array method that mutates: (result, back) or None when it is no such method."""
    rule = METHODS.get((type(obj), name), UNDECLARED)
    if rule is not None and rule is not UNDECLARED:
        return rule(obj, *args, **kwargs)
    if getattr(type(obj), "__zygote_number__", False) and (np.ndarray, name) in METHODS \
            and not hasattr(obj, name):  # forward mode's dual array (a hessian): no such method
        raise ForwardModeError(f"forward mode (hessian, pushforward) cannot follow the in-place update x.{name}(): "
                               f"a dual number has no .{name} method; update a copy with an item assignment, or "
                               f"use the function form (np.sort(x))")
    if name == "shuffle" and isinstance(obj, _SHUFFLERS) and args and differentiable(args[0]):
        way = "x = rng.sample(x, len(x))" if isinstance(obj, random.Random) else "x = x[rng.permutation(len(x))]"
        raise ZygoteError(f"zygotepy cannot differentiate {type(obj).__name__}.shuffle, which permutes its argument in "
                          f"place; use {way}")
    if rule is None and not any(differentiable(v) for v in (obj, *args, *kwargs.values())):
        return _data_update(obj, name, args, kwargs)  # (`d.popitem()` of a dict of data: it runs)
    if rule is None:  # declared to update its object, with no rule
        raise ZygoteError(f"zygotepy cannot differentiate {type(obj).__name__}.{name}, which updates its object "
                          f"in place; work on a copy, or add an @adjoint rule")
    return None


def _data_update(obj, name, args, kwargs):
    """`obj.name(*args)`, a method without a rule, on data no gradient flows through: it runs, journaled like the rules'
    updates (the backward undoes it), and gives no cotangents."""
    entry = mt.journal_whole(obj)
    result = getattr(obj, name)(*args, **kwargs)

    def back(dr, dobj):
        if entry is not None:
            entry.undo(lambda: mt.snapshot(obj))
        return (None, *(None for _ in args))
    return result, back

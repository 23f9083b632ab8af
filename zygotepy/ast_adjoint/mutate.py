"""The primitives that lowered updates in place call, and the journal that keeps saved values right.

Each primitive really mutates its object (so user code that aliases it sees Python's semantics) and returns it, so the
IR can name the new version (see lower/mutation.py). Their rules (adjoints/mutation/) route cotangents between versions.

A backward pass reads values the forward saved by reference, and a later update in place would change them. So every
update records how to undo itself (an `Entry`): the backward undoes the updates in reverse order as it passes them
(each rule's `back` undoes its own update, before the backward of anything that ran earlier), so every earlier backward
sees the values its forward saw. The entry point keeps the entries of its forward and redoes them when its backward is
done, leaving the user's objects exactly as one call of `f` left them (docs/api.md), ready for another call of `back`.
Code that does not update anything in place pays two list-length reads per entry point.
"""

import collections
import itertools
import types

import numpy as np

from ..backends import is_array_type
from ..runtime.context import current
from .guards_runtime import global_method, global_read  # noqa: F401  (generated code's, reached as `mt.<name>`)

# (the journal `entries`, the log of updated objects `log` and the rest of the per-call state: runtime/context.py)


def redo(entries):
    """Re-apply, in order, those of `entries` a backward undid."""
    for e in entries:
        if e.undone:
            e.redo()


def finish_backward(mark):
    """After a backward: redo what forwards run during it (a rule's, e.g. checkpoint's) recorded since `mark`."""
    entries = current().entries
    if len(entries) != mark:
        redo(entries[mark:])
        del entries[mark:]


def end_forward(start):
    """An entry point's forward is over: its updates are the journal's entries from `start` (returned, and cut out)."""
    ctx = current()
    ctx.depth -= 1
    mine = ctx.entries[start:]
    del ctx.entries[start:]
    if not ctx.depth:
        ctx.log.clear()
        ctx.link_mark = 0
        ctx.passed_through.clear()
        ctx.item_arrays.clear()
        ctx.global_updates.clear()
        ctx.dict_views.clear()
    return mine


class Entry:
    """One update: `undo` puts back the state before it (remembering the state after), `redo` the state after."""
    __slots__ = ("after", "before", "restore", "undone")

    def __init__(self, restore, before, obj):
        self.restore, self.before, self.after, self.undone = restore, before, None, False
        ctx = current()
        ctx.entries.append(self)
        ctx.log.append(id(obj))

    def undo(self, now):
        """`now()` captures the current state of what the update touched."""
        if not self.undone:
            self.after = now()
            self.restore(self.before)
            self.undone = True

    def redo(self):
        self.restore(self.after)
        self.undone = False


class ItemEntry(Entry):
    """An update of one item of a 1-d array (`out[i] = v` in a loop, the common case) with no closures and no copies:
    the item's values before and after are NumPy scalars, which nothing can change."""
    __slots__ = ("index", "x")

    def __init__(self, x, index):
        self.x, self.index, self.before, self.after, self.undone = x, index, x[index], None, False
        ctx = current()
        ctx.entries.append(self)
        ctx.log.append(id(x))

    def undo(self, now=None):
        if not self.undone:
            self.after = self.x[self.index]
            self.x[self.index] = self.before
            self.undone = True

    def redo(self):
        self.x[self.index] = self.after
        self.undone = False


def snapshot(x):
    """A copy of the part of an object an update may change: array data, list items, dict entries, attributes."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if hasattr(type(x), "__zygote_snapshot__"):  # (forward mode's dual array, updated in place under hessian)
        return x.__zygote_snapshot__(snapshot)
    if isinstance(x, (list, collections.deque)):
        return list(x)
    if isinstance(x, dict):
        return dict(x)
    if isinstance(x, set):
        return set(x)
    if hasattr(x, "__dict__"):
        return dict(vars(x))
    return None


def restorer(x):
    """The function that puts a `snapshot` of `x` back into `x`."""
    if isinstance(x, np.ndarray) or hasattr(type(x), "__zygote_snapshot__"):
        def put(s):
            x[...] = s
    elif isinstance(x, (list, set, dict, collections.deque)):
        def put(s):
            x.clear()
            x.update(s) if not isinstance(x, (list, collections.deque)) else x.extend(s)
    elif hasattr(x, "__dict__"):
        def put(s):
            vars(x).clear()
            vars(x).update(s)
    else:
        return None
    return put


def journal_whole(x):
    """Record an update of any part of `x` (a whole snapshot; arrays' item updates record only their slot)."""
    put = restorer(x)
    if put is None:
        return None
    return Entry(put, snapshot(x), x)


def journal_slot(x, index):
    """Record an update of `x[index]` for an array: only the slot's old values are kept."""
    def put(old):
        x[index] = old
    return Entry(put, slot_copy(x[index]), x)


def slot_copy(v):
    """A copy of what `x[index]` gave: a view or a 0-d value (NumPy's or forward mode's array types)."""
    return v.copy() if hasattr(v, "copy") else v


def passed_through(args, mark):
    """`args` went into a container method (`out.append(row)`), which updates its object alone."""
    passed = current().passed_through  # id of an argument a container method was given -> the log's length then
    for a in args:
        if not isinstance(a, ATOMIC):
            passed[id(a)] = mark


def may_have_changed(child):
    """Could `child` have been updated in place by the update the transform had to assume just before (it cannot tell
    `out.append(row)` from a call that updates `row`)? Not a number or a string; not an argument of a container
    method, unless something logged an update of it since that call began (the log is cleared with the marks, so a
    mark is never past an update)."""
    if is_number(child) or isinstance(child, (types.FunctionType, types.ModuleType)):  # (a function's cells are
        return False  # objects of their own; an array namespace is a module)
    ctx = current()
    mark = ctx.passed_through.get(id(child))
    return mark is None or id(child) in ctx.log[mark:] or id(child) in ctx.item_arrays


ATOMIC = (int, float, complex, str, bytes, np.generic)  # values no update in place can change


def is_number(x):
    """A value no update in place can change, and of which equal values may be one object by chance: a number, a
    string, or forward mode's dual number of a scalar (hessian's reverse pass carries them)."""
    return isinstance(x, ATOMIC) or x is None or getattr(type(x), "__zygote_number__", False) and not np.shape(x)


def host_memory(x):
    """The NumPy array holding a value's elements: the array itself; the innermost primal of a dual array (forward
    mode's numbers, which a reverse pass carries in `hessian`), whose views share memory as the arrays' own do; or the
    NumPy view of another library's array in host memory (torch's CPU tensors, array-API arrays), which shares it."""
    while getattr(type(x), "__zygote_number__", False) and hasattr(x, "primal"):
        x = x.primal
    if type(x) is np.ndarray or not is_array_type(type(x)):
        return x
    try:
        return np.asarray(x)
    except Exception:  # noqa: BLE001 - on a device: no NumPy view (see `overlap`)
        return x


def dual_vector(x):
    """Is `x` forward mode's dual array (which `hessian` carries through a reverse pass) over a 1-d NumPy array? Its
    items are numbers read when the loop gets there, as a NumPy vector's are."""
    if not getattr(type(x), "__zygote_number__", False) or not hasattr(x, "primal"):
        return False
    memory = host_memory(x)
    return type(memory) is np.ndarray and memory.ndim == 1


def shared_memory(x, others):
    """Is array `x`'s memory also that of one of `others` (another object: a view of it, or its base)?"""
    mx = host_memory(x)
    if not isinstance(mx, np.ndarray) or mx.size == 0:
        return False
    for o in others:
        if o is not x and not is_number(o):
            mo = host_memory(o)
            if isinstance(mo, np.ndarray) and mo.size and np.may_share_memory(mx, mo):
                return True
    return False


def updated_within(obj, depth=0, ids=None):
    """Was `obj`, or a list, dict or object it holds (a few levels down), updated in place while this entry point
    runs (the log)?"""
    ids = set(current().log) if ids is None else ids
    if id(obj) in ids or depth > 4 or isinstance(obj, (types.FunctionType, types.ModuleType, type)):
        return id(obj) in ids
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else \
        vars(obj).values() if hasattr(obj, "__dict__") else ()
    return any(updated_within(v, depth + 1, ids) for v in items if not is_number(v))


def updated_since(mark, objects):
    """Those of `objects` updated in place since the log had `mark` entries."""
    ids = set(current().log[mark:])
    return [o for o in objects if id(o) in ids]


def base_of(x):
    while getattr(x, "base", None) is not None and isinstance(x.base, np.ndarray):
        x = x.base
    return x


# --- the primitives (plain Python semantics) ---------------------------------------------------------------------------

def setitem(x, index, value):
    x[index] = value
    return x


def setattr_(obj, name, value):
    setattr(obj, name, value)
    return obj


def object_setattr(obj, name, value):  # `object.__setattr__(obj, name, v)`: past the class's own `__setattr__`
    object.__setattr__(obj, name, value)
    return obj


def object_delattr(obj, name):
    object.__delattr__(obj, name)
    return obj


def delitem(x, index):
    del x[index]
    return x


def delattr_(obj, name):
    delattr(obj, name)
    return obj


def put_item(parent, key, child):
    """`parent[key]` was `child` (or a view of it) and `child` was updated in place: `parent`'s new version."""
    return parent


def put_attr(parent, name, child):
    return parent


def put_held(parent, key, child):
    """`child`, held somewhere in `parent` (an item, a value, an attribute), was updated in place."""
    return parent


def refresh_held(child, parent, where):
    """`child` may be held somewhere in `parent` (put there by a display, `append`, or a call that may keep its
    arguments), which was updated in place: `child`'s new version. `where` names the update for error messages."""
    return child


def refresh(child, parent, kind, key):
    """`child` was read out of `parent`, which was updated in place: `child`'s new version."""
    return child


def put_iter(parent, where, child):
    """`child` is an item a `for` loop took from `parent` (a row of an array, an item of a list, a dict's value), and
    was updated in place."""
    return parent


def refresh_iter(child, parent, where, position=None):
    """`child`, the item a `for` loop took from `parent` at iteration `position` (counted from 0), after `parent` was
    updated in place: `parent`'s item at `position` as it is now where the loop reads it by position
    (`read_by_position`)."""
    place = read_by_position(parent, child, position)
    return child if place is None else place[1]


def read_by_position(parent, child, position):
    """Where `child` is an item the loop reads by its position (a 1-d NumPy array's number, a list's item, a dict's
    value from `d.values()` or `d.items()`, not a key), `(place, item)`: its index or key, and the item there now;
    else None. Python's iteration reads such an item when it gets there, so it is the item at `position` as it is then
    (`enumerate(x)`'s items, which the loop took when it began, would be stale); its cotangent goes to that place."""
    if position is None:
        return None
    kind = type(parent)
    if kind is np.ndarray or dual_vector(parent):
        return (position, parent[position]) if parent.ndim == 1 and not isinstance(child, np.ndarray) and getattr(child, "ndim", 0) == 0 else None
    if kind is list:
        return (position, parent[position]) if position < len(parent) else None
    if isinstance(parent, dict) and position < len(parent):  # (an OrderedDict, a defaultdict too)
        key = next(itertools.islice(parent, position, None))  # (a dict's keys keep their order)
        return None if child is key else (key, parent[key])
    return None


LOOP_COPIES = [None, None]  # (held_elsewhere, copied_error) of adjoints/mutation/loop_links.py


def loop_copied(item, container, where, *holders):
    """`item`, which a `for` loop took from `container` and which is updated in place, must not also sit inside one of
    `holders` (what made `container`: `reversed(lst)`, `sorted(lst)`, `list(lst)`, `lst[::-1]`, `f(lst)`) unless
    `container` is that object itself, or `item` sits in it only through `container` (`for w in out["w"]`): an update
    could not be routed from a copy to the original. `where` is (file, line of the loop, the loop variable's name, the
    holders' names). Where an object sits inside another is the mutation rules' knowledge: they give it here
    (`LOOP_COPIES`, set by adjoints/mutation/loop_links.py at its import; the runtime sits below the rules)."""
    held_elsewhere, copied_error = LOOP_COPIES
    if not isinstance(container, np.ndarray):
        for h, name in zip(holders, where[3], strict=True):
            if h is not container and h is not item and held_elsewhere(h, item, container):
                raise copied_error(where, container, name)


def logged(op, x, y):
    """`op(x, y)` for an in-place operator whose result needs no gradient: logs an update of `x` if it ran in place."""
    result = op(x, y)
    if result is x:
        current().log.append(id(x))
    return result


class _NotInPlace:
    """What the holders of an object are told was updated after `x += v` made a new object instead (a tuple, a
    number): nothing (see lower/mutation.py, Mutation.mutate)."""
    __slots__ = ()

    def __repr__(self):
        return "NOT_IN_PLACE"


NOT_IN_PLACE = _NotInPlace()


class _UnknownSlot:
    """The key of a link of an item or an attribute that an `if` made in one arm only (`if c: y[k] = s`), on the path
    of the other arm, which did not put the object there (lower/control.py `join`): `refresh` and `put_item`/
    `put_attr` given it look for the object in its holder at run time, by identity, as a held object's links do
    (finding it nowhere, they link nothing)."""
    __slots__ = ()

    def __repr__(self):
        return "UNKNOWN_SLOT"


UNKNOWN_SLOT = _UnknownSlot()


def same_or(alias, old, new):
    """An alias of `old` after `new = old += v`: `new` if that ran in place (lists, arrays), else unchanged."""
    return new if new is old else alias


def same_as(var, old, new):
    """A name of `old`'s object after `old` became `new`: `new` if it names that object, else unchanged (an alias a
    maybe-in-place update split off: `z = x; z *= 0.5` on JAX arrays leaves `x` the old array)."""
    return new if var is old else var


def mutcall(fn, *args, **kwargs):
    """A call that may update its arguments: `(result, *args, *kwargs.values())` (a `super()` proxy: its object)."""
    result = fn(*args, **kwargs)
    return (result, *(a.__self__ if type(a) is super else a for a in args), *kwargs.values())


def splatcall(fn, *args, **kwargs):
    """`mutcall` of `f(x, **opts)`: the callee may not update the keyword arguments, which the caller cannot name."""
    return mutcall(fn, *args, **kwargs)


def objectcall(fn, *args, **kwargs):
    """`mutcall` of a method called with starred arguments (`self.forward(*args)`): the callee may update its object,
    which the caller takes back, but none of the arguments, which the caller cannot name one by one."""
    return mutcall(fn, *args, **kwargs)


def valuecall(fn, *args, **kwargs):
    """`mutcall` for a call whose result is used (`loss = step(state)`): it may not fall back to running code zygotepy
    cannot read, as a call statement may (that result would carry no gradient)."""
    return mutcall(fn, *args, **kwargs)


def unseen_update(where, fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, an update of an object no name of the differentiated function reaches (`C().items` is a
    class's list, `get_buf()` a global array): run as written where no gradient takes part; its rule refuses the
    update otherwise. `where` is (file, line, what the update is)."""
    return fn(*args, **kwargs)


def with_out(fn, *args_and_out, **kwargs):
    """`fn(*args, out=out)`."""
    *args, out = args_and_out
    return fn(*args, out=out, **kwargs)

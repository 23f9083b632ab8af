"""Rules for stores in place: `x[i] = v` (NumPy arrays, other libraries' arrays, lists, dicts, classes with a Python
`__setitem__`), `obj.a = v`, `del obj.a` and `del x[i]`.

Each maps the old version of the object to its new version (the same object): its `back` gets the new version's
cotangent and returns the old version's, in which the slot written receives nothing from before; its cotangent goes
to the value written.
"""
import collections
import inspect
import operator
import types

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...ast_adjoint.dispatch import J_mutating
from ...backends import is_array_type, is_foreign, namespace, on, to_numpy, unbroadcast
from ...errors import STORE_INTO_PLAIN_ARRAY, ForwardModeError, ZygoteError
from ...runtime.context import current
from ...structgrad import StructGrad
from ..numpy.conversions import refuse_object
from ..objects import as_fields
from ..registry import adjoint
from ..structures.common import like
from ..structures.dicts import key_cotangent, took_lookup_key
from ..structures.indexing import structured_refused
from .held import _split, _where_held, may_hold_deeper
from .overlap import refuse_overlapping_write
from .self_cycles import fold_self_paths, holds_itself


def _repeats(index, shape):
    """For an integer-array index with repeated positions, NumPy keeps the last write to each (torch and the array
    API's libraries too): a mask of the entries of `x[index]` that count (None when nothing repeats), for `x` of the
    given shape. A 1-d index alone masks its own entries (the rest of each row follows it); any other (`y[:, [1, 1]]`,
    `y[[0, 0], [1, 1]]`) masks `x[index]` whole, from the flat position in `x` of each of its entries, in the order
    NumPy writes them."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [np.asarray(p) for p in parts if isinstance(p, (list, tuple, np.ndarray))]  # (a tuple inside a tuple
    kinds = {a.dtype.kind for a in arrays}  # index is one too: `y[(0, 0), (1, 1)]`)
    if not kinds & set("iu") or not kinds <= set("iub"):  # (masks alone pick each entry once)
        return None
    if len(parts) == 1 and arrays[0].ndim == 1:
        flat = arrays[0] % shape[0]
    else:
        flat = np.arange(int(np.prod(shape))).reshape(shape)[index]
    if np.unique(flat).size == flat.size:
        return None
    keep = np.zeros(flat.size, dtype=bool)
    _, last = np.unique(flat.ravel()[::-1], return_index=True)
    keep[flat.size - 1 - last] = True
    return keep.reshape(flat.shape)


_REAL_NUMBERS = frozenset((float, int, np.float64, np.float32))


def _added(into, grads):
    """A back's cotangents added to the running ones generated code handed it (`registry.accumulates`), if any."""
    return tuple(rt.acc(a, g) for a, g in zip(into, grads, strict=True)) if into else grads


# --- x[i] = v ----------------------------------------------------------------------------------------------------------

def _set_number(x, index, value):
    """`x[i] = v` for an int `i`, a 1-d real array `x` and a real number `v`: the update a loop makes item by item,
    with a journal entry that copies nothing and a `back` that skips the general case's checks."""
    if -x.itemsize < x.strides[0] < x.itemsize and x.size > 1:  # (its positions share memory: a broadcast view)
        refuse_overlapping_write(x)
    entry = mt.ItemEntry(x, index)
    x[index] = value
    number = type(value) is not bool  # an int written into a float array is a real number from then on

    def back(dy, need=None, *into):
        entry.undo()
        if dy is None:
            return into or (None, None, None)
        if type(dy) is not np.ndarray or dy.dtype.kind != "f":
            return _added(into, rt.item_cotangents(dy, index, value))
        dv = dy[index] if number else None
        dx = dy if into and rt.sole(dy) else dy.copy()  # handed over by generated code: zero the entry in place
        dx[index] = 0
        if into:
            return rt.acc(into[0], dx), into[1], rt.acc(into[2], dv)
        return dx, None, dv
    return x, back


@adjoint(mt.setitem, accumulates=True, updates=True)
def setitem(x, index, value):
    if type(index) is int and type(x) is np.ndarray and x.ndim == 1 and x.dtype.kind == "f" \
            and type(value) in _REAL_NUMBERS:
        return _set_number(x, index, value)
    if isinstance(x, np.ndarray) or getattr(type(x), "__zygote_number__", False) and hasattr(x, "shape"):
        if isinstance(x, np.ndarray) and getattr(type(value), "__zygote_number__", False):
            raise ForwardModeError(STORE_INTO_PLAIN_ARRAY)
        if type(index) is str and isinstance(x, np.ndarray):
            raise structured_refused()
        if isinstance(x, np.ndarray) and x.dtype.kind == "O":  # (`objs = np.empty(n, dtype=object); objs[i] = v`)
            for v in value.flat if isinstance(value, np.ndarray) and value.dtype.kind == "O" else (value,):
                refuse_object(v)
        refuse_overlapping_write(mt.host_memory(x))  # (`w[1, 0] = v` where w[1, 0] is w[0, 1]: overlap.py)
        keep = _repeats(index, np.shape(x)) if type(index) is not int else None
        written_real = getattr(x, "dtype", None) is None or x.dtype.kind in "fc"
        entry = mt.journal_slot(x, index)
        x[index] = value

        def back(dy, need=None, *into):
            entry.undo(lambda: mt.slot_copy(x[index]))
            if dy is None:
                return into or (None, None, None)
            if isinstance(dy, np.generic):  # a 0-d array's cotangent may come as a NumPy scalar (`y[()] = v`)
                dy = np.array(dy)
            dv = dy[index]
            if keep is not None:  # repeated positions: only the last write of each reaches the output
                dv = dv * keep.reshape(keep.shape + (1,) * (dv.ndim - keep.ndim))
            if into and rt.sole(dy):  # generated code handed dy over: zero the overwritten entries in place
                dv = dv.copy() if isinstance(dv, np.ndarray) and dv.base is not None else dv
                dx = dy
            else:
                dx = dy.copy()
            dx[index] = 0
            # a bool written, or anything written into an int array (truncated), is data: no cotangent; an int
            # written into a float array becomes a real number there (the contract's ints in arithmetic)
            dv = unbroadcast(dv, value) if not isinstance(value, bool) and written_real else None
            return _added(into, (dx, None, dv))
        return x, back
    if is_foreign(x) and is_array_type(type(x)):
        return _set_foreign(x, index, value)
    if isinstance(x, (list, collections.deque)):  # (a deque takes int indices only, as Python's)
        if not isinstance(index, (int, slice)) and hasattr(type(index), "__index__"):
            index = operator.index(index)  # (`y[i]` with `i` a NumPy integer, from an index array)
        if not (isinstance(index, int) or isinstance(index, slice) and index.step in (None, 1)):
            raise ZygoteError("zygotepy cannot differentiate a list update with an extended slice (x[a:b:c] = v)")
        n, before = len(x), x[index]
        twins = ()
        if isinstance(index, int):
            entry = mt.Entry(lambda s: x.__setitem__(index, s), before, x)
            now = lambda: x[index]
            twins = _twins(x, index % n if n else index, value, before is value)
        else:
            start = index.indices(n)[0]
            whole_before = x[:start] + list(before) + x[start + len(before):]
            entry = mt.Entry(lambda s: x.__setitem__(slice(None), s), whole_before, x)
            now = lambda: x[:]
        x[index] = value

        def back(dy, need=None, *into):
            entry.undo(now)
            if dy is None:
                return into or (None, None, None)
            if isinstance(index, int):
                dx = dy if into and rt.sole(dy) else list(dy)  # handed over: reuse the list
                dv, dx[index] = dx[index], None
                for j, item, plan in twins:  # the written object in another slot: read after the write, it is the
                    dx[j], d = _split(plan, item, dx[j], None)  # written value
                    dv = rt.acc(dv, d)
                return _added(into, (dx, None, dv))
            k = len(dy) - (n - len(before))  # how many items the slice holds now
            dv = like(value, list(dy[start:start + k])) if k else None
            return _added(into, (list(dy[:start]) + [None] * len(before) + list(dy[start + k:]), None, dv))
        return x, back
    if isinstance(x, dict):
        had, old = index in x, x.get(index)
        # (a key a defaultdict's lookup put in is this store's to hand its cotangent to; one an earlier store put in,
        # that store's)
        kept = had and not (type(x) is collections.defaultdict and took_lookup_key(index))
        twins = _twins(x, index, value, had and old is value)
        x[index] = value
        cyclic = value is not x and holds_itself(x)  # (`d["nb"] = e` beside `e["nb"] = d`: self_cycles.py)

        def restore(state):
            if state[0]:
                x[index] = state[1]
            else:
                x.pop(index, None)
        entry = mt.Entry(restore, (had, old), x)

        def back(dy, need=None, *into):
            if cyclic and dy is not None:
                dy = fold_self_paths(x, dy)
            entry.undo(lambda: (True, x[index]))
            if dy is None:
                return into or (None, None, None)
            rest, dv = _twins_split(twins, dict(dy), index)
            return _added(into, (_dict_without(rest), None if kept else key_cotangent(index), dv))
        return x, back
    method = getattr(type(x), "__setitem__", None)
    if isinstance(method, types.FunctionType):  # a user class: its own __setitem__, derived, updates `x`
        _, pb, _ = J_mutating(method, (x, index, value), None)

        def back(dy, need=None, *into):
            grads = pb(None, {id(x): dy} if dy is not None else {})
            return _added(into, (grads[1], None, grads[3]))
        return x, back
    raise ZygoteError(f"zygotepy cannot differentiate updating an item of a {type(x).__name__} in place "
                      f"(x[i] = v works on lists, dicts, NumPy arrays and classes with a Python __setitem__)")


def _set_foreign(x, index, value):
    """`x[i] = v` on an array of another library that updates in place (torch, CuPy, array-API arrays; JAX's refuse
    it themselves): the NumPy path's cotangents, made in `x`'s namespace (and so on its device)."""
    xp = namespace(x)
    keep = None
    if type(index) is not int:  # (another library's index arrays, `torch.tensor([0, 0])`, read as NumPy's)
        parts = tuple(to_numpy(p) if is_foreign(p) and hasattr(p, "dtype") else p
                      for p in (index if isinstance(index, tuple) else (index,)))
        keep = _repeats(parts if isinstance(index, tuple) else parts[0], tuple(x.shape))
    entry = mt.Entry(lambda s: x.__setitem__(index, s), xp.asarray(x[index], copy=True), x)
    x[index] = value

    def back(dy, need=None, *into):
        entry.undo(lambda: xp.asarray(x[index], copy=True))
        if dy is None:
            return into or (None, None, None)
        dv = dy[index]
        if keep is not None:  # repeated positions: only the last write of each reaches the output
            mask = keep.reshape(keep.shape + (1,) * (dv.ndim - keep.ndim))
            dv = dv * xp.asarray(mask.astype(float), dtype=dv.dtype, **on(dv))
        dv = unbroadcast(dv, value) if not isinstance(value, bool) else None
        dx = xp.asarray(dy, copy=True)
        dx[index] = 0
        return _added(into, (dx, None, dv))
    return x, back


def _twins(x, index, value, written_back):
    """The other slots of `x` (a list's positions, a dict's keys, an object's attributes: `x` its `vars`) that hold the
    very object just written at `index` (`both = [a, a]` or `{"w": a, "v": a}`, then `both[1] *= 2`, an update in place
    through one slot), as `(slot, item, plan)`: a read of one of them after the write reads the written object, so its
    cotangent must reach the value written (through the update's own back), not the slot's older entry. Where the
    write puts back the object the slot held (`d["w"] *= 2`: `written_back`), the object is looked for inside the other
    slots' items too (a list or object holding it, a view of its memory: held.py's plans), unless they are numbers and
    arrays owning their data (the common case: identity finds it there). Only objects an update in place can change
    (arrays, lists, dicts, class instances): equal numbers may be one object by chance (cached constants), which says
    nothing about where their gradients go."""
    if isinstance(value, (int, float, complex, str, bytes, tuple, type(None), np.generic)):
        return ()
    # (this runs on every store into a list, dict or object: the common cases are decided by C loops, map and count)
    items = x.values() if isinstance(x, dict) else x
    identical = list(map(id, items)).count(id(value)) - bool(written_back)  # (the slot written holds it already)
    deep = written_back and may_hold_deeper(items, value)
    if not identical and not deep:
        return ()
    twins = []
    for j, item in x.items() if isinstance(x, dict) else enumerate(x):
        if j == index:
            continue
        plan = "self" if item is value else _where_held(item, value) if deep else None
        if plan == "opaque":
            raise ZygoteError(f"{call_site() or 'a store'}: zygotepy cannot differentiate this update in place: "
                              f"another entry holds the updated object where its gradient cannot be routed (a "
                              f"closure's cell, a partial's argument, a __slots__ attribute, a view of its bytes as "
                              f"another dtype)")
        if plan is not None:
            twins.append((j, item, plan))
    return tuple(twins)


def _twins_split(twins, fields, index):
    """A dict's (or an object's fields') cotangent `fields` after a write at `index` -> (the rest, the written
    value's cotangent: its own entry's and its part of each twin's)."""
    dv = fields.pop(index, None)
    for k, item, plan in twins:
        rest, d = _split(plan, item, fields.get(k), None)
        dv = rt.acc(dv, d)
        if rest is None:
            fields.pop(k, None)
        else:
            fields[k] = rest
    return fields, dv


def _dict_without(dy, key=None):
    """`dy` less `key`'s entry; `{}`, not None, while read keys wait for their stores' backs (structures.keys_read)."""
    return None if dy is None else {k: v for k, v in dy.items() if k is not key and (key is None or k != key)} \
        or ({} if current().read_keys else None)  # (no comparison with None: a user key's `__eq__` may not take it)


# --- obj.a = v and del ---------------------------------------------------------------------------------------------------

def _attr_state(obj, name):
    """Whether obj holds `name` itself, and its value. Read without running a `__getattr__` (which Python's own
    assignment does not run either, and which may recurse on a name not yet set: `return self.w * 2`)."""
    own = getattr(obj, "__dict__", None)
    if own is not None:
        return (True, own[name]) if name in own else (False, None)
    try:
        return (True, object.__getattribute__(obj, name))
    except AttributeError:
        return (False, None)


def _attr_restorer(obj, name):
    base = type if isinstance(obj, type) else object  # (a class attribute: `C.count += 1`)

    def restore(state):
        if state[0]:
            base.__setattr__(obj, name, state[1])
        elif _attr_state(obj, name)[0]:
            base.__delattr__(obj, name)
    return restore


def _check_plain_attribute(obj, name, own_setattr=True, deleting=False):
    """Refuse a store (or `deleting`, a `del`) that runs a property's setter (deleter), a descriptor's `__set__`
    (`__delete__`) or, `own_setattr`, the class's own `__setattr__` (`__delattr__`): code zygotepy does not see."""
    desc = inspect.getattr_static(type(obj), name, None)
    hook, method = ("__delattr__", "__delete__") if deleting else ("__setattr__", "__set__")
    if own_setattr and isinstance(getattr(type(obj), hook), types.FunctionType) or hasattr(type(desc), method) \
            and not isinstance(desc, types.MemberDescriptorType):
        what, verb = ("deleting", "delete") if deleting else ("assigning", "assign")
        raise ZygoteError(f"{call_site() or 'a store'}: zygotepy cannot differentiate {what} "
                          f"{type(obj).__name__}.{name}: a property {'deleter' if deleting else 'setter'} or {hook} "
                          f"runs; {verb} the underlying attribute, or add an @adjoint rule")


@adjoint(mt.setattr_, updates=True)
def setattr_(obj, name, value):
    _check_plain_attribute(obj, name)
    if isinstance(obj, (type, types.ModuleType, types.FunctionType)) and rt.differentiable(value):
        where = call_site()  # (`type(self).n = v * v`: a class's state outlives the call; was a crash in the back;
        # `g.scale = s` on a function: its reads inside `g` are constants, the gradient was None)
        kind = "class" if isinstance(obj, type) else "module" if isinstance(obj, types.ModuleType) else "function"
        raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate storing a value that may "
                          f"carry a gradient into the {kind} attribute {obj.__name__}.{name}: its reads are "
                          f"constants; keep it on an instance, or pass it as an argument")
    return _store_attribute(obj, name, value, setattr)


@adjoint(mt.object_setattr, updates=True)
def object_setattr(obj, name, value):
    """`object.__setattr__(obj, name, v)`, the store itself past the class's own `__setattr__` (a frozen dataclass's
    `__post_init__` setting a field)."""
    _check_plain_attribute(obj, name, own_setattr=False)
    return _store_attribute(obj, name, value, object.__setattr__)


def _store_attribute(obj, name, value, store):
    state = _attr_state(obj, name)
    entry = mt.Entry(_attr_restorer(obj, name), state, obj)
    twins = _twins(vars(obj), name, value, state[0] and state[1] is value) if hasattr(obj, "__dict__") else ()
    store(obj, name, value)
    cyclic = value is not obj and hasattr(obj, "__dict__") and holds_itself(obj)  # (`a.me = a`: `_along_cycle`)

    def back(dy):
        if cyclic and dy is not None:  # (`a.me.value` read after this store of `a.value`: the new value's)
            dy = fold_self_paths(obj, as_fields(obj, dy))
        entry.undo(lambda: _attr_state(obj, name))
        dy = as_fields(obj, dy)
        if dy is None:
            return (None, None, None)
        rest, dv = _twins_split(twins, dict(dy), name)
        rest = {k: v for k, v in rest.items() if v is not None}
        if value is obj:  # (`self.me = self`: reads through `me`, `me.me`, ... are reads of the object itself)
            dv = _along_cycle(obj, dv, name)
        return (StructGrad(rest) if rest else None, None, dv)
    return obj, back


def _along_cycle(obj, d, name):
    """The cotangent of an object stored into its own field `name`, which `d` gives by that path: its fields' and, along
    `name`, again its own (`s.me.me.w` is `s.w`), summed into one cotangent of the object's fields."""
    total = None
    while d is not None:
        d = dict(as_fields(obj, d) or {})
        own = {k: v for k, v in d.items() if k != name and v is not None}
        total = rt.acc(total, StructGrad(own) if own else None)
        d = d.get(name)
    return total


@adjoint(mt.delattr_, updates=True)
def delattr_(obj, name):
    _check_plain_attribute(obj, name, deleting=True)  # (a deleter that resets a field: its gradient went on)
    return _delete_attribute(obj, name, delattr)


@adjoint(mt.object_delattr, updates=True)
def object_delattr(obj, name):
    _check_plain_attribute(obj, name, own_setattr=False, deleting=True)
    return _delete_attribute(obj, name, object.__delattr__)


def _delete_attribute(obj, name, delete):
    entry = mt.Entry(_attr_restorer(obj, name), _attr_state(obj, name), obj)
    delete(obj, name)

    def back(dy):
        entry.undo(lambda: _attr_state(obj, name))
        return (as_fields(obj, dy), None)
    return obj, back


@adjoint(mt.delitem, updates=True)
def delitem(x, index):
    if isinstance(x, (list, collections.deque)):
        entry = mt.journal_whole(x)
        n = len(x)
        positions = range(n)[index] if isinstance(index, slice) else [index % n]
        del x[index]

        def back(dy):
            entry.undo(lambda: list(x))
            if dy is None:
                return (None, None)
            it = iter(dy)
            gone = set(positions)
            return ([None if k in gone else next(it) for k in range(n)], None)
        return x, back
    if isinstance(x, dict):
        entry = mt.journal_whole(x)
        del x[index]

        def back(dy):
            entry.undo(lambda: dict(x))
            return (dy, None)
        return x, back
    raise ZygoteError(f"zygotepy cannot differentiate `del x[i]` on a {type(x).__name__}")


@adjoint(mt.unseen_update)
def unseen_update(where, fn, *args, **kwargs):
    """An update of an object no name of the differentiated function reaches, with a value that may carry a gradient
    (this rule runs only then): its later reads, through a class attribute or a global a helper returns, would get no
    gradient, so it is refused."""
    file, line, what = where
    raise ZygoteError(f"{file}:{line}: zygotepy cannot differentiate {what}, which updates in place an object no "
                      f"variable of this function holds (a class's attribute, a container a helper returns): its "
                      f"later reads would miss the gradient of what it stores; keep the values in a container of "
                      f"this function's own, or pass the container in as an argument")

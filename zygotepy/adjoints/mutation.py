"""Rules for updates in place: item and attribute stores, `del`, list/dict/array methods that mutate, calls that may
update their arguments, `out=`, and augmented assignment on arrays.

Each primitive maps an old version of an object to its new version (the same object, see lower_mutation). Its `back`
gets the new version's cotangent and returns the old version's: the slot written receives nothing from before, its
cotangent goes to the value written. Every `back` first undoes its update (mutate.Journal), so the backward of anything
that ran earlier sees the values it saw; these rules are in `registry.MUTATING`, so the adjoint pass calls their `back`
even when no cotangent reached the new version.
"""
import inspect
import operator
import types

import numpy as np

from ..ast_adjoint import mutate as mt
from ..ast_adjoint import runtime as rt
from ..ast_adjoint.dispatch import J_mutating, differentiable
from ..backends import is_array_type, is_foreign, namespace, unbroadcast
from ..errors import (STORE_INTO_PLAIN_ARRAY, ForwardModeError, MissingAdjoint, UnsupportedSyntax,
                      ZygoteError)
from ..runtime.context import current
from ..structgrad import StructGrad
from .mutation_links import _dict_without, _is_array, _zeros_like  # noqa: F401 (also registers the links' rules)
from . import loop_links  # noqa: F401 (registers the loop variables' links)
from .mutation_methods import _list_extend, method_call
from .objects import as_fields
from .registry import adjoint, find_rule, mutating, nondifferentiable
from .structures import key_cotangent, like

mutating(mt.setitem, mt.setattr_, mt.delitem, mt.delattr_, mt.put_item, mt.put_attr, mt.put_held, mt.refresh,
         mt.refresh_held, mt.mutcall, mt.valuecall)
nondifferentiable(mt.global_method, mt.global_read, mt.captured_unchanged)


def _repeats(index, x):
    """For a 1-d integer-array index with repeated positions, NumPy keeps the last write to each: a mask of the entries
    of `x[index]` that count (None when nothing repeats)."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [np.asarray(p) for p in parts if isinstance(p, (list, np.ndarray))]
    if not arrays or any(a.dtype.kind not in "iu" for a in arrays):
        return None
    if len(parts) != 1 or arrays[0].ndim != 1:
        flat = np.ravel_multi_index(tuple(np.asarray(p) % n for p, n in zip(parts, x.shape)), x.shape[:len(parts)]) \
            if len(arrays) == len(parts) else None
        if flat is None or np.unique(flat).size != flat.size:
            raise ZygoteError("zygotepy cannot differentiate x[index] = v with repeated positions in a "
                              "multi-dimensional integer index; use a 1-d index or np.add.at")
        return None
    flat = arrays[0] % x.shape[0]
    if np.unique(flat).size == flat.size:
        return None
    keep = np.zeros(flat.shape, dtype=bool)
    _, last = np.unique(flat[::-1], return_index=True)
    keep[flat.size - 1 - last] = True
    return keep


_REAL_NUMBERS = frozenset((float, int, np.float64, np.float32))


def _added(into, grads):
    """A back's cotangents added to the running ones generated code handed it (`registry.accumulates`), if any."""
    return tuple(rt.acc(a, g) for a, g in zip(into, grads, strict=True)) if into else grads


# --- x[i] = v ----------------------------------------------------------------------------------------------------------

def _set_number(x, index, value):
    """`x[i] = v` for an int `i`, a 1-d real array `x` and a real number `v`: the update a loop makes item by item,
    with a journal entry that copies nothing and a `back` that skips the general case's checks."""
    entry = mt.ItemEntry(x, index)
    x[index] = value
    number = type(value) is not bool  # an int written into a float array is a real number from then on

    def back(dy, need=None, *into):
        entry.undo()
        if dy is None:
            return into or (None, None, None)
        if type(dy) is not np.ndarray or dy.dtype.kind != "f":
            return _added(into, _item_cotangents(dy, index, value))
        dv = dy[index] if number else None
        dx = dy if into and rt.sole(dy) else dy.copy()  # handed over by generated code: zero the entry in place
        dx[index] = 0
        if into:
            return rt.acc(into[0], dx), into[1], rt.acc(into[2], dv)
        return dx, None, dv
    return x, back


def _item_cotangents(dy, index, value):
    """`x[i] = v`'s cotangents from a cotangent `dy` of the new `x` that is not a real array (a complex one)."""
    dx = dy.copy()
    dx[index] = 0
    return dx, None, unbroadcast(dy[index], value) if not isinstance(value, bool) else None


@adjoint(mt.setitem)
def setitem(x, index, value):
    if type(index) is int and type(x) is np.ndarray and x.ndim == 1 and x.dtype.kind == "f" \
            and type(value) in _REAL_NUMBERS:
        return _set_number(x, index, value)
    if isinstance(x, np.ndarray) or getattr(type(x), "__zygote_number__", False) and hasattr(x, "shape"):
        if isinstance(x, np.ndarray) and getattr(type(value), "__zygote_number__", False):
            raise ForwardModeError(STORE_INTO_PLAIN_ARRAY)
        keep = _repeats(index, x) if type(index) is not int else None
        written_real = getattr(x, "dtype", None) is None or x.dtype.kind in "fc"
        entry = mt.journal_slot(x, index)
        x[index] = value

        def back(dy, need=None, *into):
            entry.undo(lambda: mt.slot_copy(x[index]))
            if dy is None:
                return into or (None, None, None)
            dv = dy[index]
            if keep is not None:  # repeated positions: only the last write of each reaches the output
                dv = dv * keep.reshape(keep.shape + (1,) * (dv.ndim - 1))
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
    if isinstance(x, list):
        if not (isinstance(index, int) or isinstance(index, slice) and index.step in (None, 1)):
            raise ZygoteError("zygotepy cannot differentiate a list update with an extended slice (x[a:b:c] = v)")
        n, before = len(x), x[index]
        twins = ()
        if isinstance(index, int):
            entry = mt.Entry(lambda s: x.__setitem__(index, s), before, x)
            now = lambda: x[index]
            twins = _twin_slots(x, index % n if n else index, value)
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
                for j in twins:  # the same object in another slot: read after the write, it is the written value
                    dv, dx[j] = rt.acc(dv, dx[j]), None
                return _added(into, (dx, None, dv))
            k = len(dy) - (n - len(before))  # how many items the slice holds now
            dv = like(value, list(dy[start:start + k])) if k else None
            return _added(into, (list(dy[:start]) + [None] * len(before) + list(dy[start + k:]), None, dv))
        return x, back
    if isinstance(x, dict):
        had, old = index in x, x.get(index)
        x[index] = value

        def restore(state):
            if state[0]:
                x[index] = state[1]
            else:
                x.pop(index, None)
        entry = mt.Entry(restore, (had, old), x)

        def back(dy, need=None, *into):
            entry.undo(lambda: (True, x[index]))
            if dy is None:
                return into or (None, None, None)
            return _added(into, (_dict_without(dy, index), None if had else key_cotangent(index), dy.get(index)))
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
    entry = mt.Entry(lambda s: x.__setitem__(index, s), xp.asarray(x[index], copy=True), x)
    x[index] = value

    def back(dy, need=None, *into):
        entry.undo(lambda: xp.asarray(x[index], copy=True))
        if dy is None:
            return into or (None, None, None)
        dv = unbroadcast(dy[index], value) if not isinstance(value, bool) else None
        dx = xp.asarray(dy, copy=True)
        dx[index] = 0
        return _added(into, (dx, None, dv))
    return x, back


def _twin_slots(x, index, value):
    """The other slots of the list `x` that hold the very object just written at `index` (`both = [a, a]`, then
    `both[1] *= 2`, an update in place through slot 1): a read of one of them after the write reads the written object,
    so its cotangent must reach the value written (through the update's own back), not the slot's older entry. Only
    objects an update in place can change (arrays, lists, dicts, class instances): equal numbers may be one object
    by chance (cached constants), which says nothing about where their gradients go."""
    if isinstance(value, (int, float, complex, str, bytes, tuple, type(None), np.generic)):
        return ()
    return tuple(j for j, item in enumerate(x) if item is value and j != index)


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
    def restore(state):
        if state[0]:
            object.__setattr__(obj, name, state[1])
        elif _attr_state(obj, name)[0]:
            object.__delattr__(obj, name)
    return restore


def _check_plain_attribute(obj, name):
    desc = inspect.getattr_static(type(obj), name, None)
    if isinstance(type(obj).__setattr__, types.FunctionType) or hasattr(type(desc), "__set__") \
            and not isinstance(desc, types.MemberDescriptorType):
        raise ZygoteError(f"zygotepy cannot differentiate assigning {type(obj).__name__}.{name}: a property setter "
                          f"or __setattr__ runs; assign the underlying attribute, or add an @adjoint rule")


@adjoint(mt.setattr_)
def setattr_(obj, name, value):
    _check_plain_attribute(obj, name)
    entry = mt.Entry(_attr_restorer(obj, name), _attr_state(obj, name), obj)
    setattr(obj, name, value)

    def back(dy):
        entry.undo(lambda: _attr_state(obj, name))
        dy = as_fields(obj, dy)
        if dy is None:
            return (None, None, None)
        rest = {k: v for k, v in dy.items() if k != name and v is not None}
        return (StructGrad(rest) if rest else None, None, dy.get(name))
    return obj, back


@adjoint(mt.delattr_)
def delattr_(obj, name):
    entry = mt.Entry(_attr_restorer(obj, name), _attr_state(obj, name), obj)
    delattr(obj, name)

    def back(dy):
        entry.undo(lambda: _attr_state(obj, name))
        return (as_fields(obj, dy), None)
    return obj, back


@adjoint(mt.delitem)
def delitem(x, index):
    if isinstance(x, list):
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


@adjoint(mt.same_or)
def same_or(alias, old, new):
    same = new is old
    return (new if same else alias), lambda dy: (None, None, dy) if same else (dy, None, None)


@adjoint(mt.same_as)
def same_as(var, old, new):
    same = var is old
    return (new if same else var), lambda dy: (None, None, dy) if same else (dy, None, None)


def _keyword_grads(kwargs, grads=None):
    return () if not kwargs else ({k: (grads or {}).get(k) for k in kwargs},)


@adjoint(mt.valuecall)
def valuecall(fn, *args, **kwargs):
    return _mutcall(fn, args, kwargs, True)


@adjoint(mt.mutcall)
def mutcall(fn, *args, **kwargs):
    return _mutcall(fn, args, kwargs, False)


def _mutcall(fn, args, kwargs, result_used):
    """A call that may update its arguments: `(result, *args)`. Mutating methods of lists, dicts and arrays have
    rules above; a Python function that updates its parameters returns their final versions (lower.py), whose
    cotangents its backward takes through `J_mutating`; anything else is assumed to leave its arguments alone.
    `result_used` (valuecall): never run code zygotepy cannot read as is, since its result would carry no gradient."""
    if fn is rt.callmethod and len(args) >= 2 and isinstance(args[0], types.ModuleType):
        # `mod.f(...)` with the module bound to a local name (`import operator` in a function): the function itself
        out, inner = _mutcall(getattr(args[0], args[1]), args[2:], kwargs, result_used)

        def module_back(dy):
            grads = inner(None if dy is None else (dy[0], *dy[3:]))
            return (None, None, None, *grads[1:])
        return (out[0], *args[:2], *out[1:]), module_back
    if fn is rt.callmethod and args and not isinstance(args[0], set):
        mark = len(current().log)
        hit = method_call(args[0], args[1], args[2:], kwargs)
        if hit is not None:
            mt.passed_through(args[2:], mark)
            result, mback = hit
            out = (result, *args)

            def back(dy):  # the method's arguments are not updated: their cotangents after the call pass through
                dr, dobj = (None, None) if dy is None else (dy[0], dy[1])
                grads = mback(dr, dobj)
                after = dy[3:] if dy is not None else (None,) * (len(args) - 2)
                kw = grads[-1] if kwargs and isinstance(grads[-1], dict) and len(grads) == len(args) else None
                return (None, grads[0], None, *map(rt.acc, grads[1:len(args) - 1], after), *_keyword_grads(kwargs, kw))
            return out, back
    if fn is mt.with_out:
        return _with_out(args, kwargs)
    if fn in (operator.setitem, operator.delitem) and len(args) == (3 if fn is operator.setitem else 2) \
            and not kwargs:  # `setitem(y, i, v)` not seen as one by lower() (operator bound to a local name)
        return _store_call(fn, args)
    if fn is np.copyto:
        return _copyto(*args, **kwargs)
    if getattr(fn, "__self__", None) in (np.add, np.subtract) and getattr(fn, "__name__", "") == "at" \
            and len(args) == 3 and not kwargs:
        return _add_at(*args, sign=1 if fn.__self__ is np.add else -1)
    if fn in _UNTRACKED_FUNCTIONS or mt.updates_first_argument(fn) or type(fn) is not types.FunctionType \
            and getattr(fn, "__name__", "") in ("shuffle",):
        if not any(differentiable(a) for a in (*args, *kwargs.values())):  # an update of data: runs as is
            return (fn(*args, **kwargs), *args), _constant_back(len(args), kwargs)
        name = _update_name(fn)
        raise ZygoteError(f"zygotepy cannot differentiate {name}, which updates its argument in place; write the "
                          f"update as x[...] = ... (x[i] += v with repeated indices: np.add.at), or add an @adjoint "
                          f"rule")
    # nothing it could update (a module's function reached as `xps.sort(x)` through a closure cell, which the transform
    # could not tell from list.sort): still an ordinary differentiable call, whose result may well be used
    if result_used and not any(differentiable(a) for a in (*args, *kwargs.values())):
        # nothing carries a gradient in, so nothing can carry one out (as for any inactive call): it just runs
        return (fn(*args, **kwargs), *args), _constant_back(len(args), kwargs)
    updates = any(_mutable(a) for a in args)
    mark = len(current().log)
    try:
        result, pb, consumed = J_mutating(fn, args, kwargs, updates)
    except (MissingAdjoint, UnsupportedSyntax) as e:
        if result_used or not _before_running(e, fn, args):
            raise
        # a call statement into code zygotepy cannot read (a library's C or unsupported Python): it runs as is, as a
        # call whose result is dropped always did; its arguments are taken as not updated, which is checked for
        # float arrays (an update unseen would leave their gradients silently wrong)
        before = [(a, a.copy()) for a in (*args, *kwargs.values()) if type(a) is np.ndarray and a.dtype.kind in "fc"]
        result = fn(*args, **kwargs)
        for a, copy in before:
            if not np.array_equal(a, copy, equal_nan=True):
                raise ZygoteError(f"zygotepy cannot differentiate {_update_name(fn)}, which updated an argument "
                                  f"array in place and has no adjoint rule; write the update as x[...] = ..., or "
                                  f"add an @adjoint rule") from e
        return (result, *args), _constant_back(len(args), kwargs)
    # the arguments it did not update are left as they were: their holders' links need not assume they changed
    mt.passed_through(args, mark)
    out = (result, *(a.__self__ if type(a) is super else a for a in args))

    def back(dy):
        dr, dargs = (None, (None,) * len(args)) if dy is None else (dy[0], dy[1:])
        # (a number is never updated in place, and equal numbers may be one object: its cotangent passes through)
        finals = {id(a): g for a, g in zip(out[1:], dargs, strict=True) if g is not None and not mt.is_number(a)}
        # a callee that updated nothing and whose result got no cotangent has nothing to give (or to undo)
        grads = pb(dr, finals) if dr is not None or consumed else (None,) * (1 + len(args))
        through = [None if id(a) in consumed else g for a, g in zip(out[1:], dargs, strict=True)]
        gs = [rt.acc(g, t) for g, t in zip(grads[1:1 + len(args)], through, strict=True)]
        kw = grads[1 + len(args)] if kwargs and len(grads) > 1 + len(args) else None  # (None: nothing came back)
        return (grads[0], *gs, *_keyword_grads(kwargs, kw))
    return out, back


def _store_call(fn, args):
    """`operator.setitem(x, i, v)` / `operator.delitem(x, i)` as a call that may update its arguments."""
    _, store_back = (setitem if fn is operator.setitem else delitem)(*args)

    def back(dy):
        g = store_back(None if dy is None else dy[1])
        after = dy[3] if dy is not None and len(args) == 3 else None  # (the value written is not updated)
        return (None, g[0], None, *((rt.acc(g[2], after),) if len(args) == 3 else ()))
    return (None, *args), back


def _mutable(x):
    # (a dual array, which a reverse pass carries in `hessian`, is updated in place as the array it wraps; so is an
    # array of another library, which may hold no `__dict__`)
    return isinstance(x, (list, dict, set, np.ndarray, super)) or _is_array(x) or is_array_type(type(x)) \
        or hasattr(x, "__dict__") and not isinstance(
        x, (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.MethodType))


def _constant_back(n, kwargs):
    """`(result, *args)` of a call no gradient flows through: the arguments' cotangents pass through unchanged."""
    def back(dy):
        return (None, *((None,) * n if dy is None else dy[1:]), *_keyword_grads(kwargs))
    return back


def _callee_code(fn, args):
    if fn is rt.callmethod:
        fn = getattr(type(args[0]), args[1], None) or getattr(args[0], args[1], None)
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__code__", None), fn


def _before_running(error, fn, args):
    """Did `error` come from reading the callee itself (its missing rule or source, its unsupported syntax), before
    any of it ran?"""
    code, target = _callee_code(fn, args)
    if isinstance(error, MissingAdjoint):
        return error.callee is target or error.callee is fn
    return code is not None and error.filename == code.co_filename and \
        code.co_firstlineno <= error.lineno <= max((ln for _, _, ln in code.co_lines() if ln), default=0)


mutcall.__zygote_keywords__ = valuecall.__zygote_keywords__ = True  # its back returns the keyword arguments'
# cotangents too, as a last dict


def _with_out(args, kwargs):
    """`fn(*args, out=out)`: `out` is overwritten with the result, which is `out` itself."""
    fn, *fargs, out = args
    where = kwargs.get("where", True)  # `np.add(y, x, out=y, where=mask)`: only the masked entries are written
    inner = {k: v for k, v in kwargs.items() if k != "where"}
    result, pb, _ = J_mutating(fn, tuple(fargs), inner, updates=False)
    if not isinstance(out, np.ndarray):
        raise ZygoteError(f"zygotepy cannot differentiate {getattr(fn, '__name__', fn)}(..., out=...) with this "
                          f"out or where; write the update as out[...] = ...")
    entry = mt.journal_whole(out)
    np.copyto(out, result, casting="same_kind", where=where)
    real = out.dtype.kind in "fc"  # written into an int array: truncated data, no cotangent

    def back(dy):
        entry.undo(lambda: out.copy())
        dr, dout = (None, None) if dy is None else (dy[0], dy[-1])
        total = rt.acc(dr, dout)
        kept = None
        if total is not None and where is not True:
            mask = np.broadcast_to(where, out.shape)
            total, kept = np.where(mask, total, 0), np.where(mask, 0, total)
        grads = pb(unbroadcast(total, result) if total is not None and real else None, {})
        kw = grads[-1] if inner else None
        return (None, None, *grads[1:1 + len(fargs)], kept, *_keyword_grads(kwargs, kw))
    return (out, fn, *fargs, out), back


_UNTRACKED_FUNCTIONS = (np.fill_diagonal, np.put, np.place, np.putmask)


def _update_name(fn):
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"np.{owner.__name__}.{fn.__name__}"
    return f"np.{fn.__name__}" if getattr(np, getattr(fn, "__name__", ""), None) is fn else getattr(fn, "__name__", fn)


def _add_at(x, index, value, sign=1):
    """`np.add.at(x, index, value)`: unbuffered `x[index] += value` (repeated positions add up); `np.subtract.at`
    (sign -1) subtracts."""
    entry = mt.journal_whole(x)
    (np.add if sign == 1 else np.subtract).at(x, index, value)

    def back(dy):
        entry.undo(lambda: x.copy())
        if dy is None:
            return (None, None, None, None)
        dx, dv = dy[1], dy[3]
        if dx is not None and getattr(getattr(x, "dtype", None), "kind", "f") in "fc":
            g = unbroadcast(np.asarray(dx)[index], value)
            dv = rt.acc(dv, g if sign == 1 else -g)
        return (None, dx, None, dv)
    return (None, x, index, value), back


def _copyto(dst, src, **kwargs):
    if "where" in kwargs:
        raise ZygoteError("zygotepy cannot differentiate np.copyto(..., where=...); use dst[mask] = src[mask]")
    entry = mt.journal_whole(dst)
    np.copyto(dst, src, **kwargs)
    real = getattr(dst, "dtype", np.dtype(float)).kind in "fc"  # into an int array: truncated data, no cotangent

    def back(dy):
        entry.undo(lambda: dst.copy())
        if dy is None:
            return (None, None, None, *_keyword_grads(kwargs))
        into = unbroadcast(dy[1], src) if dy[1] is not None and real else None
        return (None, None, rt.acc(dy[2], into), *_keyword_grads(kwargs))
    return (None, dst, src), back


# --- augmented assignment on arrays: in place, as in Python ------------------------------------------------------------

def _list_repeat(a, n):
    entry = mt.journal_whole(a)
    k = len(a)
    a *= n

    def back(dy):
        entry.undo(lambda: list(a))
        if dy is None or not k:
            return (None, None)
        return ([_sum_of(dy[i::k]) for i in range(k)], None)
    return a, back


def _sum_of(grads):
    total = None
    for g in grads:
        total = rt.acc(total, g)
    return total


def _in_place_rule(plain, inplace, rule=None):
    """`a op= b` for the in-place operator `inplace`: a NumPy array is updated in place, as Python does (an alias sees
    the new values), with a journal entry its back undoes, so a value saved earlier is read as it was. That holds for
    every operator, not only those with a scalar fast path: `y @= M`, `y **= 2`, `y %= m`, `y //= m` too."""
    rule = find_rule(plain) if rule is None else rule

    def in_place(a, b):
        if type(a) is list and plain is operator.add:  # `lst += items` extends the list itself
            _, extend_back = _list_extend(a, b)
            return a, lambda dy: extend_back(None, dy)
        if type(a) is list and plain is operator.mul:  # `lst *= n` repeats the list itself
            return _list_repeat(a, b)
        if type(a) is not np.ndarray:
            if _dual_of_array(a):  # forward mode's number standing for an array (hessian): in place, as the array is
                return _elsewhere_in_place(rule, a, b, _dual_copy)
            if _mutable_foreign_array(a):  # a torch tensor (CuPy, array-API array): in place, as that library does
                return _elsewhere_in_place(rule, a, b, _library_copy)
            return rule(a, b)  # a number (immutable: `+=` rebinds) or an immutable array (JAX)
        old = a.copy()
        if a.dtype.kind in "fc":
            y, pb = rule(old, b)
            if np.shape(y) != a.shape:  # `a @= v` with a 1-d `v`: NumPy refuses to change the shape of `a`
                inplace(old, b)  # raises NumPy's own error
                raise ValueError(f"{plain.__name__} in place would change the shape of {a.shape} into {np.shape(y)}")
            np.copyto(a, y, casting="same_kind")
        else:  # an int or bool array holds data: updated as Python does, no cotangent
            inplace(a, b)
            pb = None
        entry = mt.Entry(lambda s: a.__setitem__(Ellipsis, s), old, a)

        def back(dy):
            entry.undo(lambda: a.copy())
            return pb(dy) if dy is not None and pb is not None else (None, None)
        return a, back
    in_place.__qualname__ = f"i{plain.__name__}_rule"
    return in_place


def _dual_of_array(a):
    if not getattr(type(a), "__zygote_number__", False):
        return False
    from ..forward.dual import strip  # (forward mode imports the rule tables)
    return isinstance(strip(a), np.ndarray)


_MUTABLE_ARRAY_PACKAGES = ("torch", "cupy", "array_api_strict")  # (JAX's arrays are immutable: `+=` rebinds)


def _mutable_foreign_array(a):
    return type(a).__module__.partition(".")[0] in _MUTABLE_ARRAY_PACKAGES and hasattr(a, "shape")


def _dual_copy(a):
    return a.copy()


def _library_copy(a):
    from ..backends import namespace
    return namespace(a).asarray(a, copy=True)


def _elsewhere_in_place(rule, a, b, copy):
    """`a op= b` on an array that is not NumPy's but is updated in place (forward mode's dual number of an array, which
    forward-over-reverse runs the reverse code on; a torch tensor) updates it in place, as its library does: a list or
    an alias holding it sees the change (a new value left `vs` unchanged after `for v in vs: v *= c`: a silently
    wrong gradient). Its values before go in the journal, as for a NumPy array."""
    old = copy(a)
    if "float" not in str(a.dtype) and "complex" not in str(a.dtype):  # data: updated as the library does
        a[...] = rule(old, b)[0]
        pb = None
    else:
        y, pb = rule(old, b)
        if tuple(y.shape) != tuple(a.shape):
            raise ValueError(f"an operator in place would change the shape of {tuple(a.shape)} into {tuple(y.shape)}")
        a[...] = y
    entry = mt.Entry(lambda s: a.__setitem__(Ellipsis, s), old, a)

    def back(dy):
        entry.undo(lambda: copy(a))
        return pb(dy) if dy is not None and pb is not None else (None, None)
    return a, back


def _floordiv(a, b):
    """`a // b` is piecewise constant: no cotangent reaches its operands."""
    return a // b, lambda dy: (None, None)


_IN_PLACE_OPERATORS = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
                      operator.itruediv: operator.truediv, operator.ipow: operator.pow, operator.imod: operator.mod,
                      operator.imatmul: operator.matmul, operator.ifloordiv: operator.floordiv}
for _op, _plain in _IN_PLACE_OPERATORS.items():
    adjoint(_op)(_in_place_rule(_plain, _op, _floordiv if _plain is operator.floordiv else None))
    mutating(_op, if_active=True)
nondifferentiable(operator.ifloordiv)  # its result carries no gradient; the rule above only keeps the update undoable


# --- `|` and `|=`: a dict merge routes cotangents; on anything else (ints, bools, sets, masks) the result is data ------

def _merge_cotangents(keys_a, b, dy):
    """The cotangents of `a` (whose keys were `keys_a`) and of the dict `b` from `dy`, that of `a | b`: an entry of
    `b` wins a key both have, so `a`'s entry there receives nothing."""
    if dy is None:
        return None, None
    da = {k: None if k in b else dy.get(k) for k in keys_a}
    db = {k: dy.get(k) for k in b}
    return (da if any(g is not None for g in da.values()) else None,
            db if any(g is not None for g in db.values()) else None)


def _check_merge(a, b):
    if not isinstance(b, dict):
        raise ZygoteError(f"zygotepy cannot differentiate merging a {type(b).__name__} into a dict with `|`; merge "
                          f"a dict (d | dict(pairs))")


@adjoint(operator.or_)
def or_(a, b):
    y = a | b
    if not isinstance(a, dict):
        return y, lambda dy: (None, None)
    _check_merge(a, b)
    keys = list(a)
    return y, lambda dy: _merge_cotangents(keys, b, dy)


@adjoint(operator.ior)
def ior(a, b):
    """`a |= b`: a dict or a set is updated in place, as Python does (an alias sees it), and its back undoes that."""
    if type(a) is dict:
        _check_merge(a, b)
        entry = mt.journal_whole(a)
        keys = list(a)
        a |= b

        def back(dy):
            entry.undo(lambda: dict(a))
            return _merge_cotangents(keys, b, dy)
        return a, back
    entry = mt.journal_whole(a) if isinstance(a, (set, np.ndarray)) else None  # data, updated in place
    y = operator.ior(a, b)

    def back(dy):
        if entry is not None:
            entry.undo(lambda: mt.snapshot(a))
        return (None, None)
    return y, back


mutating(operator.ior, if_active=True)

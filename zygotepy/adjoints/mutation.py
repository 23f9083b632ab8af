"""Rules for updates in place: item and attribute stores, `del`, list/dict/array methods that mutate, calls that may
update their arguments, `out=`, and augmented assignment on arrays.

Each primitive maps an old version of an object to its new version (the same object, see lower_mutation). Its `back`
gets the new version's cotangent and returns the old version's: the slot written receives nothing from before, its
cotangent goes to the value written. Every `back` first undoes its update (mutate.Journal), so the backward of anything
that ran earlier sees the values it saw; these rules are in `registry.MUTATING`, so the adjoint pass calls their `back`
even when no cotangent reached the new version.
"""
import functools
import inspect
import operator
import types

import numpy as np

from ..ast_adjoint import mutate as mt
from ..ast_adjoint import runtime as rt
from ..ast_adjoint.dispatch import J_mutating
from ..backends import unbroadcast
from ..errors import MissingAdjoint, UnsupportedSyntax, ZygoteError
from ..structgrad import StructGrad
from .mutation_methods import _list_extend, method_call
from .objects import as_fields
from .registry import adjoint, find_rule, mutating, nondifferentiable
from .structures import like

mutating(mt.setitem, mt.setattr_, mt.delitem, mt.delattr_, mt.put_item, mt.put_attr, mt.put_held, mt.refresh,
         mt.refresh_held, mt.mutcall)
nondifferentiable(mt.global_method, mt.global_read)


def _zeros_like(x):
    return np.zeros(np.shape(x), dtype=x.dtype if getattr(x, "dtype", None) is not None and x.dtype.kind in "fc"
                    else np.float64)


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


def _dict_without(dy, key):
    return None if dy is None else {k: v for k, v in dy.items() if k != key} or None


def _added(into, grads):
    """A back's cotangents added to the running ones generated code handed it (`registry.accumulates`), if any."""
    return tuple(rt.acc(a, g) for a, g in zip(into, grads, strict=True)) if into else grads


# --- x[i] = v ----------------------------------------------------------------------------------------------------------

@adjoint(mt.setitem)
def setitem(x, index, value):
    if isinstance(x, np.ndarray) or getattr(type(x), "__zygote_number__", False) and hasattr(x, "shape"):
        keep = _repeats(index, x) if type(index) is not int else None
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
            dv = unbroadcast(dv, value) if not isinstance(value, (int, bool)) else None
            return _added(into, (dx, None, dv))
        return x, back
    if isinstance(x, list):
        if not (isinstance(index, int) or isinstance(index, slice) and index.step in (None, 1)):
            raise ZygoteError("zygotepy cannot differentiate a list update with an extended slice (x[a:b:c] = v)")
        n, before = len(x), x[index]
        if isinstance(index, int):
            entry = mt.Entry(lambda s: x.__setitem__(index, s), before, x)
            now = lambda: x[index]
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
            return _added(into, (_dict_without(dy, index), None, dy.get(index)))
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


# --- obj.a = v and del ---------------------------------------------------------------------------------------------------

def _attr_state(obj, name):
    return (True, obj.__dict__[name]) if hasattr(obj, "__dict__") and name in obj.__dict__ else \
        (hasattr(obj, name), getattr(obj, name, None))


def _attr_restorer(obj, name):
    def restore(state):
        if state[0]:
            object.__setattr__(obj, name, state[1])
        elif hasattr(obj, name):
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


# --- a child's update reaches its parent, a parent's its views ---------------------------------------------------------

def _is_view_of(child, parent):
    return isinstance(child, np.ndarray) and isinstance(parent, np.ndarray) and child.base is not None \
        and mt.base_of(child) is mt.base_of(parent)


def _holds(parent, kind, key, child):
    """Is `child` (or a view of its data) what `parent[key]` / `parent.key` is?"""
    if isinstance(parent, np.ndarray):
        return _is_view_of(child, parent)
    try:
        current = getattr(parent, key) if kind == "attr" else parent[key]
    except (KeyError, IndexError, AttributeError, TypeError):
        return False
    return current is child


def _put(kind):
    def put(parent, key, child):
        holds = _holds(parent, kind, key, child)
        if holds:
            mt.LOG.append(id(parent))  # updated through its item or attribute (dispatch checks arguments' updates)

        def back(dy):
            if dy is None or not holds:
                return (dy, None, None)
            if kind == "attr":
                dy = as_fields(parent, dy)
                rest = {k: v for k, v in dy.items() if k != key and v is not None}
                return (StructGrad(rest) if rest else None, None, dy.get(key))
            if isinstance(parent, np.ndarray):
                dchild = dy[key]
                dp = dy.copy()
                dp[key] = 0
                return (dp, None, dchild)
            if isinstance(parent, dict):
                return (_dict_without(dy, key), None, dy.get(key))
            dp = list(dy)
            dchild, dp[key] = dp[key], None
            return (type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp), None, dchild)
        return parent, back
    return put


adjoint(mt.put_item)(_put("item"))
adjoint(mt.put_attr)(_put("attr"))


_ATOMS = (int, float, complex, bool, str, bytes, type(None), types.ModuleType, type, types.BuiltinFunctionType)


def _where_held(parent, child, depth=0, seen=None):
    """Where `child` sits inside `parent`, found by identity through lists, tuples, dicts and attributes: "self",
    (kind "seq"/"dict"/"obj", [(key, item, plan), ...]), "view" (an array sharing `child`'s data), "opaque" (held
    where a cotangent cannot be routed: a closure's cell, a `partial`, a `__slots__` object), or None (not held)."""
    if parent is child:
        return "self"
    if isinstance(parent, np.ndarray):
        return "view" if isinstance(child, np.ndarray) and np.may_share_memory(parent, child) else None
    if depth > 8 or isinstance(parent, _ATOMS):
        return None
    seen = set() if seen is None else seen
    if id(parent) in seen:
        return None
    seen.add(id(parent))
    if isinstance(parent, (list, tuple)):
        kind, items = "seq", enumerate(parent)
    elif isinstance(parent, dict):
        kind, items = "dict", parent.items()
    elif isinstance(parent, (types.FunctionType, types.MethodType, functools.partial)):
        inner = [parent.__self__, parent.__func__] if isinstance(parent, types.MethodType) else \
            [parent.func, parent.args, parent.keywords] if isinstance(parent, functools.partial) else \
            [c.cell_contents for c in parent.__closure__ or () if _filled(c)] + list(parent.__defaults__ or ())
        return "opaque" if any(_where_held(v, child, depth + 1, seen) for v in inner) else None
    elif hasattr(parent, "__dict__"):
        kind, items = "obj", vars(parent).items()
    else:
        slots = [n for c in type(parent).__mro__ for n in getattr(c, "__slots__", ())]
        inner = [getattr(parent, n, None) for n in ([slots] if isinstance(slots, str) else slots)]
        return "opaque" if any(_where_held(v, child, depth + 1, seen) for v in inner) else None
    found = [(k, v, plan) for k, v in list(items) if (plan := _where_held(v, child, depth + 1, seen)) is not None]
    return (kind, found) if found else None


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _held_error(where, plan):
    file, line, other, made = where
    what = "a view of its data" if plan == "view" else "a value zygotepy cannot look into (a closure's cell, a " \
        "partial's argument, a __slots__ attribute)"
    made = f" (linked at line {made})" if made is not None else ""
    return ZygoteError(f"{file}:{line}: zygotepy cannot differentiate this update in place: it changes an array that "
                       f"'{other}'{made} shares as {what}, and the gradient cannot be routed through that; copy the "
                       f"array before it is kept (W.copy()), or make the update before")


def _split(plan, parent, dy, where):
    """`parent`'s cotangent `dy` -> (the part not at `child`'s places, the sum of the parts at them)."""
    if dy is None:
        return None, None
    if plan == "self":
        return None, dy
    if not isinstance(plan, tuple):
        raise _held_error(where, plan)
    kind, found = plan
    dchild = None
    if kind == "seq":
        dp = list(dy)
        for k, item, sub in found:
            dp[k], d = _split(sub, item, dp[k], where)
            dchild = rt.acc(dchild, d)
        return (type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp)), dchild
    dp = dict(as_fields(parent, dy) if kind == "obj" else dy)
    for k, item, sub in found:
        dp[k], d = _split(sub, item, dp.get(k), where)
        dchild = rt.acc(dchild, d)
    rest = {k: v for k, v in dp.items() if v is not None}
    return ((StructGrad(rest) if kind == "obj" else rest) or None), dchild


def _place(plan, parent, dy, where):
    """A cotangent of `parent` that is `dy` at the first place where `child` sits, nothing elsewhere."""
    if plan == "self":
        return dy
    if not isinstance(plan, tuple):
        raise _held_error(where, plan)
    kind, ((k, item, sub), *_) = plan
    inner = _place(sub, item, dy, where)
    if kind == "seq":
        dp = [None] * len(parent)
        dp[k] = inner
        return type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp)
    return StructGrad({k: inner}) if kind == "obj" else {k: inner}


@adjoint(mt.put_held)
def put_held(parent, where, child):
    """`child` may sit somewhere in `parent` (found by identity now, at any depth): the cotangents there are
    `child`'s. `where` is (file, line of the update, parent's name, line of the call that made the link)."""
    plan = _where_held(parent, child) if parent is not child else "self"
    if plan is not None:
        mt.LOG.append(id(parent))

    def back(dy):
        if dy is None or plan is None:
            return (dy, None, None)
        rest, dchild = _split(plan, parent, dy, where)
        return (rest, None, dchild)
    return parent, back


@adjoint(mt.refresh_held)
def refresh_held(child, parent, where):
    """`child` may sit somewhere in `parent`, which was updated in place: `child`'s cotangent is `parent`'s there."""
    plan = _where_held(parent, child)

    def back(dy):
        if dy is None:
            return (None, None, None)
        if plan is None:
            return (dy, None, None)
        return (None, _place(plan, parent, dy, where), None)
    return child, back


@adjoint(mt.refresh)
def refresh(child, parent, kind, key):
    """A NumPy view is `parent[key]` again after the parent's update; anything else is unchanged by it."""
    view = kind in ("item", "attr") and _is_view_of(child, parent)  # `x[1:]`, `W.T`

    def back(dy):
        if dy is None:
            return (None, None, None, None)
        if not view:
            return (dy, None, None, None)
        dp = _zeros_like(parent)
        if kind == "item":
            dp[key] = dy
            return (None, dp, None, None)
        target = getattr(dp, key, None)
        if not (isinstance(target, np.ndarray) and target.shape == np.shape(dy) and np.shares_memory(target, dp)):
            raise ZygoteError(f"zygotepy cannot differentiate reading the view .{key} of an array after the array "
                              f"was updated in place; take the view after the update, or copy it")
        target[...] = dy
        return (None, dp, None, None)
    return child, back


@adjoint(mt.same_or)
def same_or(alias, old, new):
    same = new is old
    return (new if same else alias), lambda dy: (None, None, dy) if same else (dy, None, None)


def _keyword_grads(kwargs, grads=None):
    return () if not kwargs else ({k: (grads or {}).get(k) for k in kwargs},)


@adjoint(mt.mutcall)
def mutcall(fn, *args, **kwargs):
    """A call that may update its arguments: `(result, *args)`. Mutating methods of lists, dicts and arrays have
    rules above; a Python function that updates its parameters returns their final versions (lower.py), whose
    cotangents its backward takes through `J_mutating`; anything else is assumed to leave its arguments alone."""
    if fn is rt.callmethod and args and not isinstance(args[0], set):
        hit = method_call(args[0], args[1], args[2:], kwargs)
        if hit is not None:
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
    if fn is np.copyto:
        return _copyto(*args, **kwargs)
    if getattr(fn, "__self__", None) is np.add and getattr(fn, "__name__", "") == "at":
        return _add_at(*args)
    if fn in _UNTRACKED_FUNCTIONS or type(fn) is not types.FunctionType and getattr(fn, "__name__", "") in (
            "shuffle",):
        raise ZygoteError(f"zygotepy cannot differentiate {getattr(fn, '__name__', fn)}, which updates its argument "
                          f"in place; write the update as x[...] = ..., or add an @adjoint rule")
    # nothing it could update (a module's function reached as `xps.sort(x)` through a closure cell, which the transform
    # could not tell from list.sort): still an ordinary differentiable call, whose result may well be used
    updates = any(_mutable(a) for a in args)
    try:
        result, pb, consumed = J_mutating(fn, args, kwargs, updates)
    except (MissingAdjoint, UnsupportedSyntax) as e:
        if not _before_running(e, fn, args):
            raise
        # a call statement into code zygotepy cannot read (a library's C or unsupported Python): it runs as is, as a
        # call whose result is dropped always did; its arguments are taken as not updated
        return (fn(*args, **kwargs), *args), _constant_back(len(args), kwargs)
    out = (result, *(a.__self__ if type(a) is super else a for a in args))

    def back(dy):
        dr, dargs = (None, (None,) * len(args)) if dy is None else (dy[0], dy[1:])
        finals = {id(a): g for a, g in zip(out[1:], dargs, strict=True) if g is not None}
        # a callee that updated nothing and whose result got no cotangent has nothing to give (or to undo)
        grads = pb(dr, finals) if dr is not None or consumed else (None,) * (1 + len(args))
        through = [None if id(a) in consumed else g for a, g in zip(out[1:], dargs, strict=True)]
        gs = [rt.acc(g, t) for g, t in zip(grads[1:1 + len(args)], through, strict=True)]
        return (grads[0], *gs, *_keyword_grads(kwargs, grads[1 + len(args)] if kwargs else None))
    return out, back


def _mutable(x):
    return isinstance(x, (list, dict, set, np.ndarray, super)) or hasattr(x, "__dict__") and not isinstance(
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


mutcall.__zygote_keywords__ = True  # its back returns the keyword arguments' cotangents too, as a last dict


def _with_out(args, kwargs):
    """`fn(*args, out=out)`: `out` is overwritten with the result, which is `out` itself."""
    fn, *fargs, out = args
    result, pb, _ = J_mutating(fn, tuple(fargs), kwargs, updates=False)
    entry = mt.journal_whole(out)
    np.copyto(out, result, casting="same_kind")

    def back(dy):
        entry.undo(lambda: out.copy())
        dr, dout = (None, None) if dy is None else (dy[0], dy[-1])
        total = rt.acc(dr, dout)
        grads = pb(unbroadcast(total, result) if total is not None else None, {})
        return (None, None, *grads[1:1 + len(fargs)], None, *_keyword_grads(kwargs, grads[-1] if kwargs else None))
    return (out, fn, *fargs, out), back


_UNTRACKED_FUNCTIONS = (np.fill_diagonal, np.put, np.place, np.putmask)


def _add_at(x, index, value):
    """`np.add.at(x, index, value)`: unbuffered `x[index] += value` (repeated positions add up)."""
    entry = mt.journal_whole(x)
    np.add.at(x, index, value)

    def back(dy):
        entry.undo(lambda: x.copy())
        if dy is None:
            return (None, None, None, None)
        dx, dv = dy[1], dy[3]
        if dx is not None:
            dv = rt.acc(dv, unbroadcast(dx[index], value))
        return (None, dx, None, dv)
    return (None, x, index, value), back


def _copyto(dst, src, **kwargs):
    if "where" in kwargs:
        raise ZygoteError("zygotepy cannot differentiate np.copyto(..., where=...); use dst[mask] = src[mask]")
    entry = mt.journal_whole(dst)
    np.copyto(dst, src, **kwargs)

    def back(dy):
        entry.undo(lambda: dst.copy())
        if dy is None:
            return (None, None, None)
        return (None, None, rt.acc(dy[2], unbroadcast(dy[1], src)))
    return (None, dst, src), back


# --- augmented assignment on arrays: in place, as in Python ------------------------------------------------------------

def _in_place_rule(plain):
    rule = find_rule(plain)

    def in_place(a, b):
        if type(a) is list and plain is operator.add:  # `lst += items` extends the list itself
            _, extend_back = _list_extend(a, b)
            return a, lambda dy: extend_back(None, dy)
        if type(a) is not np.ndarray or a.dtype.kind not in "fc":
            return rule(a, b)
        old = a.copy()
        y, pb = rule(old, b)
        entry = mt.Entry(lambda s: a.__setitem__(Ellipsis, s), old, a)
        np.copyto(a, y, casting="same_kind")

        def back(dy):
            entry.undo(lambda: a.copy())
            return pb(dy) if dy is not None else (None, None)
        return a, back
    in_place.__qualname__ = f"i{plain.__name__}_rule"
    return in_place


for _op, _plain in {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
                    operator.itruediv: operator.truediv}.items():
    adjoint(_op)(_in_place_rule(_plain))
    mutating(_op, if_active=True)

"""Rules for calls that may update their arguments (`mutcall`: a call statement; `valuecall`: a call whose result is
used): the mutating methods of lists, dicts and arrays (methods.py), a Python function that updates its parameters
(derived through `J_mutating`), `fn(..., out=out)`, `np.copyto`, `np.add.at` (and the other `at`s of array_calls.py),
`operator.setitem`; a library function known to update its argument with no rule, and code zygotepy cannot read that
changed a float array, raise a ZygoteError.
"""
import bisect
import collections
import contextlib
import functools
import heapq
import operator
import types

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import COMPILER, call_site
from ...ast_adjoint.dispatch import J_mutating, differentiable
from ...ast_adjoint.guards_runtime import carries_gradient, reads_gradients
from ...ast_adjoint.keywords import refuse_bound_out
from ...backends import is_array_type, unbroadcast
from ...structgrad import StructGrad
from ...errors import STORE_INTO_PLAIN_ARRAY, ForwardModeError, MissingAdjoint, UnsupportedSyntax, ZygoteError
from ...runtime.context import current
from ..in_place import unbound_method, updates_first, updates_first_argument
from .. import registry
from ..registry import adjoint
from .methods import method_call
from .overlap import _is_array, shares_memory
from .array_calls import UFUNC_AT, _copyto, _keyword_grads, at_shape, masked_cotangent, ufunc_at
from .held import hand_to_object, holding_arguments
from .overwrites import overwrite, overwrites
from .positionals import call_by_keyword, keywords_unchanged, moved_to_keywords
from .stores import delitem, setitem
from .reorders import REORDERS, reorder
from .user_updates import updating_user_rule, user_update


@adjoint(mt.valuecall, updates=True)
def valuecall(fn, *args, **kwargs):
    return _mutcall(fn, args, kwargs, True)


@adjoint(mt.mutcall, updates=True)
def mutcall(fn, *args, **kwargs):
    return _mutcall(fn, args, kwargs, False)


@adjoint(mt.splatcall, updates=True)
def splatcall(fn, *args, **kwargs):
    return _mutcall(fn, args, kwargs, False, keywords_taken=False)


@adjoint(mt.objectcall, updates=True)
def objectcall(fn, *args, **kwargs):
    return _mutcall(fn, args, kwargs, True, keywords_taken=False, object_only=True)


def _mutcall(fn, args, kwargs, result_used, keywords_taken=True, object_only=False):
    """A call that may update its arguments: `(result, *args, *kwargs.values())` (`helper(x, buf=y)` may update `y`).
    Mutating methods of lists, dicts and arrays have rules above; a Python function that updates its parameters
    returns their final versions (ast_adjoint/lower/), whose cotangents its backward takes through `J_mutating`;
    anything else is assumed to leave its arguments alone. `result_used` (valuecall): never run code zygotepy cannot
    read as is, since its result would carry no gradient."""
    if fn is rt.callmethod and len(args) >= 2 and (isinstance(args[0], types.ModuleType) or args[1] == "shuffle" and
                                                   not any(differentiable(a) for a in args[2:])):
        # `mod.f(...)` with the module bound to a local name (`import operator` in a function): the function itself;
        # `rng.shuffle(idx)` of data: a random generator's method, which updates its argument (below)
        out, inner = _mutcall(getattr(args[0], args[1]), args[2:], kwargs, result_used)

        def module_back(dy):
            grads = inner(None if dy is None else (dy[0], *dy[3:]))
            return (None, None, None, *grads[1:])
        return (out[0], *args[:2], *out[1:]), module_back
    if fn is rt.callobject:  # `cell(x)`: a callable object's `__call__` may update it, as a method its object
        obj, rest = args[0], args[1:]
        if not _user_callable(obj):  # (a function, a closure: the callee, not updated; its cotangent passes through)
            # (the callee itself may carry the gradient, `f = (x * b).sum; f()`: no shortcut for constant arguments)
            out, inner = _derived_call(obj, rest, kwargs, result_used, keywords_taken) if result_used and not any(
                differentiable(a) for a in (*rest, *kwargs.values())) else \
                _mutcall(obj, rest, kwargs, result_used, keywords_taken)

            def callee_back(dy):
                grads = inner(None if dy is None else (dy[0], *dy[2:]))
                return (None, grads[0] if dy is None else rt.acc(grads[0], dy[1]), *grads[1:])
            return (out[0], obj, *out[1:]), callee_back
        return _as_method(obj, "__call__", rest, kwargs, result_used, keywords_taken)
    moved = moved_to_keywords(fn, args)  # `X.sum(1, None, o)`, `y.put(i, v, "clip")`: run as the keyword form
    if moved is not None:
        return call_by_keyword(_mutcall, fn, args, kwargs, moved, result_used, keywords_taken)
    unbound = unbound_method(fn)
    if unbound is not None and args and type(args[0]) is unbound[0]:  # `list.append(ys, v)`: `ys.append(v)`'s rule
        return _as_method(args[0], unbound[1], args[1:], kwargs, result_used, keywords_taken)
    if fn is rt.callmethod and args:
        mark = len(current().log)
        hit = method_call(args[0], args[1], args[2:], kwargs)
        if hit is not None:
            mt.passed_through(args[2:], mark)
            result, mback = hit
            out = (result, *args)
            held = holding_arguments(args[0], args[2:])

            def back(dy):  # the method's arguments are not updated: their cotangents after the call pass through
                dr, dobj = (None, None) if dy is None else (dy[0], dy[1])
                after = dy[3:len(args) + 1] if dy is not None else (None,) * (len(args) - 2)
                if held:  # (but what they hold may have been: `r.children.append(k)`, k holding r)
                    after, dobj = hand_to_object(held, args[2:], after, dobj)
                grads = mback(dr, dobj)
                kw = grads[-1] if kwargs and isinstance(grads[-1], dict) and len(grads) == len(args) else None
                return (None, grads[0], None, *map(rt.acc, grads[1:len(args) - 1], after), *_keyword_grads(kwargs, kw))
            return keywords_unchanged(out, back, kwargs)
        if hasattr(args[0], "__dict__") and _user_callable(vars(args[0]).get(args[1])):  # `self.cell(x)`
            return _attribute_call(args, kwargs, result_used, keywords_taken)
    if fn is mt.with_out:
        return _with_out(args, kwargs, result_used)
    declared = updating_user_rule(fn)
    if declared is not None:  # (a user's rule declared `updates=True`: its target updates its first argument)
        return user_update(declared, fn, args, kwargs)
    if fn in REORDERS and args and type(args[0]) is list:  # (heapq's and bisect.insort: a permutation of the items)
        return reorder(fn, args, kwargs)
    if fn in (operator.setitem, operator.delitem) and len(args) == (3 if fn is operator.setitem else 2) \
            and not kwargs:  # `setitem(y, i, v)` not seen as one by lower() (operator bound to a local name)
        return _store_call(fn, args)
    if fn is np.copyto and "where" not in kwargs:
        return keywords_unchanged(*_copyto(*args, **kwargs), kwargs)
    owner = getattr(fn, "__self__", None)  # (`np.maximum.at(x, idx, v)`: array_calls.py)
    if isinstance(owner, np.ufunc) and owner in UFUNC_AT and fn.__name__ == "at" and len(args) == 3 and not kwargs:
        return ufunc_at(owner, *args)
    if updates_first(fn) or type(fn) is not types.FunctionType \
            and getattr(fn, "__name__", "") in ("shuffle",):
        if overwrites(fn, args, kwargs):  # (np.put, np.place, np.copyto(where=), ...: overwrites.py)
            return keywords_unchanged(*overwrite(fn, args, kwargs), kwargs)
        if not any(differentiable(a) for a in (*args, *kwargs.values())):  # an update of data: runs as is
            return _data_update(fn, args, kwargs)
        name = _update_name(fn)
        raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate {name}, which updates its argument "
                          f"in place; write the update as x[...] = ... (x[i] += v with repeated indices: np.add.at), "
                          f"or add an @adjoint rule")
    # nothing it could update (a module's function reached as `xps.sort(x)` through a closure cell, which the transform
    # could not tell from list.sort): still an ordinary differentiable call, whose result may well be used
    if result_used and not any(carries_gradient(a) for a in (*args, *kwargs.values())) and not reads_gradients(fn):
        # nothing carries a gradient in, so nothing can carry one out (as for any inactive call): it just runs
        return (fn(*args, **kwargs), *args, *kwargs.values()), _constant_back(len(args), kwargs)
    return _derived_call(fn, args, kwargs, result_used, keywords_taken, 1 if object_only else None)


def _data_update(fn, args, kwargs):
    """`fn(x, ...)` updating data `x` in place (`rng.shuffle(idx)`, `heapq.heapify(order)`): it runs as written, and
    its back puts `x`'s old values back, which an earlier operation's back reads (`y = x[idx]`: the gather's)."""
    entry = mt.journal_whole(args[0]) if args and isinstance(args[0], (np.ndarray, list)) else None
    out = fn(*args, **kwargs)
    constant = _constant_back(len(args), kwargs)

    def back(dy):
        if entry is not None:
            entry.undo(lambda: mt.snapshot(args[0]))
        return constant(dy)
    return (out, *args, *kwargs.values()), back


def _as_method(obj, name, rest, kwargs, result_used, keywords_taken):
    """`fn(obj, *rest)` run as `obj.name(*rest)` (`cell(x)`, `list.append(ys, v)`), in `fn`'s positions."""
    out, inner = _mutcall(rt.callmethod, (obj, name, *rest), kwargs, result_used, keywords_taken)

    def back(dy):
        grads = inner(None if dy is None else (dy[0], dy[1], None, *dy[2:]))
        return (None, grads[1], *grads[3:])
    return (out[0], obj, *out[3:]), back


def _user_callable(obj):
    """An instance of a user's class with a `__call__` of Python code (not a library's: a torch module has rules)."""
    call = getattr(type(obj), "__call__", None)
    return isinstance(call, types.FunctionType) and not isinstance(obj, type) and \
        (call.__module__ or "").partition(".")[0] not in _LIBRARIES  # (a torch.nn.Module subclass's is torch's)


_LIBRARIES = frozenset(("torch", "jax", "flax", "equinox", "haiku", "numpy", "scipy", "functools", "zygotepy"))


def _attribute_call(args, kwargs, result_used, keywords_taken):
    """`self.cell(x)`, where the instance attribute `cell` is a callable object whose `__call__` may update it: the
    attribute read, then the object's call (`callobject`); its update reaches `self` (which holds it), whose cotangent
    after the call carries the object's at `cell`."""
    holder, name, rest = args[0], args[1], args[2:]
    obj = vars(holder)[name]
    log = current().log
    mark = len(log)
    out, inner = _mutcall(rt.callobject, (obj, *rest), kwargs, result_used, keywords_taken)
    if id(obj) in log[mark:]:  # (what holds it changed too: a caller's check of its own arguments sees that)
        log.append(id(holder))

    def back(dy):
        if dy is None:
            grads = inner(None)
            return (None, None if grads[1] is None else StructGrad({name: grads[1]}), None, *grads[2:])
        dholder = dy[1]
        after = dholder.get(name) if isinstance(dholder, dict) else None
        grads = inner((dy[0], after, *dy[3:]))
        if grads[1] is None and after is None:
            return (None, dholder, None, *grads[2:])
        fields = {k: v for k, v in dholder.items() if k != name} if isinstance(dholder, dict) else {}
        fields[name] = grads[1]
        return (None, StructGrad(fields), None, *grads[2:])
    return (out[0], holder, name, *out[2:]), back


def _derived_call(fn, args, kwargs, result_used, keywords_taken, taken=None):
    """`_mutcall` of anything without a rule of its own here: J_mutating, which lets a derived callee update the
    arguments, positional and keyword (their cotangents after the call reach it by identity), the keyword ones only
    where the caller takes them back (`keywords_taken`: not through a `**mapping`), the positional ones the first
    `taken` (None: all; 1: a method's object, `self.forward(*args)`)."""
    everything = (*args, *kwargs.values()) if kwargs else args
    updates = any(_mutable(a) for a in everything)
    mark = len(current().log)
    try:
        result, pb, consumed = J_mutating(fn, args, kwargs, updates, keywords_taken, taken)
    except (MissingAdjoint, UnsupportedSyntax) as e:
        if result_used or not _before_running(e, fn, args) or len(current().log) > mark:
            raise  # (a refusal raised while the callee ran, after it updated something: running it again would
            # update that twice)
        _refuse_unseen_state(e, fn, args, everything)
        # a call statement into code zygotepy cannot read (a library's C or unsupported Python): it runs as is, as a
        # call whose result is dropped always did; its arguments are taken as not updated, which is checked for
        # float arrays (an update unseen would leave their gradients silently wrong)
        before = [(a, a.copy()) for a in everything if type(a) is np.ndarray and a.dtype.kind in "fc"]
        result = fn(*args, **kwargs)
        for a, copy in before:
            if not np.array_equal(a, copy, equal_nan=True):
                raise ZygoteError(f"zygotepy cannot differentiate {_update_name(fn)}, which updated an argument "
                                  f"array in place and has no adjoint rule; write the update as x[...] = ..., or "
                                  f"add an @adjoint rule") from e
        return (result, *everything), _constant_back(len(args), kwargs)
    # the arguments it did not update are left as they were: their holders' links need not assume they changed
    mt.passed_through(everything, mark)
    out = (result, *(a.__self__ if type(a) is super else a for a in everything))
    n = len(args)

    def back(dy):
        dr, dargs = (None, (None,) * len(everything)) if dy is None else (dy[0], dy[1:])
        # (a number is never updated in place, and equal numbers may be one object: its cotangent passes through)
        finals = {}  # (an object given twice, `k(X, X)`: the cotangents of both its names after the call, summed)
        for a, g in zip(out[1:], dargs, strict=True):
            if g is not None and not mt.is_number(a):
                finals[id(a)] = rt.acc(finals.get(id(a)), g)
        # a callee that updated nothing and whose result got no cotangent has nothing to give (or to undo)
        grads = pb(dr, finals) if dr is not None or consumed else (None,) * (1 + n)
        through = [None if id(a) in consumed else g for a, g in zip(out[1:], dargs, strict=True)]
        gs = [rt.acc(g, t) for g, t in zip(grads[1:1 + n], through[:n], strict=True)]
        if not kwargs:
            return (grads[0], *gs)
        kw = grads[1 + n] if len(grads) > 1 + n else None  # (None: nothing came back)
        return (grads[0], *gs, {k: rt.acc((kw or {}).get(k), t) for k, t in zip(kwargs, through[n:], strict=True)})
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
    return isinstance(x, (list, dict, set, collections.deque, np.ndarray, super)) or _is_array(x) \
        or is_array_type(type(x)) or hasattr(x, "__dict__") and not isinstance(
        x, (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.MethodType))


def _constant_back(n, kwargs):
    """`(result, *args, *kwargs.values())` of a call no gradient flows through: the arguments' cotangents pass through
    unchanged."""
    def back(dy):
        if dy is None:
            return (None, *((None,) * n), *_keyword_grads(kwargs))
        return (None, *dy[1:1 + n], *_keyword_grads(kwargs, dict(zip(kwargs, dy[1 + n:]))))
    return back


def _refuse_unseen_state(error, fn, args, everything):
    """A call statement into Python code zygotepy cannot differentiate (`error`: its unsupported syntax) that may
    update its arguments or state outside itself (a global, a class attribute) in place, given a value that may carry
    a gradient: run as is, its update would go unseen (the gradient through it silently lost), so `error` is raised,
    with a note saying why."""
    _, target = _callee_code(fn, args)
    if isinstance(error, UnsupportedSyntax) and type(target) is types.FunctionType and \
            COMPILER.updates_state(target) and any(differentiable(a) for a in everything):
        error.add_note(f"zygotepy: {target.__qualname__}, called on a value that may carry a gradient, may update "
                       f"its arguments or state outside itself in place, so it must be differentiated")
        raise error


def _callee_code(fn, args):
    if fn is rt.callmethod:
        fn = getattr(type(args[0]), args[1], None) or getattr(args[0], args[1], None)
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__code__", None), fn


def _before_running(error, fn, args):
    """Did `error` come from reading the callee itself (its missing rule or source, its unsupported syntax), before
    any of it ran? (Not a refusal of the call itself: call_checks.at_call.)"""
    if getattr(error, "at_call", False):
        return False
    code, target = _callee_code(fn, args)
    if isinstance(error, MissingAdjoint):
        return error.callee is target or error.callee is fn
    return code is not None and error.filename == code.co_filename and \
        code.co_firstlineno <= error.lineno <= max((ln for _, _, ln in code.co_lines() if ln), default=0)


# (their backs return the keyword arguments' cotangents too, as a last dict)
mutcall.__zygote_keywords__ = valuecall.__zygote_keywords__ = splatcall.__zygote_keywords__ = True
objectcall.__zygote_keywords__ = True


# functions that copy their inputs into `out=` one after another (an elementwise one reads each entry before writing it)
_JOINS = tuple(getattr(np, n) for n in ("concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack")
               if hasattr(np, n))


_GENERATORS = (np.random.Generator, np.random.RandomState)


def _drawn_into(fn, fargs, out, kwargs):
    """`rng.normal(out=buf)`: a draw, data, run as written (`out` says how many); from values carrying a gradient refused."""
    if any(differentiable(a) for a in (*fargs[2 if fn is rt.callmethod else 0:], *kwargs.values())):
        raise ZygoteError(f"{call_site() or 'a draw'}: zygotepy cannot differentiate a random generator's method given "
                          f"out= and values that carry a gradient (they would get none); call it without out=")
    entry = mt.journal_whole(out)
    (getattr(fargs[0], fargs[1]) if fn is rt.callmethod else fn)(*fargs[2 if fn is rt.callmethod else 0:], out=out,
                                                                  **kwargs)

    def back(dy):
        entry.undo(lambda: out.copy())
        return (None, None, *(None for _ in fargs), None, *_keyword_grads(kwargs))
    return keywords_unchanged((out, fn, *fargs, out), back, kwargs)


def _with_out(args, kwargs, result_used):
    """`fn(*args, out=out)`: `out` is overwritten with the result, which is `out` itself; unless `out` is an ordinary
    parameter of a function zygotepy derives (`helper(x, out=buf)`) or a keyword a partial binds."""
    fn, *fargs, out = args
    refuse_bound_out(fn, fargs, {"out": out})  # (`s = X.sum; s(1, out=o)`: X is no argument, its cotangent lost)
    if _takes_out_itself(fn, fargs):
        return _out_as_keyword(fn, fargs, out, kwargs, result_used)
    if isinstance(out, np.ndarray) and (fn is rt.callmethod and isinstance(fargs[0], _GENERATORS)
                                        or isinstance(getattr(fn, "__self__", None), _GENERATORS)):
        return _drawn_into(fn, fargs, out, kwargs)
    if fn in _JOINS and isinstance(out, np.ndarray) and any(
            isinstance(a, np.ndarray) and shares_memory(out, a)
            for b in fargs for a in (b if isinstance(b, (list, tuple)) else (b,))):
        # (`np.concatenate([a, b], out=a)`: NumPy writes as it reads, so what it computes is its own order's)
        raise ZygoteError(f"zygotepy cannot differentiate {getattr(fn, '__name__', fn)}(..., out=...) where out shares "
                          f"memory with an input; pass a copy of that input")
    # `np.add(y, x, out=y, where=mask)`: an elementwise ufunc writes only the masked entries of out; a reduction's
    # `where=` (`np.add.reduce`, np.sum, `X.max(...)`) masks its input instead: the reduction's own, whose whole
    # result is copied into out
    where = kwargs.get("where", True) if isinstance(fn, np.ufunc) else True
    inner = {k: v for k, v in kwargs.items() if k != "where"} if isinstance(fn, np.ufunc) else dict(kwargs)
    given, masked = fargs, where is not True and isinstance(fn, np.ufunc) and isinstance(out, np.ndarray)
    if masked:  # (NumPy computes no masked-out entry, where a derivative may be inf: each argument at out's shape,
        fargs = [at_shape(a, out.shape) for a in given]  # its masked-out entries' cotangents dropped, then summed)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore") if masked else contextlib.nullcontext():
        result, pb, _ = J_mutating(fn, tuple(fargs), inner, updates=False)
    dual_out = getattr(type(out), "__zygote_number__", False) and hasattr(out, "shape")  # (hessian: zeros_like(x))
    if not isinstance(out, np.ndarray) and not (dual_out and where is True):
        raise ZygoteError(f"zygotepy cannot differentiate {getattr(fn, '__name__', fn)}(..., out=...) with this "
                          f"out or where; write the update as out[...] = ...")
    if not dual_out and getattr(type(result), "__zygote_number__", False):  # (forward mode: no place for a tangent)
        raise ForwardModeError(f"{STORE_INTO_PLAIN_ARRAY} (out= of {getattr(fn, '__name__', fn)})")
    entry = mt.journal_whole(out)
    if dual_out:
        out[...] = result
    else:
        np.copyto(out, result, casting=kwargs.get("casting", "same_kind"), where=where)  # (`casting="unsafe"`: an int out)
    real = out.dtype.kind in "fc"  # written into an int array: truncated data, no cotangent

    def back(dy):
        entry.undo(lambda: out.copy())
        dr, dout = (None, None) if dy is None else (dy[0], dy[-1])
        total = rt.acc(dr, dout)
        kept = None
        if total is not None and where is not True:
            mask = np.broadcast_to(where, out.shape)
            total, kept = np.where(mask, total, 0), np.where(mask, 0, total)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore") if masked else contextlib.nullcontext():
            grads = pb(unbroadcast(total, result) if total is not None and real else None, {})
        kw = grads[-1] if inner else None
        dargs = grads[1:1 + len(fargs)]
        if masked:
            dargs = [masked_cotangent(g, a, where) for g, a in zip(dargs, given, strict=True)]
        return (None, None, *dargs, kept, *_keyword_grads(kwargs, kw))
    return keywords_unchanged((out, fn, *fargs, out), back, kwargs)


# (np.copyto, the `at` of UFUNC_AT and those of overwrites.py have rules; others are refused where a gradient flows)
updates_first_argument(np.put, np.place, np.putmask, np.put_along_axis, np.fill_diagonal, np.copyto)
# the standard library's C routines that reorder a list in place (their updates went unseen: a gradient of None)
updates_first_argument(heapq.heappush, heapq.heappop, heapq.heapify, heapq.heappushpop, heapq.heapreplace,
                       bisect.insort, bisect.insort_left, bisect.insort_right)


def _update_name(fn):
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"np.{owner.__name__}.{fn.__name__}"
    return f"np.{fn.__name__}" if getattr(np, getattr(fn, "__name__", ""), None) is fn else getattr(fn, "__name__", fn)


def _takes_out_itself(fn, fargs):
    """Is `out=` an argument like any other for `fn`: a Python function (or method) without a rule, whose code decides
    what it does with it, or `functools.partial`, which binds it?"""
    if fn is functools.partial:
        return True
    if fn is rt.callmethod:
        fn = getattr(type(fargs[0]), fargs[1], None) if len(fargs) >= 2 and isinstance(fargs[1], str) else None
    fn = getattr(fn, "__func__", fn)
    return type(fn) is types.FunctionType and registry.find_rule(fn) is None and not registry.is_nondifferentiable(fn)


def _out_as_keyword(fn, fargs, out, kwargs, result_used):
    """`fn(*fargs, out=out, **kwargs)` as an ordinary call that may update its arguments, in with_out's positions:
    `(result, fn, *fargs, out, *kwargs.values())`."""
    n = len(fargs)
    inner, inner_back = _mutcall(fn, tuple(fargs), {**kwargs, "out": out}, result_used)
    final = (inner[0], fn, *inner[1:1 + n], inner[-1], *inner[1 + n:-1])

    def back(dy):
        if dy is None:
            grads = inner_back(None)
        else:  # (d_result, d_fn, *d_fargs, d_out, *d_kwargs) -> (d_result, *d_fargs, *d_kwargs, d_out)
            grads = inner_back((dy[0], *dy[2:2 + n], *dy[3 + n:], dy[2 + n]))
        kw = dict(grads[-1])
        d_out = kw.pop("out")
        return (None, grads[0], *grads[1:1 + n], d_out, *_keyword_grads(kwargs, kw))
    return final, back

"""What runs of an operation no gradient flows through: the operation as written, except a call of a function whose
rule must run even so (a user's rule, the nesting rules), and a `math` function or a Python function of the user's
that a dual number (hessian) may reach (`forward.transform.as_written`).
A mixin of the adjoint pass (`adjoint.AdjointPass`), which differentiates the active operations."""
import collections
import functools
import os
import types

import numpy as np

from ..adjoints import registry
from ..adjoints.in_place import store_callable, unbound_method, updating_names
from ..adjoints.registry import find_rule
from ..errors import SourceUnavailable, UnsupportedSyntax
from ..forward.transform import as_written
from ..runtime.snapshots import updating
from .call_checks import library, refuse_bound_update, refuse_store_callable
from . import dispatch
from . import runtime as rt
from .analysis import callee_object
from .derived import derive_now
from .ir import Assign, Call, Const, If, Var
from .lower.scan import CALLING_BACK, may_update_in_place, updates_state
from .optimize.guards import _call
from .pullbacks import refuse_partial_update
from .state_reads import as_written_reading, reads_state


class InactiveCalls:

    def inactive(self, s):
        """An operation no gradient flows through runs as written, except a call of a function with a user's rule:
        the rule's forward runs (Zygote calls a rule even then; a rule such as `nestlevel` may compute something else),
        and so do the nesting rules of `adjoints/nesting/`, which give an inner level's calls the outer level's meaning."""
        call = s.value
        if not isinstance(call, Call) or isinstance(s.out, tuple):
            return [s]
        target = self.statics.get(call.fn.name) if isinstance(call.fn, Var) else callee_object(call.fn, self.globals)
        if call.star is not None:  # `fill(*args)`: the lowering could not tell which names its updates reach
            user = type(target) is types.FunctionType and not library(target) or target is None
            return [Assign(s.out, Call(Const(as_written_checked), (call.fn, *call.args), call.kwargs, call.star),
                           s.line) if user and _users_source(self.fn.filename) else s]
        j = Call(Const(dispatch.J_kw if call.kwargs else dispatch.J), (call.fn, *call.args), call.kwargs)
        written = Assign(s.out, Call(Const(as_written), (call.fn, *call.args), call.kwargs), s.line) \
            if _users_source(self.fn.filename) else s
        if target is None and isinstance(call.fn, Var):
            # a callee known only at run time (a closure cell, a local name) may have such a rule too: tested there,
            # one set lookup (`id(f) in _RULED`), hoisted out of loops where the callee does not change; and it may
            # update its arguments, which the lowering could not know (`as_written_checked`)
            test = self.hoist(_call(registry.has_rule, call.fn), call.fn)
            if written is not s:
                written = Assign(s.out, Call(Const(as_written_checked), (call.fn, *call.args), call.kwargs), s.line)
            return [If(test, [Assign((s.out, Var("_")), j, s.line)], [written], line=s.line)]
        rule = find_rule(target)
        if target in CALLING_BACK and written is not s and any(
                isinstance(a, Var) for a in (*call.args, *(v for _, v in call.kwargs))):
            # `list(map(cell, xs))` as a statement: the callable it is given may update in place (`cell.h = ...`)
            return [Assign(s.out, Call(Const(callbacks_checked), (call.fn, *call.args), call.kwargs), s.line)]
        if rule is None or registry.is_builtin(rule) and not getattr(rule, "__zygote_always__", False):
            if type(target) is types.BuiltinFunctionType and getattr(target, "__module__", None) == "math" \
                    and not call.kwargs and any(isinstance(a, Var) for a in call.args):
                # `if math.sin(x) > 0`: a dual number (hessian) may flow in, which math's C code refuses
                return [Assign(s.out, Call(Const(rt.number_value), (call.fn, *call.args)), s.line)]
            if (target is isinstance or target is type and len(call.args) == 1) and not call.kwargs \
                    and self.is_active(call.args[0]):  # `isinstance(t, float)` of a dual number (hessian)
                return [Assign(s.out, Call(Const(rt.type_test), (call.fn, *call.args)), s.line)]
            if rule is None and type(target) is types.FunctionType and not library(target):
                if written is not s and updates_state(target):  # (`set_g(x)` whose `global G` rebinds G: J refuses)
                    written = Assign(s.out, Call(Const(as_written_checked), (call.fn, *call.args), call.kwargs),
                                     s.line)
                elif written is not s and reads_state(target):  # (`get_registry()` after an update of the registry)
                    written = Assign(s.out, Call(Const(as_written_reading), (Const((self.fn.filename, s.line)),
                                                                             call.fn, *call.args), call.kwargs), s.line)
                return [written]
            return [s]
        return [Assign((s.out, Var("_")), j, s.line)]


def as_written_checked(fn, /, *args, **kwargs):
    """`as_written` for a callee known only at run time, whose call no gradient flows through. The lowering took the
    call as one that updates nothing (it could not see the callee); one whose code may update its arguments in place
    runs through J instead, which refuses, naming the call, an update of an argument (`z = [fill(x, y)]`, `fill` a
    local name: y's gradient from x would be silently missing). A callee zygotepy cannot derive runs as written,
    unless it may update its arguments or state outside itself (a global, a class attribute) and is given a value
    that may carry a gradient: its update would go unseen, so the reason it cannot be derived is raised. So does a
    store taken as a value (`put = ys.__setitem__`), and a bound method updating its object."""
    inner, given = _unwrapped(fn, args)  # (`f = functools.partial(setattr, o, "a"); f(v)`)
    if _bound_update(inner):  # `f = y.sort; f()`: as written, y's update would go unseen
        refuse_bound_update(inner)
    if store_callable(inner) and given and not isinstance(given[0], (types.ModuleType, type)):
        refuse_store_callable(inner)  # (`put = ys.__setitem__; put(i, v)`)
    code, bound = inner, given  # (a bound method updates its object: `upd = a.update; upd(v)`; so may a callable
    if type(inner) is types.MethodType:  # object; a partial's function its arguments: `partial(add_to, acc, x)()`)
        code, bound = inner.__func__, (inner.__self__, *given)
    elif not isinstance(inner, (type, types.FunctionType)) and \
            type(getattr(type(inner), "__call__", None)) is types.FunctionType:
        code, bound = type(inner).__call__, (inner, *given)
    if type(code) is types.FunctionType and may_update_in_place(code) and not library(code):
        try:
            derive_now(code, bound, kwargs or None)
        except (SourceUnavailable, UnsupportedSyntax) as e:
            if getattr(e, "at_call", False):  # (a refusal of this call, not of the callee's code: call_checks)
                raise
            if isinstance(e, UnsupportedSyntax) and updates_state(code) and any(
                    dispatch.differentiable(a) for a in (*bound, *kwargs.values())):
                # as written, its update of an argument or of state outside it (a global, a class attribute) would
                # go unseen: the gradient through it silently lost
                e.add_note(f"zygotepy: {code.__qualname__}, called on a value that may carry a gradient, may update "
                           f"its arguments or state outside itself in place, so it must be differentiated")
                raise
            return as_written(fn, *args, **kwargs)
        return (dispatch.J_kw(fn, *args, **kwargs) if kwargs else dispatch.J(fn, *args))[0]
    if isinstance(fn, functools.partial) and any(dispatch.differentiable(a) for a in (*fn.args, *fn.keywords.values())):
        return _partial_unchanged(fn, args, kwargs)
    return as_written(fn, *args, **kwargs)


def _partial_unchanged(fn, args, kwargs):
    """A partial holding a value that may carry a gradient, whose function is a library's (`partial(np.copyto, a,
    src)`, `partial(np.multiply, a, 2.0, out=a)`): as written, refused where it updated one of the objects it holds in
    place (the call names none of them: what reads one afterwards would miss the update, silently)."""
    held = [*fn.args, *fn.keywords.values()]
    result, k = updating(lambda: as_written(fn, *args, **kwargs), held)
    if k is not None:
        refuse_partial_update(fn, held[k])
    return result


def callbacks_checked(fn, /, *args, **kwargs):
    """A builtin that calls what it is given (`map`, `filter`, `sorted(key=)`, `functools.reduce`, ...), whose call
    no gradient flows through: as written, unless a callable it is given may update in place (a callable object whose
    `__call__` updates `self`, a helper updating its argument), which runs through J instead (its rule calls the
    callable through J, whose checks refuse the update; as written it would go unseen, a silently wrong gradient)."""
    if any(_may_update(a) for a in (*args, *kwargs.values())):
        return (dispatch.J_kw(fn, *args, **kwargs) if kwargs else dispatch.J(fn, *args))[0]
    return fn(*args, **kwargs)


def _unwrapped(fn, args):
    """`(callee, arguments)` of a call of `fn` with `args`, through `functools.partial` objects."""
    while isinstance(fn, functools.partial):
        fn, args = fn.func, (*fn.args, *args)
    return fn, args


def _bound_update(f):
    """Is `f` a bound method of a list, dict, set or NumPy array that updates its object (`y.sort`, `out.append`)?"""
    return type(f) is _BUILTIN_METHOD and f.__name__ in updating_names() and type(f.__self__) in _MUTABLE


_BUILTIN_METHOD, _MUTABLE = type([].append), (list, dict, set, collections.deque, np.ndarray)


def _may_update(f):
    """Is `f` a callable of the user's whose code may update its arguments or its object in place, or a bound method
    that updates its object, or such a method taken from its class (`list.append`)?"""
    inner = _unwrapped(f, ())[0]
    if _bound_update(inner) or unbound_method(inner) is not None or store_callable(inner):
        return True
    f = inner  # (a partial's function: `map(partial(add_to, acc), xs)`)
    code = f.__func__ if type(f) is types.MethodType else f if type(f) is types.FunctionType else \
        getattr(type(f), "__call__", None) if not isinstance(f, type) else None
    return type(code) is types.FunctionType and not library(code) and may_update_in_place(code)


def _users_source(filename):
    """Is `filename` the user's source, the code whose calls no gradient flows through run `as_written`? Not zygotepy's
    own code (the nesting twins, rules an outer level transforms), nor generated code, whose calls of the user's
    functions its own transform already wrote that way."""
    return not filename.startswith(_OWN)


_OWN = ("<zygotepy:", os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)

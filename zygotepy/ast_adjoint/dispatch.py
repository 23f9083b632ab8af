"""J: differentiate one call at run time (Zygote's `J`, callee-derives).

`J(f, *args)` returns `(y, back)` with `back(dy) -> (dself, *dargs)`. Resolution order:
registered rule -> derived adjoint of a Python function (compiled once, cached on the function) -> bound methods,
`functools.partial`, callable objects -> a constant call when no differentiable value flows in -> `MissingAdjoint`.
`J_kw(f, *args, **kwargs)` is the same for calls with keywords; its `back` adds the keyword cotangents as a last dict.

Its parts live beside it, in the same layer: `derived.py` (the derived adjoints, cached on the function), `pullbacks.py`
(the pullback objects J hands out), `keywords.py` (calls with keywords), `call_checks.py` (what a call may not do, and
where it was made; `COMPILER`, the compiler's entry points J is given).
"""
import collections
import functools
import inspect
import math
import operator
import types

import numpy as np


from ..adjoints import registry
from ..adjoints.in_place import store_callable, unbound_method, updating_names
from ..backends import is_array_type, truncated
from ..errors import MissingAdjoint, SourceUnavailable
from ..runtime.context import current
from .guards_runtime import NATIVE as _NATIVE, differentiable, reads_gradients
from .runtime import callmethod
from .array_operands import array_operand
from .class_lookup import ABSENT, by_class
from .call_checks import COMPILER  # noqa: F401 (compile.py sets dispatch.COMPILER's entries)
from .call_checks import IN_PLACE_CALLS, _DATA_KEYS, _check_opaque_key, call_site, refuse_bound_update
from .call_checks import refuse_hidden_out, refuse_store_callable, refuse_unseen_update, site_slot
from .derived import _cache_of, _derived, _plain, _pullback
from .keywords import KeywordsPullback, UfuncKeywordsPullback, _call_by_position, _movable, _Rebound, _WithKeywords
from .keywords import refuse_bound_out, refuse_positional_out
from .keywords import _call_plan, _keyword_cotangents, bound_by_keyword, ufunc_keywords  # noqa: F401 (adjoints/nesting/ reads the first two here)
from .pullbacks import (
    ArgsPullback, CallMethodPullback, ConstPullback, InPlaceOperatorPullback, LookedUpPullback, MethodPullback,
    PartialMethodPullback, RulePullback, SelfPullback, SitePullback, SwappedPullback, _Prepend, through_partial)


_FUNCTION, _BUILTIN = types.FunctionType, types.BuiltinFunctionType
_NUMPY = (np.ndarray, np.generic)


def J_mutating(fn, args, kwargs, updates=True, keywords_taken=True, taken=None):
    """J for a call that may update its arguments: `(y, back(dy, finals), ids of the arguments it updated)`; the
    keyword arguments only where the call site takes them back (`keywords_taken`), the positional ones the first
    `taken` (None: all)."""
    if type(fn) is _BUILTIN and fn in IN_PLACE_CALLS and args:  # (`f = operator.iadd; f(y, v)` as a statement)
        refuse_unseen_update(fn, args[0])
    slot = site_slot(args, kwargs, updates, keywords_taken, taken)
    slots = current().slots
    slots.append(slot)
    try:
        y, pb = _dispatch(fn, tuple(args), kwargs or None)
    finally:
        slots.pop()
    return y, SitePullback(pb), slot.claimed


_OPERATORS = {operator.add: ("__add__", "__radd__"), operator.sub: ("__sub__", "__rsub__"),
              operator.mul: ("__mul__", "__rmul__"), operator.truediv: ("__truediv__", "__rtruediv__"),
              operator.floordiv: ("__floordiv__", "__rfloordiv__"), operator.mod: ("__mod__", "__rmod__"),
              operator.pow: ("__pow__", "__rpow__"), operator.matmul: ("__matmul__", "__rmatmul__"),
              operator.iadd: ("__iadd__", "__add__", "__radd__"), operator.isub: ("__isub__", "__sub__", "__rsub__"),
              operator.imul: ("__imul__", "__mul__", "__rmul__"),
              operator.itruediv: ("__itruediv__", "__truediv__", "__rtruediv__"),
              operator.neg: ("__neg__",), operator.pos: ("__pos__",), operator.abs: ("__abs__",), abs: ("__abs__",),
              operator.getitem: ("__getitem__",), pow: ("__pow__", "__rpow__"), divmod: ("__divmod__", "__rdivmod__"),
              operator.lshift: ("__lshift__", "__rlshift__"), operator.rshift: ("__rshift__", "__rrshift__"),
              operator.invert: ("__invert__",), round: ("__round__",), math.floor: ("__floor__",),
              math.ceil: ("__ceil__",), math.trunc: ("__trunc__",)}


def _user_operator(fn, args):
    """Python's operator protocol for user classes: transform their `__mul__`/`__rmul__`/... like any function."""
    names = _OPERATORS[fn]
    duals = [getattr(type(a), "__zygote_number__", False) for a in args]
    if all(d or type(a) in _NATIVE or is_array_type(type(a)) for d, a in zip(duals, args)):
        # zygotepy's own numbers (forward mode's duals: their operators mean what the rules say), and an array
        # library's operators (JAX's and torch's are Python functions): the operator rules. A user class beside a
        # dual number (`v * s` in a Hessian) has its own operator first, as in Python
        return None
    if fn is pow and len(args) != 2:  # (pow(a, b, mod): integers)
        return None
    if len(args) == 1 or fn is operator.getitem or fn is round:  # (`round(v, 2)`: v's own `__round__`)
        method = getattr(type(args[0]), names[0], None)
        if isinstance(method, types.FunctionType) and not is_array_type(type(args[0])) and not duals[0]:
            y, pb = _dispatch(method, args, None)
            return y, SelfPullback(pb)
        if fn is operator.getitem and type(args[1]) not in _DATA_KEYS:
            _check_opaque_key(args[0], args[1], method)
        return None
    a, b = args
    if isinstance(a, _NUMPY) and not duals[1] and type(b) not in _NATIVE and not isinstance(b, _NUMPY) \
            and not is_array_type(type(b)):
        converted = array_operand(fn, a, b, names[-1], _dispatch)  # (NumPy's operator gives way to b's as it decides)
        if converted is not None:
            return converted
    calls = [(name, a, b) for name in names[:-1]] if not duals[0] else []
    if not duals[1]:  # the reflected method last, or a subclass's own first (`A(x) + B(y)`, B(A) with `__radd__`)
        first = type(b) is not type(a) and issubclass(type(b), type(a)) and \
            getattr(type(b), names[-1], None) is not getattr(type(a), names[-1], None)
        calls.insert(min(len(names) - 2, len(calls)) if first else len(calls), (names[-1], b, a))
    for name, obj, other in calls:
        method = getattr(type(obj), name, None)
        if not isinstance(method, types.FunctionType) or is_array_type(type(obj)):
            continue
        if name.startswith("__i"):  # `v += w` through `__iadd__`, which may update `v` and return it
            y, pb, claimed = J_mutating(method, (a, b), None)
            if y is not NotImplemented:
                return y, InPlaceOperatorPullback(pb, id(a) if id(a) in claimed else None, y is a,
                                                  f"{type(a).__name__}.{name}")
            continue
        y, pb = _dispatch(method, (obj, other), None)
        if y is not NotImplemented:
            return y, SwappedPullback(pb) if name == names[-1] else SelfPullback(pb)
    return None


def _takes_keyword(rule, name):
    code = getattr(rule, "__code__", None)
    return code is None or code.co_flags & inspect.CO_VARKEYWORDS or \
        name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _kind_of(cls, name, static):
    """How `obj.name(...)` resolves for instances of `cls`, whose lookup finds `static` on the class: a Python method, a
    rule-carrying descriptor, or other. Kept per class and name while the class finds the same object for the name
    (`class_lookup.by_class`: a method replaced, added or deleted on the class or a base is found again)."""
    static = None if static is ABSENT else static
    if getattr(cls, "__zygote_number__", False) or issubclass(cls, np.generic):
        # a dual number (hessian) or a NumPy scalar (`np.float64(...).reshape(1)`): the array method's rule, whose
        # forward calls the object's own method
        mirrored = inspect.getattr_static(np.ndarray, name, None)
        if mirrored is not None and registry.find_rule(mirrored) is not None and \
                (static is None or registry.find_rule(static) is None):
            static = mirrored
    if isinstance(static, types.FunctionType):
        return ("method", static)
    if static is not None and not isinstance(static, (staticmethod, classmethod, property)) \
            and hasattr(type(static), "__get__") \
            and (registry.find_rule(static) is not None or registry.is_nondifferentiable(static)):
        return ("method", static)  # (a ufunc kept on a class, `act = np.tanh`, is no descriptor: "other")
    return ("other", None)


_method_kind = by_class(_kind_of)


def class_method(obj, name):
    """The function or rule-carrying descriptor `obj.name(...)` runs with `obj` first (see `_method_kind`), or None:
    also where an attribute of the object itself hides a function of its class (`self.act = np.tanh`), as in Python."""
    kind, method = _method_kind(type(obj), name)
    if kind != "method" or type(method) is types.FunctionType and name in getattr(obj, "__dict__", ()):
        return None
    return method


def _found_by_user_lookup(obj, name):
    """Is `obj.name` computed by a user class's `__getattribute__`, or by its `__getattr__` (found nowhere else)?"""
    cls = type(obj)
    if isinstance(cls.__getattribute__, types.FunctionType):
        return True
    return isinstance(getattr(cls, "__getattr__", None), types.FunctionType) and \
        name not in getattr(obj, "__dict__", ()) and inspect.getattr_static(cls, name, _ABSENT) is _ABSENT


_ABSENT = object()


def _callmethod(args, kwargs, need):
    obj, name, *rest = args
    refuse_positional_out(obj, name, rest)  # (`r = X.sum(1, None, o)`: out= is what the lowering follows)
    method = class_method(obj, name)
    if method is not None:
        y, pb = _dispatch(method, (obj, *rest), kwargs, need and (need[0], *need[2:]))
        return y, CallMethodPullback(pb, True, name, obj)
    if _found_by_user_lookup(obj, name):  # `d.sq()` through a `__getattr__`: what it reads carries the gradient
        bound, bound_pb = J(getattr, obj, name)
        y, pb = _dispatch(bound, tuple(rest), kwargs)
        return y, LookedUpPullback(pb, bound_pb)
    bound = getattr(obj, name)
    if type(obj) is types.ModuleType and rest and type(bound) is _BUILTIN and bound in IN_PLACE_CALLS:
        refuse_unseen_update(bound, rest[0])
    y, pb = _dispatch(bound, tuple(rest), kwargs)
    if type(bound) is functools.partial and getattr(bound, "__self__", None) is obj:
        pb = PartialMethodPullback(pb)  # (`functools.partialmethod`: the object is the partial's function's)
    is_bound_method = (getattr(bound, "__self__", None) is obj or isinstance(obj, super)) \
        and not isinstance(obj, types.ModuleType)
    return y, (CallMethodPullback(_Prepend(pb), True, name, obj) if is_bound_method
               else CallMethodPullback(pb, False, name, obj))


def _dispatch(fn, args, kwargs, need=None, api=False):
    """The resolution order of the module docstring; `kwargs` is None for a call without keywords; `need` (or None
    for all) says which positional arguments the caller wants cotangents for; `api`: see `_derived`."""
    if fn is callmethod:
        return _callmethod(args, kwargs, need)
    if type(fn) is types.BuiltinFunctionType and kwargs is None and fn in _OPERATORS \
            and (type(args[0]) not in _NATIVE or type(args[-1]) not in _NATIVE):
        hit = _user_operator(fn, args)
        if hit is not None:
            return hit
    if type(fn) is types.FunctionType:
        rule = registry.find_rule(fn)
        if rule is None:
            if registry.is_nondifferentiable(fn):  # (a foreign namespace's Python function: xps.arange, jnp.argmax)
                return _constant(fn, args, kwargs)
            try:
                return _derived(fn, args, kwargs, need, api)
            except SourceUnavailable as e:
                if e.fn is not fn:  # some other function's source (a callee's) is missing: not this one's problem
                    raise
                if any(differentiable(a) for a in (kwargs or {}).values()) or any(
                        differentiable(a) or type(a) is int and (need is None or k >= len(need) or need[k])
                        for k, a in enumerate(args)):
                    # (an int the caller differentiates counts: arithmetic on it is differentiated as on a real)
                    raise SourceUnavailable(fn, e.reason, call_site()) from None
                return _constant(fn, args, kwargs)
    else:
        if type(fn) is _BUILTIN_METHOD and fn.__name__ in updating_names() and (
                type(fn.__self__) is np.ndarray or type(fn.__self__) in _CONTAINERS and not current().slots):
            refuse_bound_update(fn)  # (`f = y.sort; f()` found np.sort's rule: y stayed as it was)
        if type(fn) is _BUILTIN_METHOD and (kwargs or len(args) > 1):  # (`s = X.sum; s(1, None, o)`)
            refuse_bound_out(fn, args, kwargs)
        if store_callable(fn) and args and not isinstance(args[0], (types.ModuleType, type)):
            refuse_store_callable(fn)  # `map(setattr, objs, names, vs)`: the lowering saw no store
        if unbound_method(fn) is not None and args and not current().slots and (
                type(args[0]) is np.ndarray or type(args[0]) in _CONTAINERS):
            refuse_bound_update(fn)  # `map(list.append, rows, xs)`: the lowering saw no update of `rows`
        rule = registry.find_rule(fn)
    if rule is not None:
        if kwargs and type(fn) is _UFUNC:  # `np.add(a, b, casting="same_kind")`: the rule takes the keywords that
            kept = ufunc_keywords(fn, kwargs)  # change values; the others get no cotangent
            if kept is None or len(kept) < len(kwargs):
                y, pb = _dispatch(fn, args, kept, need)
                return y, UfuncKeywordsPullback(pb, kwargs, kept is not None)
        aware = getattr(rule, "__zygote_keywords__", False)
        if kwargs and kwargs.get("out") is not None and not _takes_keyword(rule, "out"):
            refuse_hidden_out(fn)
        if kwargs and not aware:
            moved = _movable(fn, rule, args, kwargs)
            if moved:
                return _call_by_position(fn, rule, args, kwargs, moved, need)
        y, back = rule(*args, **kwargs) if kwargs else rule(*args)
        if kwargs and "dtype" in kwargs and truncated(y, args):
            return y, ConstPullback(len(args), True)
        if kwargs and aware and _built_in_keywords(rule) and (need is None or not registry.takes_need(rule)):
            return y, KeywordsPullback(back, rule, fn, kwargs, len(args))
        bound = kwargs and bound_by_keyword(rule, len(args), kwargs)
        if bound:  # keywords bind the rule's positional parameters: its back may give their cotangents after others'
            inner = RulePullback(_Rebound(back, rule, args, bound, kwargs, aware), rule, len(args) + 1, None)
            return y, _WithKeywords(inner, rule, fn, kwargs, True)
        if kwargs and aware:  # gives keyword cotangents itself
            return y, _WithKeywords(RulePullback(back, rule, len(args) + 1, need, args), rule, fn, kwargs, True)
        pb = RulePullback(back, rule, len(args), need, args)
        return y, (_WithKeywords(pb, rule, fn, kwargs, False) if kwargs is not None else pb)
    if registry.is_nondifferentiable(fn):
        return _constant(fn, args, kwargs)
    if isinstance(fn, types.MethodType):
        y, pb = _dispatch(fn.__func__, (fn.__self__, *args), kwargs, need and (True, *need))
        return y, MethodPullback(pb)
    if isinstance(fn, types.BuiltinMethodType) and not isinstance(fn.__self__, types.ModuleType) \
            and fn.__self__ is not None:
        unbound = getattr(type(fn.__self__), fn.__name__, None)
        if unbound is not None and registry.find_rule(unbound) is not None:
            y, pb = _dispatch(unbound, (fn.__self__, *args), kwargs)
            return y, MethodPullback(pb)
    if isinstance(fn, type):
        construct = registry.find_class_rule(fn)
        if construct is not None:
            return construct(fn, args, kwargs)
    if isinstance(fn, functools.partial):
        return through_partial(fn, args, kwargs, _dispatch)
    if isinstance(fn, _CACHED) and isinstance(getattr(fn, "__wrapped__", None), types.FunctionType) \
            and any(differentiable(a) for a in (*args, *(kwargs or {}).values())):
        # `@functools.lru_cache` / `@functools.cache`: its function, derived (a cached value has no pullback)
        return _dispatch(fn.__wrapped__, args, kwargs, need)
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(fn, type):
        y, pb = _dispatch(call, (fn, *args), kwargs)
        return y, MethodPullback(pb)
    owner = getattr(fn, "__self__", None)  # a bound builtin method reads its object too
    inputs = (*args, *(kwargs or {}).values(), *([owner] if not isinstance(owner, types.ModuleType) else []))
    if not any(differentiable(a) or reads_gradients(a) for a in inputs):  # (a closure reading `x`: not a constant)
        return _constant(fn, args, kwargs)
    if call is not None and not isinstance(fn, type) and registry.find_rule(call) is not None:
        y, pb = _dispatch(call, (fn, *args), kwargs)  # a rule for calling a C type's objects (`itemgetter(0)`)
        return y, MethodPullback(pb)
    raise MissingAdjoint(fn, where=call_site())


_CACHED = type(functools.lru_cache(None)(lambda: None))
_UFUNC = np.ufunc
_BUILTIN_METHOD = type([].append)
_CONTAINERS = (list, dict, set, collections.deque)  # (their methods that update them: adjoints/in_place.py)


def _constant(fn, args, kwargs):
    y = fn(*args, **kwargs) if kwargs else fn(*args)
    return y, ConstPullback(len(args), kwargs is not None)


def J(fn, /, *args):
    if type(fn) is _FUNCTION:  # (see `_plain`: the callee's forward is called from here, one frame)
        hit = _plain(fn, None, args)
        if hit is not None:
            log = current().log
            mark = len(log)
            y, tape = hit[0](*args)
            return y, _pullback(fn, hit, tape, log, mark, args, False)
    try:
        rule = _RULES.get(fn)
    except TypeError:
        rule = None
    if rule is not None and not (type(fn) is types.BuiltinFunctionType and fn in _OPERATORS):
        # a rule, called from here as `_dispatch` would (an operator may be a user class's first: `_user_operator`)
        y, back = rule(*args)
        return y, RulePullback(back, rule, len(args), None, args).__call__
    if type(fn) is _BUILTIN and fn in IN_PLACE_CALLS:
        refuse_unseen_update(fn, args[0])
    return _dispatch(fn, args, None)


_RULES = registry.RULES


def J_kw(fn, /, *args, **kwargs):
    try:
        rule = _RULES.get(fn)
    except TypeError:
        rule = None
    if rule is not None and kwargs and _built_in_keywords(rule):  # (what `_dispatch` does for it, without the search)
        y, back = rule(*args, **kwargs)
        if "dtype" in kwargs and truncated(y, args):  # (`np.sum(x, dtype=int)`: piecewise constant)
            return y, ConstPullback(len(args), True)
        return y, KeywordsPullback(back, rule, fn, kwargs, len(args))
    return _dispatch(fn, args, kwargs)


def _built_in_keywords(rule):
    """Is `rule` one of zygotepy's keyword-aware rules (its pullback, one `KeywordsPullback`, skips the checks)?"""
    aware = _KEYWORD_AWARE.get(rule)
    if aware is None:
        aware = _KEYWORD_AWARE[rule] = registry.is_builtin(rule) and getattr(rule, "__zygote_keywords__", False)
    return aware


_KEYWORD_AWARE = {}  # rule -> `_built_in_keywords(rule)`


def J_need(need, fn, /, *args):
    """J for a call site where only the arguments flagged in `need` carry gradients the caller reads."""
    if type(fn) is _FUNCTION:
        hit = _plain(fn, need, args)
        if hit is not None:
            log = current().log
            mark = len(log)
            y, tape = hit[0](*args)
            return y, _pullback(fn, hit, tape, log, mark, args, False)
    return _dispatch(fn, args, None, need)


def J_args(need, fn, /, *args):
    """J for a constant or global callee: `back(dy)` returns only the arguments' cotangents. A built-in rule's own
    `back` is returned as is (no wrappers), unless a user class must see the operator first. Such callees are kept in
    `registry.STRAIGHT` (operators flagged: their operands' types are asked each time): one lookup per operation."""
    try:
        straight = _STRAIGHT.get(fn)
    except TypeError:
        straight = None
    if straight is not None:
        rule, operator_ = straight
        if not operator_ or type(args[0]) in _NATIVE and type(args[-1]) in _NATIVE:
            return rule(*args)
    if type(fn) is _FUNCTION:
        hit = _plain(fn, need, args)
        if hit is not None:
            log = current().log
            mark = len(log)
            y, tape = hit[0](*args)
            return y, _pullback(fn, hit, tape, log, mark, args, True)
    try:
        rule = _RULES.get(fn)
    except TypeError:
        rule = None
    if rule is not None:
        direct = _DIRECT.get(rule)
        if direct is None:
            direct = _DIRECT[rule] = registry.callable_directly(rule)
        if direct:
            operator_ = type(fn) is _BUILTIN and fn in _OPERATORS
            _STRAIGHT[fn] = (rule, operator_)
            if not operator_ or type(args[0]) in _NATIVE and type(args[-1]) in _NATIVE:
                return rule(*args)
    y, pb = _dispatch(fn, args, None, need)
    return y, ArgsPullback(pb)


_STRAIGHT = registry.STRAIGHT
_DIRECT = {}  # rule -> may generated code use its `back` as is (a tested built-in rule, no optional parameters)


def J_handing(need, fn, /, *args):
    """J_args for a call site that hands the back its running cotangents (`back(dy, need, *into)`): a rule's own back
    is returned only if it takes them (`registry.accumulates`); anything else is wrapped in `ArgsPullback`, which adds
    its cotangents to them."""
    if type(fn) is _FUNCTION:
        hit = _plain(fn, need, args)
        if hit is not None:
            log = current().log
            mark = len(log)
            y, tape = hit[0](*args)
            return y, _pullback(fn, hit, tape, log, mark, args, True)
    try:
        rule = registry.RULES.get(fn)
    except TypeError:
        rule = None
    if rule is not None and _HANDING.get(rule) is None:
        _HANDING[rule] = registry.callable_directly(rule) and registry.accumulates(rule)
    if rule is not None and _HANDING[rule] and not (type(fn) is types.BuiltinFunctionType and fn in _OPERATORS and (
            type(args[0]) not in _NATIVE or type(args[-1]) not in _NATIVE)):
        return rule(*args)
    y, pb = _dispatch(fn, args, None, need)
    return y, ArgsPullback(pb)


_HANDING = {}  # rule -> may a call site that hands over running cotangents use its `back` as is


def is_operator(fn):
    """Is `fn` a Python operator whose meaning a user class can define (`__mul__`, `__getitem__`, ...)?"""
    return type(fn) is types.BuiltinFunctionType and fn in _OPERATORS


def J_entry(need, fn, args, kwargs):
    """The entry points' J, on the call's argument tuple and keyword dict (None for none) as they are: `need` flags
    the positional arguments; keyword arguments are constants (docs/api.md). The pullback's result starts with
    `(dself, *dargs)`; entries after those are not for the API.

    A Python function derived before, with no rule registered since (every registration bumps the generation), goes
    straight to its cached derivative: `_dispatch` would find no rule for it again."""
    if _cache_of(fn) is None and kwargs is None and type(fn) is _FUNCTION:
        _plain(fn, need, args)  # derives it now, if it has no rule and has source (else `_dispatch` says what to do)
    if _cache_of(fn) is not None:
        return _derived(fn, args, kwargs, need, True)
    return _dispatch(fn, args, kwargs, need, True)

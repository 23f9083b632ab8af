"""How an inner level's `J` handles a call (`_plan`, `_plan_keywords`: mirroring `dispatch._dispatch`), as the kind
of twin that differentiates it: the generated forward/backward pair of a Python function, a registered rule (the twin
rule of `gradient`: `_nested_rule`), a constructor, a bound method, a callable object, or a constant call. And
`_always`, which marks a rule an inner level's calls go through even where no gradient flows."""
import inspect
import operator
import types

import numpy as np

from ...ast_adjoint import dispatch
from ...ast_adjoint.compile import derive
from ...ast_adjoint.derived import _defaulted
from ...ast_adjoint.runtime import callmethod
from ...backends import is_array_type
from ...errors import MissingAdjoint, ZygoteError
from .. import registry
from ..objects import plain_new
from ..registry import find_class_rule, find_rule, is_nondifferentiable, nondifferentiable
from .constructors import init_fields


def _always(rule):
    rule.__zygote_always__ = True
    target = getattr(rule, "__zygote_target__", None)  # (registered before it was marked)
    if target is not None:
        registry.RULED.add(id(registry._key(target)))
    return rule


def _unsupported(fn, what):
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return ZygoteError(f"nested differentiation does not support {what} ({name}) inside an inner gradient yet; "
                       f"differentiate it at one level, or give it a rule with @adjoint")


_IN_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
             operator.itruediv: operator.truediv, operator.ipow: operator.pow}


def _method_of(obj, name):
    """`(method, bound)` for `obj.name(...)`: the function or rule-carrying descriptor a call of it runs with `obj` as
    its first argument (None where there is none: an attribute of the object, a module's function), and, where the
    class has none, `getattr(obj, name)`."""
    method = dispatch.class_method(obj, name)
    if method is not None:
        return method, None
    bound = getattr(obj, name)
    if isinstance(bound, types.MethodType) and bound.__self__ is obj:
        return bound.__func__, bound
    return None, bound


def _plan(fn, args):
    """How the inner level's J handles `fn(*args)`: `(kind, a, b)`, mirroring `dispatch._dispatch`."""
    if fn is callmethod:
        obj, name = args[0], args[1]
        method, bound = _method_of(obj, name)
        if method is not None:
            return "callmethod", method, None
        if isinstance(obj, types.ModuleType):
            return "callattr", bound, None
        if not any(dispatch.differentiable(a) for a in args):
            return "const", None, None  # `tag.endswith("c")`: J runs it as a constant (an outer level sees it recorded)
        raise _unsupported(bound, "this method call")
    if _in_place_operator(fn) and isinstance(args[0], (int, float, complex, tuple, str, np.generic)):
        fn = _IN_PLACE[fn]  # `x += y` on a number is `x + y` (the in-place rule updates arrays, which nesting cannot)
    if dispatch.is_operator(fn) and any(type(a) not in dispatch._NATIVE and not is_array_type(type(a))
                                        and not getattr(type(a), "__zygote_number__", False) for a in args):
        raise _unsupported(fn, "an operator on a user class")
    if type(fn) is types.FunctionType:
        rule = _nested_rule(fn)
        if rule is not None:
            return "rule", rule, len(args)
        code = fn.__code__
        npos, varargs = code.co_argcount, bool(code.co_flags & inspect.CO_VARARGS)
        # a call here has no keywords: parameters left to constant defaults (`back(dy, need=None, *into)` called as
        # `back(dy)`, a rule's `strict=False`) and an empty **kwargs get cotangents after those of the positional
        # parameters and *args, which are dropped (a call Python would refuse fails in the forward, with Python's
        # TypeError); a default that may carry a gradient (a nested `lambda t, b=x * x: ...`) is passed explicitly
        # (the "defaulted" twin), so that its gradient reaches the function's, as `_derived`'s "b=" entries do
        forward, backward = derive(fn, None, functional=True)
        if forward.__zygote_mutates__:  # (its forward returns `(y, *finals)`)
            return _updating_plan(fn, forward, backward, npos, len(args), varargs)
        if varargs and len(args) > npos:
            return "varargs", forward, (backward, npos, len(args) - npos)
        if "__zygote_defaults__" in fn.__dict__ and _defaulted(fn, code, len(args), None):
            return "defaulted", forward, (backward, len(args), code.co_varnames[len(args):npos])
        return "derived", forward, (backward, len(args))
    rule = _nested_rule(fn)
    if rule is not None:
        return "rule", rule, len(args)
    if is_nondifferentiable(fn):
        return "const", None, None
    constructed = _constructor_plan(fn) if isinstance(fn, type) else None
    if constructed is not None:
        return constructed
    if isinstance(fn, types.MethodType):
        return "bound", fn.__func__, None
    if isinstance(fn, types.BuiltinMethodType) and not isinstance(fn.__self__, types.ModuleType) \
            and fn.__self__ is not None:
        unbound = getattr(type(fn.__self__), fn.__name__, None)
        if unbound is not None and find_rule(unbound) is not None:
            return "bound", unbound, None
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(fn, type):
        return "object", call, None
    if not any(dispatch.differentiable(a) for a in args):
        return "const", None, None
    raise MissingAdjoint(fn)


def _updating_plan(fn, forward, backward, npos, nargs, varargs):
    """`_plan` for a Python function that updates parameters in place. Only a rule's back that adds into the running
    cotangents handed to it (`back(dy, need, *into)`, registry.py's `accumulates`) is followed: the caller reads the
    handed-over cotangents no more, so their cotangents after the call are None. An inner level's own update of an
    argument is refused: the outer level would need the updated objects' cotangents at the call site."""
    if not varargs or not fn.__module__.startswith("zygotepy."):
        raise _unsupported(fn, "a function that updates its argument in place")
    return "updating", forward, (backward, npos, max(nargs - npos, 0), nargs, (None,) * len(forward.__zygote_mutates__))


def _constructor_plan(cls):
    """`_plan` for a class with a constructor rule (adjoints/objects.py), or None: a plain class's `__init__` read as
    a function returning the attributes (constructors.py), any other's structural rule."""
    construct = find_class_rule(cls)
    if construct is plain_new:
        return "plain", init_fields(cls), None
    return None if construct is None else ("class", construct, None)


nondifferentiable(_plan)


def _plan_keywords(fn, args, kwargs):
    """`_plan` for a call with keywords: a constructor's structural rule takes them as they are, and so does a rule
    (see below); a Python function's generated code too, its cotangents regrouped by the call plan `_derived` uses
    (which parameter each argument and keyword binds)."""
    if fn is callmethod:  # `x.sum(axis=0)`: the method itself, with its keywords (as `_plan` does without them)
        method, _ = _method_of(args[0], args[1])
        if method is not None:
            return "callmethod", method, None
    rule = _nested_rule(fn)
    constructed = _constructor_plan(fn) if rule is None and isinstance(fn, type) else None
    if constructed is not None:
        return constructed
    if rule is not None:
        return "rule", rule, (len(args), getattr(rule, "__zygote_keywords__", False))
    if type(fn) is types.FunctionType and not is_nondifferentiable(fn):
        if "__zygote_defaults__" in fn.__dict__ and _defaulted(fn, fn.__code__, len(args), kwargs):  # (dual route)
            raise _unsupported(fn, "a call with keywords leaving a parameter to a default that carries a gradient")
        forward, backward = derive(fn, None, functional=True)
        return "derived", forward, (backward, dispatch._call_plan(fn.__code__, len(args), tuple(kwargs)))
    if not any(dispatch.differentiable(a) for a in (*args, *kwargs.values())):
        return "const", None, None
    raise _unsupported(fn, "keyword arguments in a call")


nondifferentiable(_plan_keywords)


def _nested_rule(fn):
    """The rule an outer level transforms for a call of `fn`: for `gradient`, the twin rule, not the plain one."""
    rule = find_rule(fn)
    return getattr(rule, "__zygote_nested__", rule)


def _in_place_operator(fn):
    try:
        return fn in _IN_PLACE
    except TypeError:  # (an unhashable callable: a dataclass with `__call__`)
        return False

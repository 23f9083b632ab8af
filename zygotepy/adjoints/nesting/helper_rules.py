"""Rules for the helpers that generated code and the built-in rules call, for an outer level that transforms that
code: their bodies use constructs the transform does not take (item assignment, imports, closures over reassigned
names), or update in place what an outer level must compute out of place (`acc`, `sole`)."""
import numpy as np

from ... import backends
from ...ast_adjoint import runtime as rt
from ...backends import namespace
from ...structgrad import StructGrad
from ..registry import adjoint, nondifferentiable
from .cotangents import _unwrap
from .entries import _depth
from .plan import _always, _unsupported


@adjoint(rt.acc_var)  # (its update in place is generated code's own business: an outer level adds out of place)
@adjoint(rt.acc)
def _acc_rule(a, b):
    def back(dy):  # addition: both operands receive dy (None stays None)
        return (None if a is None else dy, None if b is None else dy)
    return rt.acc(a, b), back


@_always
@adjoint(rt.sole)
def _sole_rule(a):  # an outer level differentiates the out-of-place arm: its update in place would need the journal
    return False, lambda _: (None,)


@adjoint(rt.make_closure)
def _make_closure_rule(code, globals_, cells, defaults, kwdefaults, *values):
    names = code.co_freevars
    defaulted = code.co_varnames[code.co_argcount - len(defaults or ()):code.co_argcount]

    def back(dfn):  # the closure's cotangent, by free variable, goes to the values its cells hold, and a default's
        if dfn is None:  # (its entry "name=": dispatch's `_derived`, nesting's `_defaults_of`) to the default value
            return (None,) * (5 + len(values))
        ddefaults = tuple(dfn.get(p + "=") for p in defaulted)
        return (None, None, None, ddefaults if any(d is not None for d in ddefaults) else None, None,
                *(_unwrap(dfn.get(n)) for n in names))
    return rt.make_closure(code, globals_, cells, defaults, kwdefaults, *values), back


@adjoint(rt.recursive_closure)
def _recursive_closure_rule(fn, name):
    if _depth():  # (an outer level differentiating this fold got d/da None for 0.4: forward-over-reverse takes it)
        raise _unsupported(fn, "a nested function that calls itself")

    def back(dfn):  # each call of itself left its own closure's cotangent in entry `name`: one closure, one sum
        total = None
        while dfn is not None:
            total = rt.acc(total, StructGrad({k: v for k, v in dfn.items() if k != name}))
            dfn = dfn.get(name)
        return total, None
    return fn, back


@adjoint(StructGrad)
def _structgrad_rule(*args, **kwargs):
    if len(args) > 1 or args and not isinstance(args[0], dict):
        raise _unsupported(StructGrad, "StructGrad built from anything but one dict or keywords")

    def back(dy):  # a dict seen as a structural gradient: the cotangent is the same mapping (copied by a
        # comprehension, which an outer level differentiates; `dict(dy)` has no rule)
        return () if not args else (None if dy is None else {k: v for k, v in dy.items()},)
    return StructGrad(*args, **kwargs), back


@adjoint(rt.closure_cotangent)
def _closure_cotangent_rule(*flat):
    names = flat[::2]

    def back(dy):  # no `out += [...]`: a list's `+=` is the in-place rule, which an outer level cannot transform
        if dy is None:
            return (None,) * len(flat)
        return tuple(v for name in names for v in (None, dy.get(name)))
    return rt.closure_cotangent(*flat), back


@adjoint(backends.unbroadcast)
def _unbroadcast_rule(g, like):
    def back(dy):  # the adjoint of a reduction to like's shape: broadcast back to g's shape
        if dy is None or g is None:
            return (None, None)
        shape = getattr(g, "shape", None)
        if type(dy) in (list, tuple) and shape is not None:  # (`like` a list: the cotangent of its items, where a
            dy = namespace(g).asarray(_filled(dy, like))  # constant's is None, which NumPy would make a NaN)
        if shape is None or getattr(dy, "shape", None) == shape:
            return (dy, None)
        return (namespace(g).broadcast_to(dy, shape), None)
    return backends.unbroadcast(g, like), back


def _filled(dy, like):
    """The cotangent of the items of the list `like`, None as zeros of the item's shape."""
    if type(dy) in (list, tuple):
        return [_filled(d, item) for d, item in zip(dy, like, strict=True)]
    return np.zeros(np.shape(like)) if dy is None else dy


@adjoint(backends.conj)
def _conj_rule(x):
    def back(dy):
        return (None if dy is None else backends.conj(dy),)
    return backends.conj(x), back


nondifferentiable(backends.namespace, backends.is_complex, backends.function)

"""The twins: what `J(fn, *args)`, `J_args` and `J_kw` compute, as code an outer level can transform. One small twin
per kind of call (`_plan`'s kind: `_TWINS`, and `_KEYWORD_TWINS` for calls with keywords), each straight-line code,
so that an outer level transforms only the twins the calls use. Each calls the code that handles the call (generated
forward code, a rule through `call_rule`, a constructor) and returns a closure over its tape as the pullback."""
from ...ast_adjoint import dispatch
from ...ast_adjoint import runtime as rt
from ..registry import adjoint, is_builtin, nondifferentiable, takes_need
from .cotangents import (_by_parameters, _callmethod_grads, _cells_of, _defaults_of, _drop, _join_defaults,
                         _keyword_grads, _module_grads, _pad, _spread, _take, _unstated, _with_dself)
from .constructors import field_cotangents, object_of
from .plan import _always, _plan, _plan_keywords


def call_rule(rule, *args, **kwargs):
    """`rule(*args, **kwargs)`, a rule's forward, always run through the outer level's J (so the rule sees that
    level)."""
    return rule(*args, **kwargs)


@adjoint(call_rule)
@_always
def call_rule_rule(rule, *args, **kwargs):
    y, pb = dispatch.J_kw(rule, *args, **kwargs) if kwargs else dispatch.J(rule, *args)

    def back(dy):  # (drule, *dargs), then the keywords' cotangents when called with keywords
        return pb(dy)
    return y, back


call_rule_rule.__zygote_keywords__ = True


# --- the twins -------------------------------------------------------------------------------------------------------

def twin_J(fn, *args):
    """What `J(fn, *args)` computes, as code the outer level can transform: `(y, back)` with back -> (dfn, *dargs).
    One small twin per way `J` handles a call (`_plan`'s kind), so that an outer level transforms only the twins the
    calls use, each straight-line code (one function with an early return per kind made every level transform all
    of them, with the flags and joins of the returns: most of the cost of a fourth level)."""
    kind, a, b = _plan(fn, args)
    return _TWINS[kind](fn, a, b, args)


def _static(v):
    """`v`, seen by an outer level as a constant: what `_plan` found (generated code, counts) carries no gradient."""
    return v


nondifferentiable(_static)


def _self_of(method):
    """A bound method's object, whose cotangent is the method's (dispatch's MethodPullback: `dself` is the object's)."""
    return method.__self__


@adjoint(_self_of)
def _self_of_rule(method):
    return method.__self__, lambda dy: (dy,)


def _by_derived(fn, forward, plan, args):
    generated_back, n = _static(plan)
    y, tape = _cells_of(fn, forward)(*args)
    backward = _cells_of(fn, generated_back)

    def derived_back(dy, need=None):
        return _take(backward(tape, dy), n + 1)
    return y, derived_back


def _by_defaulted(fn, forward, plan, args):
    # a call leaving a parameter to a default that may carry a gradient: the defaults passed explicitly, through
    # `_defaults_of`, whose rule gives their cotangents to the function's
    generated_back, n, names = _static(plan)
    full = args + _defaults_of(fn, n)
    y, full_tape = _cells_of(fn, forward)(*full)
    full_backward = _cells_of(fn, generated_back)

    def defaulted_back(dy, need=None):
        return _join_defaults(full_backward(full_tape, dy), n, _static(names))
    return y, defaulted_back


def _by_varargs(fn, forward, plan, args):
    generated_back, npos, nextra = _static(plan)
    y, va_tape = _cells_of(fn, forward)(*args)
    va_backward = _cells_of(fn, generated_back)

    def varargs_back(dy, need=None):
        return _spread(va_backward(va_tape, dy), npos, nextra)
    return y, varargs_back


def _by_updating(fn, forward, plan, args):
    # a rule's back adding into the cotangents handed to it (`_updating_plan`): its forward returns `(y, *finals)`
    generated_back, npos, nextra, n, finals = _static(plan)
    out, up_tape = _cells_of(fn, forward)(*args)
    up_backward = _cells_of(fn, generated_back)

    def updating_back(dy, need=None):
        return _take(_spread(up_backward(up_tape, (dy,) + finals), npos, nextra), n + 1)
    return out[0], updating_back


def _by_rule(fn, rule, nargs, args):
    n = _static(nargs)
    # (a user's rule declared `need=True` has `back(dy, need)`, with no default: every argument is needed here)
    everything = _static((True,) * nargs if takes_need(rule) and not is_builtin(rule) else None)
    y, rule_back = call_rule(rule, *args)

    def ruled_back(dy, need=None):
        return _with_dself(rule_back(dy) if everything is None else rule_back(dy, everything), n)
    return y, ruled_back


def _by_class(cls, construct, _, args, kwargs=None):
    # a constructor's structural rule (adjoints/objects.py: namedtuples, dataclasses, SimpleNamespace, dict), which an
    # outer level transforms like any rule: its back is already `(dcls, *dargs)`, then a keyword dict if called with one
    y, class_back = call_rule(construct, cls, args, kwargs)

    def constructed_back(dy, need=None):
        return class_back(dy)
    return y, constructed_back


def _by_plain(cls, fields_of_init, _, args):
    # a plain class: its __init__ read as a function returning the attributes (constructors.py), then the object
    fields, fields_back = twin_J(fields_of_init, *args)
    y = object_of(cls, fields)

    def plain_back(dy, need=None):
        return _pad(_drop(fields_back(field_cotangents(dy)), 1), 1)
    return y, plain_back


def _by_bound(fn, func, _, args):
    # the object through `fn` (an outer level's gradient of an object the method reads reaches the method's owner)
    y, bound_pb = twin_J(func, _self_of(fn), *args)

    def bound_back(dy, need=None):
        return _drop(bound_pb(dy), 1)
    return y, bound_back


def _by_object(fn, call, _, args):
    y, object_pb = twin_J(call, fn, *args)  # a callable object: `type(fn).__call__(fn, *args)`

    def object_back(dy, need=None):
        return _drop(object_pb(dy), 1)
    return y, object_back


def _by_callmethod(fn, method, _, args):
    y, method_back = twin_J(method, args[0], *_drop(args, 2))

    def callmethod_back(dy, need=None):
        return _callmethod_grads(method_back(dy))
    return y, callmethod_back


def _by_callattr(fn, attr, _, args):
    y, attr_back = twin_J(attr, *_drop(args, 2))

    def callattr_back(dy, need=None):
        return _module_grads(attr_back(dy))
    return y, callattr_back


def _by_const(fn, _, __, args):
    y = fn(*args)

    def const_back(dy, need=None):
        return (None,) * (len(args) + 1)
    return y, const_back


_TWINS = {"derived": _by_derived, "defaulted": _by_defaulted,
          "varargs": _by_varargs, "updating": _by_updating, "rule": _by_rule, "class": _by_class, "plain": _by_plain,
          "bound": _by_bound, "object": _by_object,
          "callmethod": _by_callmethod, "callattr": _by_callattr, "const": _by_const}


def twin_J_args(fn, *args):
    """What `J_args(need, fn, *args)` and `J_handing` compute: back -> dargs only, added to the running cotangents
    generated code hands over (`back(dy, need, *into)`), if any."""
    y, pb = twin_J(fn, *args)

    def args_back(dy, need=None, *into):
        grads = _drop(pb(dy), 1)
        return tuple(rt.acc(a, g) for a, g in zip(into, grads)) if into else grads
    return y, args_back


def twin_J_kw(fn, *args, **kwargs):
    """What `J_kw(fn, *args, **kwargs)` computes: back -> (dfn, *dargs, dkw)."""
    kind, a, b = _plan_keywords(fn, args, kwargs)
    return _KEYWORD_TWINS[kind](fn, a, b, args, kwargs)


def _by_rule_keywords(fn, rule, plan, args, kwargs):
    n, aware = _static(plan)
    y, rule_kw_back = call_rule(rule, *args, **kwargs)

    def ruled_kw_back(dy, need=None):
        return _keyword_grads(rule_kw_back(dy), n, aware, _unstated(rule, fn, kwargs))
    return y, ruled_kw_back


def _by_plain_keywords(cls, fields_of_init, _, args, kwargs):
    kw_fields, kw_fields_back = twin_J_kw(fields_of_init, *args, **kwargs)
    y = object_of(cls, kw_fields)

    def plain_kw_back(dy, need=None):
        return _pad(_drop(kw_fields_back(field_cotangents(dy)), 1), 1)
    return y, plain_kw_back


def _by_derived_keywords(fn, forward, plan, args, kwargs):
    generated_back, call_plan = _static(plan)
    y, kw_tape = _cells_of(fn, forward)(*args, **kwargs)
    kw_backward = _cells_of(fn, generated_back)

    def derived_kw_back(dy, need=None):
        return _by_parameters(kw_backward(kw_tape, dy), call_plan)
    return y, derived_kw_back


def _by_const_keywords(fn, _, __, args, kwargs):
    y = fn(*args, **kwargs)

    def const_kw_back(dy, need=None):
        return (*(None,) * (len(args) + 1), {k: None for k in kwargs})
    return y, const_kw_back


def _by_callmethod_keywords(fn, method, _, args, kwargs):
    y, method_kw_back = twin_J_kw(method, args[0], *_drop(args, 2), **kwargs)

    def callmethod_kw_back(dy, need=None):
        return _callmethod_grads(method_kw_back(dy))
    return y, callmethod_kw_back


_KEYWORD_TWINS = {"class": _by_class, "plain": _by_plain_keywords, "rule": _by_rule_keywords,
                  "derived": _by_derived_keywords, "const": _by_const_keywords, "callmethod": _by_callmethod_keywords}

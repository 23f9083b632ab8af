"""Nested reverse mode: rules that let an outer `gradient` differentiate code that itself calls `gradient`.

How (Zygote's way, in Python): an inner `gradient(f, x)` runs two pieces of ordinary Python, the generated forward of
`f` and its generated backward. Both have source (registered in `linecache`), so the outer level can transform them like
any user function: differentiating them gives the outer level the derivative of the inner gradient. Only two kinds of
code on the inner path are not plain transformable Python:

- the entry points (`gradient`, `value_and_gradient`, `pullback`: `try` blocks for error notes, projections), and
- the dispatcher `J` and its variants (caches, compilation, `type` tests), which generated code calls.

Each gets a rule here that says "differentiate my twin": a short Python function computing the same value from
transformable parts. `_plan` (non-differentiable) decides, as `J` would, which code handles a call: the generated
forward/backward pair of a Python function, a registered rule (whose own source is then transformed, so rules nest
too), a bound method, a callable object, or a constant call. The twin for that kind (`_TWINS`: one small function per
kind, so that an outer level transforms only the kinds the calls use, each straight-line code) then calls that forward
and returns a closure over its tape as the pullback; the outer level differentiates the forward call and, later, the
closure. Each level transforms the generated code of the level below. Status: any depth in principle;
tests/test_nesting.py checks third derivatives (closed forms, loops, closures), array `x ** k` at second order, fourth
derivatives, and (when ZYGOTEPY_SLOW_NESTING=1) fifth derivatives of x^5, sin, exp and loops against closed forms. What
makes deeper levels work: generated code that builds a closure passes the cells' contents to `runtime.make_closure` (its
rule below gives them the closure's cotangent), and the helpers that generated code and built-in rules use are
themselves transformable or have rules (`scatter`, `splat`, `unpack_starred`, `StructGrad`). Code an outer level
transforms must not update anything in place: the mutation rules (item stores, `append`, list `+=`) are not in the
transformable subset, and a call of one inside a rule's `back` fails two levels further up. So the backs on this path
build their results by concatenation or comprehension (`_splat_back`, `_concat_back`, `_repeat_back`,
`closure_cotangent`'s and `dict_put`'s rules, `StructGrad`'s), `_plan` sends `x += y` on a number to the plain operator,
and the scalar fast path of an operation takes no constant operand that is not a number (`(None,) * k` in `_drop_rule`'s
back: a fifth level failed on these). A sixth level also needed twins of functions called without their optional or
keyword-only parameters (`back(dy)` for `back(dy, need=None, *into)`, `zip_(*seqs, strict=False)`) and of method calls
on data (`tag.endswith(...)`, a constant).

Cost: a warm call is fast (milliseconds up to the fourth level, ~0.3 s at the fifth); a first call transforms each
level's generated code, forward and backward (twice the functions per level, each several times longer). For d^k of
x^5 the generated code was 18 thousand lines at k = 3, 224 thousand at 4 and 2.5 million at 5 (a cold fifth derivative:
~3 min); it is now 7, 48 and 360 thousand (~3 s for a fourth derivative, ~30 s for a fifth, on one quiet core). What
shrinks it: the twins per kind above (one `twin_J` with an early return per kind, transformed whole at every level, was
most of a fourth level's cost), `gradient`'s and `value_and_gradient`'s twins calling the planned twin directly, and code
written small for an outer level (`OPTIONS.nested_size`: ast_adjoint/adjoint.py, compile.py): generated code's helpers read as
constants, no versioned loop copies or inlined callees, no guard an enclosing guard already proved, joins nothing reads
dropped, literal arithmetic folded. A sixth level gives x^6, sin, exp and x^6 by a loop right (a slow test, with the
limit raised; the loop gave 696 instead of 720, exactly 29/30 of the true value, until the nesting changes of
2026-11-27, which fixed it without the cause being isolated). A twin deeper than MAX_LEVELS (five: the nestlevel
example is not yet checked at six; a fifth derivative through a loop runs in every test run) raises NestingTooDeep,
counting the enclosing levels with a `nestlevel`-style rule (`_depth`): the outermost `gradient` then takes the levels
above by forward-over-reverse (nesting_deep.py: a sixth derivative in seconds), and so any depth works.

Invariants:
- A level's user rules see the level's own semantics: calls of rules for `J`, the entry points and `call_rule` are
  routed through the outer level's `J` even when no gradient flows into them (`__zygote_always__`), so the rule of
  `nestlevel() = 0` returns 1 under one `gradient`, 2 under two.
- Without nesting nothing here runs: these rules apply only when a transformed function calls `gradient` or `J`.
- Calls with keywords go through `twin_J_kw`: a Python function's generated code (its cotangents regrouped by the
  call plan, `_by_parameters`), a rule (keyword-aware or not, with `DroppedKeyword`s as J gives them), a constructor's
  structural rule (namedtuples, dataclasses, SimpleNamespace, `dict(a=x)`: the "class" twins, with or without
  keywords).
- What the twins do not cover (`functools.partial`, operators of user classes, an `__init__` that does more than set
  attributes, `__post_init__`, updates in place) raises a ZygoteError naming the callee, never a wrong gradient; an
  inner `gradient` or `value_and_gradient` whose twins raise one is then taken by forward-over-reverse
  (nesting_deep.py), so these work there; inside `pullback` and the J variants the error stands.
- The registered rule of `gradient` and `value_and_gradient` is the one the outermost level runs plainly
  (`nesting_deep.outermost`, which picks the route); an outer level transforms the twin rule (`_nested_rule`).
"""
import inspect
import operator
import types

import numpy as np

from .. import api, backends
from ..backends import is_array_type, namespace
from ..ast_adjoint import runtime as rt
from ..api import _project, _seed
from ..ast_adjoint import dispatch
from ..ast_adjoint.compile import derive
from ..ast_adjoint.runtime import callmethod
from ..errors import MissingAdjoint, ZygoteError
from ..structgrad import StructGrad
from .nesting_deep import NestingTooDeep, outermost
from .nesting_objects import field_cotangents, init_fields, object_of
from .objects import plain_new
from . import registry
from .registry import adjoint, find_class_rule, find_rule, is_nondifferentiable, nondifferentiable

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


def _plan(fn, args):
    """How the inner level's J handles `fn(*args)`: `(kind, a, b)`, mirroring `dispatch._dispatch`."""
    if fn is callmethod:
        obj, name = args[0], args[1]
        kind, method = dispatch._method_kind(type(obj), name)
        if kind == "method":
            return "callmethod", method, None
        bound = getattr(obj, name)
        if isinstance(bound, types.MethodType) and bound.__self__ is obj:
            return "callmethod", bound.__func__, None
        if isinstance(obj, types.ModuleType):
            return "callattr", bound, None
        if not any(dispatch.differentiable(a) for a in args):
            return "const", None, None  # `tag.endswith("c")`: J runs it as a constant (an outer level sees it recorded)
        raise _unsupported(bound, "this method call")
    if fn in _IN_PLACE and isinstance(args[0], (int, float, complex, tuple, str, np.generic)):
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
        # a call here has no keywords: parameters left to their defaults (`back(dy, need=None, *into)` called as
        # `back(dy)`, a rule's `strict=False`) are constants, and a **kwargs parameter stays empty; their cotangents
        # come after those of the positional parameters and *args, and are dropped (a call Python would refuse fails
        # in the forward, with Python's TypeError)
        forward, backward = derive(fn, None, functional=True)
        if varargs and len(args) > npos:
            return "varargs", forward, (backward, npos, len(args) - npos)
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


def _constructor_plan(cls):
    """`_plan` for a class with a constructor rule (adjoints/objects.py), or None: a plain class's `__init__` read as
    a function returning the attributes (nesting_objects.py), any other's structural rule."""
    construct = find_class_rule(cls)
    if construct is plain_new:
        return "plain", init_fields(cls), None
    return None if construct is None else ("class", construct, None)


nondifferentiable(_plan)


# --- small structural helpers with their own rules (tuple surgery the transform would otherwise have to see) ---------

def _with_dself(grads, n):
    """`(None, *grads[:n])`: a rule's cotangents as J's, trimmed to the arguments given."""
    return (None, *grads[:n])


@adjoint(_with_dself)
def _with_dself_rule(grads, n):
    def back(dy):
        if dy is None:
            return (None, None)
        return ((*dy[1:], *(None,) * (len(grads) - n)), None)
    return _with_dself(grads, n), back


def _drop(grads, k):
    """`grads[k:]`."""
    return tuple(grads[k:])


@adjoint(_drop)
def _drop_rule(grads, k):
    def back(dy):
        return (None if dy is None else (*(None,) * k, *dy), None)
    return _drop(grads, k), back


def _take(grads, k):
    """`grads[:k]`."""
    return tuple(grads[:k])


@adjoint(_take)
def _take_rule(grads, k):
    def back(dy):
        return (None if dy is None else (*dy, *(None,) * (len(grads) - k)), None)
    return _take(grads, k), back


def _pad(grads, k):
    """`(None,) * k + grads`: cotangents for k leading constant arguments, then `grads`."""
    return (None,) * k + tuple(grads)


@adjoint(_pad)
def _pad_rule(grads, k):
    def back(dy):
        return (None if dy is None else _drop(dy, k), None)
    return _pad(grads, k), back


def _module_grads(grads):
    """A module function's `(dfunc, *dargs)` as callmethod's `(None, None, None, *dargs)`."""
    return (None, None, None, *grads[1:])


@adjoint(_module_grads)
def _module_grads_rule(grads):
    def back(dy):
        return (None if dy is None else (None, *dy[3:]),)
    return _module_grads(grads), back


def _project_all(args, grads):
    """The entry points' projection of each gradient onto its argument (real for real, None for data)."""
    return tuple(_project(a, g) for a, g in zip(args, grads, strict=True))


@adjoint(_project_all)
def _project_all_rule(args, grads):
    def back(dy):  # a projection onto the argument's space: its adjoint embeds dy back, unchanged
        return (None, dy)
    return _project_all(args, grads), back


def _spread(grads, npos, nextra):
    """A *args function's `(dself, *dparams, d*args)` as one cotangent per positional argument of the call (`nextra`
    of them in *args; a None d*args stands for None each)."""
    return (*grads[:npos + 1], *(grads[npos + 1] or (None,) * nextra))


@adjoint(_spread)
def _spread_rule(grads, npos, nextra):
    def back(dy):
        if dy is None:
            return (None, None, None)
        return ((*dy[:npos + 1], tuple(dy[npos + 1:]), *(None,) * (len(grads) - npos - 2)), None, None)
    return _spread(grads, npos, nextra), back


def _cells_of(fn, generated):
    """`generated` (fn's generated forward or backward), whose cotangent belongs to `fn`: the generated code reads fn's
    captured variables through cells named `<name>_cell`, so a gradient reaching them is the gradient of fn's."""
    return generated


def _unwrap(v):
    """A cell's cotangent as its content's: generated code reads `x_cell.cell_contents`."""
    return v.get("cell_contents", v) if isinstance(v, StructGrad) else v


@adjoint(_cells_of)
def _cells_of_rule(fn, generated):
    def back(dg):
        if not dg:
            return (None, None)
        fields = {k[:-5]: _unwrap(v) for k, v in dg.items() if k.endswith("_cell") and v is not None}
        return (StructGrad(fields) if fields else None, None)
    # the forward calls `_cells_of` itself (not `return generated`): an outer level transforming this rule then applies
    # this rule again, sending a cotangent of the generated function to `fn` (`generated` comes from `_plan`, which is
    # non-differentiable: the cotangent would be dropped there)
    return _cells_of(fn, generated), back


def _callmethod_grads(grads):
    """A method's `(dfunc, dobj, *dargs)` as callmethod's `(None, dobj, None, *dargs)`."""
    return (None, grads[1], None, *grads[2:])


@adjoint(_callmethod_grads)
def _callmethod_grads_rule(grads):
    def back(dy):
        return (None if dy is None else (None, dy[1], *dy[3:]),)
    return _callmethod_grads(grads), back


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


def _by_varargs(fn, forward, plan, args):
    generated_back, npos, nextra = _static(plan)
    y, va_tape = _cells_of(fn, forward)(*args)
    va_backward = _cells_of(fn, generated_back)

    def varargs_back(dy, need=None):
        return _spread(va_backward(va_tape, dy), npos, nextra)
    return y, varargs_back


def _by_rule(fn, rule, nargs, args):
    n = _static(nargs)
    y, rule_back = call_rule(rule, *args)

    def ruled_back(dy, need=None):
        return _with_dself(rule_back(dy), n)
    return y, ruled_back


def _by_class(cls, construct, _, args, kwargs=None):
    # a constructor's structural rule (adjoints/objects.py: namedtuples, dataclasses, SimpleNamespace, dict), which an
    # outer level transforms like any rule: its back is already `(dcls, *dargs)`, then a keyword dict if called with one
    y, class_back = call_rule(construct, cls, args, kwargs)

    def constructed_back(dy, need=None):
        return class_back(dy)
    return y, constructed_back


def _by_plain(cls, fields_of_init, _, args):
    # a plain class: its __init__ read as a function returning the attributes (nesting_objects.py), then the object
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


_TWINS = {"derived": _by_derived, "varargs": _by_varargs, "rule": _by_rule, "class": _by_class, "plain": _by_plain,
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


def _plan_keywords(fn, args, kwargs):
    """`_plan` for a call with keywords: a constructor's structural rule takes them as they are, and so does a rule
    (see below); a Python function's generated code too, its cotangents regrouped by the call plan `_derived` uses
    (which parameter each argument and keyword binds)."""
    rule = _nested_rule(fn)
    constructed = _constructor_plan(fn) if rule is None and isinstance(fn, type) else None
    if constructed is not None:
        return constructed
    if rule is not None:
        return "rule", rule, (len(args), getattr(rule, "__zygote_keywords__", False))
    if type(fn) is types.FunctionType and not is_nondifferentiable(fn):
        forward, backward = derive(fn, None, functional=True)
        return "derived", forward, (backward, dispatch._call_plan(fn.__code__, len(args), tuple(kwargs)))
    if not any(dispatch.differentiable(a) for a in (*args, *kwargs.values())):
        return "const", None, None
    raise _unsupported(fn, "keyword arguments in a call")


nondifferentiable(_plan_keywords)


def _by_parameters(grads, plan):
    """A derived function's `(dself, *dparams)` as its call's `(dfn, *dargs, dkw)` (`plan`: dispatch._call_plan; as
    dispatch.MappedPullback, written for an outer level: its rule below is the adjoint of this regrouping)."""
    positional, keywords = plan
    out = [grads[0]]
    for kind, i in positional:
        if kind == "param":
            out.append(grads[i + 1])
        else:  # an extra positional argument, collected by *args: (index of *args, offset)
            out.append(None if grads[i[0] + 1] is None else grads[i[0] + 1][i[1]])
    dkw = {k: grads[i + 1] if kind == "param" else (grads[i + 1] or {}).get(k) for k, (kind, i) in keywords.items()}
    return (*out, dkw)


@adjoint(_by_parameters)
def _by_parameters_rule(grads, plan):
    positional, keywords = plan

    def back(dy):  # each argument binds one parameter, or one entry of *args or **kwargs: its cotangent goes there
        if dy is None:
            return (None, None)
        dkw = dy[len(positional) + 1] or {}
        sources = [(kind, i, d) for (kind, i), d in zip(positional, dy[1:len(positional) + 1], strict=True)] + \
                  [(kind, i, dkw.get(k)) for k, (kind, i) in keywords.items()]
        by_param = {i: d for kind, i, d in sources if kind == "param"}
        extra = {i[1]: d for kind, i, d in sources if kind == "vararg"}
        named = {k: dkw.get(k) for k, (kind, _) in keywords.items() if kind == "varkw"}
        star = next((i[0] for kind, i, _ in sources if kind == "vararg"), None)
        starstar = next((i for kind, i, _ in sources if kind == "varkw"), None)
        return ((dy[0], *(tuple(extra.get(n) for n in range(len(extra))) if j == star else named if j == starstar
                          else by_param.get(j) for j in range(len(grads) - 1))), None)
    return _by_parameters(grads, plan), back


def twin_J_kw(fn, *args, **kwargs):
    """What `J_kw(fn, *args, **kwargs)` computes: back -> (dfn, *dargs, dkw)."""
    kind, a, b = _plan_keywords(fn, args, kwargs)
    return _KEYWORD_TWINS[kind](fn, a, b, args, kwargs)


def _keyword_grads(grads, n, aware, unstated):
    """A rule's back, from a call with keywords, as J_kw's `(dfn, *dargs, dkw)`: a keyword-aware rule's ends with the
    keywords' cotangents; a keyword it leaves out, or any keyword of another rule, gets `unstated`'s entry: None for a
    constant, a DroppedKeyword (an error where generated code reads it) for a value that could carry a gradient, as
    dispatch._WithKeywords gives."""
    stated = grads[n] if aware and len(grads) > n else None  # (a back given no cotangent may state no dict)
    return (None, *grads[:n], {**unstated, **(stated or {})} if aware else unstated)


@adjoint(_keyword_grads)
def _keyword_grads_rule(grads, n, aware, unstated):
    def back(dy):
        if dy is None:
            return (None, None, None, None)
        kept = (*dy[1:n + 1], dy[n + 1]) if aware else dy[1:n + 1]
        return ((*kept, *(None,) * (len(grads) - len(kept))), None, None, None)
    return _keyword_grads(grads, n, aware, unstated), back


def _unstated(rule, fn, kwargs):
    return dispatch._keyword_cotangents(rule, fn, kwargs, {})


nondifferentiable(_unstated)


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


_KEYWORD_TWINS = {"class": _by_class, "plain": _by_plain_keywords, "rule": _by_rule_keywords,
                  "derived": _by_derived_keywords, "const": _by_const_keywords}


MAX_LEVELS = 5  # the deepest level tests/test_nesting.py verifies (its slow tests, ZYGOTEPY_SLOW_NESTING=1)


def _depth():
    """How many levels of differentiation enclose this call: 0 when run plainly; its rule adds one per level."""
    return 0


@adjoint(_depth)
@_always
def _depth_rule():
    return _depth() + 1, lambda _: ()


def _refuse_deeper(enclosing):
    """The nesting depth of an inner `gradient`, or NestingTooDeep when it is deeper than tested (the outermost
    `gradient` then takes the levels above by forward-over-reverse: nesting_deep.py)."""
    if enclosing + 1 > MAX_LEVELS:
        raise NestingTooDeep(f"nested reverse mode deeper than {MAX_LEVELS} levels of transformed code is not "
                             f"supported (only `gradient` takes deeper levels, by forward-over-reverse); take the "
                             f"innermost derivatives in forward mode (zygotepy.derivative, zygotepy.hessian) instead")
    return enclosing + 1


nondifferentiable(_refuse_deeper)


def twin_pullback(f, *args):
    # a value, not a call statement (which the mutation lowering would route)
    depth = _refuse_deeper(_depth())  # noqa: F841
    kind, a, b = _plan(f, args)
    y, pb = _TWINS[kind](f, a, b, args)

    def back(dy):
        return _project_all(args, _drop(pb(dy), 1))
    return y, back


# `value_and_gradient` and `gradient` are `twin_pullback` with the seed applied, written out without its `back` closure
# and without `twin_J` in between: an outer level transforms each function on this path, at every level

def twin_value_and_gradient(f, *args):
    depth = _refuse_deeper(_depth())  # noqa: F841
    kind, a, b = _plan(f, args)
    y, pb = _TWINS[kind](f, a, b, args)
    return y, _project_all(args, _drop(pb(_seed(y)), 1))


def twin_gradient(f, *args):
    depth = _refuse_deeper(_depth())  # noqa: F841
    kind, a, b = _plan(f, args)
    y, pb = _TWINS[kind](f, a, b, args)
    return _project_all(args, _drop(pb(_seed(y)), 1))


# --- the rules: "differentiate my twin" --------------------------------------------------------------------------------

def _twin_rule(twin, skip, keyword_twin=None, entry=None):
    """A rule for an entry point or J variant: the outer level's J of its twin; `skip` leading arguments of the call
    (J_args' `need`) are constants the twin does not take. A call with keywords goes to `keyword_twin`, whose back
    ends with the keywords' cotangents (the rule is keyword-aware). With `entry` (`gradient`), the registered rule
    is the one the outermost level runs plainly, which may take the levels beyond MAX_LEVELS by forward-over-reverse;
    an outer level transforms the twin rule itself (`_plan` reads `__zygote_nested__`)."""
    def rule(*args, **kwargs):
        if keyword_twin is not None:  # (even with no keywords, `f(*a, **{})`: the callee's back ends with their dict)
            y, kw_pb = dispatch.J_kw(keyword_twin, *args[skip:], **kwargs)
            if kwargs:
                return y, lambda dy: _pad(_drop(kw_pb(dy), 1), skip)
            n = len(args) - skip  # (called with none, a keyword-aware rule's back gives no dict: J adds it)
            return y, lambda dy: _pad(_take(_drop(kw_pb(dy), 1), n), skip)
        if kwargs:
            raise _unsupported(args[skip], "keyword arguments in a call")
        y, pb = dispatch.J(twin, *args[skip:])

        def back(dy):
            return _pad(_drop(pb(dy), 1), skip)
        return y, back
    rule.__qualname__ = f"{twin.__name__}_rule"
    rule.__zygote_keywords__ = keyword_twin is not None
    if entry is None:
        return _always(rule)

    def outermost_rule(*args, **kwargs):
        argnums = kwargs.pop("argnums", None)
        y, back = outermost(entry, rule, args, kwargs)
        return (y, back) if argnums is None else _narrowed(entry, y, back, argnums, len(args) - 1)
    outermost_rule.__qualname__ = f"{twin.__name__}_outermost_rule"
    outermost_rule.__zygote_nested__ = rule
    return _always(outermost_rule)


def _narrowed(entry, y, back, argnums, n):
    """A nested `gradient(f, *args, argnums=k)`: the rule's result narrowed to the picked gradients (api.select), and
    its back's cotangent widened to one entry per argument again."""
    picked = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def widen(d):
        full = [None] * n
        for k, dk in zip(picked, (d,) if isinstance(argnums, int) else d, strict=True):
            full[k] = rt.acc(full[k], dk)
        return tuple(full)
    if entry is api.gradient:
        return api.select(y, argnums, n), lambda dy: back(None if dy is None else widen(dy))
    value, grads = y
    return (value, api.select(grads, argnums, n)), \
        lambda dy: back(None if dy is None else (dy[0], None if dy[1] is None else widen(dy[1])))


def _nested_rule(fn):
    """The rule an outer level transforms for a call of `fn`: for `gradient`, the twin rule, not the plain one."""
    rule = find_rule(fn)
    return getattr(rule, "__zygote_nested__", rule)


def _register():
    nondifferentiable(api._seed)
    adjoint(dispatch.J)(_twin_rule(twin_J, 0))
    adjoint(dispatch.J_need)(_twin_rule(twin_J, 1))
    adjoint(dispatch.J_args)(_twin_rule(twin_J_args, 1))
    adjoint(dispatch.J_handing)(_twin_rule(twin_J_args, 1))
    adjoint(dispatch.J_kw)(_twin_rule(twin_J, 0, twin_J_kw))
    adjoint(api.pullback)(_twin_rule(twin_pullback, 0))
    adjoint(api.value_and_gradient)(_twin_rule(twin_value_and_gradient, 0, entry=api.value_and_gradient))
    adjoint(api.gradient)(_twin_rule(twin_gradient, 0, entry=api.gradient))


_register()


# --- helpers that generated code and the built-in rules call, as rules (their bodies use constructs the transform
# does not take: item assignment, imports, closures over reassigned names) ---------------------------------------------

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

    def back(dfn):  # the closure's cotangent, by free variable, goes to the values its cells hold
        if dfn is None:
            return (None,) * (5 + len(values))
        return (None, None, None, None, None, *(_unwrap(dfn.get(n)) for n in names))
    return rt.make_closure(code, globals_, cells, defaults, kwdefaults, *values), back


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
        if shape is None or getattr(dy, "shape", None) == shape:
            return (dy, None)
        return (namespace(g).broadcast_to(dy, shape), None)
    return backends.unbroadcast(g, like), back


@adjoint(backends.conj)
def _conj_rule(x):
    def back(dy):
        return (None if dy is None else backends.conj(dy),)
    return backends.conj(x), back


nondifferentiable(backends.namespace, backends.is_complex, backends.function)

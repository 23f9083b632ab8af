"""The rules that make an inner level's entry points and J variants "differentiate my twin": `gradient`,
`value_and_gradient`, `pullback`, `J`, `J_need`, `J_args`, `J_handing`, `J_kw` (`_register`). The entry points' twins
count the enclosing levels (`_depth`) and refuse one deeper than MAX_LEVELS (NestingTooDeep), which the outermost
`gradient` then takes by forward-over-reverse (deep.py)."""
import inspect

import numpy as np

from ... import api
from ...api import _seed
from ...ast_adjoint import dispatch
from ...ast_adjoint import mutate
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...errors import ZygoteError
from ...runtime.context import current
from ...structgrad import StructGrad
from ..registry import adjoint, nondifferentiable
from .cotangents import _drop, _pad, _project_all, _take
from .deep import NestingTooDeep, outermost
from .plan import _always, _plan, _unsupported
from .twins import _TWINS, twin_J, twin_J_args, twin_J_kw


MAX_LEVELS = 5  # the deepest level nesting/test_entries.py verifies (its slow tests, ZYGOTEPY_SLOW_NESTING=1)


def _depth():
    """How many levels of differentiation enclose this call: 0 when run plainly; its rule adds one per level."""
    return 0


@adjoint(_depth)
@_always
def _depth_rule():
    return _depth() + 1, lambda _: ()


def _refuse_deeper(enclosing):
    """The nesting depth of an inner `gradient`, or NestingTooDeep when it is deeper than tested (the outermost
    `gradient` then takes the levels above by forward-over-reverse: deep.py)."""
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


def twin_pullback_first(n, f, *args):
    """`twin_pullback` of `f(*args)` whose back gives the cotangents of the first `n` arguments only: `pullback(f, x,
    y=a)` called as `f(x, a)` (`_placed`), whose user reads one cotangent per positional argument."""
    depth = _refuse_deeper(_depth())  # noqa: F841
    kind, a, b = _plan(f, args)
    y, pb = _TWINS[kind](f, a, b, args)

    def back(dy):
        return _project_all(args, _drop(pb(dy), 1))[:n]
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
        if kwargs and twin is twin_pullback and _by_position(args, kwargs) is not None:
            # `pullback(f, x, y=a)`: by position, so that an outer level's gradient reaches `a` (as `gradient`'s)
            full, names, filled = _by_position(args, kwargs)
            y, pb = dispatch.J(twin_pullback_first, len(args) - 1, *full)
            return y, lambda dy: _as_keywords(_drop(pb(dy), 2), len(args), names, filled)
        if kwargs:
            raise _unsupported(args[skip], "keyword arguments in a call")
        y, pb = dispatch.J(twin, *args[skip:])

        def back(dy):
            return _pad(_drop(pb(dy), 1), skip)
        return y, back
    rule.__qualname__ = f"{twin.__name__}_rule"
    rule.__zygote_keywords__ = keyword_twin is not None or twin is twin_pullback
    if entry is None:
        return _always(rule)

    def outermost_rule(*args, **kwargs):
        if len(args) == 1:  # `gradient(f)`, the function of the point: differentiated code cannot hold that yet
            raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate {entry.__name__}(f) called "
                              f"with the function alone inside a function being differentiated; write "
                              f"{entry.__name__}(f, x), or grad(f)(x)")
        # (keyword-aware: called with keywords, argnums= among them, its back ends with their cotangents' dict)
        called_with, argnums = bool(kwargs), kwargs.pop("argnums", None)
        placed = _placed(args, kwargs)
        if placed is not None:  # `gradient(f, x, y=a)`: by position, so that an outer level's gradient reaches `a`
            full, names, filled = placed
            n = len(args) - 1
            y, back = outermost(entry, rule, full, {})
            y, back = _narrowed(entry, y, back, tuple(range(n)) if argnums is None else argnums, len(full) - 1)
            return y, lambda dy: _as_keywords(back(dy), n + 1, names, filled)
        mark = len(current().log)
        y, back = outermost(entry, rule, args, kwargs)
        if len(current().log) != mark and mutate.updated_since(mark, args[1:]):
            raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate {entry.__name__} of a function "
                              f"that updates its argument in place, inside a function being differentiated (the "
                              f"outer derivative would be taken at the updated argument); pass a copy (x.copy())")
        if argnums is not None:
            y, back = _narrowed(entry, y, back, argnums, len(args) - 1)
        if not called_with:
            return y, back
        dropped = {k: rt.DroppedKeyword(outermost_rule, entry, k) if rt.differentiable(v) else None
                   for k, v in kwargs.items()}  # (the inner level's constants: a gradient reaching one raises)
        return y, lambda dy: (*back(dy), dropped)
    outermost_rule.__qualname__ = f"{twin.__name__}_outermost_rule"
    outermost_rule.__zygote_nested__ = rule
    outermost_rule.__zygote_keywords__ = True
    return _always(outermost_rule)


def _placed(args, kwargs):
    """For `gradient(f, *xs, **kwargs)` whose keywords carry values an outer level may differentiate and all name
    positional parameters of `f`: `((f, *xs, *the rest of f's positional arguments), {position: keyword},
    {position: "parameter="})`, the parameters between filled with their defaults (the last dict: whose cotangents
    join f's own, as a default's do in dispatch's MappedPullback); else None (the keywords stay the inner level's
    constants, which is all the dual route can take: a gradient that reaches them raises DroppedKeyword)."""
    if not kwargs or not any(rt.differentiable(v) for v in kwargs.values()):
        return None
    return _by_position(args, kwargs)


def _by_position(args, kwargs):
    """`_placed` whatever the keywords hold."""
    try:
        bound = inspect.signature(args[0]).bind(*args[1:], **kwargs)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    if bound.kwargs:  # (keyword-only parameters, or **kwargs)
        return None
    names = {k: name for k, name in enumerate(bound.signature.parameters, 1) if name in kwargs}
    filled = {k: name + "=" for k, name in enumerate(bound.signature.parameters, 1) if k >= len(args) and
              name not in kwargs}
    return (args[0], *bound.args), names, filled


def _as_keywords(grads, n, names, filled):
    """The back's `(df, *dxs, *d rest)` as a keyword-aware rule's: `(df, *dxs, {keyword: cotangent})`, with the
    cotangents of the defaults `_by_position` filled in joining f's own."""
    given = {key: grads[k] for k, key in filled.items() if grads[k] is not None}
    df = rt.acc(grads[0], StructGrad(given)) if given else grads[0]
    return (df, *grads[1:n], {name: grads[k] for k, name in names.items()})


def _narrowed(entry, y, back, argnums, n):
    """A nested `gradient(f, *args, argnums=k)`: the rule's result narrowed to the picked gradients (api.select), and
    its back's cotangent widened to one entry per argument again."""
    picked = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)

    def widen(d):
        full = [None] * n
        for k, dk in zip(picked, (d,) if isinstance(argnums, (int, np.integer)) else d, strict=True):
            full[k] = rt.acc(full[k], dk)
        return tuple(full)
    if entry is api.gradient:
        return api.select(y, argnums, n), lambda dy: back(None if dy is None else widen(dy))
    value, grads = y
    return (value, api.select(grads, argnums, n)), \
        lambda dy: back(None if dy is None else (dy[0], None if dy[1] is None else widen(dy[1])))


def _register():
    nondifferentiable(api._seed)
    adjoint(dispatch.J)(_twin_rule(twin_J, 0))
    adjoint(dispatch.J_need)(_twin_rule(twin_J, 1))
    adjoint(dispatch.J_args)(_twin_rule(twin_J_args, 1))
    adjoint(dispatch.J_handing)(_twin_rule(twin_J_args, 1))
    adjoint(dispatch.J_kw)(_twin_rule(twin_J, 0, twin_J_kw))
    adjoint(api.pullback)(_twin_rule(twin_pullback, 0))
    adjoint(api.inner_pullback)(_twin_rule(twin_pullback, 0))  # (the entry points built on pullback call it)
    adjoint(api.value_and_gradient)(_twin_rule(twin_value_and_gradient, 0, entry=api.value_and_gradient))
    adjoint(api.gradient)(_twin_rule(twin_gradient, 0, entry=api.gradient))


_register()

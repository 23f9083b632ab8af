"""Nesting deeper than MAX_LEVELS: the levels above it take their derivative by forward-over-reverse.

Why: each level of nested reverse mode transforms the generated code of the level below, which grows about sevenfold
per level (360 thousand lines for a fifth derivative of x^5; a sixth took 7 minutes and 7.5 GB). Forward mode nests
at a fixed cost per level instead: a dual number of a dual number runs the same code, with no transform.

How: the outermost level's rule for `gradient(f, *args)` and `value_and_gradient` (run plainly, by `J`, not transformed
by a level above) first takes the transform route. When a level inside would exceed MAX_LEVELS, the twin there raises
`NestingTooDeep`; this rule catches it (and any other ZygoteError of the twins: code they cannot transform, such as
updates in place, partials, operators of user classes), remembers `f` (`_DUAL_KEYS`), and takes the dual route,
`by_dual_numbers`, which forward mode and one plain reverse pass can take where the twins could not:
- forward: `gradient(f, *args)`, run plainly;
- back(v): the cotangent `v` of the gradients is a tangent: the gradient's pushforward in the direction `v` is the
  Hessian times v, which is the vector-Jacobian product the outer level asks for (the Hessian is symmetric). The
  same dual pass gives the cotangent of `f` itself, so variables `f` captures from the outer level get theirs:
  d/de of df/dtheta at args + e*v is the mixed second derivative times v.
Inside a dual route every nested `gradient` takes the dual route too (the context's `dual_route`): dual numbers never enter a
transformed inner level, and the only reverse pass is the innermost one, on nested dual numbers (each perturbation
with its own tag, so the levels are never confused).

Calls with keyword constants (`gradient(f, x, scale=2.0)`, which the twins do not take) and calls whose arguments hold
dual numbers (forward mode over nested reverse mode) take the dual route at once.

What differs from the transform route: a rule's forward sees one level (the innermost reverse pass: the seed's
`nestlevel` counts right up to MAX_LEVELS only), and `f` runs again in the backward, as with `checkpoint` (so, like
`checkpoint`, this assumes `f`'s result depends on its arguments and closure only: the random generators it may draw
from, `runtime.randomness`, are put back before, so that it draws what the forward drew). The first call that the twins
refuse also pays for their attempt, up to the refusal (once per key: `_key`), and `f`'s forward runs that far.
Measured (x^8 by a loop, one core): a sixth derivative took 5 s cold and 0.1 s warm (by the twins: 7-10 minutes and
7.5 GB), an eighth 1 s warm, a tenth 56 s: each level runs the one below twice, once on dual numbers.
"""
import contextlib
import types

import numpy as np

from ... import api
from ...tracebacks import with_user_lines
from ...errors import ZygoteError
from ...forward.dual import has_dual, new_tag
from ...forward.levels import make_dual, tangent_of
from ...runtime.context import current
from ...runtime.randomness import put_back, random_sources, states
from ...structgrad import StructGrad

_DUAL_KEYS = set()  # keys (`_key`) of functions whose gradient under one more level the twins refused
# (this thread's `current().dual_route` is > 0 while a dual route runs: every nested gradient inside takes it as well)


class NestingTooDeep(ZygoteError):
    """A level of nested reverse mode beyond MAX_LEVELS (caught by the outermost level, which takes the dual route)."""


def _key(f, depth=8, seen=None):
    """What decides how deep `gradient(f, ...)` nests and whether the twins can transform it, as far as it can be told
    without running `f`: its code and file, and the keys of the functions its closure holds (`lambda x: gradient(g,
    x)[0]` is one code at every level; what its cell `g` holds tells the levels apart) and of the Python functions
    its globals name (a helper redefined in a later notebook cell is another function). Functions rebuilt on each call
    get the same key. (Code objects compare equal without their file: the file is part of the key.)"""
    fn = getattr(f, "__func__", f)
    code = getattr(fn, "__code__", None)
    if code is None:
        return type(f)
    seen = set() if seen is None else seen
    if id(code) in seen or not depth:
        return code, code.co_filename
    seen.add(id(code))
    held = ()
    if fn.__closure__:
        held = tuple(_key(c.cell_contents, depth - 1, seen) for c in fn.__closure__
                     if _filled(c) and callable(c.cell_contents) and not isinstance(c.cell_contents, type))
    scope = getattr(fn, "__globals__", None) or {}
    named = tuple(_key(scope[n], depth - 1, seen) for n in code.co_names if type(scope.get(n)) is types.FunctionType)
    return code, code.co_filename, held, named


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:  # an empty cell (a name the enclosing function has not bound yet)
        return False
    return True


def outermost(entry, by_twin, args, kwargs):
    """The rule of `entry` (`gradient`, `value_and_gradient`) when run plainly: the transform route (`by_twin`), unless
    its twins refuse (too deep, or code they cannot transform: now or on an earlier call with the same key), keyword
    constants are given, or dual numbers flow in (they never enter a transformed level); then the dual route."""
    refused = None
    key = None if current().dual_route or kwargs or has_dual(args[1:]) else _key(args[0])  # (inside a dual route: no key)
    if key is not None and key not in _DUAL_KEYS:
        randoms = states(random_sources(args[0], args[1:]))
        try:  # (the twins take no keyword constants, `gradient(f, x, scale=2.0)`: the dual route does)
            return by_twin(*args)
        except ZygoteError as e:  # too deep, or code the twins cannot transform (updates in place, partials, ...)
            put_back(randoms)  # (their attempt ran `f` up to the refusal: the route taken now draws what it drew)
            refused = e
            _DUAL_KEYS.add(key)
            with_user_lines(e)  # (the user's lines, for a note should the dual route fail too)
    if current().transform_only and (refused is not None or key in _DUAL_KEYS):
        # (hessian's retry by reverse-over-reverse, after forward-over-reverse failed: the dual route is the same)
        raise refused or ZygoteError("the nested gradient's transform route cannot take this function")
    if isinstance(refused, NestingTooDeep):
        refused = None
    with _noting(refused):
        return by_dual_numbers(entry, args, kwargs, refused)


@contextlib.contextmanager
def _noting(refused):
    """An error of the dual route carries, as a note, why the twins refused (their message and the user's lines)."""
    try:
        yield
    except ZygoteError as e:
        if refused is not None:
            note = "\n".join([f"zygotepy: before forward-over-reverse, the nested gradient's transform route failed: "
                              f"{refused}", *getattr(refused, "__notes__", ())])
            e.add_note(note) if hasattr(e, "add_note") else setattr(e, "__notes__", [*getattr(e, "__notes__", []), note])
        raise


def by_dual_numbers(entry, args, kwargs, refused=None):
    """`(entry(f, *xs), back)` for `gradient` or `value_and_gradient`, with back computed by one forward-mode pass
    over `f`'s reverse pass (`refused`: the twins' error, noted on an error of this route)."""
    f, xs = args[0], args[1:]
    randoms = states(random_sources(f, (*xs, *(kwargs or {}).values())))  # (the backward's run draws the same numbers)
    ctx = current()
    ctx.dual_route += 1
    hooks = ctx.hooks_run
    try:
        y, grads = api.value_and_gradient_with_callee(f, xs, kwargs)
    finally:
        ctx.dual_route -= 1
    hooked = (ctx.hook_site or "hook") if ctx.hooks_run != hooks else None
    with_value = entry is api.value_and_gradient

    def back(dy):
        dvalue, directions = dy if with_value and dy is not None else (None, dy)
        if directions is None:
            directions = (None,) * len(xs)
        if all(v is None for v in directions):  # the value's cotangent alone: dvalue times the gradient
            return _scaled(dvalue, grads) if dvalue is not None else (None,) * len(args)
        if hooked is not None:
            with _noting(refused):
                raise ZygoteError(_HOOKED.format(where=hooked))
        tag = new_tag()
        perturbed = tuple(make_dual(x, v, tag) for x, v in zip(xs, directions, strict=True))
        ctx = current()
        ctx.dual_route += 1
        now = states(r for r, _ in randoms)
        try:
            put_back(randoms)
            with _noting(refused):
                _, hessian_times_v = api.value_and_gradient_with_callee(f, perturbed, kwargs)
        finally:  # (the streams go on as after the forward, as checkpoint leaves them)
            put_back(now)
            ctx.dual_route -= 1
        dself, *dxs = (_tangent(g, tag) for g in hessian_times_v)
        out = (dself, *(api._project(x, g) for x, g in zip(xs, dxs)))
        return out if dvalue is None else _plus(out, _scaled(dvalue, grads))
    return ((y, tuple(grads[1:])) if with_value else tuple(grads[1:])), back


_HOOKED = (
    "{where}: a nested gradient whose inner gradient passes through hook(fn, x) cannot be differentiated by "
    "forward-over-reverse, which this one takes (see the note): that route gives the Hessian times a vector, which is "
    "the vector times the Hessian only for a true gradient, and the hook's function makes the inner gradient another "
    "function (its derivative taken this way would be transposed); move the hook out of the nested gradient, or "
    "remove what sent the nested gradient this way")


def _scaled(c, g):
    """`c * g` over a cotangent structure (None is zero)."""
    if g is None:
        return None
    if isinstance(g, dict):
        return type(g)({k: _scaled(c, v) for k, v in g.items()})
    if isinstance(g, (tuple, list)):
        return type(g)(_scaled(c, v) for v in g)
    return c * g


def _plus(a, b):
    """`a + b` over two cotangent structures of one shape (None is zero)."""
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, dict):
        return type(a)({k: _plus(a.get(k), b.get(k)) for k in {**a, **b}})
    if isinstance(a, (tuple, list)):
        return type(a)(_plus(u, v) for u, v in zip(a, b, strict=True))
    return a + b


def _tangent(g, tag):
    """The tangent at `tag` of a cotangent, keeping structural gradients (a closure's, an object's) as StructGrads."""
    if isinstance(g, StructGrad):
        items = {k: _tangent(v, tag) for k, v in g.items()}
        return StructGrad({k: v for k, v in items.items() if v is not None}) or None
    if g is None or isinstance(g, (bool, str)):
        return None
    t = tangent_of(g, tag)
    return t if not isinstance(t, np.generic) else t.item() if t.dtype.kind == "f" else t

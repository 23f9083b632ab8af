"""Control of differentiation: `checkpoint`, `hook`, `dropgrad`.

Each is an ordinary function whose meaning under differentiation is a rule of this module (Zygote's `checkpointed`,
`hook` and `dropgrad`). Invariants:
- `checkpoint(f, *args)` keeps nothing of `f`'s inside alive between the forward and the backward pass: its forward
  calls `f` plainly (no pullback, no tape); its `back` runs `f`'s forward again with its pullback, exactly once per call
  of `back`, and pulls `dy` through it. The recomputation draws the random numbers the forward drew, from the
  generators `f` may draw from (runtime/randomness.py); `f` must not update its arguments in place.
- `hook(fn, x)`'s `back` calls `fn` once per backward pass, on the total cotangent of its output (the generated code
  accumulates every use of the output before calling a pullback). No gradient reaching it means no call.
- `dropgrad` is declared non-differentiable, so activity analysis cuts every path through it at transform time.
"""
import types
from typing import Any, Callable

import numpy as np

from ..ast_adjoint import runtime as rt
from ..ast_adjoint.dispatch import J
from ..ast_adjoint.call_checks import call_site
from ..ast_adjoint.mutate import finish_backward
from ..errors import ForwardModeError, UnsupportedSyntax, ZygoteError
from ..forward.dual import strip, tangent_rule
from ..forward.levels import pass_through
from ..runtime.context import current
from ..runtime.randomness import put_back, random_sources, states
from ..runtime.snapshots import first_updated, state as snapshot
from .registry import adjoint, nondifferentiable

__all__ = ["checkpoint", "hook", "dropgrad"]


def checkpoint(f: Callable[..., Any], /, *args: Any) -> Any:
    """Return `f(*args)`; under differentiation, recompute `f` in the backward pass instead of storing its inside.

    Trades one more forward of `f` per backward pass for the memory of `f`'s intermediate values.

    Args:
        f: the function to checkpoint (its own cotangent, for a closure or a model object, is returned too).
        *args: its positional arguments.

    Returns:
        `f(*args)`.

    >>> import math
    >>> from zygotepy import checkpoint, gradient
    >>> gradient(lambda x: checkpoint(math.sin, x) * 2.0, 0.0)
    (2.0,)
    """
    return f(*args)


def hook(fn: Callable[[Any], Any], x: Any, /) -> Any:
    """Return `x`; in the backward pass the gradient of `x` is replaced by `fn(gradient)`.

    `fn` is called once per backward pass, with the total gradient of `x` (None-free: it is not called when no gradient
    reaches `x`).

    Args:
        fn: a function of the gradient, returning the gradient to pass on (to inspect, clip or reverse it).
        x: any value.

    Returns:
        `x`.

    >>> from zygotepy import gradient, hook
    >>> gradient(lambda x: hook(lambda g: -g, x) * 3.0, 1.0)
    (-3.0,)
    """
    return x


def dropgrad(x: Any, /) -> Any:
    """Return `x`; no gradient flows through it (it is a constant to the differentiation).

    >>> from zygotepy import dropgrad, gradient
    >>> gradient(lambda x: x * dropgrad(x), 3.0)
    (3.0,)
    """
    return _noted_cut(x, strip(x))  # (forward mode's dual numbers, which `hessian` runs a reverse pass on, lose their
    # tangents too)


def _noted_cut(x, y):
    """`y`, noted as cut from `x` where it is `x` itself, a mutable object, while differentiating: an update in place
    through `y` changes `x`, whose gradient `y` cut, refused where `x` is read after it (mutation/links.py
    `_cut_error`). (A function of its own: `dropgrad`'s code stores nothing, so the lowering does not take it for a
    call that may update its argument.)"""
    if y is x and not isinstance(x, _UNCHANGEABLE):
        ctx = current()
        if ctx.depth:
            ctx.cuts[id(y)] = y
    return y


_UNCHANGEABLE = (int, float, complex, bool, str, bytes, tuple, frozenset, type(None), np.generic)
nondifferentiable(_noted_cut)


nondifferentiable(dropgrad)
pass_through(checkpoint)
# `G[k] = v` on a module global container stores only values that carry no gradient (it refuses the others)
nondifferentiable(rt.global_store, rt.global_attr_store)


def _updated_argument(f, args, before):
    """Refuse a checkpointed `f` that updated one of its arguments in place: its recomputation in the backward pass
    would start from the updated argument, not the one `f` was given, and could take another path through `f` (a
    branch on the argument's values) and return a silently wrong gradient."""
    k = first_updated(args, before)
    if k is not None:
        code = getattr(f, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}: " if code is not None else ""
        name = getattr(f, "__name__", type(f).__name__)
        params = code.co_varnames[:code.co_argcount] if code is not None else ()
        which = f"'{params[k]}'" if k < len(params) else str(k)
        raise ZygoteError(
            f"{where}checkpoint({name}, ...): {name} updated its argument {which} in place, so recomputing it in the "
            "backward pass would start from the updated value, not the one it was given; copy the argument inside "
            f"{name} before updating it, or call {name} without checkpoint")


nondifferentiable(snapshot, first_updated, rt.refuse_try_update)  # (an outer level transforming the rule below)


@adjoint(rt.attempt)
def attempt_rule(fn, caught, named, *args):
    """A `try` body's function, differentiated as any call; where it raised one of `caught`, nothing it did reaches
    the gradient: the `with` blocks it entered are left, its journal entries (updates of its own arrays) dropped."""
    before = [snapshot(a) for a in args]
    ctx = current()
    contexts, entries, mark = len(ctx.contexts), len(ctx.entries), len(ctx.eager_items)
    try:
        y, back = J(fn, *args)
    except ZygoteError as e:  # (J's refusal of a body that updates an argument: said as the try's)
        first = str(e).splitlines()[0] if str(e) else ""
        if "updates its argument" not in first:
            raise
        raise UnsupportedSyntax("a try whose body updates a variable it reads in place", fn.__code__.co_filename,
                                fn.__code__.co_firstlineno, "update it after the try, or update a copy") from e
    except BaseException as exc:
        exc = rt.unwind(contexts, exc)
        rt.refuse_eager_items(mark, exc)
        if not isinstance(exc, caught) or isinstance(exc, ZygoteError):  # (a refusal of zygotepy's: never handled)
            raise exc
        del ctx.entries[entries:]
        rt.refuse_try_update(fn, args, before)
        handler = next(k for k, kind in enumerate(caught) if isinstance(exc, kind))
        if named[handler] and (rt.differentiable(exc.args) or rt.differentiable(exc)):  # (`except E as e`: `e.v`)
            raise UnsupportedSyntax("a try whose body raised an exception holding a value that may carry a gradient "
                                    f"({type(exc).__name__})", fn.__code__.co_filename, fn.__code__.co_firstlineno,
                                    "zygotepy does not follow a gradient through an exception; return the value, or "
                                    "raise it without the value")
        return (False, exc), lambda dy: (None,) * (3 + len(args))
    rt.refuse_try_update(fn, args, before)

    def attempt_back(dy):
        d = None if dy is None else dy[1]
        if d is None:
            return (None,) * (3 + len(args))
        return (None, None, None, *back(d)[1:])
    return (True, y), attempt_back


# (run even where no gradient flows into the body: hessian's dual numbers may, and J's derived code takes them, where
# the body called as it is would hand them to C functions)
attempt_rule.__zygote_always__ = True


@adjoint(checkpoint)
def checkpoint_rule(f, *args):
    before = [snapshot(a) for a in args]
    randoms = states(random_sources(f, args))  # (the recomputation draws the same numbers)
    try:
        y = f(*args)  # no pullback: nothing of f's inside survives this call
    except (ValueError, TypeError, ForwardModeError):
        if not any(getattr(type(a), "__zygote_number__", False) for a in args):
            raise
        # a dual number (hessian: a reverse pass over forward mode's numbers) that plain code could not take (stored
        # into np.zeros(n), given to math.sin): the derived forward takes it, or says why, naming the user's line
        y, _ = J(f, *args)
    _updated_argument(f, args, before)

    def back(dy):
        if dy is None:
            return (None,) * (1 + len(args))
        mark = len(current().entries)
        now = states(r for r, _ in randoms)
        try:
            put_back(randoms)
            _, f_back = J(_as_made(f), *args)  # the forward again, with its pullback, once per backward pass
        finally:  # (the streams go on as if nothing had been recomputed, as PyTorch's checkpoint leaves them)
            put_back(now)
        grads = f_back(dy)  # (df, *dargs): one cotangent per positional argument of checkpoint
        # f_back undid the updates in place the recomputation made (as every backward undoes its forward's); the
        # recomputation is a run of f, like the plain one of the forward, whose updates stay: redo them now. (Left
        # to the entry point, which redoes at its end what ran during its backward, every recomputation would start
        # from the state before the first one: a counter `calls["n"] += 1` would count one of them.)
        finish_backward(mark)
        return grads
    return y, back


def _as_made(f):
    """`f`, a nested function generated code made, as it was made: its cells holding what they held then. A loop that
    checkpoints `lambda t: np.sin(W @ t)` rebinds `W` before the backward recomputes the lambda, which would read the
    last `W` (refused: call_checks.check_cells); the recomputation is of the call the forward made."""
    made = getattr(f, "__dict__", {}).get("__zygote_made__")
    if made is None or f.__closure__ is None or any(v is rt.ITSELF for v in made) or all(
            _holds(c, v) for c, v in zip(f.__closure__, made)):
        return f
    again = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__,
                               tuple(types.CellType(v) for v in made))
    again.__kwdefaults__ = f.__kwdefaults__
    again.__dict__.update(f.__dict__)
    again.__dict__.pop("__zygote__", None)  # (its derived code, cached per function, is derived again)
    return again


def _holds(cell, value):
    try:
        return cell.cell_contents is value
    except ValueError:  # (emptied by `del`)
        return False


def _note_hook(where):
    """Count a hook's back (a function of its own, constant to an outer level): a nested gradient taken by
    forward-over-reverse, which assumes the inner gradient is a true one, refuses a hook (nesting/deep.py)."""
    ctx = current()
    ctx.hooks_run += 1
    ctx.hook_site = where


nondifferentiable(_note_hook)


@adjoint(hook)
def hook_rule(fn, x):
    where = call_site()

    def back(dy):
        _note_hook(where)
        # (a copy of an array: the gradient may be a read-only broadcast, or shared with another cotangent, which a
        # hook that edits its argument in place, `g[g > 1] = 1`, must not change)
        g = None if dy is None else fn(dy.copy() if type(dy) is np.ndarray else dy)
        if g is not None and hasattr(x, "shape") and tuple(np.shape(g)) != tuple(x.shape):
            raise ZygoteError(f"{where or 'hook'}: the function given to hook returned a gradient of shape "
                              f"{tuple(np.shape(g))} for a value of shape {tuple(x.shape)}; return one of its shape")
        return (None, g)
    return x, back


@tangent_rule(dropgrad)
def dropgrad_tangent(fn, p, t, kw):
    """Forward mode: a constant to every level, no tangent (and none of an outer level's either). An array that
    carries a tangent comes back as a read-only view of its value: an update in place through it would change the
    value and not the tangent (reverse mode refuses such an update where the array is read after it: links.py
    `_cut_error`); NumPy's refusal of the write is said in zygotepy's words (api_modes.py `_forward_call`)."""
    value = strip(p[0])
    if type(value) is np.ndarray and t[0] is not None and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value, None


@tangent_rule(hook)
def hook_tangent(fn, p, t, kw):
    """`hook` rewrites the gradient a reverse pass sends back; forward mode has none to give it. Refused, so that
    `jacobian` and `hessian` take reverse mode, which applies it, rather than silently skip it."""
    raise ForwardModeError("hook(fn, x) rewrites reverse-mode gradients, which forward mode (derivative, pushforward, "
                           "jvp, jacobian(mode='forward')) does not compute; use reverse mode (gradient, "
                           "jacobian(mode='reverse'))")

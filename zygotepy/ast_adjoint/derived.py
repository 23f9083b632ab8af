"""The derived adjoints of Python functions, for J (ast_adjoint/dispatch.py): derived through the compiler's `derive`
once per function and call shape, cached on the function (`_adjoint_of`), and run (`_derived`, and the fast paths'
`_plain`, whose forward J calls itself).
"""
import inspect
import types

from ..adjoints import registry
from ..errors import SourceUnavailable
from ..runtime.context import current
from .accumulate import Pullback
from .call_checks import COMPILER, _check_shared_memory, _check_updates, _claim, check_cells
from .keywords import _call_plan
from .pullbacks import ArgsPullback, DerivedArgsPullback, FinalsPullback, MappedPullback
from .runtime import callmethod
from . import mutate


def _derived(fn, args, kwargs, need, api=False):
    """Run the derived forward of a Python function; cached on the function per call shape (`need`, the number of
    positional arguments, the keywords), so a repeated call costs two dictionary lookups. At an entry point (`api`: the
    API reads only the positional arguments' cotangents) a call whose positional arguments fill the first parameters
    needs no remapping of its cotangents."""
    code = fn.__code__
    forward, back, plan, mutates = _adjoint_of(fn, args, kwargs, need)
    given = (*args, *kwargs.values()) if kwargs else args  # (`helper(x, buf=y)` may update y)
    slot = _claim(given) if mutates and not api else None
    log = current().log
    mark = 0 if api else len(log)
    y, tape = forward(*args, **kwargs) if kwargs is not None else forward(*args)
    pb = Pullback(back, tape)
    finals = ()
    if mutates:
        y, finals = y[0], y[1:]
        pb = FinalsPullback(pb, finals, not api)
        _check_shared_memory(fn, mutates, finals, given)
    if (mutates or len(log) != mark) and not api:  # something was updated in place: was it an argument?
        _check_updates(fn, mutates, finals, slot, mutate.updated_since(mark, given))
    if plan is None or api and len(args) <= code.co_argcount:
        return y, pb
    return y, MappedPullback(pb, plan)


def _adjoint_of(fn, args, kwargs, need):
    """`(forward, back, plan, mutates)` of a Python function for one call shape, cached on the function (see
    `_derived`), derived now when not yet."""
    code = fn.__code__
    if fn.__closure__ is not None:
        check_cells(fn)
    entry = fn.__dict__.get("__zygote__")
    if entry is None or entry[0] is not code or entry[1] != registry.generation[0]:
        entry = fn.__dict__["__zygote__"] = (code, registry.generation[0], {})
    shape = (need, len(args), tuple(kwargs) if kwargs is not None else None)
    hit = entry[2].get(shape)
    if hit is None:
        hit = entry[2][shape] = _prepare(fn, code, args, kwargs, need)
    return hit


def derive_now(fn, args, kwargs):
    """Derive the Python function `fn` for this call shape (cached), raising what its source or syntax gives before
    any of it runs."""
    _adjoint_of(fn, args, kwargs, None)


def _prepare(fn, code, args, kwargs, need):
    plain = not code.co_kwonlyargcount and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    exact = kwargs is None and len(args) == code.co_argcount and plain
    if need is not None:
        # one flag per parameter; parameters bound by keyword or left to their defaults are constants here
        need = tuple(need[:code.co_argcount]) + (False,) * (code.co_argcount - len(args)) \
            if plain and len(args) <= code.co_argcount else None
    forward, back = COMPILER.derive(fn, need)
    plan = None if exact else _call_plan(code, len(args), tuple(kwargs) if kwargs is not None else None)
    return forward, back, plan, getattr(forward, "__zygote_mutates__", ())


def _plain(fn, need, args):
    """`(forward, back, plan, ())` of the Python function `fn` called with `args` by position, when it has no rule and
    updates nothing in place (the common call); None for anything else (the caller goes through `_dispatch`).

    It returns before the forward runs, so that the caller (J, J_args, ...) calls the forward itself: a differentiated
    call then costs one Python frame between the caller's generated code and the callee's, not three (`_dispatch`,
    `_derived`). Frames per call are what limit the depth of a recursion (`rec(x, n)` reached n = 240 at the default
    limit, now about 490), and of nested gradients, where each outer level differentiates the inner level's generated
    code and its calls into `J`, so the frames multiply (a fourth derivative of an array function: 589 frames deep at
    its innermost call, over the limit with pytest's own; now 322)."""
    entry = fn.__dict__.get("__zygote__")
    if entry is not None and entry[0] is fn.__code__ and entry[1] == registry.generation[0]:
        if fn.__closure__ is not None:
            check_cells(fn)
        hit = entry[2].get((need, len(args), None))  # (derived at this generation: no rule was registered for it)
        if hit is not None:
            return None if hit[3] else hit
    elif fn is callmethod or registry.find_rule(fn) is not None or registry.is_nondifferentiable(fn):
        return None
    try:
        hit = _adjoint_of(fn, args, None, need)
    except SourceUnavailable:
        return None  # `_dispatch` tells a constant call from a missing adjoint
    return None if hit[3] else hit


def _pullback(fn, hit, tape, log, mark, args, only_args):
    """The pullback of a call the fast paths made (`_plain`), after its forward returned: checks updates in place it
    logged (were they of its arguments? see `_derived`), maps its cotangents to the call's positions (`plan`), and, for
    J_args and J_handing (`only_args`), drops the callee's own."""
    if len(log) != mark:
        _check_updates(fn, (), (), None, mutate.updated_since(mark, args))
    if hit[2] is None:  # (bound methods: see DerivedArgsPullback)
        return DerivedArgsPullback(hit[1], tape).__call__ if only_args else Pullback(hit[1], tape).__call__
    pb = MappedPullback(Pullback(hit[1], tape), hit[2])
    return ArgsPullback(pb).__call__ if only_args else pb.__call__


def warm_adjoint(need, fn, args, kwargs):
    """The entry points' shortcut: `(forward, back)` of a Python function derived before for this call shape (as
    `_derived` caches it), when it updates nothing in place, no rule was registered since, and its cotangents need
    no remapping; else None (the caller goes through `J_entry`). `back(tape, dy)` returns `(dself, *dargs, ...)`."""
    cache = _cache_of(fn)
    if cache is None:
        return None
    hit = cache.get((need, len(args), tuple(kwargs) if kwargs is not None else None))  # (`_derived`'s key)
    if hit is None or hit[3] or hit[2] is not None and len(args) > fn.__code__.co_argcount:
        return None
    return hit


def _cache_of(fn):
    """The adjoints `_derived` cached on `fn` per call shape, if `fn` is a Python function whose cache is still
    valid (same code, no rule registered since: every registration bumps the generation); else None."""
    if type(fn) is not _FUNCTION:
        return None
    entry = fn.__dict__.get("__zygote__")
    if entry is None or entry[0] is not fn.__code__ or entry[1] != _GENERATION[0]:
        return None
    return entry[2]


_FUNCTION, _GENERATION = types.FunctionType, registry.generation  # (the entry points' hot path: no attribute lookups)

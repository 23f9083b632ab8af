"""The derived adjoints of Python functions, for J (ast_adjoint/dispatch.py): derived through the compiler's `derive`
once per function and call shape, cached on the function (`_adjoint_of`), and run (`_derived`, and the fast paths'
`_plain`, whose forward J calls itself).
"""
import functools
import inspect
import types

import numpy as np

from ..adjoints import registry
from ..errors import MissingAdjoint, SourceUnavailable, UnsupportedSyntax, ZygoteError, where
from ..runtime.context import current
from .accumulate import Pullback
from .assumed_globals import checker, merged
from .call_checks import COMPILER, _check_shared_memory, _check_updates, _claim, call_site, check_cells, \
    check_views, installed, library
from .guards_runtime import differentiable
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
    # (a helper updating its parameters: where the arguments sit before it runs, since it may store one into another)
    before = places_of(given) if mutates and not api and len(given) > 1 else None
    try:
        y, tape = forward(*args, **kwargs) if kwargs is not None else forward(*args)
    except MissingAdjoint as e:  # (a callee of a library function's own Python, found as it ran: said at the user's line)
        if isinstance(e, SourceUnavailable) or not _installed(fn):
            raise
        named = _in_library(fn, e)
        named.at_call = True  # (it ran: not a callee a call statement could run as it is, mutation/calls.py)
        raise named from e
    pb = Pullback(back, tape)
    finals = ()
    if mutates:
        y, finals = y[0], y[1:]
        pb = FinalsPullback(pb, finals, slot is not None)  # (a call site's own callee: a rule's twin is none)
        surely, updated = _surely_updated(forward, mutates, finals, mark)
        _check_shared_memory(fn, surely, updated, given, kwargs or ())
        check_views(fn, surely, updated, given)
    if len(log) != mark and (api or before is not None):  # (`gradient(h, {"w": W}, W)`, tied weights, `h(x, [x])`)
        refuse_tied_updates(fn, places_of(given) if api else before, set(log[mark:]), nested_only=not api)
    if len(log) != mark and (fn.__defaults__ is not None or fn.__kwdefaults__ is not None):
        _check_default_updates(fn, mark, len(args), kwargs)
    if (mutates or len(log) != mark) and not api:  # something was updated in place: was it an argument?
        changed = mutate.updated_since(mark, given)
        _check_updates(fn, mutates, finals, slot, changed, updated if mutates else None)
        if mutates:  # (those it left as they were: their holders' links need not take them as updated, `m(x)` of
            mutate.passed_through([a for a in given if all(a is not c for c in changed)], len(log))  # a model)
    if plan is None or api and len(args) <= code.co_argcount and len(plan) == 2:  # (no defaults' entries: below)
        return y, pb
    return y, MappedPullback(pb, plan)


def places_of(given):
    """({id(root): [place, ...]}, {id(object): id(root)}): where each array (by the memory it views), list, dict and
    object the arguments reach sits among them (an object reached from itself, `self.me = self`, is one place)."""
    places, roots, seen = {}, {}, set()
    for k, a in enumerate(given):
        _places(a, f"argument {k}", places, roots, seen, ())
    return places, roots


def refuse_tied_updates(fn, found, logged, nested_only=False):
    """After a call's forward: refused, an array, list, dict or object that two places of the arguments reach (`found`:
    `places_of`; the same array given twice, in a dict and as an argument, as a view of another, tied weights
    `{"enc": W, "dec": W}`, `h(x, [x])`) where `fn` updated it in place (`logged`): its code takes each place as its
    own object, so the gradient of a read through one place misses the update made through the other (silently wrong:
    1.8 W for 1.62 W). An entry point walks the arguments after the call; a helper before it, as it may itself store
    one argument into another (`kid.parent = parent; parent.kids.append(kid)`: new places, which it follows), and
    leaves one object given as two of its arguments to call_checks `_check_shared_memory` (`nested_only`), which
    allows a read of the other before the update."""
    places, roots = found
    for root in {roots[i] for i in logged if i in roots}:
        if len(places[root]) > 1 and (not nested_only or any(w.endswith("]") for w in places[root])):
            code = fn.__code__
            raise ZygoteError(f"{code.co_qualname if hasattr(code, 'co_qualname') else code.co_name} (at "
                              f"{code.co_filename}:{code.co_firstlineno}) updated in place an object that "
                              f"{' and '.join(places[root][:2])} both reach, which zygotepy takes as separate "
                              f"objects inside the function; pass a copy at one of them, or update out of place")


def _places(x, path, places, roots, seen, above):
    while getattr(type(x), "__zygote_number__", False) and hasattr(x, "primal"):  # (hessian's dual numbers)
        x = x.primal
    if isinstance(x, np.ndarray):
        root = x
        while isinstance(root.base, np.ndarray):
            root = root.base
        places.setdefault(id(root), []).append(path)
        roots[id(x)] = roots[id(root)] = id(root)
        return
    if len(above) > 6 or len(seen) > 4096 or isinstance(x, (str, bytes, int, float, complex, type)) or id(x) in above:
        return
    if isinstance(x, (list, dict)) or type(getattr(x, "__dict__", None)) is dict and not isinstance(x, _CODE):
        places.setdefault(id(x), []).append(path)  # (a list, dict or object, updated in place too: `h(d, [d])`)
        roots[id(x)] = id(x)
    if id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, (list, tuple)):
        items = enumerate(x)
    elif isinstance(x, dict):
        items = x.items()
    elif type(getattr(x, "__dict__", None)) is dict and not isinstance(x, _CODE):
        items = vars(x).items()
    else:
        return
    for key, v in items:
        _places(v, f"{path}[{key!r}]", places, roots, seen, (*above, id(x)))


_CODE = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType, functools.partial)
"""What `_places` does not look into: code, whose `__dict__` holds no data (an object with `__call__`, a model, is
data)."""


def _surely_updated(forward, mutates, finals, mark):
    """The parameters of `mutates` this call updated, with their finals: every one the lowering saw updated, and of
    those it saw only maybe updated (through an object linked to them: `d.get(k).append(v)`), the ones the links'
    rules logged as updated since `mark` (mutation/links.py `refresh_held`)."""
    maybe = getattr(forward, "__zygote_maybe__", ())
    if not maybe:
        return mutates, finals
    logged = {id(o) for o in mutate.updated_since(mark, finals)}
    kept = [(k, o) for k, o in zip(mutates, finals) if k not in maybe or id(o) in logged]
    return tuple(k for k, _ in kept), tuple(o for _, o in kept)


def _adjoint_of(fn, args, kwargs, need):
    """`(forward, back, plan, mutates)` of a Python function for one call shape, cached on the function (see
    `_derived`), derived now when not yet."""
    code = fn.__code__
    if fn.__closure__ is not None or fn.__defaults__ is not None:
        check_cells(fn)
    entry = fn.__dict__.get("__zygote__")
    if entry is None or entry[0] is not code or entry[1] != registry.generation[0] or \
            entry[3] is not fn.__defaults__ or entry[4] is not fn.__kwdefaults__ or \
            entry[5] is not None and not entry[5]():
        # (the derived forward takes the defaults as they are now: `f.__defaults__ = (7.0,)` derives it again; and
        # the callees it took as constants as they were: `act = np.tanh` after `act = np.floor` too)
        entry = fn.__dict__["__zygote__"] = (code, registry.generation[0], {}, fn.__defaults__, fn.__kwdefaults__,
                                             None)
    shape = (need, len(args), tuple(kwargs) if kwargs is not None else None)
    hit = entry[2].get(shape)
    if hit is None:
        hit = entry[2][shape] = _prepare(fn, code, args, kwargs, need)
        _assume(fn, entry, getattr(hit[0], "__zygote_assumed__", ()))
    return hit


def _assume(fn, entry, assumed):
    """Record on the function's cache entry the globals its new adjoint called as constants (assumptions.py), so that
    the entry holds only while each names the same object."""
    old = entry[5].assumed if entry[5] is not None else ()
    if assumed and any(path not in dict(old) for path, _ in assumed):
        fn.__dict__["__zygote__"] = (*entry[:5], checker(merged(old, assumed), fn.__globals__))


def derive_now(fn, args, kwargs):
    """Derive the Python function `fn` for this call shape (cached), raising what its source or syntax gives before
    any of it runs."""
    _adjoint_of(fn, args, kwargs, None)


def _prepare(fn, code, args, kwargs, need):
    plain = not code.co_kwonlyargcount and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    exact = kwargs is None and len(args) == code.co_argcount and plain
    defaulted = _defaulted(fn, code, len(args), kwargs) if "__zygote_defaults__" in fn.__dict__ else ()
    if need is not None:
        # one flag per parameter; parameters bound by keyword are constants here, and so are those left to their
        # defaults, but for a default a nested function of differentiated code took from a value with a gradient
        need = tuple(need[:code.co_argcount]) + tuple(i in defaulted for i in range(len(args), code.co_argcount)) \
            if plain and len(args) <= code.co_argcount else None
    try:
        forward, back = COMPILER.derive(fn, need)
    except (UnsupportedSyntax, MissingAdjoint) as e:
        if isinstance(e, SourceUnavailable) or not _installed(fn):
            raise
        raise _in_library(fn, e) from e
    plan = None if exact else _call_plan(code, len(args), tuple(kwargs) if kwargs is not None else None)
    if defaulted:
        plan = (*plan, tuple((i, code.co_varnames[i] + "=") for i in sorted(defaulted)))
    mutates = getattr(forward, "__zygote_mutates__", ())
    first = code.co_argcount - len(fn.__defaults__ or ())
    left = [code.co_varnames[k] for k in mutates if max(len(args), first) <= k < code.co_argcount and
            code.co_varnames[k] not in (kwargs or ()) and differentiable(fn.__defaults__[k - first])
            and not mutate.is_number(fn.__defaults__[k - first]) and k not in getattr(forward, "__zygote_maybe__", ())]
    # (a number is no object an update in place can change: `p=2.0` given to a call that may update its arguments)
    if left:  # (see `_check_default_updates`, which catches the maybe ones; `calls=[0]` counting calls is fine)
        _refuse_default_update(fn, left[0])
    return forward, back, plan, mutates


def _installed(fn):
    """Is `fn` the Python of the standard library, NumPy, or an installed package (SciPy's)?"""
    return library(fn) or installed(fn)


def _in_library(fn, error):
    """A library function's own Python that cannot be differentiated, said at the user's line that called it: its
    name and why, not the library's lines alone. Marked, so that the library function that called it (`nanmedian`
    calling `_nanmedian`) is named in its place, up to the one the user called."""
    reason = getattr(error, "zygote_reason", None) or str(error).splitlines()[0]
    named = MissingAdjoint(fn, f"its Python source, which zygotepy read, cannot be differentiated: {reason}",
                           where=call_site())
    named.zygote_reason = reason
    return named


def _check_default_updates(fn, mark, nargs, kwargs):
    """After a call that logged updates in place: refuses one of a default value the call left a parameter to
    (`def g(t, acc=buf): acc += t`). The default is one object every call shares and no argument reaches, so the
    caller would never see its update: its gradient would be lost."""
    code, defaults = fn.__code__, fn.__defaults__ or ()
    left = [(code.co_varnames[i], d) for i, d in enumerate(defaults, code.co_argcount - len(defaults))
            if i >= nargs and (kwargs is None or code.co_varnames[i] not in kwargs)]
    left += [(k, d) for k, d in (fn.__kwdefaults__ or {}).items() if kwargs is None or k not in kwargs]
    for name, default in left:
        if not mutate.is_number(default) and mutate.updated_since(mark, (default,)) and differentiable(default):
            _refuse_default_update(fn, name)


def _refuse_default_update(fn, name):
    code = fn.__code__
    raise ZygoteError(f"{call_site() or where(code.co_filename, code.co_firstlineno)}: {fn.__qualname__} updates its "
                      f"parameter {name!r} in place, and this call leaves it to its default value: one object that "
                      f"every call shares and no argument reaches, so the gradient of its update would be lost. Pass "
                      f"the object as an argument.")


def _defaulted(fn, code, nargs, kwargs):
    """{parameter index: default} for the positional parameters a call with `nargs` positional arguments and `kwargs`
    leaves to a default that carries a gradient (a nested function's `lambda t, b=b: ...`): their cotangents go to
    the function's own, under `"b="` (adjoint.py's `stmt_Def` passes them on to the value the default was taken
    from)."""
    defaults = fn.__defaults__ or ()
    first = code.co_argcount - len(defaults)
    return {i: d for i, d in enumerate(defaults, first)
            if i >= nargs and (kwargs is None or code.co_varnames[i] not in kwargs) and _may_carry(d)}


def _may_carry(value):
    """Might a default value carry a gradient: a float, an array, a container or object holding one, or a function
    (a closure's cotangent is its captured values')?"""
    return differentiable(value) or callable(value) and not isinstance(value, (type, types.BuiltinFunctionType))


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
    if entry is not None and entry[0] is fn.__code__ and entry[1] == registry.generation[0] and \
            entry[3] is fn.__defaults__ and entry[4] is fn.__kwdefaults__ and (entry[5] is None or entry[5]()):
        if fn.__closure__ is not None or fn.__defaults__ is not None:
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
        if fn.__defaults__ is not None or fn.__kwdefaults__ is not None:
            _check_default_updates(fn, mark, len(args), None)
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
    if hit is None or hit[3] or hit[2] is not None and (len(args) > fn.__code__.co_argcount or len(hit[2]) > 2):
        return None  # (remapped cotangents, or a default's joining the function's own: `_derived` maps them)
    return hit


def _cache_of(fn):
    """The adjoints `_derived` cached on `fn` per call shape, if `fn` is a Python function whose cache is still
    valid (same code, no rule registered since: every registration bumps the generation, same defaults, and the
    callees it took as constants not rebound); else None."""
    if type(fn) is not _FUNCTION:
        return None
    entry = fn.__dict__.get("__zygote__")
    if entry is None or entry[0] is not fn.__code__ or entry[1] != _GENERATION[0] or \
            entry[3] is not fn.__defaults__ or entry[4] is not fn.__kwdefaults__ or \
            entry[5] is not None and not entry[5]():
        return None
    return entry[2]


_FUNCTION, _GENERATION = types.FunctionType, registry.generation  # (the entry points' hot path: no attribute lookups)

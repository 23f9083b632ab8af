"""J: differentiate one call at run time (Zygote's `J`, callee-derives).

`J(f, *args)` returns `(y, back)` with `back(dy) -> (dself, *dargs)`. Resolution order:
registered rule -> derived adjoint of a Python function (compiled once, cached on the function) -> bound methods,
`functools.partial`, callable objects -> a constant call when no differentiable value flows in -> `MissingAdjoint`.
`J_kw(f, *args, **kwargs)` is the same for calls with keywords; its `back` adds the keyword cotangents as a last dict.
"""
import collections.abc
import functools
import inspect
import operator
import os
import sys
import types


from ..adjoints import registry
from ..backends import is_array_type
from ..errors import MissingAdjoint, SourceUnavailable, UnsupportedSyntax, ZygoteError, where
from ..runtime.context import current
from ..structgrad import StructGrad
from .runtime import NATIVE as _NATIVE, DroppedKeyword, Pullback, acc, callmethod, differentiable
from . import mutate


_FUNCTION = types.FunctionType


class COMPILER:
    """The compiler's entry points J needs, given by ast_adjoint/compile.py when it is imported (the runtime sits below
    the compiler and does not import it): `derive(fn, need)` -> (forward, backward) of a Python function, and
    `user_line(filename, line)` -> the user's (file, line, function) of a line of generated code, or None."""
    derive = None
    user_line = None


class RulePullback:
    """Adapts a rule's `back(dy) -> dargs` to the internal `(dself, *dargs)` and checks what a user's rule returned.

    `need` (one bool per argument, known at the call site) lets a rule skip cotangents nobody reads; rules opt in with a
    second parameter, `back(dy, need)`. The built-in tables are tested, so their results skip the checks; a user's rule
    is checked for one cotangent per positional argument and for array cotangents of their argument's shape."""
    __slots__ = ("back", "rule", "nargs", "need", "trusted", "args")

    def __init__(self, back, rule, nargs, need=None, args=None):
        self.back, self.rule, self.nargs, self.trusted = back, rule, nargs, rule.__module__.startswith("zygotepy.")
        self.need = need if need is not None and back.__code__.co_argcount >= 2 else None
        self.args = None if self.trusted else args

    def __call__(self, dy):
        grads = self.back(dy) if self.need is None else self.back(dy, self.need)
        if self.trusted and len(grads) == self.nargs:
            return (None, *grads)
        if type(grads) is tuple and len(grads) > self.nargs and not any(g is not None for g in grads[self.nargs:]):
            grads = grads[:self.nargs]  # a rule written for all parameters, called without its optional ones
        if type(grads) is not tuple or len(grads) != self.nargs:
            got = f"{len(grads)} cotangents" if isinstance(grads, (tuple, list)) else repr(type(grads).__name__)
            where = ""
            if isinstance(grads, (tuple, list)):
                k = min(len(grads), self.nargs)
                where = f" (argument index {k} has {'no cotangent' if len(grads) < self.nargs else 'no argument'})"
            raise ZygoteError(f"{self._name()} returned {got}{where}; its back(dy) must return a tuple with one "
                              f"cotangent per positional argument ({self.nargs}), None for an argument with no "
                              f"gradient")
        if self.args is not None:
            self._check_shapes(grads)
        return (None, *grads)

    def _name(self):
        target = getattr(self.rule, "__zygote_target__", self.rule)
        name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
        return f"the adjoint rule {self.rule.__qualname__} for {name}"

    def _check_shapes(self, grads):
        """An array cotangent must have its argument's shape (a silently broadcast one would be a wrong gradient)."""
        for k, (a, g) in enumerate(zip(self.args, grads, strict=True)):
            if g is None or not hasattr(g, "shape"):
                continue
            if not (hasattr(a, "shape") or isinstance(a, (int, float, complex))):
                continue
            shape = tuple(getattr(a, "shape", ()))
            if tuple(g.shape) != shape:
                raise ZygoteError(f"{self._name()} returned a cotangent of shape {tuple(g.shape)} for argument index "
                                  f"{k}, of shape {shape}; each cotangent must have its argument's shape")


class ConstPullback:
    """The pullback of a call that carries no gradient: all None."""
    __slots__ = ("grads",)

    def __init__(self, n, keywords=False):
        self.grads = (None,) * (n + 1) + ((None,) if keywords else ())

    def __call__(self, dy):
        return self.grads


class MethodPullback:
    """Pullback of a bound method: the method's cotangent is its object's, `(dfunc, dself, *dargs) -> (dself, *dargs)`."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy):
        return self.inner(dy)[1:]


class MappedPullback:
    """Maps a derived function's cotangents, one per parameter, back to the positions and keywords of one call."""
    __slots__ = ("inner", "plan")

    def __init__(self, inner, plan):
        self.inner, self.plan = inner, plan

    def __call__(self, dy):
        grads = self.inner(dy)
        dparams = grads[1:]
        positional, keywords = self.plan
        out = [grads[0]]
        for kind, i in positional:
            if kind == "param":
                out.append(dparams[i])
            else:  # an extra positional argument, collected by *args: (index of *args, offset)
                tup = dparams[i[0]]
                out.append(tup[i[1]] if tup is not None else None)
        if keywords is not None:
            out.append({k: dparams[i] if kind == "param" else (dparams[i] or {}).get(k)
                        for k, (kind, i) in keywords.items()})
        return tuple(out)


@functools.lru_cache(maxsize=4096)
def _call_plan(code, nargs, kwnames):
    """Where each positional argument and keyword of a call lands among the function's parameters."""
    npos, nkwonly = code.co_argcount, code.co_kwonlyargcount
    has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
    names = code.co_varnames[:npos + nkwonly]
    positional = tuple(("param", i) if i < npos else ("vararg", (npos, i - npos)) for i in range(nargs))
    keywords = None
    if kwnames is not None:
        keywords = {}
        for k in kwnames:
            if k in names:
                i = names.index(k)
                keywords[k] = ("param", i if i < npos else i + has_varargs)
            else:
                keywords[k] = ("varkw", npos + has_varargs + nkwonly)
    return positional, keywords


def _derived(fn, args, kwargs, need, api=False):
    """Run the derived forward of a Python function; cached on the function per call shape (`need`, the number of
    positional arguments, the keywords), so a repeated call costs two dictionary lookups. At an entry point (`api`: the
    API reads only the positional arguments' cotangents) a call whose positional arguments fill the first parameters
    needs no remapping of its cotangents."""
    code = fn.__code__
    forward, back, plan, mutates = _adjoint_of(fn, args, kwargs, need)
    slot = _claim(args) if mutates and not api else None
    log = current().log
    mark = 0 if api else len(log)
    y, tape = forward(*args, **kwargs) if kwargs is not None else forward(*args)
    pb = Pullback(back, tape)
    finals = ()
    if mutates:
        y, finals = y[0], y[1:]
        pb = FinalsPullback(pb, finals, not api)
        _check_shared_memory(fn, mutates, finals, args)
    if (mutates or len(log) != mark) and not api:  # something was updated in place: was it an argument?
        _check_updates(fn, mutates, finals, slot, mutate.updated_since(mark, args))
    if plan is None or api and len(args) <= code.co_argcount:
        return y, pb
    return y, MappedPullback(pb, plan)


def check_cells(fn):
    """A nested function generated code made (runtime.make_closure) is differentiated as it was made: the cotangents
    of what it reads from its cells go to the values they held then. Called after one of those names was assigned
    anew (`f0 = ...` after `g = lambda u: u * f0`), it would read the new value and its gradient would go to the old
    one: refused, naming the call. (Made and called before the assignment, or never called after it, is fine.)"""
    made = fn.__dict__.get("__zygote_made__")
    if made is None:
        return
    for name, cell, value in zip(fn.__code__.co_freevars, fn.__closure__, made):
        try:
            same = cell.cell_contents is value
        except ValueError:  # (emptied by `del`)
            same = False
        if not same:
            site = call_site_parts() or (fn.__code__.co_filename, fn.__code__.co_firstlineno)
            raise UnsupportedSyntax(
                f"a call of the nested function {fn.__qualname__} after '{name}', which it captures, was assigned a "
                f"new value (the function reads the new value; zygotepy gives the gradient to the value captured when "
                f"the function was made)", *site,
                hint="give the new value its own name, or make the function again after the assignment")


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


# --- functions that update their arguments in place (see lower_mutation and adjoints/mutation/) ---------------------

class _Slot:
    """What a call site that may update its arguments (`mutate.mutcall`) lets its callee update: the objects' ids, and
    which of them the derived callee did update (it then takes their cotangents after the call)."""
    __slots__ = ("allowed", "owner", "claimed")

    def __init__(self, allowed):
        self.allowed, self.owner, self.claimed = allowed, False, set()


def _claim(args):
    """The slot of the innermost mutating call site, if this call is the one it made (its arguments are those)."""
    slots = current().slots
    if not slots:
        return None
    slot = slots[-1]
    if slot.owner or not all(id(a) in slot.allowed or type(a) in (int, float, bool, str, complex, type(None))
                             for a in args):
        return None
    slot.owner = True
    return slot


def _check_updates(fn, mutated, finals, slot, updated):
    """A derived function updated the argument objects `updated` in place. Fine where it returns their final versions
    (`finals`, for the parameters `mutated`) to a call site that takes them (`slot`); an error otherwise."""
    taken = set()
    if finals and slot is not None and all(id(o) in slot.allowed for o in finals):
        # a number is never updated in place (and equal numbers may be one object): the caller keeps its cotangent
        taken = {id(o) for o in finals if not mutate.is_number(o)}
        slot.claimed.update(taken)
    if all(id(o) in taken for o in updated):
        return
    code = fn.__code__
    names = ", ".join(repr(code.co_varnames[k]) for k in mutated) if mutated else "(one of them)"
    how = ("its caller uses the call's result" if mutated else
           "it updates it in a way zygotepy does not follow into the caller (an augmented assignment x += ..., or "
           "an update through another object that holds it)")
    raise ZygoteError(
        f"{code.co_filename}:{code.co_firstlineno}: {fn.__qualname__} updates its argument {names} in place, and "
        f"{how}, so zygotepy cannot route the gradient of the updated object. Call it as a statement "
        f"(`{fn.__name__}(...)` on a line of its own) with item updates (x[...] = ...), or return the updated value "
        f"instead.")


def _check_shared_memory(fn, mutated, finals, args):
    """A function that updated an array parameter in place, given another argument sharing its memory (`h(x, x[1:])`,
    or on torch `h(x, x[4])`, a view): the callee's code treats its parameters as separate objects, so the gradient of
    the other argument would miss the update (silently wrong). Refused."""
    for k, final in zip(mutated, finals):
        if not mutate.is_number(final) and any(final is a for a in args) and mutate.shared_memory(final, args):
            code = fn.__code__
            where = call_site()
            raise ZygoteError(
                f"{where + ': ' if where else ''}{fn.__qualname__} (at {code.co_filename}:{code.co_firstlineno}) "
                f"writes into its parameter {code.co_varnames[k]!r} while another of its arguments shares that "
                f"array's memory (a view of it, or its base), which zygotepy does not follow inside the function. "
                f"Pass a copy of one of them (`x[1:].copy()`), or do the update in the caller.")


class FinalsPullback:
    """A function that updated parameters in place returned `(y, *finals)`: its backward takes the cotangents of
    those objects after the call too, given by the call site (`J_mutating`), None elsewhere (the entry points)."""
    __slots__ = ("inner", "finals", "from_site")

    def __init__(self, inner, finals, from_site):
        self.inner, self.finals, self.from_site = inner, finals, from_site

    def __call__(self, dy):
        finals = current().finals
        given = finals[-1] if self.from_site and finals else {}
        return self.inner((dy, *(given.get(id(o)) for o in self.finals)))


class SitePullback:
    """`back(d_result, finals)` of `J_mutating`: `finals` maps id(argument) -> its cotangent after the call."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy, finals):
        stack = current().finals
        stack.append(finals)
        try:
            return self.inner(dy)
        finally:
            stack.pop()


def J_mutating(fn, args, kwargs, updates=True):
    """J for a call that may update its arguments: `(y, back(dy, finals), ids of the arguments it updated)`."""
    slot = _Slot({id(a.__self__ if type(a) is super else a) for a in args} if updates else set())
    slots = current().slots
    slots.append(slot)
    try:
        y, pb = _dispatch(fn, tuple(args), kwargs or None)
    finally:
        slots.pop()
    return y, SitePullback(pb), slot.claimed


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


_OPERATORS = {operator.add: ("__add__", "__radd__"), operator.sub: ("__sub__", "__rsub__"),
              operator.mul: ("__mul__", "__rmul__"), operator.truediv: ("__truediv__", "__rtruediv__"),
              operator.floordiv: ("__floordiv__", "__rfloordiv__"), operator.mod: ("__mod__", "__rmod__"),
              operator.pow: ("__pow__", "__rpow__"), operator.matmul: ("__matmul__", "__rmatmul__"),
              operator.iadd: ("__iadd__", "__add__", "__radd__"), operator.isub: ("__isub__", "__sub__", "__rsub__"),
              operator.imul: ("__imul__", "__mul__", "__rmul__"),
              operator.itruediv: ("__itruediv__", "__truediv__", "__rtruediv__"),
              operator.neg: ("__neg__",), operator.pos: ("__pos__",), operator.abs: ("__abs__",), abs: ("__abs__",),
              operator.getitem: ("__getitem__",)}


class SwappedPullback:
    """`b.__rmul__(a)` computed `a * b`: its `(dfunc, db, da)` becomes `(None, da, db)`."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy):
        _, db, da = self.inner(dy)
        return None, da, db


class SelfPullback:
    """A method called for an operator: `(dfunc, *dargs) -> (None, *dargs)`."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy):
        return (None, *self.inner(dy)[1:])


def _user_operator(fn, args):
    """Python's operator protocol for user classes: transform their `__mul__`/`__rmul__`/... like any function."""
    names = _OPERATORS[fn]
    if any(getattr(type(a), "__zygote_number__", False) for a in args):
        return None  # zygotepy's own numbers (forward mode's duals): their operators mean what the rules say
    if all(type(a) in _NATIVE or is_array_type(type(a)) for a in args):
        return None  # an array library's operators (JAX's and torch's are Python functions): the operator rules
    if len(args) == 1 or fn is operator.getitem:
        method = getattr(type(args[0]), names[0], None)
        if isinstance(method, types.FunctionType) and not is_array_type(type(args[0])):
            y, pb = _dispatch(method, args, None)
            return y, SelfPullback(pb)
        if fn is operator.getitem and type(args[1]) not in _DATA_KEYS:
            _check_opaque_key(args[0], args[1], method)
        return None
    a, b = args
    forward = [n for n in names[:-1]]
    for name in forward:
        method = getattr(type(a), name, None)
        if isinstance(method, types.FunctionType) and not is_array_type(type(a)):
            y, pb = _dispatch(method, (a, b), None)
            if y is not NotImplemented:
                return y, SelfPullback(pb)
    method = getattr(type(b), names[-1], None)
    if isinstance(method, types.FunctionType) and not is_array_type(type(b)):
        y, pb = _dispatch(method, (b, a), None)
        if y is not NotImplemented:
            return y, SwappedPullback(pb)
    return None


_DATA_KEYS = frozenset((int, bool, slice, str, type(None), type(Ellipsis)))
_LOOKUPS = (list, tuple, dict, str, bytes, range, types.MappingProxyType, collections.abc.Mapping)


def _check_opaque_key(x, key, method):
    """`x[key]` where `x`'s `__getitem__` is C code with no rule, and the key may carry a gradient (floats, an array of
    floats): the getitem rule's cotangents are a lookup's (an entry of a sequence, mapping or array gets `dy`; the key
    none), right for a container but silently wrong for an object that computes with the key (a C-implemented
    interpolating table), so such a call raises MissingAdjoint. int, bool and slice keys are data (`_DATA_KEYS`)."""
    if isinstance(x, _LOOKUPS) or hasattr(x, "shape") or is_array_type(type(x)) or not differentiable(key):
        return
    if method is not None and (registry.find_rule(method) is not None or registry.is_nondifferentiable(method)):
        return
    x[key]  # a key the object refuses gets Python's own error (`array indices must be integers`), not this one
    raise MissingAdjoint(method if method is not None else type(x), f"indexing a {type(x).__name__} with a key that "
                         f"may carry a gradient", where=call_site())


_METHOD_KINDS = {}


def _method_kind(cls, name):
    """How `obj.name(...)` resolves for instances of `cls`: a Python method, a rule-carrying descriptor, or other."""
    key = (cls, name)
    if key not in _METHOD_KINDS:
        static = inspect.getattr_static(cls, name, None)
        if isinstance(static, types.FunctionType):
            _METHOD_KINDS[key] = ("method", static)
        elif static is not None and not isinstance(static, (staticmethod, classmethod, property)) \
                and (registry.find_rule(static) is not None or registry.is_nondifferentiable(static)):
            _METHOD_KINDS[key] = ("method", static)
        else:
            _METHOD_KINDS[key] = ("other", None)
    return _METHOD_KINDS[key]


class CallMethodPullback:
    """`callmethod(obj, name, *args)`: `(None, dobj, None, *dargs)` from the method's own pullback."""
    __slots__ = ("inner", "bound", "name", "obj")

    def __init__(self, inner, bound, name, obj):
        self.inner, self.bound, self.name, self.obj = inner, bound, name, obj

    def __call__(self, dy):
        grads = self.inner(dy)
        if self.bound:  # (dfunc, dobj, *dargs)
            return (None, grads[1], None, *grads[2:])
        dm = grads[0]  # the callable was an attribute value: its cotangent is a field of obj
        if dm is not None and getattr(self.obj.__dict__.get(self.name), "__self__", None) is self.obj:
            return (None, dm, None, *grads[1:])
        return (None, StructGrad({self.name: dm}) if dm is not None else None, None, *grads[1:])


def _callmethod(args, kwargs, need):
    obj, name, *rest = args
    kind, method = _method_kind(type(obj), name)
    if kind == "method":
        y, pb = _dispatch(method, (obj, *rest), kwargs, need and (need[0], *need[2:]))
        return y, CallMethodPullback(pb, True, name, obj)
    bound = getattr(obj, name)
    y, pb = _dispatch(bound, tuple(rest), kwargs)
    is_bound_method = (getattr(bound, "__self__", None) is obj or isinstance(obj, super)) \
        and not isinstance(obj, types.ModuleType)
    return y, (CallMethodPullback(_Prepend(pb), True, name, obj) if is_bound_method
               else CallMethodPullback(pb, False, name, obj))


class _Prepend:
    """A bound method's pullback `(dobj, *dargs)` seen as `(dfunc=None, dobj, *dargs)`."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy):
        return (None, *self.inner(dy))


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
        rule = registry.find_rule(fn)
    if rule is not None:
        aware = getattr(rule, "__zygote_keywords__", False)
        if kwargs and not aware:
            moved = _movable(fn, rule, args, kwargs)
            if moved:
                return _call_by_position(fn, rule, args, kwargs, moved, need)
        y, back = rule(*args, **kwargs) if kwargs else rule(*args)
        if kwargs and aware:  # gives keyword cotangents itself
            return y, _WithKeywords(RulePullback(back, rule, len(args) + 1, need), rule, fn, kwargs, True)
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
        allkw = {**fn.keywords, **(kwargs or {})}
        y, pb = _dispatch(fn.func, (*fn.args, *args), allkw or None)
        own = tuple(k for k in fn.keywords if k not in (kwargs or ()))  # a keyword of the call replaces the partial's
        return y, PartialPullback(pb, len(fn.args), bool(allkw), kwargs, own)
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(fn, type):
        y, pb = _dispatch(call, (fn, *args), kwargs)
        return y, MethodPullback(pb)
    owner = getattr(fn, "__self__", None)  # a bound builtin method reads its object too
    inputs = (*args, *(kwargs or {}).values(), *([owner] if not isinstance(owner, types.ModuleType) else []))
    if not any(differentiable(a) for a in inputs):
        return _constant(fn, args, kwargs)
    raise MissingAdjoint(fn, where=call_site())


def call_site():
    """`file:line` of the user's code that made the call being dispatched (its innermost generated frame: see
    compile.user_line; a notebook cell named as such, errors.where), or "" when none is running (an entry point's own
    function). Read only to word an error."""
    hit = call_site_parts()
    return "" if hit is None else where(*hit)


def call_site_parts():
    """`(file, line)` of `call_site`, or None."""
    user_line = COMPILER.user_line
    frame = sys._getframe(2)
    while frame is not None:
        hit = user_line(frame.f_code.co_filename, frame.f_lineno)
        if hit is not None and not hit[0].startswith(_PACKAGE):  # (a rule's code an outer level transformed: go on)
            return hit[0], hit[1]
        frame = frame.f_back
    return None


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _constant(fn, args, kwargs):
    y = fn(*args, **kwargs) if kwargs else fn(*args)
    return y, ConstPullback(len(args), kwargs is not None)


class _WithKeywords:
    """The keyword cotangents of a rule's call, as the last entry of `(dself, *dargs, dkw)`.

    A keyword-aware rule (`registry.keyword_rule`) states them itself, as the last entry of its back's result (`aware`);
    any other rule states none. A keyword the rule did not state gets None when its value is not differentiable (an
    int, a string, a dtype, an axis tuple, None) and a `DroppedKeyword` when it is: generated code reads a keyword's
    cotangent only where the value carries a gradient, and raises there (`runtime.kwarg_cotangent`). So a constant
    `np.clip(x, a_min=0.0)` runs, while `np.clip(x, a_min=lo)` with a `lo` that carries a gradient never loses it: the
    rule gives it, or differentiation raises naming the rule and the keyword. (Deciding at the call would raise for
    constant floats too; deciding from per-rule lists of constant keywords would need a list for every rule, users'
    rules included.) A keyword that names one of the target's positional parameters does not get here: it is passed
    to the rule by position (`_movable`)."""
    __slots__ = ("inner", "rule", "fn", "kwargs", "aware")

    def __init__(self, inner, rule, fn, kwargs, aware):
        self.inner, self.rule, self.fn, self.kwargs, self.aware = inner, rule, fn, kwargs, aware

    def __call__(self, dy):
        grads = self.inner(dy)
        stated = {}
        if self.aware:
            grads, stated = grads[:-1], grads[-1]
            if stated is not None and not isinstance(stated, dict):
                raise ZygoteError(f"the keyword-aware adjoint rule {self.rule.__qualname__} returned "
                                  f"{type(stated).__name__!r} where its back's last entry must be a dict of keyword "
                                  f"cotangents")
        if dy is None:  # no cotangent in: none out, for every keyword
            stated = dict.fromkeys(self.kwargs)
        return (*grads, _keyword_cotangents(self.rule, self.fn, self.kwargs, stated or {}))


def _keyword_cotangents(rule, fn, kwargs, stated):
    """One cotangent per keyword of the call: the rule's, else None or a `DroppedKeyword` (see _WithKeywords)."""
    out = {}
    for k, v in kwargs.items():
        if k in stated:
            out[k] = stated[k]
        else:
            out[k] = DroppedKeyword(rule, fn, k) if differentiable(v) else None
    return out


# --- differentiable keywords that name positional parameters: passed by position to a rule that is not keyword-aware --

def _movable(fn, rule, args, kwargs):
    """The keywords of `fn(*args, **kwargs)` that name `fn`'s next positional parameters (`b` in `np.dot(a, b=w)`) and
    hold differentiable values, when `rule` takes them by position: passed there, they get the rule's positional
    cotangents instead of none. Empty when there are none (the common case: a constant axis=, dtype=, ...)."""
    names = _positional_names(fn)
    moved, k = [], len(args)
    while k < len(names) and names[k] in kwargs and differentiable(kwargs[names[k]]):
        moved.append(names[k])
        k += 1
    code = getattr(rule, "__code__", None)
    if not moved or code is None or not (code.co_argcount >= k or code.co_flags & inspect.CO_VARARGS):
        return ()
    return tuple(moved)


_POSITIONAL = {}


def _positional_names(fn):
    """The names of `fn`'s parameters that may be passed by position, in order (empty if it has no signature)."""
    try:
        hit = _POSITIONAL.get(fn)
    except TypeError:
        return ()
    if hit is None:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = ()
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        hit = _POSITIONAL[fn] = tuple(p.name for p in params if p.kind in kinds)
    return hit


def _call_by_position(fn, rule, args, kwargs, moved, need):
    """`rule(*args, *moved values, **other keywords)`; the moved values' cotangents go back as keyword cotangents."""
    rest = {k: v for k, v in kwargs.items() if k not in moved}
    full = (*args, *(kwargs[k] for k in moved))
    y, back = rule(*full, **rest) if rest else rule(*full)
    pb = RulePullback(back, rule, len(full), need and (*need, *(True for _ in moved)), full)
    return y, _ByPosition(_WithKeywords(pb, rule, fn, rest, False), len(args), moved)


class _ByPosition:
    """`(dself, *dargs, *dmoved, dkw)` -> `(dself, *dargs, dkw with the moved keywords' cotangents)`."""
    __slots__ = ("inner", "nargs", "moved")

    def __init__(self, inner, nargs, moved):
        self.inner, self.nargs, self.moved = inner, nargs, moved

    def __call__(self, dy):
        grads = self.inner(dy)
        end = 1 + self.nargs
        return (*grads[:end], {**grads[-1], **dict(zip(self.moved, grads[end:-1], strict=True))})


class PartialPullback:
    """`partial(f, *bound, **given)(*args, **kwargs)`: the cotangents of the bound arguments and of the partial's own
    keywords become the partial's (`dself.args`, `dself.keywords`); the call's keywords get theirs as usual."""
    __slots__ = ("inner", "nbound", "inner_keywords", "keywords", "own")

    def __init__(self, inner, nbound, inner_keywords, keywords, own):
        self.inner, self.nbound, self.inner_keywords, self.keywords, self.own = \
            inner, nbound, inner_keywords, keywords, own

    def __call__(self, dy):
        grads = self.inner(dy)
        dfunc, rest = grads[0], list(grads[1:])
        kw = (rest.pop() or {}) if self.inner_keywords else {}
        bound, own = rest[:self.nbound], rest[self.nbound:]
        given = {k: kw.get(k) for k in self.own}
        dself = None
        if dfunc is not None or any(g is not None for g in bound) or any(g is not None for g in given.values()):
            dself = StructGrad(func=dfunc, args=tuple(bound), **({"keywords": given} if given else {}))
        if self.keywords is None:
            return (dself, *own)
        return (dself, *own, {k: kw.get(k) for k in self.keywords})


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
    return _dispatch(fn, args, None)


_RULES = registry.RULES


def J_kw(fn, /, *args, **kwargs):
    return _dispatch(fn, args, kwargs)


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


class ArgsPullback:
    """A pullback seen without the callee's own cotangent (a global or constant callee never needs it)."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy, need=None, *into):
        grads = self.inner(dy)[1:]
        if into:  # generated code handed over running cotangents (registry.accumulates): add to them
            return tuple(acc(a, g) for a, g in zip(into, grads))
        return grads


class DerivedArgsPullback:
    """`ArgsPullback(Pullback(back, tape))` in one object: the backward of a derived function, called from a
    caller's backward with one frame between them (see `_plain`). The fast paths hand out its bound `__call__`, not the
    object: Python 3.11 runs a call of an object through C and counts it as two levels of recursion more (a recursion
    of depth n needs 3n of the limit instead of 2n); a bound method is called like a function."""
    __slots__ = ("back", "tape")

    def __init__(self, back, tape):
        self.back, self.tape = back, tape

    def __call__(self, dy, need=None, *into):
        grads = self.back(self.tape, dy)[1:]
        if into:
            return tuple(acc(a, g) for a, g in zip(into, grads))
        return grads


_DIRECT = {}  # rule -> may generated code use its `back` as is (a tested built-in rule, no optional parameters)


def J_args(need, fn, /, *args):
    """J for a constant or global callee: `back(dy)` returns only the arguments' cotangents. A built-in rule's own
    `back` is returned as is (no wrappers), unless a user class must see the operator first."""
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
    if rule is not None:
        direct = _DIRECT.get(rule)
        if direct is None:
            direct = _DIRECT[rule] = registry.callable_directly(rule)
        if direct and not (type(fn) is types.BuiltinFunctionType and fn in _OPERATORS
                           and (type(args[0]) not in _NATIVE or type(args[-1]) not in _NATIVE)):
            return rule(*args)
    y, pb = _dispatch(fn, args, None, need)
    return y, ArgsPullback(pb)


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
    if type(fn) is not types.FunctionType:
        return None
    entry = fn.__dict__.get("__zygote__")
    if entry is None or entry[0] is not fn.__code__ or entry[1] != registry.generation[0]:
        return None
    return entry[2]


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

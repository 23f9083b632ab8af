"""The pullback objects J hands out (ast_adjoint/dispatch.py): each adapts a callee's cotangents to one call's
`(dself, *dargs)`, or checks what a user's rule returned. Closure-free, with `__slots__`: one is made per
differentiated call.
"""
import inspect

import numpy as np

from ..adjoints.registry import takes_need
from ..errors import ZygoteError
from ..runtime.context import current
from ..structgrad import StructGrad
from .accumulate import acc
from .call_checks import call_site
from .guards_runtime import differentiable


def _read_only(dy):
    """`dy` as a user's rule sees it: a NumPy array (or a tuple or list of them, one per output) as a read-only view."""
    if type(dy) is np.ndarray:
        view = dy.view()
        view.flags.writeable = False
        return view
    if type(dy) in (tuple, list) and any(type(d) is np.ndarray for d in dy):
        return type(dy)(_read_only(d) for d in dy)
    return dy


class RulePullback:
    """Adapts a rule's `back(dy) -> dargs` to the internal `(dself, *dargs)` and checks what a user's rule returned.

    `need` (one bool per argument, known at the call site) lets a rule skip cotangents nobody reads; rules opt in with a
    second parameter, `back(dy, need)`, declared at registration (`adjoint(target, need=True)`). The built-in tables
    are tested, so their results skip the checks; a user's rule is checked for one cotangent per positional argument
    and for array cotangents of their argument's shape."""
    __slots__ = ("back", "rule", "nargs", "need", "trusted", "args")

    def __init__(self, back, rule, nargs, need=None, args=None):
        self.back, self.rule, self.nargs, self.trusted = back, rule, nargs, rule.__module__.startswith("zygotepy.")
        self.need = need if need is not None and takes_need(rule) else None
        if self.trusted:
            self.args = None
        else:
            self.args = args
            if self.need is None and takes_need(rule):  # (a user's `back(dy, need)` has no default: called where the
                self.need = (True,) * nargs  # caller could not say, every argument is needed)

    def __call__(self, dy):
        if self.trusted:
            grads = self.back(dy) if self.need is None else self.back(dy, self.need)
            if len(grads) == self.nargs:
                return (None, *grads)
            return self.checked(grads)
        try:  # a user's back gets its arrays read-only: another path may hold the same cotangent (`f(t) + t`)
            grads = self.back(_read_only(dy)) if self.need is None else self.back(_read_only(dy), self.need)
        except ValueError as e:
            if "read-only" not in str(e):
                raise
            raise ZygoteError(f"{self._name()} updated its cotangent dy in place ({e}); the cotangent may be shared "
                              f"with another use of the same value: compute a new one (`dy * 2`, not `dy *= 2`)") from e
        return self.checked(grads)

    def checked(self, grads):
        """`(None, *grads)`, the back's result `grads` trimmed of optional parameters' Nones and checked (a user's list
        taken as the tuple it stands for: `lambda dy: [3 * dy]`)."""
        if type(grads) is list:
            grads = tuple(grads)
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
        """An array cotangent must have its argument's shape (a silently broadcast one would be a wrong gradient), and a
        number's cotangent is no container. (`args` are the positional ones: a keyword-aware back's dict comes
        after.)"""
        for k, (a, g) in enumerate(zip(self.args, grads)):
            if isinstance(g, (tuple, list, dict)) and isinstance(a, (int, float, complex)) and type(a) is not bool:
                raise ZygoteError(f"{self._name()} returned a {type(g).__name__} as the cotangent of argument index "
                                  f"{k}, a number; each cotangent must have its argument's structure")
            if g is None:
                continue
            if hasattr(a, "shape") and tuple(a.shape) != () and (
                    isinstance(g, (tuple, list, dict, int, float, complex)) or not hasattr(g, "shape")):
                raise ZygoteError(f"{self._name()} returned a {type(g).__name__} as the cotangent of argument index "
                                  f"{k}, an array of shape {tuple(a.shape)}; each cotangent must have its argument's "
                                  f"shape")
            if not hasattr(g, "shape"):
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
        positional, keywords, *defaulted = self.plan
        out = [grads[0]]
        if defaulted:  # parameters left to defaults that carry gradients: theirs join the function's own
            given = {key: dparams[i] for i, key in defaulted[0] if dparams[i] is not None}
            out[0] = acc(out[0], StructGrad(given)) if given else out[0]
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


class FinalsPullback:
    """A function that updated parameters in place returned `(y, *finals)`: its backward takes the cotangents of
    those objects after the call too, given by the call site (`J_mutating`), None elsewhere (the entry points)."""
    __slots__ = ("inner", "finals", "from_site")

    def __init__(self, inner, finals, from_site):
        self.inner, self.finals, self.from_site = inner, finals, from_site

    def __call__(self, dy):
        finals = current().finals
        given = finals[-1] if self.from_site and finals else {}
        if not given:
            return self.inner((dy, *(None for _ in self.finals)))
        # an object's cotangent goes to one of its final versions: two parameters given one array (`k(X, X)`) both
        # return it, and the cotangent of the object after the call is one (taken twice, it was counted twice)
        seen = set()
        return self.inner((dy, *(None if id(o) in seen or seen.add(id(o)) else given.get(id(o))
                                 for o in self.finals)))


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
        own = getattr(self.obj, "__dict__", None)  # (a namedtuple's fields and `__slots__` are the class's descriptors)
        held = own.get(self.name) if own is not None else getattr(self.obj, self.name, None)
        if dm is not None and getattr(held, "__self__", None) is self.obj:
            return (None, dm, None, *grads[1:])
        if dm and own is not None and self.name not in own \
                and hasattr(type(inspect.getattr_static(type(self.obj), self.name, None)), "__get__"):
            # a callable the object's class made for it (a property returning a closure): no field of the object
            # holds it, so its cotangent has nowhere to go; refused, not dropped (a class attribute's value, a
            # callable object, has no `__get__`: it is no field of the object, and its cotangent is dropped below)
            raise ZygoteError(f"zygotepy cannot give the gradient of {type(self.obj).__name__}.{self.name}, a "
                              f"callable its class makes for the object (a property or another descriptor), back to "
                              f"the object; call a method of the object instead")
        return (None, StructGrad({self.name: dm}) if dm is not None else None, None, *grads[1:])


class InPlaceOperatorPullback:
    """`v += w` through a user class's `__iadd__` (or `__imul__`, ...), run as a call that may update `v`: where it
    updated `v` and returned it, the result is `v`'s final version, whose cotangent the method's backward takes."""
    __slots__ = ("inner", "updated")

    def __init__(self, inner, updated, returned_self, name):
        if updated is not None and not returned_self:
            raise ZygoteError(f"zygotepy cannot differentiate {name}: it updates its object in place and returns "
                              f"another one, which the augmented assignment binds instead; return self")
        self.inner, self.updated = inner, updated

    def __call__(self, dy):
        grads = self.inner(dy, {}) if self.updated is None else self.inner(None, {self.updated: dy})
        return (None, *grads[1:])


class LookedUpPullback:
    """`callmethod(obj, name, *args)` where a user class's `__getattr__` (or `__getattribute__`) found the callable:
    the callable's cotangent goes back to `obj` through that lookup's pullback."""
    __slots__ = ("inner", "lookup")

    def __init__(self, inner, lookup):
        self.inner, self.lookup = inner, lookup

    def __call__(self, dy):
        grads = self.inner(dy)
        dobj = self.lookup(grads[0])[1] if grads[0] is not None else None  # (J: dgetattr, dobj, dname)
        return (None, dobj, None, *grads[1:])


class PartialMethodPullback:
    """`obj.name(...)` where the class's `functools.partialmethod` made `partial(obj.method, ...)` (whose `__self__`
    is obj): the partial's cotangent holds the object's as its function's, `(dpartial, *dargs) -> (dobj, *dargs)`."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy):
        dpartial, *rest = self.inner(dy)
        return (dpartial.get("func") if isinstance(dpartial, dict) else None, *rest)


class _Prepend:
    """A bound method's pullback `(dobj, *dargs)` seen as `(dfunc=None, dobj, *dargs)`."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, dy):
        return (None, *self.inner(dy))


def through_partial(fn, args, kwargs, dispatch):
    """J of calling the partial `fn`: its function's, on the bound arguments and the call's. Refused where that call
    updated in place an array or object the partial holds (`partial(np.copyto, a, src)()`, `partial(np.multiply, a,
    2.0, out=a)()`): the call site names none of them, so the code after it would read the object as it was before
    (its gradient silently the old value's)."""
    allkw = {**fn.keywords, **(kwargs or {})}
    log = current().log
    mark = len(log)
    y, pb = dispatch(fn.func, (*fn.args, *args), allkw or None)
    if len(log) > mark:
        updated = set(log[mark:])
        held = [a for a in (*fn.args, *fn.keywords.values()) if id(a) in updated and differentiable(a)]
        if held:
            refuse_partial_update(fn, held[0])
    own = tuple(k for k in fn.keywords if k not in (kwargs or ()))  # a keyword of the call replaces the partial's
    return y, PartialPullback(pb, len(fn.args), bool(allkw), kwargs, own)


def refuse_partial_update(fn, obj):
    raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate calling a partial of "
                      f"{getattr(fn.func, '__qualname__', fn.func)} that updates in place a {type(obj).__name__} the "
                      f"partial holds (the call names none of its arguments, so what reads that object after it would "
                      f"miss the update); call the function itself")


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

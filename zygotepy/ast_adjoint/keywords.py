"""Calls with keywords, for J (ast_adjoint/dispatch.py): where each argument of a call lands among a derived function's
parameters (`_call_plan`), the keyword cotangents of a rule's call (`_WithKeywords`), differentiable keywords that
name positional parameters, passed to a rule by position (`_movable`), and the cotangents a rule's back gives for its
positional parameters that the call passed by keyword (`bound_by_keyword`); an ndarray method's out array given by
position where the method's result is used, refused (`refuse_positional_out`).
"""
import functools
import inspect

import numpy as np

from ..errors import ZygoteError
from .accumulate import DroppedKeyword
from .call_checks import call_site
from .guards_runtime import differentiable
from .pullbacks import RulePullback


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
        return self.finish(self.inner(dy), dy)

    def finish(self, grads, dy):
        """`(dself, *dargs, dkw)` from the inner pullback's result `grads` for the cotangent `dy`."""
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


class KeywordsPullback:
    """`_WithKeywords` over `RulePullback` for a built-in keyword-aware rule, in one object (J_kw's common case: a
    reduction's `axis=`, `keepdims=`): a back whose result is `(*dargs, {keyword: cotangent})` takes the short way;
    any other result is checked as those two would."""
    __slots__ = ("back", "rule", "fn", "kwargs", "nargs")

    def __init__(self, back, rule, fn, kwargs, nargs):
        self.back, self.rule, self.fn, self.kwargs, self.nargs = back, rule, fn, kwargs, nargs

    def __call__(self, dy):
        grads = self.back(dy)
        stated, n = grads[-1] if grads else None, self.nargs
        if len(grads) > n + 1 and type(stated) is dict and not any(g is not None for g in grads[n:-1]):
            grads = (*grads[:n], stated)  # keywords bound to the rule's positional parameters (`np.pad(x, pad_width=1)`)
        if dy is not None and type(stated) is dict and len(grads) == n + 1:
            if stated.keys() != self.kwargs.keys():
                stated = _keyword_cotangents(self.rule, self.fn, self.kwargs, stated)
            return (None, *grads[:-1], stated)
        inner = RulePullback(self.back, self.rule, self.nargs + 1)
        return _WithKeywords(inner, self.rule, self.fn, self.kwargs, True).finish(inner.checked(grads), dy)


def _keyword_cotangents(rule, fn, kwargs, stated):
    """One cotangent per keyword of the call: the rule's, else None or a `DroppedKeyword` (see _WithKeywords)."""
    out = {}
    for k, v in kwargs.items():
        if k in stated:
            out[k] = stated[k]
        elif type(v) in _DATA:  # (an axis, a flag, a name: the common keywords, asked without a call)
            out[k] = None
        else:
            out[k] = DroppedKeyword(rule, fn, k) if differentiable(v) else None
    return out


_DATA = frozenset((int, bool, str, type(None)))  # keyword values that never carry a gradient


# --- differentiable keywords that name positional parameters: passed by position to a rule that is not keyword-aware --

def _movable(fn, rule, args, kwargs):
    """The keywords of `fn(*args, **kwargs)` that name `fn`'s next positional parameters (`b` in `np.dot(a, b=w)`) and
    hold differentiable values, when `rule` takes them by position: passed there, they get the rule's positional
    cotangents instead of none. So are constants the rule has no parameter of that name for (`round(x, ndigits=2)`,
    whose rule takes `*ndigits`). Empty when there are none (the common case: a constant axis=, dtype=, ...)."""
    names = _positional_names(fn)
    code = getattr(rule, "__code__", None)
    named = None if code is None or code.co_flags & inspect.CO_VARKEYWORDS else \
        code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]  # (None: it takes any keyword)
    moved, k = [], len(args)
    while k < len(names) and names[k] in kwargs and (differentiable(kwargs[names[k]]) or named is not None and
                                                     names[k] not in named):
        moved.append(names[k])
        k += 1
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


# --- a rule's positional parameters passed by keyword: their cotangents become keyword cotangents --------------------

def bound_by_keyword(rule, nargs, kwargs):
    """The names of `rule`'s positional parameters after the call's `nargs` positional arguments, when the call passes
    one of them by keyword (`power(x, n=3)` to a rule `power_rule(x, n)`); else (). Such a rule's back may return a
    cotangent for each of them after the positional ones (`_Rebound` makes those keyword cotangents)."""
    key = (rule, nargs, tuple(kwargs))
    hit = _BOUND.get(key)
    if hit is None:
        code = getattr(rule, "__code__", None)
        names = code.co_varnames[nargs:code.co_argcount] if code is not None else ()
        hit = _BOUND[key] = names if any(k in kwargs for k in names) else ()
    return hit


_BOUND = {}  # (rule, number of positional arguments, keyword names) -> `bound_by_keyword`'s answer


class _Rebound:
    """A rule's back, its result put in the keyword-aware form `(*dargs, {keyword: cotangent})`: entries after the
    `nargs` positional cotangents are the cotangents of the parameters `names`, which the call passed by keyword
    (`kwargs`) or left out (then they must be None: an optional parameter, `adjoint(..., optional=True)`)."""
    __slots__ = ("back", "rule", "nargs", "names", "kwargs", "aware", "shapes")

    def __init__(self, back, rule, args, names, kwargs, aware):
        self.back, self.rule, self.nargs, self.names, self.kwargs = back, rule, len(args), names, kwargs
        self.aware = aware
        self.shapes = RulePullback(back, rule, len(args), None, args)  # (its checks of a user's cotangents' shapes)

    def __call__(self, dy):
        grads = self.back(dy)
        if type(grads) is not tuple:
            return grads  # (RulePullback's checks say what is wrong with it)
        stated = {}
        if self.aware and grads and (grads[-1] is None or isinstance(grads[-1], dict)):
            grads, stated = grads[:-1], dict(grads[-1] or {})
        n = self.nargs
        for name, g in zip(self.names, grads[n:]):
            if name in self.kwargs:
                stated[name] = g
            elif g is not None:
                raise ZygoteError(f"the adjoint rule {self.rule.__qualname__} returned a cotangent for its parameter "
                                  f"{name!r}, which the call did not pass; its back(dy) must return None there")
        if len(grads) > n + len(self.names) or len(grads) < n:
            return grads  # (RulePullback's checks say what is wrong with it)
        if self.shapes.args is not None:
            self.shapes._check_shapes(grads[:n])
        return (*grads[:n], stated)


_UFUNC_LAYOUT = ("casting", "order", "subok")  # what a ufunc's result looks like, not the values it computes


def ufunc_keywords(fn, kwargs):
    """The keywords of a call of the NumPy ufunc `fn` its rule takes: `casting=`, `order=`, `subok=`, a `dtype=` or
    `signature=` of None, change no value computed from floats (left out); a `dtype=` the values are computed in is
    refused unless it is the one they have anyway (the rules compute in the inputs' type). None where none are left."""
    kept = {}
    for k, v in kwargs.items():
        if k in _UFUNC_LAYOUT or k in ("dtype", "signature") and v is None:
            continue
        if k == "dtype" and np.dtype(v) == np.float64:
            continue
        if k in ("dtype", "signature"):
            raise ZygoteError(f"np.{fn.__name__}(..., {k}={v!r}): zygotepy computes a ufunc in its inputs' type; cast "
                              f"them first (x.astype(...))")
        if k in ("axes", "axis", "keepdims") and fn.signature:  # (a generalized ufunc's core axes: `np.matmul`)
            raise ZygoteError(f"np.{fn.__name__}(..., {k}=...): zygotepy's rule multiplies the last two axes; move "
                              f"the axes there first (np.moveaxis)")
        kept[k] = v
    return kept or None


class UfuncKeywordsPullback:
    """The pullback of a ufunc's call whose rule was given fewer keywords than the call (`ufunc_keywords`): the
    call's keywords each get a cotangent, None for those left out."""
    __slots__ = ("inner", "kwargs", "kept")

    def __init__(self, inner, kwargs, kept):
        self.inner, self.kwargs, self.kept = inner, kwargs, kept

    def __call__(self, dy):
        grads = self.inner(dy)
        given = grads[-1] if self.kept else {}
        return (*(grads[:-1] if self.kept else grads), {k: given.get(k) for k in self.kwargs})


def refuse_positional_out(obj, name, rest):
    """`r = X.sum(1, None, o)`: an ndarray method given its out array by position, its result used. The lowering
    follows the update of `o` only for `out=` (and for a call statement: adjoints/mutation/positionals.py), so NumPy's
    write into `o` would go unseen, the gradient through `o` silently lost: refused."""
    if _gives_out(obj, name, rest, None):
        where = call_site()
        raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate ndarray.{name}(...) given "
                          f"its out array by position where its result is used: the update of out would go unseen; "
                          f"pass it as out=...")


def refuse_bound_out(fn, args, kwargs):
    """`s = X.sum; s(1, None, o)`, `s(1, out=o)`: an ndarray method given an out array through its bound method (kept
    in a name, or given to another function). The lowering follows the update of `o` only on a call written on its
    array (`X.sum(1, out=o)`), so NumPy's write into `o` would go unseen, the gradient through it silently lost."""
    if type(fn) is _BUILTIN_METHOD and _gives_out(fn.__self__, fn.__name__, args, kwargs):
        where = call_site()
        raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate ndarray.{fn.__name__} given "
                          f"an out array through its bound method (kept in a name, or given to another function): "
                          f"the update of out would go unseen; call it on its array (`X.{fn.__name__}(..., out=o)`)")


def _gives_out(obj, name, args, kwargs):
    """Is the ndarray method `obj.<name>` (a dual array's too: hessian's reverse pass) given an out array, by keyword
    or by position among `args`?"""
    if not (isinstance(obj, np.ndarray) or getattr(type(obj), "__zygote_number__", False)):
        return False
    at = _array_method_out(name)
    return kwargs is not None and kwargs.get("out") is not None or at is not None and len(args) > at \
        and args[at] is not None


_BUILTIN_METHOD = type([].append)


@functools.lru_cache(maxsize=None)
def _array_method_out(name):
    """Where `np.ndarray.<name>` takes `out` by position after `self` (None if it does not)."""
    try:
        parameters = list(inspect.signature(getattr(np.ndarray, name)).parameters.values())[1:]
    except (AttributeError, TypeError, ValueError):
        return None
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names.index("out") if "out" in names else None

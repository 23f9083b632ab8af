"""NumPy's optional parameters given by position to a call that may update its arguments: `X.sum(1, None, o)`,
`X.dot(Y, o)`, `X.clip(lo, hi, o)`, `y.put(i, v, "clip")`, `np.copyto(x, w, "same_kind", mask)`. The rules take them
by keyword (an `out` array as `out=`, which with_out's rule follows: the lowering sends only a keyword `out=` there), so
the call runs as its keyword form, and its outputs and cotangents go back to the positions the call gave. Run
positionally, `o` would be written by NumPy unseen (a gradient silently lost), and the rules would get parameters
they do not take (a crash).
"""
import functools
import inspect

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...errors import ZygoteError
from .overlap import shares_memory

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
# NumPy's optional parameters from which on a call's positional arguments go as keywords (those before them, `axis`,
# `dtype`, a clip's bounds, are the rules' own positional parameters)
_FIRST_MOVED = ("out", "mode", "casting")
_COPYTO = (("dst", False), ("src", False), ("casting", True), ("where", True))


@functools.lru_cache(maxsize=None)
def _array_method_parameters(name):
    """`((name, may be given by keyword), ...)` of `np.ndarray.<name>`'s positional parameters after `self`, or None."""
    try:
        parameters = list(inspect.signature(getattr(np.ndarray, name)).parameters.values())[1:]
    except (AttributeError, TypeError, ValueError):
        return None
    return tuple((p.name, p.kind is p.POSITIONAL_OR_KEYWORD) for p in parameters if p.kind in _POSITIONAL)


def moved_to_keywords(fn, args):
    """`(at, names)`: `args[at:]` are NumPy's optional parameters `names`, given by position, to go as keywords; or
    None where the call gives none of them (or more arguments than NumPy takes: NumPy's own error says so)."""
    if fn is rt.callmethod and len(args) > 2 and isinstance(args[1], str) and (
            isinstance(args[0], np.ndarray) or getattr(type(args[0]), "__zygote_number__", False)):  # (hessian's dual)
        parameters, offset = _array_method_parameters(args[1]), 2
    elif fn is np.copyto:
        parameters, offset = _COPYTO, 0
    else:
        return None
    given = len(args) - offset
    if not parameters or given > len(parameters):
        return None
    first = next((k for k, (name, _) in enumerate(parameters) if name in _FIRST_MOVED), None)
    if first is None or given <= first or not all(by_keyword for _, by_keyword in parameters[first:given]):
        return None
    return offset + first, tuple(name for name, _ in parameters[first:given])


def call_by_keyword(mutcall, fn, args, kwargs, moved, result_used, keywords_taken):
    """`fn(*args, **kwargs)` run as `mutcall` (calls.py's `_mutcall`) of its keyword form (`moved`: what
    `moved_to_keywords` gave), in the layout `_mutcall` gives: `(result, *args, *kwargs.values())`, and a back that
    takes the cotangents of those and gives `(d_fn, *d_args, {d_kwargs})`."""
    at, names = moved
    clash = sorted(set(names) & set(kwargs))
    if clash:
        raise TypeError(f"{getattr(fn, '__name__', fn)}() got multiple values for argument {clash[0]!r}")
    keyword_at = {name: at + k for k, name in enumerate(names)}  # (a moved parameter's label: its position)
    out = args[keyword_at["out"]] if "out" in keyword_at else None
    inner_kwargs = {name: args[k] for name, k in keyword_at.items() if name != "out"}
    inner_kwargs.update(kwargs)
    kw_labels = [keyword_at.get(k, k) for k in inner_kwargs]  # (a keyword the call gave: its name)
    if out is not None:  # `X.sum(1, None, o)` is `X.sum(1, None, out=o)`: with_out's positions, fn first
        _refuse_partial_overlap(fn, args, at, out)
        labels = [None, *range(at), keyword_at["out"]]
        inner, inner_back = mutcall(mt.with_out, (fn, *args[:at], out), inner_kwargs, result_used, keywords_taken)
    else:  # (a positional `out=None` is left out)
        labels = list(range(at))
        inner, inner_back = mutcall(fn, args[:at], inner_kwargs, result_used, keywords_taken)
    values = dict(zip([*labels, *kw_labels], inner[1:], strict=True))
    result = (inner[0], *(values.get(k, args[k]) for k in range(len(args))), *(values[k] for k in kwargs))

    def back(dy):
        if dy is None:
            grads = inner_back(None)
        else:
            given = dict(enumerate(dy[1:1 + len(args)]))
            given.update(zip(kwargs, dy[1 + len(args):]))
            if out is not None:  # (`Y.clip(lo, hi, Y)`: the object after the call is out, whichever the caller read)
                given[keyword_at["out"]] = functools.reduce(rt.acc, (given.get(k) for k in range(at)
                                                                     if args[k] is out), given.get(keyword_at["out"]))
            grads = inner_back((dy[0], *(given.get(k) for k in labels), *(given.get(k) for k in kw_labels)))
        got = dict(zip(labels, grads[1:1 + len(labels)]))
        if out is not None and dy is not None:  # (with_out updates only out: the others' cotangents pass through)
            got.update((k, rt.acc(got.get(k), given.get(k))) for k in range(at) if args[k] is not out)
        if inner_kwargs:
            keyword_grads = grads[1 + len(labels)] or {}
            got.update((label, keyword_grads.get(k)) for label, k in zip(kw_labels, inner_kwargs))
        return (None, *(got.get(k) for k in range(len(args))),
                *(({k: got.get(k) for k in kwargs},) if kwargs else ()))
    return result, back


def _refuse_partial_overlap(fn, args, at, out):
    """`Y.clip(lo, hi, Y[0])`: an out sharing memory with another argument it is not (`Y`, the method's object, which
    the caller takes as updated as a whole): which cotangent is the updated part's cannot be told; out= can."""
    if isinstance(out, np.ndarray) and any(isinstance(a, np.ndarray) and a is not out and shares_memory(a, out)
                                           for a in args[:at]):
        name = args[1] if fn is rt.callmethod else getattr(fn, "__name__", fn)
        raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate {name}(...) given by position "
                          f"an out array that shares memory with another of its arguments; pass it as out=...")


def keywords_unchanged(out, back, kwargs):
    """`(out, back)` of a rule of calls.py, whose call updates none of its keyword arguments: their values join `out`
    (as `_mutcall` returns them) and their cotangents after the call pass through to the keyword cotangents."""
    if not kwargs:
        return out, back
    n = len(out)

    def keywords_back(dy):
        grads = back(None if dy is None else dy[:n])
        if dy is None or all(g is None for g in dy[n:]):
            return grads
        given = grads[-1] or {}
        return (*grads[:-1], {k: rt.acc(given.get(k), t) for k, t in zip(kwargs, dy[n:], strict=True)})
    return (*out, *kwargs.values()), keywords_back

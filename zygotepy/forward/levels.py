"""Entering and leaving a level of forward mode: `make_dual` perturbs the arguments of a call at its tag, `tangent_of`
reads the result's tangent at that tag when the call is done; `tangent_by_pullback` gives a reverse rule's output a
tangent.
"""
import copy
import inspect

import numpy as np

from ..errors import ForwardModeError
from ..runtime.context import current
from ..structgrad import StructGrad
from .dual import GIVEN, Dual, _split, _top_tag, dispatch, has_dual, new_tag, strip


PASS_THROUGH = set()  # functions `g(f, *args)` that forward mode runs as `f(*args)`: `pass_through`


def pass_through(*targets):
    """Forward mode runs `target(f, *args)` as `f(*args)`, transformed like any call of the user's (so `math.sin` in
    `f` takes its dual numbers). `checkpoint` and `forwarddiff` change how reverse mode gets `f`'s derivative; forward
    mode keeps no tape to spare and has no other mode to choose. Untransformed, `f` ran on dual numbers as plain
    code and refused them."""
    PASS_THROUGH.update(targets)


def settle(x, used):
    """`x`, a list or dict argument (nested too) that a pass of forward mode saw as `used` (a copy holding dual
    numbers: `make_dual`, `unflatten`), made as `f` left that copy, without perturbations, so that the argument ends as
    one call of `f` leaves it. Returns `x` (or, where `x` is not a container that can be updated, `used` stripped)."""
    if used is x:
        return x
    if type(x) is list and isinstance(used, list):
        x[:] = [settle(x[i], v) if i < len(x) else strip(v) for i, v in enumerate(used)]
        return x
    if type(x) is dict and isinstance(used, dict):
        new = {k: settle(x[k], v) if k in x else strip(v) for k, v in used.items()}
        x.clear()
        x.update(new)
        return x
    if isinstance(x, tuple) and isinstance(used, tuple) and len(x) == len(used):  # (its items may be containers)
        for a, v in zip(x, used):
            settle(a, v)
        return x
    return strip(used)


def make_dual(x, t, tag):
    """`x` perturbed by `t` at `tag`, for numbers, arrays, lists/tuples/dicts and objects of them (`t` None:
    constant)."""
    if t is None:
        return x
    if isinstance(x, (list, tuple)):
        items = [make_dual(a, b, tag) for a, b in zip(x, t, strict=True)]
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)  # (a namedtuple: by field)
    if isinstance(x, dict):
        return {k: make_dual(v, t.get(k), tag) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        if np.shape(t) != x.shape:
            raise ForwardModeError(f"tangent of shape {np.shape(t)} for an argument of shape {x.shape}")
        if isinstance(t, Dual):  # (a tangent carrying an outer level's derivative: a nested gradient's, in `hessian`)
            return Dual(tag, x, t if x.dtype.kind in "fc" else t * 1.0)
        return Dual(tag, x, np.array(t, dtype=np.result_type(x.dtype, np.float64) if x.dtype.kind not in "fc"
                                     else x.dtype))
    if isinstance(x, (int, float, complex, np.generic, Dual)):
        return Dual(tag, x, t)
    fields = getattr(x, "__dict__", None)
    if type(fields) is dict and _values_only(x, set()):  # a dataclass, an object: its fields, perturbed in a copy
        moved = copy.copy(x)  # (the tangent: a StructGrad or dict of fields, or an object of x's type)
        for k, v in fields.items():
            given = t.get(k) if isinstance(t, dict) else getattr(t, k, None)
            object.__setattr__(moved, k, make_dual(v, given, tag))  # (a frozen dataclass's too)
        return moved
    raise ForwardModeError(f"forward mode cannot perturb a {type(x).__name__}; pass numbers, arrays, or "
                           f"lists/tuples/dicts/objects of them (each met once: not `s.me = s`)")


def _values_only(x, seen):
    """Is `x` a tree of values (numbers, arrays; lists, tuples, dicts and plain objects of them) in which no container
    or object is met twice? Only such an object is perturbed field by field in a copy: one met twice (`s.me = s`, a
    parent pointer) would keep pointing at the unperturbed original."""
    if isinstance(x, (int, float, complex, str, np.generic, np.ndarray, Dual)) or x is None:
        return True
    if id(x) in seen:
        return False
    seen.add(id(x))
    if isinstance(x, (list, tuple)):
        return all(_values_only(v, seen) for v in x)
    if isinstance(x, dict):
        return all(_values_only(v, seen) for v in x.values())
    fields = getattr(x, "__dict__", None)  # (not a tensor: its fields are no values of its; not a function or a class)
    return type(fields) is dict and not callable(x) and not isinstance(x, type) and not hasattr(x, "dtype") and all(
        _values_only(v, seen) for v in fields.values())


# --- leaving a level ------------------------------------------------------------------------------------------------
def _level(y, tag, take_tangent):
    if isinstance(y, Dual):
        if y.tag == tag:
            return y.tangent if take_tangent else y.primal
        if y.tag > tag:  # an inner perturbation that escaped its call: keep it around this level's part
            return Dual(y.tag, _level(y.primal, tag, take_tangent), _level(y.tangent, tag, take_tangent))
        return _zero(y) if take_tangent else y
    if isinstance(y, (list, tuple)):
        items = [_level(v, tag, take_tangent) for v in y]
        return type(y)(items) if type(y) in (list, tuple) else type(y)(*items)
    if isinstance(y, dict):
        items = {k: _level(v, tag, take_tangent) for k, v in y.items()}
        return StructGrad(items) if isinstance(y, StructGrad) else items  # (an object's gradient stays one: hvp)
    fields = getattr(y, "__dict__", None)
    if type(fields) is dict and not callable(y) and has_dual((fields,)):  # a dataclass, SimpleNamespace, object
        part = copy.copy(y)  # (its tangent is an object of its type, as reverse mode's jacobian gives)
        for k, v in fields.items():
            object.__setattr__(part, k, _level(v, tag, take_tangent))  # (a frozen dataclass's too)
        return part
    return _zero(y) if take_tangent else y


def _zero(y):
    """The tangent of a value that does not depend on the perturbation."""
    y = strip(y)
    if isinstance(y, (bool, str)) or y is None:
        return None
    if isinstance(y, (int, float)):
        return 0.0
    if isinstance(y, complex):
        return 0j
    if isinstance(y, (np.ndarray, np.generic)):
        return np.zeros(y.shape, dtype=y.dtype if y.dtype.kind in "fc" else np.float64)
    return None


def tangent_of(y, tag):
    """The tangent of `y` at `tag` (zeros where `y` does not depend on it; containers keep their structure). The
    level ends: the texts its dual numbers were formatted into are forgotten."""
    texts = current().dual_texts
    if texts:
        for text in [t for t, at in texts.items() if at >= tag]:
            del texts[text]
    return _level(y, tag, True)


def tangent_by_pullback(rule, args, kwargs, limit=64):
    """`rule(*args, **kwargs)` (a reverse rule: `(y, back)`) on dual numbers, with the output's tangent computed from
    `back`, one call per element of the output: `ydot[i] = sum_k <back(e_i)[k], tangent_k>`. A user's rule says the
    derivative only through its back; its forward is ordinary code, whose own tangent (zero for `np.round`) is not the
    rule's. None where this cannot be done exactly and cheaply: an output that is not a real float or a real array of
    at most `limit` elements, a keyword carrying a derivative, perturbations of several levels, or cotangents that are
    not numbers or arrays of their argument's shape."""
    try:
        bound = inspect.signature(rule).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    if has_dual((), bound.kwargs):
        return None
    tag = _top_tag(bound.args)
    parts = [_split(a, tag) for a in bound.args]
    primals = [p for p, _ in parts]
    if has_dual(primals) or any(t is not None and has_dual((t,)) for _, t in parts):
        return None
    y, back = rule(*primals, **bound.kwargs)
    if getattr(rule, "__zygote_need__", False):  # (a rule declared `need=True`: its back takes the mask too)
        back = (lambda dy, back=back, n=len(primals): back(dy, (True,) * n))

    def back_on_duals(dy, *rest):  # (the caller's back, run on the dual numbers only if called: hessian's reverse pass)
        return rule(*args, **kwargs)[1](dy, *rest)
    view = _viewed(y, parts)
    if view is not None:  # (a view of an argument, or the argument itself: `np.rot90(z)`, a rule returning `x[0]`)
        moved = [t if k == view else p for k, (p, t) in enumerate(parts)]
        y_dot = rule(*moved, **bound.kwargs)[0]  # (a view is linear in what it views: the same view of its tangent)
        if type(y_dot) is not np.ndarray or y_dot.shape != y.shape or not np.may_share_memory(y_dot, parts[view][1]):
            return None
        return Dual(tag, y, y_dot), back_on_duals
    if isinstance(y, (float, np.floating)):
        y_dot = _pulled(back, type(y)(1.0), parts)
        return None if y_dot is None else (Dual(tag, y, y_dot), back_on_duals)
    if type(y) is not np.ndarray or y.dtype.kind != "f" or y.size > limit:
        return None
    y_dot = np.zeros(y.shape)
    for i in range(y.size):
        e = np.zeros(y.shape)
        e.flat[i] = 1.0
        y_dot.flat[i] = value = _pulled(back, e, parts)
        if value is None:
            return None
    return Dual(tag, y, y_dot), back_on_duals


def _viewed(y, parts):
    """The position of the argument (with a tangent) whose memory the array `y` shares, or None: its tangent must be
    the same view of that argument's tangent, so that an update in place through either reaches both."""
    if type(y) is not np.ndarray:
        return None
    for k, (p, t) in enumerate(parts):
        if type(p) is np.ndarray and type(t) is np.ndarray and np.may_share_memory(y, p):
            return k
    return None


def _pulled(back, e, parts):
    cotangents = back(e)
    total = 0.0
    for c, (p, t) in zip(cotangents, parts):
        if t is None or c is None:
            continue
        if has_dual((c,)) or np.shape(c) != np.shape(t) or np.iscomplexobj(c) or np.iscomplexobj(t):
            return None
        total += float(np.sum(np.asarray(c) * np.asarray(t)))
    return total


def scalar_rule(fn, *args):
    """The reverse rule of a scalar function (`math.*`, `float`) on dual numbers, from its forward rule: each partial
    derivative is one nested forward-mode pass (reverse mode calls this where `math`'s C code cannot take a Dual;
    see `adjoints.scalar.foreign_rule`)."""
    y = dispatch(fn, args, {})

    def back(dy):
        if dy is None:
            return (None,) * len(args)
        grads = []
        for i, a in enumerate(args):
            if isinstance(a, (bool, int)):
                grads.append(None)
                continue
            tag = new_tag()
            moved = (*args[:i], Dual(tag, a, 1.0), *args[i + 1:])
            y_i = dispatch(fn, moved, {})  # (a number: the tag is the newest, so it is the outermost Dual)
            grads.append(dy * (y_i.tangent if type(y_i) is Dual and y_i.tag == tag else 0.0))
        return tuple(grads)
    return y, back


GIVEN["scalar_rule"] = scalar_rule

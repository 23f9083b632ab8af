"""The function transforms JAX users reach for first: `grad`, `value_and_grad`, `vjp`, `jvp`, `hvp`.

`gradient(f, *args)` (Zygote's habit) stays the primary form; these wrap it and its siblings under JAX's names and
conventions: `grad(f)` returns a function, `argnums` picks the arguments (an int: that gradient alone), `has_aux`
lets `f` return `(value, aux)`.
"""
import functools
from typing import Any, Callable

import numpy as np

from .api import _seed, gradient, inner_pullback, pullback, select, value_and_gradient
from .api_blocks import arithmetic_ints
from .api_modes import Passes, _forward_call, _user_frame, refused_inside_reverse_mode, transform_route_only
from .errors import ForwardModeError, ZygoteError
from .forward.dual import new_tag, strip
from .forward.levels import make_dual, settle, tangent_of
from .forward.passes import made_plain, refuse_shared_updates, shared_arrays
from .trees import tree_map

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "hvp", "tree_map"]


def _split_aux(out, name):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):  # (a list `[value, aux]` too, as JAX unpacks it)
        raise ZygoteError(f"{name}(..., has_aux=True) needs f to return a pair (value, aux); it returned "
                          f"{type(out).__name__}")
    return tuple(out)


def _with_aux(f, args, kwargs, argnums, name):
    """`(value, aux, gradients)` of an `f` returning `(value, aux)`: one pullback, seeded at the value only."""
    out, back = pullback(f, *args, **kwargs)
    value, aux = _split_aux(out, name)
    grads = back((_seed(value), None))
    return value, aux, select(grads, argnums, len(args))


def grad(f: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """`grad(f)(*args)` is the gradient of `f` with respect to the argument(s) `argnums` (an int: that one gradient;
    a tuple: a tuple). With `has_aux=True`, `f` returns `(value, aux)` and the result is `(gradient, aux)`.

    >>> grad(lambda x, y: x * y, argnums=1)(3.0, 4.0)
    3.0
    """
    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        g, kwargs = _keywords_apart(f, args, kwargs, "grad")
        if has_aux:
            _, aux, grads = _with_aux(g, args, kwargs, argnums, "grad")
            return grads, aux
        return gradient(g, *args, argnums=argnums, **kwargs)
    return grad_f


def _keywords_apart(f, args, kwargs, name):
    """`f` and the call's keywords, with one named `argnums` (f's own, which the entry points would take) bound into
    `f` first; a call with no arguments is refused (`gradient(f)` curries, so it would hand back a function)."""
    if not args:
        raise ZygoteError(f"{name}(f)() was called with no arguments: the gradient is taken at the arguments given")
    return (functools.partial(f, **kwargs), {}) if "argnums" in kwargs else (f, kwargs)


def value_and_grad(f: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """`value_and_grad(f)(*args)` is `(f(*args), grad(f, argnums)(*args))` from one forward pass; with `has_aux=True`,
    `((value, aux), gradient)`.

    >>> value_and_grad(lambda x: x ** 2)(3.0)
    (9.0, 6.0)
    """
    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        g, kwargs = _keywords_apart(f, args, kwargs, "value_and_grad")
        if has_aux:
            value, aux, grads = _with_aux(g, args, kwargs, argnums, "value_and_grad")
            return (value, aux), grads
        return value_and_gradient(g, *args, argnums=argnums, **kwargs)
    return value_and_grad_f


def vjp(f: Callable[..., Any], *args: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """`(f(*args), vjp_fn)`: `vjp_fn(cotangent)` gives one cotangent per argument (JAX's name for `pullback`)."""
    return pullback(f, *args)


def _sequences(name, args, given, what):
    """`args` and the tangents or vectors `given`, as tuples: each must be a sequence (a tuple or list) of one per
    argument (`jvp(f, (x,), (t,))`), not a bare value."""
    for value, which in ((args, "args"), (given, what)):
        if not isinstance(value, (tuple, list)):
            raise ZygoteError(f"{name}: {which} must be a tuple or list of one per argument (({which}[0],)), not a "
                              f"{type(value).__name__}")
    return tuple(args), tuple(given)


def jvp(f: Callable[..., Any], args: tuple, tangents: tuple) -> tuple[Any, Any]:
    """`(f(*args), the derivative of f at args along tangents)` by forward mode, in one pass.

    >>> jvp(lambda x, y: x * y, (2.0, 3.0), (1.0, 0.0))
    (6.0, 3.0)
    """
    args, tangents = _sequences("jvp", args, tangents, "tangents")
    if len(args) != len(tangents):
        raise ZygoteError(f"jvp: {len(tangents)} tangents for {len(args)} arguments")
    tag, shared = new_tag(), shared_arrays(args)
    duals = [make_dual(a, t, tag) for a, t in zip(args, tangents, strict=True)]
    out = _forward_call(f, *duals)
    refuse_shared_updates(f, args, shared)
    for a, d in zip(args, duals):  # (the user's list and dict arguments end as f left their dual copies)
        settle(a, d)
    made_plain(f, tag - 1, args)  # (and what they hold, and state outside them, as f left it: no dual numbers)
    return tree_map(strip, out), tangent_of(out, tag)


def hvp(f: Callable[..., Any], args: tuple, vectors: tuple) -> tuple:
    """The Hessian of the real scalar `f(*args)` times `vectors` (one per argument), by forward-over-reverse: one
    reverse pass on dual numbers. Returns one block per argument: `sum_j H[i][j] @ vectors[j]`.

    >>> import numpy as np
    >>> hvp(lambda x: np.sum(x ** 3), (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
    (array([6., 0.]),)
    """
    args, vectors = _sequences("hvp", args, vectors, "vectors")
    if len(args) != len(vectors):
        raise ZygoteError(f"hvp: {len(vectors)} vectors for {len(args)} arguments")
    real_ints = arithmetic_ints(f, args, range(len(args)))  # (perturbed as the real numbers they are in arithmetic;
    moved = {k for k in real_ints if vectors[k] is not None}  # one with no vector stays an int: it may count a loop)
    args = tuple(float(a) if k in moved else a for k, a in enumerate(args))
    passes = Passes(args, f)
    tag = new_tag()
    # (make_dual copies each vector: an update of the argument in place updates the dual's tangent in place too; it
    # takes lists, tuples and dicts of arrays, and checks the shapes)
    duals = [make_dual(a, v, tag) for a, v in zip(passes.next(), vectors, strict=True)]
    try:
        y, back = inner_pullback(f, *duals)
        passes.settle(duals)
        passes.done()
        if getattr(strip(y), "shape", ()) != ():
            raise ZygoteError("hvp needs f to return a real scalar")
        grads = back(1.0)
    except ForwardModeError as e:  # (a NumPy function with no tangent rule): by reverse-over-reverse, as hessian
        err = ForwardModeError(f"hvp (forward-over-reverse): {e}{_user_frame(e)}")
        try:
            again = tuple(int(a) if k in moved else a for k, a in enumerate(passes.again()))  # (ints: as given)
            return _hvp_by_reverse_over_reverse(f, again, vectors)
        except ZygoteError as second:
            err.add_note(f"reverse-over-reverse, tried next, failed too: {type(second).__name__}: "
                         f"{str(second).splitlines()[0]}")
        raise err from e
    out = []
    for g, a in zip(grads, args, strict=True):
        t = None if g is None else tangent_of(g, tag)
        out.append(None if g is None else t if t is not None else tree_map(lambda v: 0.0 * v, a))
    return tuple(out)


def _hvp_by_reverse_over_reverse(f, args, vectors):
    """`hvp` as the gradient of the directional derivative `<grad f(x), v>` (nested reverse mode transforms the rules'
    backs too)."""
    def directional(*xs):
        return _inner(gradient(f, *xs), vectors)
    with transform_route_only():
        grads = gradient(directional, *args)
    return tuple(None if v is None else tree_map(lambda x: 0.0 * x, a) if g is None else g
                 for g, a, v in zip(grads, args, vectors, strict=True))


def _inner(g, v):
    """<g, v> of a gradient and a vector of the same structure (arrays, or dicts, lists and tuples of them), written
    for the outer level of reverse mode to differentiate."""
    if g is None or v is None:
        return 0.0
    if isinstance(g, dict):
        total = 0.0
        for k in g:
            total = total + _inner(g[k], v[k])
        return total
    if isinstance(g, (list, tuple)):
        total = 0.0
        for gi, vi in zip(g, v):
            total = total + _inner(gi, vi)
        return total
    return np.sum(g * v)


for _entry in (jvp, hvp):
    refused_inside_reverse_mode(_entry)

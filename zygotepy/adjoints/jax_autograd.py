"""JAX's functions that have no rule of ours (`jax.scipy.special.erf`, `jax.nn.relu6`, a function `jax.vmap` or
`jax.jit` made): differentiated by JAX's own `jax.vjp`. zygotepy does not transform JAX's code (it is written with
`try`, and JAX's primitives are no Python), so each was refused.

The rule lifts every argument a gradient may reach, one level into lists and tuples (`jnp.stack([a, b])`): a JAX array
of a floating or complex dtype, a float, a float NumPy array; the rest (ints, flags, shapes, keys, functions) are
constants to JAX. Each lifted argument gets JAX's cotangent in its own kind (a float for a float, a NumPy array for a
NumPy array). The result is JAX's: an array, or a tuple or list of arrays. Served: JAX's Python functions (their code
lies in JAX's package) and its function objects (`custom_jvp`, a jitted function), where no rule of ours, no NumPy twin
and no nondifferentiable mark comes first. A function that reads a float or an array it is not given (`jax.vmap(lambda
r: r * w)`, w captured) is refused: JAX would take the captured value for a constant, and its gradient would be lost.

Found by `registry.find_rule` (`registry.FALLBACKS`, `registry.SOURCE_FALLBACKS`); the rules it makes are kept here,
one per target. Importing this module never imports JAX."""
import os
import sys
import types

import numpy as np

from ..ast_adjoint.call_checks import call_site
from ..errors import ZygoteError
from . import registry

_MADE = {}  # target -> its rule (None: not served)
_LIFTED = object()  # where a lifted argument goes back in
_OBJECTS = ("custom_jvp", "custom_vjp", "PjitFunction")  # JAX's function objects (jax.nn's, jit's)


def fallback(target):
    """The `jax.vjp` rule of `target`, a function of JAX's, or None."""
    try:
        return _MADE[target]
    except KeyError:
        pass
    except TypeError:
        return None
    jax = sys.modules.get("jax")
    rule = _vjp_rule(target) if jax is not None and _served(jax, target) else None
    _MADE[target] = rule
    return rule


def _served(jax, target):
    if type(target) is types.FunctionType:
        return target.__code__.co_filename.startswith(os.path.dirname(jax.__file__) + os.sep)
    return (type(target).__module__ or "").split(".")[0] in ("jax", "jaxlib") and type(target).__name__ in _OBJECTS


def _liftable(a):
    jax = sys.modules["jax"]
    if isinstance(a, jax.Array):
        return a.dtype.kind in "fc"
    return type(a) is float or type(a) is complex or type(a) is np.ndarray and a.dtype.kind in "fc"


def _captured(fn, depth=0):
    """A value that may carry a gradient which `fn` reads but is not given (a closure's cell, a partial's argument, a
    default), through the functions JAX wrapped (`jax.vmap(lambda r: r * w)`): JAX would take it for a constant."""
    if depth > 6 or fn is None:
        return None
    if _liftable(fn) or type(fn) in (list, tuple) and any(_liftable(v) for v in fn):
        return fn
    inner = [getattr(fn, "__wrapped__", None), getattr(fn, "fun", None), getattr(fn, "func", None)]
    inner += [c.cell_contents for c in getattr(fn, "__closure__", None) or () if _filled(c)]
    inner += [*getattr(fn, "args", ()), *(getattr(fn, "keywords", None) or {}).values()] if hasattr(fn, "func") else []
    inner += list(getattr(fn, "__defaults__", None) or ())
    for v in inner:
        if v is not fn and (_liftable(v) or callable(v) or type(v) in (list, tuple)):
            found = _captured(v, depth + 1)
            if found is not None:
                return found
    return None


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _vjp_rule(fn):
    who = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)

    def rule(*args, **kwargs):
        jax = sys.modules["jax"]
        if _captured(fn) is not None:
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy differentiates {who} by jax.vjp, which would take a value it captures (a "
                              f"closure's, a partial's or a default) for a constant; pass that value as an argument")
        leaves, places = [], []

        def lift(a, where):
            if _liftable(a):
                leaves.append(a)
                places.append(where)
                return _LIFTED
            if type(a) in (list, tuple) and len(where) == 1:
                return type(a)(lift(b, (*where, i)) for i, b in enumerate(a))
            return a
        template = [lift(a, (k,)) for k, a in enumerate(args)]
        named = {k: lift(v, (k,)) for k, v in kwargs.items()}
        if not leaves:  # (`jax.vmap(g)`, `jax.random.normal(key, shape)`: nothing JAX could differentiate)
            return fn(*args, **kwargs), lambda dy: registry.keyword_cotangents((None,) * len(args), kwargs)

        def call(*xs):
            taken = iter(xs)

            def fill(a):
                if a is _LIFTED:
                    return next(taken)
                return type(a)(fill(b) for b in a) if type(a) in (list, tuple) else a
            return fn(*[fill(a) for a in template], **{k: fill(v) for k, v in named.items()})
        try:
            y, vjp = jax.vjp(call, *leaves)
        except (TypeError, ValueError) as e:
            y = fn(*args, **kwargs)
            if not any(_liftable(v) for v in jax.tree_util.tree_leaves(y)):  # (`x.__array_namespace__()`: no number)
                return y, lambda dy: registry.keyword_cotangents((None,) * len(args), kwargs)
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}{who} failed under jax.vjp, which differentiates "
                              f"JAX's functions that have no rule of zygotepy's: {e}") from None

        def back(dy):
            grads = vjp(_seed(jax, y, dy)) if dy is not None else (None,) * len(leaves)
            positional, by_name = [None] * len(args), {}
            for where, leaf, g in zip(places, leaves, grads):
                into = by_name if isinstance(where[0], str) else positional
                g = None if g is None else _like(leaf, g)
                if len(where) == 1:
                    into[where[0]] = g
                else:
                    held = args[where[0]] if isinstance(where[0], int) else kwargs[where[0]]
                    if (into.get(where[0]) if isinstance(into, dict) else into[where[0]]) is None:
                        into[where[0]] = [None] * len(held)
                    into[where[0]][where[1]] = g
            for k, a in (*enumerate(args), *kwargs.items()):  # (a tuple argument's cotangent is a tuple)
                into = by_name if isinstance(k, str) else positional
                if type(a) is tuple and (into.get(k) if isinstance(into, dict) else into[k]) is not None:
                    into[k] = tuple(into[k])
            return registry.keyword_cotangents(positional, kwargs, **by_name)
        return y, back
    return registry.keyword_rule(rule)


def _seed(jax, y, dy):
    """The cotangent of `y` JAX's vjp takes: `dy` where given, zeros where it is None (float0 for integer parts)."""
    if isinstance(y, (tuple, list)):
        parts = (None,) * len(y) if dy is None else tuple(dy)
        return type(y)(_seed(jax, o, d) for o, d in zip(y, parts, strict=True))
    if dy is not None:
        return jax.numpy.asarray(dy, dtype=y.dtype) if hasattr(y, "dtype") else dy
    if hasattr(y, "dtype") and y.dtype.kind not in "fc":
        return np.zeros(np.shape(y), dtype=jax.dtypes.float0)
    return jax.numpy.zeros_like(y)


def _like(leaf, g):
    """JAX's cotangent in the kind of the argument it belongs to."""
    if type(leaf) is float:
        return float(g)
    if type(leaf) is complex:
        return complex(g)
    if type(leaf) is np.ndarray:
        return np.asarray(g, dtype=leaf.dtype)
    return g


registry.FALLBACKS.append(fallback)
registry.SOURCE_FALLBACKS.append(fallback)

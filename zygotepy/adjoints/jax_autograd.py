"""JAX's functions that have no rule of ours (`jax.scipy.special.erf`, `jax.nn.relu6`, a function `jax.vmap` or
`jax.jit` made): differentiated by JAX's own `jax.vjp`. zygotepy does not transform JAX's code (it is written with
`try`, and JAX's primitives are no Python), so each was refused.

The rule lifts every leaf of the arguments a gradient may reach, each argument taken as JAX's pytree (lists, tuples,
dicts, nested: `jnp.stack([a, b])`, `jax.jit(loss)({"w": w})`): a JAX array of a floating or complex dtype, a float, a
float NumPy array; the rest (ints, flags, shapes, keys, functions) are constants to JAX. Each lifted leaf gets JAX's
cotangent in its own kind (a float for a float, a NumPy array for a NumPy array), in its argument's structure; complex
cotangents are conjugated on the way in and out (JAX's convention is the conjugate of zygotepy's). The result is JAX's:
an array, or a tuple, list or dict of arrays. Served: JAX's Python functions (their code lies in JAX's package) and its
function objects (`custom_jvp`, a jitted function), where no rule of ours, no NumPy twin and no nondifferentiable mark
comes first. A function that reads a float or an array it is not given (`jax.vmap(lambda r: r * w)`, w captured), or
is given a function that does (`lax.fori_loop(0, n, body, c)`, `lax.scan`, `lax.cond`), is refused: JAX would take the
captured value for a constant, and its gradient would be lost.

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


def _other_library(jax, a):
    """Is `a` an array of a library other than JAX and NumPy, of floats (a torch tensor given to `jnp.from_dlpack`)?"""
    t = type(a)
    return t is not np.ndarray and not isinstance(a, (jax.Array, np.generic)) and hasattr(a, "dtype") \
        and hasattr(a, "shape") and hasattr(a, "__dlpack__") and "float" in str(a.dtype)


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
        captured = _captured(fn) is not None or any(
            callable(v) and _captured(v) is not None for a in (*args, *kwargs.values())
            for v in jax.tree_util.tree_leaves(a))  # (`lax.fori_loop(0, n, body, c)`, body reading `w`)
        if captured:
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy differentiates {who} by jax.vjp, which would "
                              f"take a value that it or a function given to it captures (a closure's, a partial's or "
                              f"a default) for a constant; pass that value as an argument")
        # each argument as JAX's pytree (lists, tuples, dicts, nested): its floating leaves are lifted
        flat = [(k, *jax.tree_util.tree_flatten(a)) for k, a in (*enumerate(args), *kwargs.items())]
        leaves = [leaf for _, parts, _ in flat for leaf in parts if _liftable(leaf)]
        other = next((p for _, parts, _ in flat for p in parts if _other_library(jax, p)), None)
        if other is not None:  # (a torch tensor: JAX's vjp would take it for a constant, its gradient silently None)
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy differentiates {who} by jax.vjp, which cannot "
                              f"differentiate the {type(other).__module__}.{type(other).__name__} it was given; pass "
                              f"it a NumPy or JAX array")
        if _structural(fn) and not jax.config.jax_enable_x64 and any(_wide(leaf) for leaf in leaves):
            where = call_site()  # (`jax.tree_util.tree_map(f, params)`: called plainly, f gets the float64 leaves)
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy differentiates {who} by jax.vjp, which "
                              f"computes in float32 while jax_enable_x64 is off: the float64 NumPy values it was "
                              f"given would be rounded, its value and gradient unlike the plain call's; turn on "
                              f"jax.config.update('jax_enable_x64', True), or walk the tree with Python code")
        if not leaves:  # (`jax.vmap(g)`, `jax.random.normal(key, shape)`: nothing JAX could differentiate)
            return fn(*args, **kwargs), lambda dy: registry.keyword_cotangents((None,) * len(args), kwargs)

        def rebuilt(values):
            taken, out = iter(values), {}
            for k, parts, tree in flat:
                out[k] = jax.tree_util.tree_unflatten(tree, [next(taken) if _liftable(p) else p for p in parts])
            return out

        def call(*xs):
            full = rebuilt(xs)
            return fn(*(full[k] for k in range(len(args))), **{k: full[k] for k in kwargs})
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
            # JAX's vjp takes and gives complex cotangents conjugated against zygotepy's (docs/api.md, Conventions)
            grads = iter(vjp(_conj(_seed(jax, y, dy))) if dy is not None else (None,) * len(leaves))
            cotangents = {}
            for k, parts, tree in flat:
                got = [_like(p, next(grads)) if _liftable(p) else None for p in parts]
                cotangents[k] = None if all(g is None for g in got) else jax.tree_util.tree_unflatten(tree, got)
            return registry.keyword_cotangents([cotangents[k] for k in range(len(args))], kwargs,
                                               **{k: cotangents[k] for k in kwargs})
        return y, back
    return registry.keyword_rule(rule)


def _structural(fn):
    """Is `fn` one of JAX's tree functions, which leave the leaves as they are given (NumPy's stay NumPy's)?"""
    return getattr(fn, "__module__", "") in ("jax.tree_util", "jax._src.tree_util", "jax.tree", "jax._src.tree")


def _wide(leaf):
    return type(leaf) in (float, complex) or type(leaf) is np.ndarray and leaf.dtype in (np.float64, np.complex128)


def _conj(ct):
    """The conjugate of a cotangent (a tuple or list of them: each), JAX's convention from zygotepy's and back."""
    if isinstance(ct, (tuple, list)):
        return type(ct)(_conj(c) for c in ct)
    if isinstance(ct, dict):
        return type(ct)((k, _conj(c)) for k, c in ct.items())
    return ct.conj() if getattr(getattr(ct, "dtype", None), "kind", None) == "c" else ct


def _seed(jax, y, dy):
    """The cotangent of `y` JAX's vjp takes: `dy` where given, zeros where it is None (float0 for integer parts)."""
    if isinstance(y, (tuple, list)):
        parts = (None,) * len(y) if dy is None else tuple(dy)
        return type(y)(_seed(jax, o, d) for o, d in zip(y, parts, strict=True))
    if isinstance(y, dict):  # (`jax.tree_util.tree_map(f, {...})`: a cotangent per key, none for a missing one)
        return type(y)((k, _seed(jax, o, None if dy is None else dy.get(k))) for k, o in y.items())
    if y is None:  # (`tree_map(f, {"w": w, "b": None})`: None is an empty subtree to JAX)
        return None
    if dy is not None:
        return jax.numpy.asarray(dy, dtype=y.dtype) if hasattr(y, "dtype") else dy
    if hasattr(y, "dtype") and y.dtype.kind not in "fc":
        return np.zeros(np.shape(y), dtype=jax.dtypes.float0)
    return jax.numpy.zeros_like(y)


def _like(leaf, g):
    """JAX's cotangent (conjugated back: `_conj`) in the kind of the argument it belongs to."""
    if g is None:
        return None
    g = _conj(g)
    if type(leaf) is float:
        return float(g)
    if type(leaf) is complex:
        return complex(g)
    if type(leaf) is np.ndarray:
        return np.asarray(g, dtype=leaf.dtype)
    return g


registry.FALLBACKS.append(fallback)
registry.SOURCE_FALLBACKS.append(fallback)

"""Gradient checks users can run on their own functions and rules.

`check_grads(f, *args)` compares the pullback of `f` in one random direction with central finite differences of `f`
in float64. It is how every rule and transform in zygotepy's own test suite is checked.
"""
import copy
import types

import numpy as np

from .api import pullback
from .backends import is_foreign, namespace

__all__ = ["check_grads", "numerical_vjp"]


def _flatten(x, data=True, wide=False):
    """(float64 vector of the real degrees of freedom of x, rebuild(vector) -> value like x).

    With `data=False` the rebuilt value is a tangent: entries that are data (ints, bools, strings) become None. With
    `wide`, a NumPy array of a narrower floating type is rebuilt in float64 (complex128): the finite differences are
    taken in float64, whatever the argument's precision."""
    if isinstance(x, (bool, int)) or x is None or isinstance(x, str):  # ints are data here (counts, indices)
        return np.zeros(0), (lambda v: x) if data else (lambda v: None)
    if isinstance(x, (int, float)):
        return np.array([float(x)]), lambda v: float(v[0])
    if isinstance(x, complex):
        return np.array([x.real, x.imag]), lambda v: complex(v[0], v[1])
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        a = np.asarray(x)
        if a.dtype.kind == "c":
            flat = np.concatenate([a.real.ravel(), a.imag.ravel()]).astype(np.float64)
            n = a.size
            to = np.promote_types(a.dtype, np.complex128) if wide else a.dtype
            return flat, lambda v: (v[:n] + 1j * v[n:]).reshape(a.shape).astype(to)
        if a.dtype.kind != "f":
            return np.zeros(0), (lambda v: x) if data else (lambda v: None)
        to = np.promote_types(a.dtype, np.float64) if wide else a.dtype
        return a.astype(np.float64).ravel(), lambda v: v.reshape(a.shape).astype(to)
    if _is_foreign(x):  # a JAX, torch or array-API array of floats: perturbed as NumPy, rebuilt in its own library
        a = np.asarray(x)
        if a.dtype.kind != "f":
            return np.zeros(0), (lambda v: x) if data else (lambda v: None)
        xp, dtype = namespace(x), x.dtype
        return a.astype(np.float64).ravel(), lambda v: xp.asarray(v.reshape(a.shape), dtype=dtype)
    if isinstance(x, (list, tuple)) or isinstance(x, dict):
        items = list(x.values()) if isinstance(x, dict) else list(x)
        parts = [_flatten(i, data, wide) for i in items]
        sizes = np.cumsum([0] + [len(p[0]) for p in parts])

        def rebuild(v):
            vals = [p[1](v[sizes[k]:sizes[k + 1]]) for k, p in enumerate(parts)]
            if isinstance(x, dict):
                return dict(zip(x.keys(), vals, strict=True))
            return type(x)(vals) if type(x) in (list, tuple) else type(x)(*vals)
        return (np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)), rebuild
    if hasattr(x, "__dict__") and not isinstance(x, (type, types.FunctionType, types.ModuleType)):  # an object
        names = list(vars(x))
        flat, rebuild_fields = _flatten({k: getattr(x, k) for k in names}, data, wide)

        def rebuild_object(v):
            obj = copy.copy(x)
            for k, val in rebuild_fields(v).items():
                object.__setattr__(obj, k, val)
            return obj
        return flat, rebuild_object
    raise TypeError(f"check_grads cannot perturb a {type(x).__name__}")


def _is_foreign(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and is_foreign(x)


def _dot(g, v):
    """Real inner product Re<g, v> of a gradient with a direction of its argument's structure (None means zero)."""
    if g is None or v is None:
        return 0.0
    if isinstance(v, dict):
        return sum(_dot(g.get(k) if hasattr(g, "get") else None, x) for k, x in v.items())
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        if len(g) != len(v):
            raise AssertionError(f"gradient has {len(g)} entries, its argument {len(v)}")
        return sum(_dot(a, b) for a, b in zip(g, v, strict=True))
    if hasattr(v, "_fields"):  # a namedtuple: its gradient is a tuple or a structural gradient
        fields = g if not isinstance(g, dict) else [g.get(f) for f in v._fields]
        return sum(_dot(a, b) for a, b in zip(fields, v, strict=True))
    if hasattr(v, "__dict__") and not hasattr(v, "shape"):  # an object: its gradient is a structural gradient
        return sum(_dot(g.get(k), x) for k, x in vars(v).items())
    ga, va = np.asarray(g), np.asarray(v)
    if ga.shape != va.shape:
        raise AssertionError(f"gradient of shape {ga.shape} for an argument of shape {va.shape}")
    return float(np.real(np.sum(np.conj(ga) * va)))


def numerical_vjp(f, args, dy, direction, eps=1e-6):
    """<dy, (f(args + eps*v) - f(args - eps*v)) / (2 eps)>, by central differences."""
    flats = [_flatten(a, wide=True) for a in args]

    def at(sign):
        moved = [p[1](p[0] + sign * eps * d) for p, d in zip(flats, direction, strict=True)]
        return f(*moved)
    yp, ym = at(1), at(-1)
    fp, _ = _flatten(yp)
    fm, _ = _flatten(ym)
    dyf, _ = _flatten(dy)
    return float(dyf @ (fp - fm)) / (2 * eps)


def check_grads(f, *args, rtol=1e-5, atol=1e-7, eps=1e-6, seed=0, dy=None):
    """Check the gradient of `f` at `args` against central finite differences in one random direction.

    Raises AssertionError naming the function, and the analytic and numeric directional derivatives, on mismatch.
    Returns the analytic cotangents.

    >>> check_grads(lambda x: x ** 3, 2.0)
    (12.0,)
    """
    rng = np.random.default_rng(seed)
    y, back = pullback(f, *copy.deepcopy(args))  # f may update its arguments in place: keep ours for the FD
    yflat, rebuild_y = _flatten(y, data=False)  # data outputs (ints, strings) get a None cotangent
    dy = rebuild_y(rng.standard_normal(len(yflat))) if dy is None else dy
    grads = back(dy)
    direction = [rng.standard_normal(len(_flatten(a)[0])) for a in args]
    analytic = 0.0
    for a, g, d in zip(args, grads, direction, strict=True):
        if g is not None and len(d):
            analytic += _dot(g, _flatten(a, data=False)[1](d))
    numeric = numerical_vjp(f, args, dy, direction, eps)
    if not np.isclose(analytic, numeric, rtol=rtol, atol=atol * max(1.0, abs(numeric))):
        name = getattr(f, "__qualname__", repr(f))
        raise AssertionError(f"gradient check failed for {name}: analytic {analytic!r} vs numeric {numeric!r} "
                             f"(gradients {grads!r})")
    return grads

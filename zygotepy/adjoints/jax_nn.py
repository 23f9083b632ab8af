"""Rules for JAX's activations, `jax.nn.relu`, `sigmoid`, `softmax`, `log_softmax`, `gelu`, `silu` (`swish`),
`softplus`, `log_sigmoid`, `leaky_relu`, `elu`, `logsumexp` (also `jax.scipy.special.logsumexp`, the same object);
and `jax.lax.stop_gradient`, data (no gradient), as `zygotepy.dropgrad` is.

Why rules: these are `jax.custom_jvp` objects or jitted Python functions whose source (try/except in JAX's dtype
helpers) the transform cannot read, so a user function calling them raised UnsupportedSyntax or MissingAdjoint. They
have no NumPy twin (NumPy has no `relu`), so the registry's twin resolution does not reach them either.

Invariants:
- The forward is JAX's own function (exact values, JAX's dtype promotion); the pullbacks compute with `jax.numpy` on
  the arrays the forward saw, so a cotangent is a JAX array of its argument's dtype (a NumPy argument gets a NumPy
  cotangent, a Python number a number: a gradient never changes library).
- Derivatives at kinks follow JAX's own: relu'(0) = 0 (its custom_jvp), leaky_relu'(0) = 1 (`x >= 0` branch),
  elu'(0) = alpha.
- Parameters that can carry a gradient (leaky_relu's `negative_slope`, elu's `alpha`, logsumexp's `b`) get one, never a
  silent None; options JAX takes that the rules do not cover (`where=`, `return_sign=True`) raise a ZygoteError.
- Importing this module never imports JAX: `register()` runs when JAX has been imported (`registry.on_import`: now
  if JAX is already imported, else at the first rule lookup after it is).
"""
import math
import sys

import numpy as np

from ..backends import unbroadcast
from ..errors import ZygoteError
from . import registry

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_registered = [False]


def _jax():
    import jax
    return jax, jax.numpy


def _like(x, g):
    """The cotangent `g` (a JAX array) in the form of its argument `x`: same library, same dtype."""
    if g is None:
        return None
    jax, jnp = _jax()
    if isinstance(x, jax.Array):
        return g.astype(x.dtype) if g.dtype != x.dtype else g
    if isinstance(x, np.ndarray):
        return np.asarray(g, dtype=x.dtype if x.dtype.kind in "fc" else None)
    return g  # a Python number's: a 0-d JAX array, as the namespace-generic rules give (and jax.jit can trace)


def _array(x):
    """x as a JAX array (x itself when it is one: no call, so nested gradients differentiate through this code)."""
    jax, jnp = _jax()
    return x if isinstance(x, jax.Array) else jnp.asarray(x)


def _nones(n):
    return (None,) * n


def _elementwise(fn, derivative, name):
    """The rule of a one-argument activation `fn`: `dx = dy * derivative(x, y)`."""
    def rule(x):
        y = fn(x)

        def back(dy):
            if dy is None:
                return (None,)
            return (_like(x, dy * derivative(_array(x), y)),)
        return y, back
    rule.__qualname__ = f"jax_nn_{name}"
    return rule


def _relu_d(x, y):
    return (x > 0).astype(y.dtype)


def _sigmoid_d(x, y):
    return y * (1 - y)


def _silu_d(x, y):
    s = _jax()[0].nn.sigmoid(x)
    return s * (1 + x * (1 - s))


def _softplus_d(x, y):
    return _jax()[0].nn.sigmoid(x)


def _log_sigmoid_d(x, y):
    return _jax()[0].nn.sigmoid(-x)


def _gelu_rule(fn):
    """gelu(x, approximate=True): the tanh form `x/2 (1 + tanh(c (x + 0.044715 x^3)))`; approximate=False:
    `x Phi(x)`, whose derivative is `Phi(x) + x phi(x)`."""
    def rule(x, *rest, **kw):
        approximate = kw.pop("approximate", rest[0] if rest else True)
        if kw:
            raise ZygoteError(f"jax.nn.gelu with keywords {sorted(kw)} has no rule")
        y = fn(x, approximate)

        def back(dy):
            if dy is None:
                return _nones(1 + len(rest))
            jax, jnp = _jax()
            a = _array(x)
            if approximate:
                t = jnp.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a ** 3))
                d = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * a * a)
            else:
                d = 0.5 * (1 + jax.lax.erf(a / math.sqrt(2.0))) + a * jnp.exp(-0.5 * a * a) * _INV_SQRT_2PI
            return (_like(x, dy * d.astype(y.dtype)), *_nones(len(rest)))
        return y, back
    rule.__qualname__ = "jax_nn_gelu"
    return rule


def _no_where(name, where):
    if where is not None:
        raise ZygoteError(f"jax.nn.{name} with where= has no rule (mask the input instead)")


def _softmax_rule(fn, log):
    """softmax: `dx = y (dy - sum(dy y))`; log_softmax: `dx = dy - exp(y) sum(dy)`, sums over `axis`, kept."""
    name = "log_softmax" if log else "softmax"

    def rule(x, *rest, **kw):
        args = dict(zip(("axis", "where"), rest))
        args.update(kw)
        axis = args.pop("axis", -1)
        _no_where(name, args.pop("where", None))
        if args:
            raise ZygoteError(f"jax.nn.{name} with keywords {sorted(args)} has no rule")
        y = fn(x, axis=axis)

        def back(dy):
            if dy is None:
                return _nones(1 + len(rest))
            jnp = _jax()[1]
            if log:
                dx = dy - jnp.exp(y) * jnp.sum(dy, axis=axis, keepdims=True)
            else:
                dx = y * (dy - jnp.sum(dy * y, axis=axis, keepdims=True))
            return (_like(x, dx), *_nones(len(rest)))
        return y, back
    rule.__qualname__ = f"jax_nn_{name}"
    return rule


def _kept(t, ndim, axis):
    """A reduction's result `t` with the reduced axes put back (size 1), to broadcast against its input."""
    jnp = _jax()[1]
    if axis is None:
        return jnp.reshape(t, (1,) * ndim)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)  # (np.int64: `np.argmax(x.shape)`)
    return jnp.expand_dims(t, tuple(a % ndim for a in axes))


def _logsumexp_rule(fn):
    """logsumexp(a, axis, b, keepdims): `da = dy b exp(a - y)`, `db = dy exp(a - y)` (a and b broadcast together);
    keyword-aware, so that `b=` passed by keyword gets its cotangent too."""
    names = ("axis", "b", "keepdims", "return_sign", "where")

    def rule(a, *rest, **kw):
        args = {**dict(zip(names, rest)), **kw}
        axis, b, keepdims = args.pop("axis", None), args.pop("b", None), args.pop("keepdims", False)
        if args.pop("return_sign", False):
            raise ZygoteError("jax.nn.logsumexp with return_sign=True has no rule")
        _no_where("logsumexp", args.pop("where", None))
        if args:
            raise ZygoteError(f"jax.nn.logsumexp with keywords {sorted(args)} has no rule")
        y = fn(a, axis=axis, b=b, keepdims=keepdims)

        def back(dy):
            grads = [None] * (1 + len(rest))
            db = None
            if dy is not None:
                jnp = _jax()[1]
                aa = _array(a)
                ndim = max(aa.ndim, jnp.ndim(b) if b is not None else 0)
                ye, dye = (y, dy) if keepdims else (_kept(y, ndim, axis), _kept(dy, ndim, axis))
                e = jnp.exp(aa - ye)
                grads[0] = _like(a, unbroadcast(dye * e * (1 if b is None else b), a))
                if b is not None:
                    db = _like(b, unbroadcast(dye * e, b))
                    if len(rest) > 1:
                        grads[2] = db
            return registry.keyword_cotangents(grads, kw, b=db)
        return y, back
    rule.__qualname__ = "jax_nn_logsumexp"
    return registry.keyword_rule(rule)


def _param_rule(fn, name, param, default, dx_of, dp_of):
    """An activation with one parameter that may carry a gradient (leaky_relu's negative_slope, elu's alpha)."""
    def rule(x, *rest, **kw):
        p = kw.pop(param, rest[0] if rest else default)
        if kw or len(rest) > 1:
            raise ZygoteError(f"jax.nn.{name} with arguments beyond ({param}) has no rule")
        y = fn(x, p)

        def back(dy):
            if dy is None:
                return _nones(1 + len(rest))
            a = _array(x)
            dx = _like(x, dy * dx_of(a, p).astype(y.dtype))
            return (dx, *((_like(p, unbroadcast(dy * dp_of(a), p)),) if rest else ()))
        return y, back
    rule.__qualname__ = f"jax_nn_{name}"
    return rule


def _leaky_dx(x, slope):
    jnp = _jax()[1]
    return jnp.where(x >= 0, 1.0, slope * jnp.ones_like(x))


def _leaky_dp(x):
    jnp = _jax()[1]
    return jnp.where(x >= 0, 0.0, x)


def _elu_dx(x, alpha):
    jnp = _jax()[1]
    return jnp.where(x > 0, 1.0, alpha * jnp.exp(jnp.where(x > 0, 0.0, x)))


def _elu_dp(x):
    jnp = _jax()[1]
    return jnp.where(x > 0, 0.0, jnp.expm1(jnp.where(x > 0, 0.0, x)))


def register():
    """Register the rules on JAX's function objects (once; a user's later @adjoint for one of them wins)."""
    if _registered[0]:
        return
    _registered[0] = True
    nn = sys.modules["jax"].nn
    for name, derivative in (("relu", _relu_d), ("sigmoid", _sigmoid_d), ("silu", _silu_d),
                             ("softplus", _softplus_d), ("log_sigmoid", _log_sigmoid_d)):
        fn = getattr(nn, name)
        registry.adjoint(fn)(_elementwise(fn, derivative, name))
    registry.adjoint(nn.gelu)(_gelu_rule(nn.gelu))
    registry.adjoint(nn.softmax)(_softmax_rule(nn.softmax, False))
    registry.adjoint(nn.log_softmax)(_softmax_rule(nn.log_softmax, True))
    registry.adjoint(nn.logsumexp)(_logsumexp_rule(nn.logsumexp))
    registry.adjoint(nn.leaky_relu)(_param_rule(nn.leaky_relu, "leaky_relu", "negative_slope", 0.01, _leaky_dx,
                                                _leaky_dp))
    registry.adjoint(nn.elu)(_param_rule(nn.elu, "elu", "alpha", 1.0, _elu_dx, _elu_dp))
    if nn.swish is not nn.silu:  # (one object in the JAX versions seen; a rule of its own otherwise)
        registry.adjoint(nn.swish)(_elementwise(nn.swish, _silu_d, "swish"))
    # `jax.lax.stop_gradient(x)`: its value, with no gradient (zygotepy.dropgrad's meaning; its source has a `try`)
    registry.nondifferentiable(sys.modules["jax"].lax.stop_gradient)


registry.on_import("jax", register)  # now if jax is imported, else at the first rule lookup after

"""Array constructors whose values are differentiable in their arguments, and reparameterized random draws.

- `np.full(shape, c)`, `np.full_like(a, c)`: every entry is `c`, so `dc` is the sum of `dy` (reduced to c's shape).
- `np.linspace(start, stop, num)`: entry i is `start + t_i (stop - start)` with `t_i = i / (num - 1)` (or `i / num`
  with `endpoint=False`); `np.arange(start, stop, step)`: entry i is `start + i step`. The number of entries is
  piecewise constant in the arguments, so `stop` of arange gets no gradient.
- Random draws of location-scale families (`rng.normal(loc, scale)`, `rng.uniform(low, high)`, laplace, logistic,
  gumbel, exponential, lognormal, rayleigh), for `np.random.Generator`, `np.random.RandomState` and the module-level
  `np.random.normal(...)` (a method of NumPy's global RandomState): the pathwise (reparameterization) gradient at the
  drawn value, `y = loc + scale * z` with `z = (y - loc) / scale` recovered from the draw. The draw itself runs once, as
  written, so the generator's state advances exactly as in a plain call. A scale of zero hides z: its gradient raises.

Only positional arguments carry gradients here; keyword arguments are constants (see dispatch.py).
"""
import random

import numpy as np

from ...ast_adjoint.call_checks import call_site
from ...ast_adjoint.dispatch import differentiable
from ...backends import is_foreign, namespace, on, unbroadcast
from ...errors import ZygoteError
from ...structgrad import NoDerivative
from ..registry import adjoint, keyword_cotangents, keyword_rule
from .common import arrayed


def _floating(x):
    """Can x carry a gradient (a Python float/complex, a float array, a list of floats)?"""
    if isinstance(x, (float, complex)):
        return True
    if isinstance(x, (list, tuple)):
        return any(_floating(v) for v in x)
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    return kind in ("f", "c")


def _cotangent(g, like):
    """`g` (already summed over the broadcast axes where needed) as the cotangent of the argument `like`."""
    if g is None or not _floating(like):
        return None
    if isinstance(like, (list, tuple)):
        g = unbroadcast(np.asarray(g), np.asarray(like, dtype=float))
        return type(like)(g.tolist()) if np.ndim(g) else g
    return unbroadcast(g, like)


def _real_out(y):
    return getattr(getattr(y, "dtype", None), "kind", "f") in "fc"


# --- filled arrays ----------------------------------------------------------------------------------------------------
@adjoint(np.full)
def full(shape, fill_value, *args, **kwargs):
    y = np.full(shape, fill_value, *args, **kwargs)

    def back(dy):
        if dy is None or not _real_out(y):
            return (None, None, *(None for _ in args))
        return (None, _cotangent(dy, fill_value), *(None for _ in args))
    return y, back


@adjoint(np.full_like)
def full_like(a, fill_value, *args, **kwargs):
    y = np.full_like(a, fill_value, *args, **kwargs)

    def back(dy):  # the prototype `a` lends only its shape and dtype
        if dy is None or not _real_out(y):
            return (None, None, *(None for _ in args))
        return (None, _cotangent(dy, fill_value), *(None for _ in args))
    return y, back


# --- evenly spaced values ---------------------------------------------------------------------------------------------
_LINSPACE = {"num": 50, "endpoint": True, "retstep": False, "dtype": None, "axis": 0}


@adjoint(np.linspace)
def linspace(start, stop, *args, **kwargs):
    out = np.linspace(start, stop, *args, **kwargs)
    p = {**_LINSPACE, **dict(zip(_LINSPACE, args)), **kwargs}
    num, retstep, axis = p["num"], p["retstep"], p["axis"]
    y = out[0] if retstep else out
    div = (num - 1) if p["endpoint"] else num
    t = np.arange(num, dtype=float) / div if div > 0 else np.zeros(num)
    rest = (None,) * len(args)

    def back(dy):
        if dy is None or not _real_out(y):
            return (None, None, *rest)
        dy_y, dstep = (dy if retstep else (dy, None))
        dstart = dstop = None
        if dy_y is not None:
            dy_y = arrayed(dy_y)
            ax = axis % dy_y.ndim
            shape = [1] * dy_y.ndim
            shape[ax] = num
            tt = t.reshape(shape)
            dstart = np.sum(dy_y * (1 - tt), axis=ax)
            dstop = np.sum(dy_y * tt, axis=ax)
        if dstep is not None and div > 0:  # step = (stop - start) / div
            dstep = arrayed(dstep) / div
            dstart = -dstep if dstart is None else dstart - dstep
            dstop = dstep if dstop is None else dstop + dstep
        return (_cotangent(dstart, start), _cotangent(dstop, stop), *rest)
    return out, back


@adjoint(np.arange)
def arange(*args, **kwargs):
    y = np.arange(*args, **kwargs)

    def back(dy):
        grads = [None] * len(args)
        if dy is None or not _real_out(y) or len(args) < 2:  # arange(stop): 0, 1, 2, ... whatever stop is
            return tuple(grads)
        dy = arrayed(dy)
        grads[0] = _cotangent(np.sum(dy), args[0])
        if len(args) >= 3 and args[2] is not None:
            grads[2] = _cotangent(np.sum(dy * np.arange(dy.shape[0])), args[2])
        return tuple(grads)
    return y, back


# --- the same functions of other array libraries (jnp.linspace, torch.full, xps.arange): run as written, the cotangents
# computed by the NumPy rule on NumPy copies and returned in the argument's library
def _numpy_copy(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_numpy_copy(v) for v in x)
    if x is None or isinstance(x, (int, float, complex, np.ndarray, np.generic)):
        return x
    return np.asarray(x.detach().cpu() if hasattr(x, "detach") else x)


def _in_library_of(g, x):
    if g is None or isinstance(x, (int, float, complex, list, tuple)):
        return g
    xp = namespace(x)
    try:
        return xp.asarray(g, dtype=x.dtype, **on(x))
    except Exception:  # (a library that takes no NumPy dtype objects or arrays: through a list)
        return xp.asarray(np.asarray(g).tolist(), dtype=x.dtype, **on(x))


def serving_other_libraries(numpy_rule, accepts=lambda args, kwargs: True):
    """For `rule.__zygote_foreign__` (see registry._numpy_only): the rules of a foreign library's twins of the NumPy
    function of `numpy_rule`. `accepts(args, kwargs)`: may NumPy's rule read the call's arguments (the same
    parameters as NumPy's function)? A call it refuses raises where a gradient would flow through it."""
    def factory(target):
        def rule(*args, **kwargs):
            y = target(*args, **kwargs)
            if not any(differentiable(a) for a in args):
                return y, lambda dy: (None,) * len(args)
            if not accepts(args, kwargs):
                def refuse(dy):
                    if dy is None:
                        return (None,) * len(args)
                    raise ZygoteError(f"{getattr(target, '__module__', '')}.{target.__name__}: zygotepy "
                                      f"differentiates it only with the arguments of np.{numpy_rule.__name__}")
                return y, refuse
            native = _IN_LIBRARY.get(numpy_rule.__name__)
            back = native and native(y, args, kwargs)
            if back is not None:
                return y, back
            plain = {k: v for k, v in kwargs.items() if k not in ("dtype", "device", "requires_grad")}
            _, numpy_back = numpy_rule(*_numpy_copy(args), **plain)

            def back(dy):
                grads = numpy_back(None if dy is None else _numpy_copy(dy))
                return tuple(_in_library_of(g, a) for g, a in zip(grads, args, strict=True))
            return y, back
        rule.__qualname__ = f"{numpy_rule.__name__}_of_{getattr(target, '__module__', '')}"
        return rule
    return factory


def _carries(x):
    """Can x carry a gradient: `_floating`, or an array of another library with a floating or complex dtype (whose
    dtype objects, torch's and JAX's, have no NumPy `kind`)."""
    return _floating(x) or is_foreign(x) and any(k in str(getattr(x, "dtype", "")) for k in ("float", "complex"))


def _filled_back(y, args, kwargs):
    """full(shape, c) and full_like(a, c) of another library: `dc` is the sum of `dy`, computed where `dy` lives."""
    def back(dy):
        grads = [None] * len(args)
        if dy is not None and len(args) > 1 and _carries(args[1]) and _real_out(y):
            grads[1] = unbroadcast(dy, args[1])
        return tuple(grads)
    return back


def _spaced_back(y, args, kwargs):
    """linspace(start, stop, num) of another library, one-dimensional, with no step returned: the cotangents computed
    where `dy` lives (a device refuses a copy to NumPy); other forms (jnp's positional endpoint, retstep, an axis) go
    through NumPy's rule."""
    if len(args) > 3 or set(kwargs) - {"num", "steps", "endpoint", "dtype", "device", "requires_grad"} \
            or getattr(y, "ndim", None) != 1 or not _real_out(y):
        return None
    n = y.shape[0]
    div = n - 1 if kwargs.get("endpoint", True) else n

    def back(dy):
        grads = [None] * len(args)
        if dy is None or div <= 0:
            return tuple(grads)
        xp = namespace(dy)
        t = xp.arange(n, dtype=dy.dtype, **on(dy)) / div
        grads[0] = unbroadcast(xp.sum(dy * (1 - t)), args[0]) if _carries(args[0]) else None
        grads[1] = unbroadcast(xp.sum(dy * t), args[1]) if _carries(args[1]) else None
        return tuple(grads)
    return back


def _ranged_back(y, args, kwargs):
    """arange(start, stop, step) of another library: entry i is start + i step, computed where `dy` lives."""
    def back(dy):
        grads = [None] * len(args)
        if dy is None or len(args) < 2 or not _real_out(y):
            return tuple(grads)
        xp = namespace(dy)
        grads[0] = unbroadcast(xp.sum(dy), args[0]) if _carries(args[0]) else None
        if len(args) >= 3 and _carries(args[2]):
            grads[2] = unbroadcast(xp.sum(dy * xp.arange(dy.shape[0], dtype=dy.dtype, **on(dy))), args[2])
        return tuple(grads)
    return back


_IN_LIBRARY = {"full": _filled_back, "full_like": _filled_back, "linspace": _spaced_back, "arange": _ranged_back}
for _rule in (full, full_like, linspace, arange):
    _rule.__zygote_foreign__ = serving_other_libraries(_rule)


# --- reparameterized random draws ------------------------------------------------------------------------------------
def _draw(name, defaults, grads):
    """The rule of `Generator.<name>(self, *params, size)`: `grads(dy, y, params, need)` gives the parameters'
    cotangents (before reduction to their shapes)."""
    def rule(gen, *args, **kwargs):
        y = getattr(gen, name)(*args, **kwargs)
        where = call_site() if name == "gamma" and args and _floating(args[0]) else None  # (for its NoDerivative)
        params = [*args[:len(defaults)], *defaults[len(args):]]
        for k, p in enumerate(params):  # a parameter given by keyword is a constant, but its value shapes the draw
            params[k] = kwargs.get(_NAMES[name][k], p)

        def back(dy, need=None):
            if dy is None or not any(_floating(a) for a in args[:len(defaults)]):
                return (None,) * (len(args) + 1)
            wanted = [k < len(args) and _floating(args[k]) and (need is None or need[k + 1])
                      for k in range(len(defaults))]
            ps = [np.asarray(p, dtype=float) for p in params]
            gs = grads(arrayed(dy), np.asarray(y, dtype=float), ps, wanted)
            if gs and type(gs[0]) is NoDerivative and where:
                gs[0].message = f"{where}: {gs[0].message}"
            return (None, *(_cotangent(gs[k], args[k]) if k < len(gs) else None for k in range(len(args))))
        return y, back
    rule.__qualname__ = name
    return rule


def _standardized(y, shift, scale, what):
    """z = (y - shift) / scale, refusing a zero scale (the draw then does not reveal z)."""
    if np.any(scale == 0):
        raise ZygoteError(f"the gradient of a random draw with respect to its {what} at {what} 0 is not defined by "
                          f"the draw (it does not reveal the standard variate); use a nonzero {what}")
    return (y - shift) / scale


def _location_scale(dy, y, ps, wanted):
    loc, scale = ps
    dloc = dy if wanted[0] else None
    dscale = dy * _standardized(y, loc, scale, "scale") if wanted[1] else None
    return dloc, dscale


def _uniform(dy, y, ps, wanted):
    low, high = ps
    u = _standardized(y, low, high - low, "width high - low")
    return (dy * (1 - u) if wanted[0] else None), (dy * u if wanted[1] else None)


def _scaled(dy, y, ps, wanted):
    (scale,) = ps
    return (dy * _standardized(y, 0.0, scale, "scale") if wanted[0] else None,)


def _lognormal(dy, y, ps, wanted):
    mean, sigma = ps
    dmean = dy * y
    dsigma = dmean * _standardized(np.log(y), mean, sigma, "sigma") if wanted[1] else None
    return (dmean if wanted[0] else None), dsigma


def _gamma(dy, y, ps, wanted):
    """gamma(shape, scale) is scale * gamma(shape, 1): the scale's pathwise gradient is y / scale. The shape's is an
    implicit one (the derivative of the gamma quantile function), not supported: a `NoDerivative`, refused where a
    gradient is asked of it (a constant shape, `rng.gamma(2.0, s)`, runs)."""
    dshape = NoDerivative("zygotepy cannot differentiate a gamma draw with respect to its shape parameter (only its "
                          "scale), and a gradient reaching the shape was asked for; use rng.gamma(k, 1.0) * scale "
                          "with k a constant, or an implicit-reparameterization rule") if wanted[0] else None
    return dshape, (dy * _standardized(y, 0.0, ps[1], "scale") if wanted[1] else None)


_NAMES = {"gamma": ("shape", "scale"), "normal": ("loc", "scale"), "laplace": ("loc", "scale"), "logistic": ("loc", "scale"),
          "gumbel": ("loc", "scale"), "uniform": ("low", "high"), "exponential": ("scale",), "rayleigh": ("scale",),
          "lognormal": ("mean", "sigma")}
_DRAWS = {"gamma": ((None, 1.0), _gamma), "normal": ((0.0, 1.0), _location_scale), "laplace": ((0.0, 1.0), _location_scale),
          "logistic": ((0.0, 1.0), _location_scale), "gumbel": ((0.0, 1.0), _location_scale),
          "uniform": ((0.0, 1.0), _uniform), "exponential": ((1.0,), _scaled), "rayleigh": ((1.0,), _scaled),
          "lognormal": ((0.0, 1.0), _lognormal)}

for _cls in (np.random.Generator, np.random.RandomState):
    for _name, (_defaults, _grads) in _DRAWS.items():
        adjoint(getattr(_cls, _name), need=True)(_draw(_name, _defaults, _grads))


# --- draws that pick entries of a float array: rng.choice(a, ...), rng.permutation(a) ----------------------------------
# The entries picked are found by running the same draw on their positions (range(n)) from the same generator state,
# then the state is restored and the draw runs as written; the picked values must equal a's entries at those positions
# (checked), so the cotangent scatters back to them (repeated picks add up). A probability vector `p` gets no gradient
# (a draw is not differentiable in its probabilities); where the call site says p carries one, the pullback raises.
def _state(gen):
    return gen.bit_generator.state if isinstance(gen, np.random.Generator) else gen.get_state()


def _set_state(gen, state):
    if isinstance(gen, np.random.Generator):
        gen.bit_generator.state = state
    else:
        gen.set_state(state)


def _picking(name, p_at):
    def rule(gen, a, *args, **kwargs):
        method = getattr(gen, name)
        if isinstance(a, (int, np.integer)) or not _floating(a):  # positions or data drawn: no cotangent, `p=` too
            y = method(a, *args, **kwargs)
            return y, lambda dy, need=None: keyword_cotangents((None,) * (len(args) + 2), kwargs, **dict.fromkeys(kwargs))
        a_arr = np.asarray(a)
        axis = kwargs.get("axis", 0)
        state = _state(gen)
        index = method(a_arr.shape[axis], *args, **{k: v for k, v in kwargs.items() if k != "axis"})
        _set_state(gen, state)
        y = method(a, *args, **kwargs)
        if not np.array_equal(np.asarray(y), np.take(a_arr, index, axis=axis), equal_nan=True):
            raise ZygoteError(f"{type(gen).__name__}.{name}: zygotepy could not tell which entries the draw picked; "
                              f"draw the positions instead (i = rng.{name}(len(a)); a[i])")

        def back(dy, need=None):
            p_needed = need is not None and len(need) > p_at and need[p_at]
            if dy is not None and p_needed and _floating(args[p_at - 2] if p_at - 2 < len(args) else None):
                raise ZygoteError(f"{type(gen).__name__}.{name}: a draw is not differentiable in its probabilities p "
                                  f"(use a score-function estimator, or a relaxation such as Gumbel-softmax)")
            if dy is None:
                return keyword_cotangents((None,) * (len(args) + 2), kwargs)
            dy = arrayed(dy)
            moved = np.zeros(np.moveaxis(a_arr, axis, 0).shape, dtype=np.result_type(dy.dtype, float))
            k = np.ndim(index)  # the picks' axes stand where a's axis stood
            np.add.at(moved, index, np.moveaxis(dy, list(range(axis, axis + k)), list(range(k))))
            # (a `p=` that carries a gradient is left out: an error where it flows, as for any keyword left out)
            return keyword_cotangents((None, _cotangent(np.moveaxis(moved, 0, axis), a), *(None for _ in args)),
                                      kwargs, **{k: None for k in kwargs if k != "p"})
        return y, back
    rule.__qualname__ = name
    return keyword_rule(rule)


for _cls in (np.random.Generator, np.random.RandomState):
    # choice(a, size, replace, p): p is parameter 4, counting the generator
    adjoint(_cls.choice, need=True)(_picking("choice", 4))
    adjoint(_cls.permutation, need=True)(_picking("permutation", 99))


@adjoint(random.Random.gauss, need=True, optional=True)
def _gauss(gen, mu=0.0, sigma=1.0):
    """`random.gauss(mu, sigma)` (and a `random.Random`'s): mu + sigma * z, differentiated pathwise as NumPy's normal
    draws are (its Python keeps a second variate on the generator, which the lowering took for an update)."""
    y = gen.gauss(mu, sigma)

    def back(dy, need=None):
        if dy is None:
            return None, None, None
        return None, dy, dy * _standardized(y, mu, sigma, "sigma") if need is None or need[2] else None
    return y, back

"""Set functions of NumPy: `np.unique` (all its return_* forms and `axis`) and NumPy 2's `unique_values`,
`unique_counts`, `unique_inverse`, `unique_all`.

Where the entries of x are distinct, unique(x) is a sort: each unique value is one entry of x and takes its
cotangent (indices, inverse and counts are integer data). Where several entries are equal (a tie), unique(x) is not
differentiable: moving one of them by any eps, up or down, splits the group and adds a unique value, so no one-sided
difference converges. The pullback then raises a ZygoteError when a tied value receives a nonzero cotangent (a tied
value that only feeds comparisons or counts gets none, and is fine).
"""
import numpy as np

from ...backends import asarray, namespace, to_numpy
from ...errors import ZygoteError
from ...forward.dual import dispatch as dual_call
from ..registry import adjoint, keyword_cotangents, keyword_rule
from .common import arrayed, real_floating
from .fills import serving_other_libraries


_UNIQUE = ("return_index", "return_inverse", "return_counts", "axis")


def _values_cotangent(dy, tupled):
    """The cotangent of the unique values, from the cotangent of the whole result."""
    if dy is None or not tupled:
        return dy
    if isinstance(dy, tuple):
        return dy[0]
    if isinstance(dy, dict):
        return dy.get("values")
    return getattr(dy, "values", None)


def _unique_back(x, dvalues, axis, equal_nan, name):
    """The cotangent of x from that of its unique values (see the module docstring)."""
    x_arr = np.asarray(x)
    _, first, counts = np.unique(x_arr, return_index=True, return_counts=True, axis=axis, equal_nan=equal_nan)
    dvalues = np.asarray(dvalues)
    if axis is None:
        tied = counts > 1
        if np.any(tied) and np.any(dvalues[tied] != 0):
            raise _tie_error(name)
        dx = np.zeros(x_arr.size, dtype=np.result_type(dvalues.dtype, np.float64))
        dx[first] = dvalues
        return dx.reshape(x_arr.shape)
    moved = np.moveaxis(dvalues, axis, 0)
    if np.any((counts > 1) & np.any(moved.reshape(len(counts), -1) != 0, axis=1)):
        raise _tie_error(name)
    dx = np.zeros(np.moveaxis(x_arr, axis, 0).shape, dtype=np.result_type(dvalues.dtype, np.float64))
    dx[first] = moved
    return np.moveaxis(dx, 0, axis)


def _tie_error(name):
    return ZygoteError(f"np.{name}(x): x has equal entries (ties) whose unique value receives a gradient, and unique "
                       f"is not differentiable there (moving one of them splits the group). Use np.sort, or "
                       f"dropgrad(x) where the values are data.")


@adjoint(np.unique)
def unique(x, *args, **kwargs):
    y = np.unique(x, *args, **kwargs)
    p = {**dict(zip(_UNIQUE, args)), **kwargs}
    tupled = any(p.get(k) for k in _UNIQUE[:3])
    rest = (None,) * len(args)

    def back(dy):
        dvalues = _values_cotangent(dy, tupled)
        if dvalues is None or not real_floating(x):
            return (None, *rest)
        return (_unique_back(x, dvalues, p.get("axis"), p.get("equal_nan", True), "unique"), *rest)
    return y, back


def _unique_2(fn, tupled):
    """NumPy 2's unique_values (an array) and unique_counts/_inverse/_all (named tuples whose first field is values)."""
    def rule(x):
        y = fn(x)

        def back(dy):
            dvalues = _values_cotangent(dy, tupled)
            if dvalues is None or not real_floating(x):
                return (None,)
            return (_unique_back(x, dvalues, None, False, fn.__name__),)
        return y, back
    rule.__qualname__ = fn.__name__
    return rule


unique.__zygote_foreign__ = serving_other_libraries(  # jnp.unique(x): NumPy's parameters; torch.unique's differ
    unique, lambda args, kwargs: len(args) == 1 and set(kwargs) <= {*_UNIQUE, "equal_nan"}
    and "torch" not in str(type(args[0])))

for _name, _tupled in (("unique_values", False), ("unique_counts", True), ("unique_inverse", True),
                       ("unique_all", True)):
    if hasattr(np, _name):
        adjoint(getattr(np, _name))(_unique_2(getattr(np, _name), _tupled))


# --- counting: np.bincount's weights add up per bin; np.histogram's edges move with x's extremes -----------------------
@adjoint(np.bincount)
def bincount(x, *args, **kwargs):
    """`np.bincount(x, w)`: bin k holds the sum of the weights w[i] with x[i] == k, so dw = dy[x] (x is data). Float
    weights given by keyword (`weights=w`) would be constants (every rule's keywords are, see dispatch.py), dropping
    their gradient silently where they carry one: the pullback raises instead, asking for them by position."""
    y = dual_call(np.bincount, (x, *args), kwargs)  # (hessian's dual weights: binned with their tangents)

    def back(dy):
        if dy is not None and kwargs.get("weights") is not None and real_floating(kwargs["weights"]):
            raise ZygoteError("np.bincount(x, weights=w): zygotepy differentiates the weights only when they are "
                              "passed by position, np.bincount(x, w)")
        grads = [None] * (len(args) + 1)
        if dy is not None and args and args[0] is not None and real_floating(args[0]):
            w = args[0]
            g = arrayed(dy)[np.asarray(x)]
            grads[1] = g if isinstance(w, np.ndarray) else type(w)(g.tolist()) if isinstance(w, (list, tuple)) else g
        return tuple(grads)
    return y, back


@keyword_rule
@adjoint(np.histogram)
def histogram(a, *args, **kwargs):
    """Counts are piecewise constant in `a`: no gradient. But with `bins` a number and no `range`, the edges (and a
    density's bin width) are computed from a's minimum and maximum: those gradients are not supported, and the
    pullback raises where one would flow. Weights add up per bin, so each weight's cotangent is its bin's (none outside
    the range); a density divides by their total, which is not supported either."""
    y = np.histogram(a, *args, **kwargs)
    p = {**dict(zip(("bins", "range", "density", "weights"), args)), **kwargs}
    moving = not isinstance(p.get("bins", 10), (list, tuple, np.ndarray)) and p.get("range") is None
    weighted = p.get("weights") is not None and real_floating(p["weights"])

    def back(dy):
        dcounts, dedges = (None, None) if dy is None else dy
        live = lambda g: g is not None and np.any(np.asarray(g) != 0)  # noqa: E731
        if real_floating(a) and moving and (live(dedges) or p.get("density") and live(dcounts)) or \
                weighted and p.get("density") and live(dcounts):
            raise ZygoteError("zygotepy cannot differentiate np.histogram's edges or density when they move with the "
                              "data's minimum and maximum, nor a density of weights. Pass range=(lo, hi) or explicit "
                              "bin edges, or compute the histogram with np.bincount(np.digitize(x, edges), w)")
        dweights = _bin_cotangents(a, y[1], dcounts, p["weights"]) if weighted and live(dcounts) else None
        positional = (None, *(dweights if k == 3 else None for k in range(len(args))))
        return keyword_cotangents(positional, kwargs, weights=dweights, bins=None, range=None, density=None)
    return y, back


def _bin_cotangents(a, edges, dcounts, weights):
    """Each weight's cotangent: that of the bin its entry of `a` falls in (NumPy's: the last bin holds its right edge),
    zero outside the edges."""
    a = to_numpy(a).astype(float).reshape(-1)
    index = np.clip(np.searchsorted(edges, a, side="right") - 1, 0, len(edges) - 2)
    inside = (a >= edges[0]) & (a <= edges[-1])
    g = np.where(inside, to_numpy(dcounts).astype(float)[index], 0.0)
    if isinstance(weights, (list, tuple)):
        return type(weights)(g.tolist())
    g = g.reshape(np.shape(weights))
    return g if isinstance(weights, np.ndarray) else asarray(namespace(weights), g, weights)  # (jnp's weights)


bincount.__zygote_foreign__ = serving_other_libraries(  # jnp.bincount(x, w); torch.bincount(x, weights)
    bincount, lambda args, kwargs: len(args) <= 3 and set(kwargs) <= {"weights", "minlength"})
histogram.__zygote_foreign__ = serving_other_libraries(  # (jnp.histogram's fourth positional parameter differs)
    histogram, lambda args, kwargs: len(args) <= 3 and set(kwargs) <= {"bins", "range", "density", "weights"})

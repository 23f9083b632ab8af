"""`scipy.signal.lfilter`: a linear filter y = (B / A) x along an axis (an IIR filter; in reinforcement learning the
discounted cumulative sum `lfilter([1], [1, -gamma], r[::-1])[::-1]`). SciPy's Python code ends in a C filter, which
the transform cannot enter: it was refused.

With a0 y[n] + sum_k>=1 a_k y[n-k] = sum_k b_k x[n-k], the back is the filter's adjoint, 1 / A run backwards in
time: g = flip(lfilter([1], a, flip(dy))); then dx = flip(lfilter(b, a, flip(dy))), db_k = sum_n g[n] x[n-k] and
da_k = -sum_n g[n] y[n-k] (every a_k, a0 too). A call given initial conditions (`zi`) is refused, naming the line.
Importing this module never imports SciPy: `register()` runs when `scipy.signal` has been imported.
"""
import sys

import numpy as np

from ..ast_adjoint.call_checks import call_site
from ..backends import unbroadcast
from ..errors import ZygoteError
from . import registry
from .operators import ALL
from .registry import adjoint, keyword_cotangents, keyword_rule


def lfilter_parts(args, kwargs):
    """(b, a, x, axis) of an `lfilter(b, a, x, axis=-1, zi=None)` call; refused where it gives initial conditions."""
    names = ("b", "a", "x", "axis", "zi")
    given = {**dict(zip(names, args)), **kwargs}
    if given.get("zi") is not None:
        where = call_site()
        raise ZygoteError(f"{where + ': ' if where else ''}zygotepy differentiates scipy.signal.lfilter without "
                          f"initial conditions only (zi=None); prepend the history to x instead")
    return given["b"], given["a"], given["x"], given.get("axis", -1)


def _lagged_sums(g, v, n):
    """[sum_t g[t] v[t - k] for k < n] over the last axis (and every other one)."""
    length = g.shape[-1]
    return np.array([np.sum(g[..., k:] * v[..., :length - k]) if k < length else 0.0 for k in range(n)])


def register():
    signal = sys.modules["scipy.signal"]
    lfilter = signal.lfilter
    if registry.find_rule(lfilter) is not None:
        return

    @keyword_rule
    @adjoint(lfilter, need=True)
    def lfilter_rule(*args, **kwargs):
        b, a, x, axis = lfilter_parts(args, kwargs)
        y = lfilter(b, a, x, axis=axis)

        def back(dy, need=ALL):
            if dy is None:
                return keyword_cotangents((None,) * len(args), kwargs)
            dy = np.asarray(dy)
            dx = np.flip(lfilter(b, a, np.flip(dy, axis), axis=axis), axis)
            grads = {"x": unbroadcast(dx, x)}
            if need[0] or need[1] or "b" in kwargs or "a" in kwargs:  # (the coefficients' sums: only where asked)
                g = np.moveaxis(np.flip(lfilter([1.0], a, np.flip(dy, axis), axis=axis), axis), axis, -1)
                grads["b"] = unbroadcast(_lagged_sums(g, np.moveaxis(np.asarray(x, dtype=g.dtype), axis, -1), len(b)), b)
                grads["a"] = unbroadcast(-_lagged_sums(g, np.moveaxis(y, axis, -1), len(a)), a)
            named = ("b", "a", "x", "axis", "zi")
            return keyword_cotangents(tuple(grads.get(n) for n in named[:len(args)]), kwargs,
                                      **{n: grads.get(n) for n in named if n in kwargs})
        return y, back


registry.on_import("scipy.signal", register)

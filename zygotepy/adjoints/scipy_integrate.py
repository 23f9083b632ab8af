"""`scipy.integrate`'s rules on samples: `trapezoid` (NumPy's `np.trapezoid`, whose rule it takes) and
`cumulative_trapezoid`, differentiated as the NumPy it means (a twin, as stdlib_statistics.py does for the
`statistics` module): SciPy's code goes through its array-API helpers, which the transform refused. Importing this
module never imports SciPy: `register()` runs when `scipy.integrate` has been imported (`registry.on_import`).
"""
import sys

import numpy as np

from ..ast_adjoint.dispatch import J
from . import registry
from .registry import adjoint


def cumulative_trapezoid_twin(y, x, dx, axis, initial):
    """SciPy's cumulative trapezoidal rule along `axis`, with sample points `x` (1-d, or y's shape) or spacing `dx`;
    `initial` (0 or None) put first."""
    y = np.moveaxis(y, axis, -1)
    if x is None:
        d = dx
    elif np.ndim(x) == 1:
        d = np.diff(x)
    else:
        d = np.diff(np.moveaxis(x, axis, -1), axis=-1)
    total = np.cumsum(d * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        total = np.concatenate([np.zeros(total.shape[:-1] + (1,)) + initial, total], axis=-1)
    return np.moveaxis(total, -1, axis)


def register():
    integrate = sys.modules["scipy.integrate"]
    numpy_rule = registry.find_rule(np.trapezoid)

    if registry.find_rule(integrate.trapezoid) is None:
        @registry.keyword_rule
        @adjoint(integrate.trapezoid)
        def trapezoid(y, *args, **kwargs):
            return numpy_rule(y, *args, **kwargs)

    if registry.find_rule(integrate.cumulative_trapezoid) is None:
        @registry.keyword_rule
        @adjoint(integrate.cumulative_trapezoid)
        def cumulative_trapezoid(y, *args, **kwargs):
            names = ("x", "dx", "axis", "initial")
            given = {**dict(zip(names, args)), **kwargs}
            params = [given.get(n, d) for n, d in zip(names, (None, 1.0, -1, None))]
            value, pb = J(cumulative_trapezoid_twin, y, *params)

            def back(dz):
                grads = pb(dz)[1:]  # (dy, dx, ddx, daxis, dinitial)
                by_name = dict(zip(names, grads[1:]))
                return registry.keyword_cotangents((grads[0], *(by_name[n] for n in names[:len(args)])), kwargs,
                                                   **{n: by_name[n] for n in names if n in kwargs})
            return integrate.cumulative_trapezoid(y, *args, **kwargs) if _plain(y, params) else value, back


def _plain(y, params):
    """Does SciPy's own value apply (NumPy arrays and numbers only)?"""
    return all(type(v) in (np.ndarray, float, int, type(None)) for v in (y, *params))


registry.on_import("scipy.integrate", register)

"""Entering a level of forward mode: `make_dual` perturbs the arguments of a call at its tag (dual.py's `tangent_of`
reads the result's tangent at that tag when the call is done).
"""
import numpy as np

from ..errors import ForwardModeError
from .dual import Dual, strip


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
    """`x` perturbed by `t` at `tag`, for numbers, arrays and lists/tuples/dicts of them (`t` None: constant)."""
    if t is None:
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(make_dual(a, b, tag) for a, b in zip(x, t, strict=True))
    if isinstance(x, dict):
        return {k: make_dual(v, t.get(k), tag) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        if np.shape(t) != x.shape:
            raise ForwardModeError(f"tangent of shape {np.shape(t)} for an argument of shape {x.shape}")
        return Dual(tag, x, np.array(t, dtype=np.result_type(x.dtype, np.float64) if x.dtype.kind not in "fc"
                                     else x.dtype))
    if isinstance(x, (int, float, complex, np.generic, Dual)):
        return Dual(tag, x, t)
    raise ForwardModeError(f"forward mode cannot perturb a {type(x).__name__}; pass numbers, arrays, or "
                           f"lists/tuples/dicts of them")

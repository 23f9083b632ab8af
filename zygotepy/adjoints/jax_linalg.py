"""Rules for `jax.numpy.linalg.cholesky`, `eigh` and `eigvalsh`, which symmetrize their input (`(a + a.T) / 2`) before
factorizing, where NumPy's read one triangle of it.

Why rules: the NumPy rules (numpy/decompositions.py), which JAX's functions otherwise share as their twins, compute
NumPy's function (the lower triangle) and give its lower-triangular gradient: for a non-symmetric input another value
than JAX's, and for any input another gradient than JAX's (`jax.grad` and central differences of the JAX function give
a symmetric one; they agree only along symmetric directions). Here the NumPy rule runs at the symmetrized matrix,
which is JAX's value, and its gradient is symmetrized, which is JAX's gradient (the NumPy rule's is that of a
function of the matrix's lower triangle).

Importing this module never imports JAX: `register()` runs when JAX has been imported (`registry.on_import`).
"""
import sys

import numpy as np

from . import registry
from .registry import adjoint

_registered = [False]


def _transposed(x):
    return sys.modules["jax.numpy"].swapaxes(x, -1, -2)


def _symmetrizing(name):
    numpy_rule = registry.find_rule(getattr(np.linalg, name))

    def rule(a, *args, **kwargs):
        y, back = numpy_rule((a + _transposed(a)) / 2, *args, **kwargs)

        def symmetric_back(dy):
            grads = back(dy)
            g = grads[0]
            return grads if g is None else ((g + _transposed(g)) / 2, *grads[1:])
        return y, symmetric_back
    rule.__qualname__ = f"jax_linalg_{name}"
    return rule


def register():
    """Register the rules on JAX's function objects (once; a user's later @adjoint for one of them wins)."""
    if _registered[0]:
        return
    _registered[0] = True
    linalg = sys.modules["jax"].numpy.linalg
    for name in ("cholesky", "eigh", "eigvalsh"):
        adjoint(getattr(linalg, name))(_symmetrizing(name))


registry.on_import("jax", register)

"""`scipy.sparse`: products of a constant sparse matrix (or sparse array) with a dense NumPy array, `A @ x`,
`x @ A`, `A.dot(x)` (so also `A.T @ x`), and `scipy.sparse.linalg.spsolve(A, b)`: the patterns of finite elements,
finite differences and graph Laplacians, where the operator is data and the vector is differentiated.

The sparse operand is a constant here: its entries get no gradient (a sparse matrix made from values that carry one
is refused where it is made). The product's back is the transposed product (`A.T @ dy`), the solve's the solve with
the transpose (`spsolve(A.T, dy)`), both sparse. Importing this module never imports SciPy: `register()` runs when
`scipy.sparse` has been imported (`registry.on_import`).
"""
import sys

import numpy as np

from ..ast_adjoint.guards_runtime import differentiable
from ..errors import ZygoteError
from . import registry
from .registry import adjoint


def _dense(v, what):
    """The dense operand as a NumPy array, refusing a sparse one that carries a gradient (or an object that is not an
    array: the product of two sparse operands is data)."""
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "tocsr") or not differentiable(v):
        return None
    return np.asarray(v) if isinstance(v, (list, tuple, float, int, np.generic)) else _refuse(what, v)


def _refuse(what, v):
    raise ZygoteError(f"scipy.sparse: {what} of a sparse matrix and a {type(v).__name__} is not differentiable; "
                      f"give it a NumPy array")


def _product(compute, back_of):
    """The rule of a product of a constant sparse A and a dense x: `compute(A, x)`, its back `back_of(A, dy)`."""
    def rule(A, x):
        y = compute(A, x)
        dense = _dense(x, "a product")

        def back(dy):
            if dy is None or dense is None:
                return (None, None)
            return (None, _real_for(np.asarray(back_of(A, np.asarray(dy))).reshape(np.shape(dense)), dense))
        return y, back
    return rule


def _conj(A):
    """A's complex conjugate (A itself when real): the products' backs take Aᴴ, the gradient of Re<dy, A x>."""
    return A.conj() if A.dtype.kind == "c" else A


def _real_for(g, dense):
    """The cotangent `g` of a real operand: its real part (a complex A times a real x)."""
    return g.real if np.iscomplexobj(g) and not np.iscomplexobj(dense) else g


_times = _product(lambda A, x: A @ x, lambda A, dy: _conj(A).T @ dy)  # A @ x: Aᴴ dy
_times_from_left = _product(lambda A, x: x @ A, lambda A, dy: (_conj(A) @ dy.T).T)  # x @ A (A's __rmatmul__): dy Aᴴ


def _solve_rule(spsolve):
    def rule(A, b, *args, **kwargs):
        """x = A⁻¹ b for a constant sparse A: db = A⁻ᴴ dy."""
        x = spsolve(A, b, *args, **kwargs)
        dense = _dense(b, "a solve")

        def back(dy):
            grads = (None, *(None for _ in args))
            if dy is None or dense is None:
                return (None, *grads)
            db = spsolve(_conj(A).T.tocsc(), np.asarray(dy), *args, **kwargs)
            return (None, _real_for(np.asarray(db).reshape(np.shape(dense)), dense), *grads[1:])
        return x, back
    rule.__qualname__ = "spsolve_rule"
    return rule


def register():
    base = sys.modules["scipy.sparse"]._base._spbase
    for method, rule in ((base.__matmul__, _times), (base.dot, _times), (base.__rmatmul__, _times_from_left)):
        if registry.find_rule(method) is None:
            adjoint(method)(rule)
    linalg = sys.modules.get("scipy.sparse.linalg") or __import__("scipy.sparse.linalg").sparse.linalg
    if registry.find_rule(linalg.spsolve) is None:
        adjoint(linalg.spsolve)(_solve_rule(linalg.spsolve))


registry.on_import("scipy.sparse", register)

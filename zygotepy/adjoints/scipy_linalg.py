"""`scipy.linalg`: rules for the factorizations and solves a researcher's Gaussian process or Kalman filter calls
(cholesky, cho_factor, cho_solve, solve_triangular, solve, inv, det) and for expm.

Why rules: SciPy's own functions are wrapped (`_apply_over_batch`, the array-API dispatch) in code with `try`, which
zygotepy does not transform, so each was refused. Each rule gives SciPy's own value; its gradient is that of a NumPy
twin (below) that reads what SciPy's LAPACK call reads: one triangle of a triangular or symmetric argument (`lower=`),
the transposed system (`trans=`), an implicit unit diagonal. The gradient of what a function does not read is zero
there, as central differences of SciPy's function give. `expm`'s back is the Fréchet derivative of the adjoint, the
upper right block of expm of a block matrix (Al-Mohy and Higham), for one matrix or a stack. (The special matrices,
the decompositions, pinv, lstsq, norm and the LU factorization have their rules in scipy_linalg_more.py.) The
arguments that only steer the computation (`overwrite_*`, `check_finite`) carry no gradient; the `overwrite_*` flags
are turned off, so SciPy leaves the inputs as they were (their contents after the call are unspecified with the flag:
unchanged is allowed), which the back reads.

Importing this module never imports SciPy: `register()` runs when `scipy.linalg` has been imported
(`registry.on_import`).
"""
import sys

import numpy as np

from ..ast_adjoint.dispatch import J
from ..errors import ZygoteError
from ..forward.dual import dispatch as dual_call, has_dual
from . import registry
from .registry import adjoint, keyword_cotangents, keyword_rule


def _h(m):
    return np.conj(np.swapaxes(m, -1, -2))


def _triangle(a, lower):
    return np.tril(a) if lower else np.triu(a)


def _symmetric(a, lower, hermitian):
    """The symmetric (Hermitian) matrix SciPy reads from one triangle of `a`."""
    t = _triangle(a, lower)
    off = np.tril(a, -1) if lower else np.triu(a, 1)
    if hermitian and np.iscomplexobj(a):  # (LAPACK reads the diagonal's real part only)
        t = t - 1j * np.eye(a.shape[-1]) * np.imag(np.diagonal(a, 0, -2, -1))[..., None, :]
    return t + (_h(off) if hermitian else np.swapaxes(off, -1, -2))


def cholesky_twin(a, lower):
    factor = np.linalg.cholesky(a if lower else _h(a))  # (NumPy reads the lower triangle: `_h(a)`'s is a's upper)
    return factor if lower else _h(factor)


def cho_factor_twin(a, lower):
    """SciPy leaves the other triangle of its copy of `a` as it was."""
    return cholesky_twin(a, lower) + (np.triu(a, 1) if lower else np.tril(a, -1))


def cho_solve_twin(c, b, lower):
    low = np.tril(c) if lower else _h(np.triu(c))
    return np.linalg.solve(_h(low), np.linalg.solve(low, b))


def solve_triangular_twin(a, b, trans, lower, unit_diagonal):
    t = _triangle(a, lower)
    if unit_diagonal:
        eye = np.eye(t.shape[-1], dtype=bool)
        t = np.where(eye, 1.0, t)
    if trans in (1, "T"):
        t = np.swapaxes(t, -1, -2)
    elif trans in (2, "C"):
        t = _h(t)
    return np.linalg.solve(t, b)


def _general(a, assume_a, lower):
    if assume_a in (None, "gen", "general"):
        return a
    if assume_a in ("sym", "symmetric"):
        return _symmetric(a, lower, False)
    if assume_a in ("pos", "positive definite"):  # (Cholesky: a complex matrix is Hermitian positive definite)
        return _symmetric(a, lower, np.iscomplexobj(a))
    if assume_a in ("her", "hermitian"):
        return _symmetric(a, lower, True)
    return None  # (banded, triangular, diagonal: refused below)


def solve_twin(a, b, lower, assume_a, transposed):
    m = _general(a, assume_a, lower)
    return np.linalg.solve(np.swapaxes(m, -1, -2) if transposed else m, b)


def inv_twin(a, assume_a, lower):
    return np.linalg.inv(_general(a, assume_a, lower))


def det_twin(a):
    return np.linalg.det(a)


# name: (twin, SciPy's parameters in order, the differentiable ones (the twin's first), the others the twin takes after
# them with SciPy's defaults)
_SPECS = {
    "cholesky": (cholesky_twin, ("a", "lower", "overwrite_a", "check_finite"), ("a",), {"lower": False}),
    "cho_factor": (cho_factor_twin, ("a", "lower", "overwrite_a", "check_finite"), ("a",), {"lower": False}),
    "solve_triangular": (solve_triangular_twin, ("a", "b", "trans", "lower", "unit_diagonal", "overwrite_b",
                                                 "check_finite"), ("a", "b"),
                         {"trans": 0, "lower": False, "unit_diagonal": False}),
    "solve": (solve_twin, ("a", "b", "lower", "overwrite_a", "overwrite_b", "check_finite", "assume_a", "transposed"),
              ("a", "b"), {"lower": False, "assume_a": None, "transposed": False}),
    "inv": (inv_twin, ("a", "overwrite_a", "check_finite"), ("a",), {"assume_a": None, "lower": False}),
    "det": (det_twin, ("a", "overwrite_a", "check_finite"), ("a",), {}),
}


def _kept(names, given):
    """The arguments with SciPy's `overwrite_*` flags turned off: SciPy may overwrite an input it is allowed to (leaving
    it unspecified), and the back reads the inputs after the call; so the call computes on copies, as without the flag,
    and the inputs stay as given (which the flag allows)."""
    if isinstance(given, dict):
        return {k: False if k.startswith("overwrite_") else v for k, v in given.items()}
    return tuple(False if k < len(names) and names[k].startswith("overwrite_") else v for k, v in enumerate(given))


def _rule(target, twin, names, differentiable, options):
    @keyword_rule
    @adjoint(target)
    def rule(*args, **kwargs):
        pair = target.__name__ == "cho_factor"
        bound = {**options, **dict(zip(names, args)), **kwargs}
        if "assume_a" in options and _general(np.eye(1), bound["assume_a"], False) is None:
            raise ZygoteError(f"zygotepy differentiates scipy.linalg.{target.__name__} with assume_a "
                                       f"{bound['assume_a']!r} only as a general, symmetric or Hermitian matrix")
        y = target(*_kept(names, args), **_kept(names, kwargs))
        _, pb = J(twin, *(bound[n] for n in differentiable), *(bound[n] for n in options))
        position = {n: k for k, n in enumerate(differentiable, 1)}

        def back(dy):
            grads = pb(dy[0] if pair and dy is not None else dy)  # (cho_factor's `(c, lower)`: c's)
            of = {n: grads[k] for n, k in position.items()}
            return keyword_cotangents([of.get(n) for n in names[:len(args)]], kwargs,
                                      **{k: of.get(k) for k in kwargs})
        return y, back
    rule.__qualname__ = f"scipy_linalg_{target.__name__}"
    return rule


def _cho_solve_rule(target):
    @keyword_rule
    @adjoint(target)
    def cho_solve(c_and_lower, b, **kwargs):
        c, lower = c_and_lower
        y = target(c_and_lower, b, **_kept(None, kwargs))
        _, pb = J(cho_solve_twin, c, b, lower)

        def back(dy):
            _, dc, db, _ = pb(dy)
            return keyword_cotangents(((dc, None), db), kwargs)
        return y, back
    return cho_solve


def _expm_rule(target):
    @adjoint(target)
    def expm(a):
        y = dual_call(target, (a,), {})  # (hessian's dual numbers: the tangent from this rule's back, levels.py)

        def back(dy):
            if dy is None:
                return (None,)
            if np.ndim(a) < 2:  # (SciPy takes a number for a 1 x 1 matrix)
                return (np.reshape(np.conj(y) * dy, np.shape(a)),)
            n, ah = np.shape(a)[-1], _h(a if has_dual((a,)) else np.asarray(a))
            dy = np.broadcast_to(dy, ah.shape) if np.shape(dy) != np.shape(ah) else dy
            block = np.concatenate([np.concatenate([ah, dy], axis=-1),  # (a stack of them, as SciPy's expm takes)
                                    np.concatenate([np.zeros_like(ah), ah], axis=-1)], axis=-2)
            g = dual_call(target, (block,), {})[..., :n, n:]
            return (g if np.iscomplexobj(a) else np.real(g),)
        return y, back
    return expm


def register():
    linalg = sys.modules["scipy.linalg"]
    for name, (twin, names, differentiable, options) in _SPECS.items():
        _rule(getattr(linalg, name), twin, names, differentiable, options)
    _cho_solve_rule(linalg.cho_solve)
    _expm_rule(linalg.expm)


registry.on_import("scipy.linalg", register)

"""np.linalg quantities of a matrix's spectrum: eigvals and eig's eigenvalues (of a general square matrix, complex) and cond
(the condition number), batched over leading axes, for NumPy arrays.

eigvals follows the API's convention for complex values: the cotangent of an argument is the gradient of the real
function `Re <dy, w>` (docs/api.md), so with a = V diag(w) V^-1 it is V^-H diag(dy) V^H, projected onto the reals for a
real matrix. Where the eigenvectors are (numerically) dependent, the matrix is defective and its eigenvalues have no
derivative: a ZygoteError, not the huge numbers an inverse of V would give.

cond is composed from the rules of what NumPy computes it with: for p = None, 2 or -2 the ratio of the extreme
singular values (svdvals' back), else norm(a, p) * norm(inv(a), p) (the norm and inv rules), so that it agrees with
them wherever they are defined. A singular matrix (cond infinite) and extreme singular values tied with their
neighbours (a kink) raise a ZygoteError; all singular values equal (cond = 1, its minimum) give 0.
"""
import numpy as np

from ...errors import ZygoteError
from ..registry import adjoint
from .common import _H, _nones, arrayed
from .decompositions import norm, svdvals
from .linalg import _field, inv

la = np.linalg


# --- eigenvalues of a general matrix ---------------------------------------------------------------------------------------
def _matched_vectors(w, a):
    """The eigenvectors of a in the order of the eigenvalues w (np.linalg.eigvals' order: eig's may differ where
    LAPACK's rounding differs), each column matched to its nearest eigenvalue."""
    w2, V = la.eig(a)
    order = np.argmin(np.abs(w[..., :, None] - w2[..., None, :]), axis=-1)
    return np.take_along_axis(V, order[..., None, :], axis=-1)


@adjoint(la.eigvals)
def eigvals(a):
    """dw_i = (V^-1 da V)_ii: the cotangent V^-H diag(dy) V^H (its real part for a real matrix)."""
    a = np.asarray(a)
    w = la.eigvals(a)

    def back(dy):
        if dy is None:
            return (None,)
        V = _matched_vectors(w, a)
        eps = np.finfo(V.real.dtype).eps
        if np.any(la.cond(V) > 1 / (1000 * eps)):
            raise ZygoteError(f"np.linalg.eigvals: the gradient is undefined, the matrix is defective (its "
                              f"eigenvectors are linearly dependent); eigenvalues {w}")
        g = la.solve(_H(V), arrayed(dy)[..., :, None] * _H(V))
        return (g if np.iscomplexobj(a) else g.real.astype(a.dtype if a.dtype.kind == "f" else np.float64),)
    return w, back


@adjoint(la.eig)
def eig(a):
    """`w, v = np.linalg.eig(a)`: the eigenvalues' cotangent as eigvals' (a loss of w alone, the common case); the
    eigenvectors' (whose scale NumPy fixes to unit columns of any phase) are refused, pointing to eigh."""
    a = np.asarray(a)
    result = la.eig(a)
    _, back_w = eigvals(a)

    def back(dy):
        dw, dv = _field(dy, 0, "eigenvalues", result), _field(dy, 1, "eigenvectors", result)
        if dv is not None and np.any(np.asarray(dv) != 0):
            raise ZygoteError("zygotepy differentiates np.linalg.eig's eigenvalues only (its eigenvectors of a "
                              "general matrix have no rule): for a symmetric matrix use np.linalg.eigh, whose "
                              "eigenvectors have one")
        return back_w(dw)
    return result, back


# --- the condition number --------------------------------------------------------------------------------------------------
def _ratio_back(x, s, p, dy):
    """cond = s_max / s_min (p None or 2) or s_min / s_max (p = -2) over the singular values s (descending)."""
    top, bottom = s[..., 0], s[..., -1]
    if np.any(bottom <= top * max(x.shape[-2:]) * np.finfo(s.dtype).eps):  # (matrix_rank's tolerance: rounding
        raise ZygoteError("np.linalg.cond: the gradient is undefined at a singular matrix (cond is infinite)")  # of 0)
    equal = np.isclose(top, bottom, rtol=1e-12, atol=0)
    if s.shape[-1] > 2 and np.any(~equal & (np.isclose(top, s[..., 1], rtol=1e-12, atol=0)
                                            | np.isclose(bottom, s[..., -2], rtol=1e-12, atol=0))):
        raise ZygoteError(f"np.linalg.cond(p={p}): the gradient is undefined, repeated extreme singular values {s}")
    dy = np.where(equal, 0.0, dy)  # all equal: cond = 1, its minimum
    ds = np.zeros(s.shape, np.result_type(s.dtype, arrayed(dy).dtype))
    if p == -2:
        ds[..., -1], ds[..., 0] = dy / top, -dy * bottom / top ** 2
    else:
        ds[..., 0], ds[..., -1] = dy / bottom, -dy * top / bottom ** 2
    return svdvals(x)[1](ds)[0]


@adjoint(la.cond)
def cond(x, *args, **kwargs):
    """cond's derivative through the rules it is made of (the module's docstring); p (a constant) gets none."""
    p = args[0] if args else kwargs.get("p")
    x = np.asarray(x)
    y = la.cond(x, *args, **kwargs)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        if np.any(~np.isfinite(y)):
            raise ZygoteError("np.linalg.cond: the gradient is undefined at a singular matrix (cond is infinite)")
        if p in (None, 2, -2):
            return (_ratio_back(x, la.svd(x, compute_uv=False), p, dy), *_nones(args))
        nx, back_x = norm(x, p, (-2, -1))
        xi, back_inv = inv(x)
        ni, back_i = norm(xi, p, (-2, -1))
        dx = back_x(dy * ni)[0] + back_inv(back_i(dy * nx)[0])[0]
        return (dx, *_nones(args))
    return y, back

"""np.linalg norms and decompositions: norm / vector_norm / matrix_norm (every differentiable ord), cholesky, qr,
eigh / eigvalsh, svd / svdvals and lstsq, batched over leading axes, for real input. Functions that read one triangle
of a symmetric matrix (cholesky, eigh, svd(hermitian=True)) give a cotangent on that triangle only, which is exact for
the function NumPy computes and agrees with the symmetric gradient on symmetric perturbations. Where the gradient is
undefined (repeated eigenvalues or singular values with a cotangent on the vectors, a wide QR), a `ZygoteError`.
"""
import math

import numpy as np

from ...backends import conj, is_complex, namespace, on, traced
from ...errors import ZygoteError
from ..registry import adjoint, namespace_generic
from .common import _H, _T, _expand
from .elementwise import as_operand
from .linalg import _field, _gaps, _linalg, _lower, truncated_pinv

la = np.linalg


def _complex(x):
    return np.iscomplexobj(x) if namespace(x) is np else is_complex(x)


def _unit(x):
    """d|x|/dx: sign(x) for reals, x/|x| for complex numbers (0 at 0)."""
    xp = namespace(x)
    if _complex(x):
        r = xp.abs(x)
        return x / xp.where(r == 0, 1, r)
    return xp.sign(x)


def _share(hit, axis, like):
    """Ties share the gradient evenly (the array API does no arithmetic on booleans: counted in like's float type)."""
    xp = namespace(like)
    if xp is not np:
        hit = xp.astype(hit, xp.real(like).dtype if _complex(like) else like.dtype)
    return hit / xp.sum(hit, axis=axis, keepdims=True)


# --- norms ---------------------------------------------------------------------------------------------------------------
def _vector_back(x, ord, axis, d):
    """Gradient of the vector `ord`-norm of x along `axis` (None: all entries), times the expanded cotangent d."""
    xp, a = namespace(x), abs(x)
    if ord == 0:
        return None
    if ord == np.inf or ord == -np.inf:
        pick = xp.max if ord == np.inf else xp.min
        return d * _unit(x) * _share(a == pick(a, axis=axis, keepdims=True), axis, x)
    if ord == 1:
        return d * _unit(x)
    p = 2 if ord is None else ord
    y = xp.sum(a ** p, axis=axis, keepdims=True) ** (1 / p)
    if p == 2:  # x / y: smooth where an entry is 0, where `sign(x) * |x| / y` has a derivative of 0 (hessian's)
        return d * x / xp.where(y == 0, 1, y)
    return d * _unit(x) * (a / xp.where(y == 0, 1, y)) ** (p - 1)


def _matrix_back(x, ord, d):
    """Gradient of a matrix norm over the last two axes, times d (broadcast over them)."""
    xp = namespace(x)
    if ord in (None, "fro"):
        y = xp.sqrt(xp.sum(xp.abs(x) ** 2, axis=(-2, -1), keepdims=True))
        return d * x / xp.where(y == 0, 1, y)
    if ord in ("nuc", 2, -2):
        U, s, Vh = _linalg(x).svd(x, full_matrices=False)
        if ord == "nuc":
            return d * (U @ Vh)
        k = 0 if ord == 2 else -1
        other = s[..., 1] if ord == 2 else s[..., -2]
        if s.shape[-1] > 1 and (np.any(np.isclose(s[..., k], other, rtol=1e-12, atol=0)) if xp is np else
                                bool(xp.any(xp.abs(s[..., k] - other) <= 1e-12 * xp.abs(other)))):
            raise ZygoteError(f"np.linalg.norm(ord={ord}): the gradient is undefined, repeated singular values {s}")
        return d * (U[..., :, k:k + 1 if k == 0 else None] @ Vh[..., k:k + 1 if k == 0 else None, :])
    if ord in (1, -1, np.inf, -np.inf):
        axis = -2 if ord in (1, -1) else -1  # 1: the largest column sum, inf: the largest row sum
        sums = xp.sum(xp.abs(x), axis=axis, keepdims=True)
        pick = xp.max if ord in (1, np.inf) else xp.min
        return d * _unit(x) * _share(sums == pick(sums, axis=-1 if axis == -2 else -2, keepdims=True),
                                     -1 if axis == -2 else -2, x)
    raise ZygoteError(f"np.linalg.norm: no gradient for ord={ord!r}")


def _norm_back(x, ord, axis, keepdims, dy):
    xp = namespace(x)
    x = np.asarray(x) if xp is np and not hasattr(x, "ndim") else x  # (a list; an array-like such as a dual number kept)
    if axis is None and (ord is None or x.ndim == 1):
        return _vector_back(x, ord, None, _expand(dy, x, None, keepdims))
    if axis is None:
        axis = (0, 1)
    if isinstance(axis, (int, np.integer)) or len(axis) == 1:  # (np.int64: `axis=np.argmax(x.shape)`)
        return _vector_back(x, ord, axis, _expand(dy, x, axis, keepdims))
    axes = tuple(a % x.ndim for a in axis)
    moved = xp.moveaxis(x, axes, (-2, -1))
    d = _expand(dy, x, axes, keepdims)
    d = np.asarray(d) if xp is np and not hasattr(d, "ndim") else d
    g = _matrix_back(moved, ord, xp.moveaxis(d, axes, (-2, -1)))
    return xp.moveaxis(g, (-2, -1), axes)


def _foreign_norm(x, ord, axis, keepdims):
    """np.linalg.norm of another library's array from the array API's vector_norm and matrix_norm."""
    xp = namespace(x)
    if axis is None and (ord is None or x.ndim == 1):
        return xp.linalg.vector_norm(x, ord=2 if ord is None else ord, keepdims=keepdims)
    if axis is None:
        axis = (0, 1)
    if isinstance(axis, (int, np.integer)) or len(axis) == 1:
        axis = axis if isinstance(axis, (int, np.integer)) else axis[0]
        return xp.linalg.vector_norm(x, axis=axis, ord=2 if ord is None else ord, keepdims=keepdims)
    axes = tuple(a % x.ndim for a in axis)
    y = xp.linalg.matrix_norm(xp.moveaxis(x, axes, (-2, -1)), ord="fro" if ord is None else ord, keepdims=keepdims)
    return xp.moveaxis(y, (-2, -1), axes) if keepdims else y


@adjoint(la.norm, need=True)
def norm(x, *args, **kwargs):
    """A finite float ord p (by position, or by keyword: passed here by position) of a vector norm gets dy/dp = y (sum
    |x|^p ln|x| / (p s) - ln(s) / p^2), s = sum |x|^p = y^p (0 ln 0 = 0). An int, inf or string ord is a constant,
    and so is the ord of a matrix norm or 0: NumPy takes no ord near those."""
    ord, axis, keepdims = (args[k] if len(args) > k else kwargs.get(n, None if n != "keepdims" else False)
                           for k, n in enumerate(("ord", "axis", "keepdims")))
    xp = namespace(x)
    y = la.norm(x, *args, **kwargs) if xp is np else _foreign_norm(x, ord, axis, keepdims)

    def back(dy, need=None):
        nones = tuple(None for _ in args)
        dx = _norm_back(x, ord, axis, keepdims, dy) if dy is not None and (need is None or need[0]) else None
        if dy is None or not args or not isinstance(ord, (float, np.floating)) or not math.isfinite(ord) or ord == 0 \
                or need and not need[1] or (np.ndim(x) if axis is None else np.size(axis)) != 1:  # (0: a count)
            return (dx, *nones)
        a = xp.abs(xp.asarray(x))
        a1, s = xp.where(a > 0, a, 1), xp.where(y > 0, y ** ord, 1)  # (1 for 0: 0 ln 0 = 0, and y = 0)
        logs = xp.sum(a1 ** ord * xp.log(a1), axis=axis, keepdims=keepdims)
        return (dx, float(xp.sum(dy * y * (logs / (ord * s) - xp.log(s) / ord ** 2))), *nones[1:])
    return y, back


@adjoint(la.vector_norm)
def vector_norm(x, **kwargs):
    axis, keepdims, ord = kwargs.get("axis"), kwargs.get("keepdims", False), kwargs.get("ord", 2)
    x_ = np.asarray(x) if namespace(x) is np else x
    return _linalg(x).vector_norm(x, **kwargs), lambda dy: (
        None if dy is None else _vector_back(x_, ord, axis, _expand(dy, x_, axis, keepdims)),)


@adjoint(la.matrix_norm)
def matrix_norm(x, **kwargs):
    keepdims, ord = kwargs.get("keepdims", False), kwargs.get("ord", "fro")
    return _linalg(x).matrix_norm(x, **kwargs), lambda dy: (
        None if dy is None else _norm_back(x, ord, (-2, -1), keepdims, dy),)


def _real_only(a, name):
    if _complex(a):
        raise ZygoteError(f"np.linalg.{name}: the gradient rule is for real matrices; complex input is not supported")


# --- decompositions ------------------------------------------------------------------------------------------------------
@adjoint(la.cholesky)
def cholesky(a, **kwargs):
    """a = L L^T: S = L^-T Phi(L^T dL) L^-1 (Phi: the lower triangle, diagonal halved), symmetrized."""
    _real_only(a, "cholesky")
    linalg, xp = _linalg(a), namespace(a)
    y = linalg.cholesky(a, **kwargs)
    upper = kwargs.get("upper", False)
    L = _H(y) if upper else y

    def back(dy):
        if dy is None:
            return (None,)
        dL = _H(dy) if upper else dy
        P = _H(L) @ dL
        phi = np.tril(P, -1) + 0.5 * P * np.eye(P.shape[-1], dtype=P.dtype) if xp is np else \
            xp.tril(P, k=-1) + 0.5 * P * xp.eye(P.shape[-1], dtype=P.dtype, **on(P))
        Linv = linalg.inv(L)
        S = _H(Linv) @ phi @ Linv
        g = _lower(0.5 * (S + _H(S)))
        return (_H(g) if upper else g,)
    return y, back


def _foreign_only(name, kwargs, allowed):
    unknown = sorted(k for k, v in kwargs.items() if k not in allowed and v is not None)
    if unknown:
        raise ZygoteError(f"np.linalg.{name} of another library's arrays: {', '.join(unknown)} is not supported by the "
                          f"namespace-generic rule")


@adjoint(la.qr)
def qr(a, *args, **kwargs):
    """Reduced QR of a tall or square a (TensorFlow's QrGrad): dA = Q (dR + tril(M) R^-T) + (dQ - Q Q^T dQ) R^-T,
    M = Q^T dQ - dQ^T Q + R dR^T - dR R^T."""
    a = as_operand(a)
    _real_only(a, "qr")
    mode = args[0] if args else kwargs.get("mode", "reduced")
    if mode not in ("reduced", "r"):
        raise ZygoteError(f"np.linalg.qr: the gradient rule supports mode='reduced' and 'r', not {mode!r}")
    linalg, xp = _linalg(a), namespace(a)
    if linalg is la:
        result = la.qr(a, *args, **kwargs)
    else:  # the array API's qr has no mode 'r': R of the reduced factorization
        _foreign_only("qr", {k: v for k, v in kwargs.items() if k != "mode"}, ())
        result = linalg.qr(a)
        result = result[1] if mode == "r" else result

    def back(dy):
        dQ, dR = (None, dy) if mode == "r" else (_field(dy, 0, "Q", result), _field(dy, 1, "R", result))
        if dQ is None and dR is None:
            return (None, *(None for _ in args))
        if a.shape[-2] < a.shape[-1]:
            raise ZygoteError("np.linalg.qr: the gradient is defined here for tall or square matrices only")
        Q, R = linalg.qr(a)
        dQ = xp.zeros_like(Q) if dQ is None else dQ
        dR = xp.zeros_like(R) if dR is None else dR
        qdq, rdr = _T(Q) @ dQ, R @ _T(dR)
        M = np.tril(qdq - _T(qdq) + rdr - _T(rdr)) if xp is np else xp.tril(qdq - _T(qdq) + rdr - _T(rdr))
        Rinv_T = _T(linalg.inv(R))
        return (Q @ (dR + M @ Rinv_T) + (dQ - Q @ qdq) @ Rinv_T, *(None for _ in args))
    return result, back


def _array(v):
    """A cotangent as an array: a list converted, an array or an array-like (a dual number, under hessian) kept."""
    return v if hasattr(v, "shape") else namespace(v).asarray(v)


def _eigh_back(w, V, dw, dV, uplo):
    xp = namespace(V)
    inner = xp.zeros_like(V) if dw is None else _array(dw)[..., None, :] * xp.eye(w.shape[-1], dtype=w.dtype, **on(w))
    if dV is not None:
        inner = inner + _gaps(w, "eigenvectors") * (_T(V) @ dV)
    g = V @ inner @ _T(V)
    g = _lower(0.5 * (g + _T(g)))
    return _T(g) if uplo == "U" else g


def _eigh(a, args, kwargs):
    """(w, V) of the symmetric matrix NumPy's eigh reads from one triangle of a, computed by a's library (given that
    matrix: libraries differ on what they read of a non-symmetric a; JAX symmetrizes it)."""
    linalg = _linalg(a)
    if linalg is la:
        return la.eigh(a, *args, **kwargs)
    uplo = args[0] if args else kwargs.get("UPLO", "L")
    _foreign_only("eigh", {k: v for k, v in kwargs.items() if k != "UPLO"}, ())
    xp = namespace(a)
    lower = xp.tril(a if uplo == "L" else _T(a))
    return linalg.eigh(lower + _T(xp.tril(lower, k=-1)))


@adjoint(la.eigh)
def eigh(a, *args, **kwargs):
    """a = V diag(w) V^T: dA = V (diag(dw) + F o (V^T dV)) V^T, F_ij = 1 / (w_j - w_i), symmetrized."""
    _real_only(a, "eigh")
    uplo = args[0] if args else kwargs.get("UPLO", "L")
    w, V = result = _eigh(a, args, kwargs)

    def back(dy):
        dw, dV = _field(dy, 0, "eigenvalues", result), _field(dy, 1, "eigenvectors", result)
        if dw is None and dV is None:
            return (None, *(None for _ in args))
        return (_eigh_back(w, V, dw, dV, uplo), *(None for _ in args))
    return result, back


@adjoint(la.eigvalsh)
def eigvalsh(a, *args, **kwargs):
    _real_only(a, "eigvalsh")
    uplo = args[0] if args else kwargs.get("UPLO", "L")
    w, V = _eigh(a, args, kwargs)
    y = la.eigvalsh(a, *args, **kwargs) if namespace(a) is np else w
    return y, lambda dy: (None if dy is None else _eigh_back(w, V, dy, None, uplo), *(None for _ in args))


def _svd_back(U, s, Vh, dU, ds, dVh):
    """Townsend's formula for the reduced SVD a = U diag(s) Vh."""
    xp = namespace(U)
    V, k = _T(Vh), s.shape[-1]
    g = xp.zeros((*s.shape, k), dtype=s.dtype, **on(s)) if ds is None else \
        _array(ds)[..., None, :] * xp.eye(k, dtype=s.dtype, **on(s))
    if dU is not None or dVh is not None:
        F = _gaps(s * s, "singular vectors")
        if dU is not None:
            g = g + (F * (_T(U) @ dU - _T(dU) @ U)) * s[..., None, :]
        if dVh is not None:
            dV = _T(dVh)
            g = g + s[..., :, None] * (F * (_T(V) @ dV - _T(dV) @ V))
    out = U @ g @ Vh
    if dU is not None and U.shape[-2] > k:
        out = out + (dU - U @ (_T(U) @ dU)) / s[..., None, :] @ Vh
    if dVh is not None and Vh.shape[-1] > k:
        out = out + (U / s[..., None, :]) @ (dVh - (dVh @ V) @ Vh)
    return out


def _reduced_svd(a, hermitian=False):  # hermitian: NumPy's factors (eigh of the lower triangle, signs in Vh)
    return la.svd(a, hermitian=True) if hermitian else la.svd(a, full_matrices=False) if namespace(a) is np else \
        _linalg(a).svd(a, full_matrices=False)


@adjoint(la.svd)
def svd(a, *args, **kwargs):
    _real_only(a, "svd")
    names = ("full_matrices", "compute_uv", "hermitian")
    full, compute_uv, hermitian = (args[i] if len(args) > i else kwargs.get(n, d)
                                   for i, (n, d) in enumerate(zip(names, (True, True, False), strict=True)))
    linalg, xp = _linalg(a), namespace(a)
    if linalg is la:
        result = la.svd(a, *args, **kwargs)
    else:  # the array API's svd takes full_matrices only; its svdvals are the values alone
        _foreign_only("svd", {k: v for k, v in kwargs.items() if k not in names}, ())
        if hermitian:
            raise ZygoteError("np.linalg.svd of another library's arrays: hermitian=True is not supported by the "
                              "namespace-generic rule")
        result = linalg.svd(a, full_matrices=full) if compute_uv else linalg.svdvals(a)
    fold = _lower if hermitian else (lambda g: g)

    def back(dy):
        nones = tuple(None for _ in args)
        if not compute_uv:
            return (None if dy is None else fold(_svd_back(*_reduced_svd(a, hermitian), None, dy, None)), *nones)
        dU, ds, dVh = _field(dy, 0, "U", result), _field(dy, 1, "S", result), _field(dy, 2, "Vh", result)
        if dU is None and ds is None and dVh is None:
            return (None, *nones)
        U, s, Vh = _reduced_svd(a, hermitian)
        k = s.shape[-1]
        if full:  # the extra columns of a complete basis are arbitrary: they must carry no cotangent
            for d, extra in ((dU, None if dU is None else dU[..., :, k:]), (dVh, None if dVh is None else dVh[..., k:, :])):
                if extra is not None and not traced(extra) and bool(xp.any(extra != 0)):
                    raise ZygoteError("np.linalg.svd(full_matrices=True): the completing singular vectors are not "
                                      "unique, so they have no gradient; use full_matrices=False")
            dU = None if dU is None else dU[..., :, :k]
            dVh = None if dVh is None else dVh[..., :k, :]
        return (fold(_svd_back(U, s, Vh, dU, ds, dVh)), *nones)
    return result, back


@adjoint(la.svdvals)
def svdvals(x):
    _real_only(x, "svdvals")
    y = la.svdvals(x) if namespace(x) is np else _linalg(x).svdvals(x)
    return y, lambda dy: (None if dy is None else _svd_back(*_reduced_svd(x), None, dy, None),)


def _numpy_meaning(raw, a, b, linalg, xp):
    """np.linalg.lstsq's result from another library's: `(x, residuals, rank, s)` with NumPy's residuals (the squared
    residual norms when `a` is tall and of full rank, else empty) and singular values (torch's CPU driver leaves both
    empty; torch.linalg.lstsq called as itself keeps its own, see foreign/torch_functions.py)."""
    x, rank = raw[0], raw[2]
    m, n = a.shape[-2], a.shape[-1]
    full = m > n and int(rank) == n
    residuals = xp.sum(xp.abs(b - a @ x) ** 2, axis=0) if full else xp.zeros((0,), dtype=x.dtype, **on(x))
    if full and residuals.ndim == 0:
        residuals = xp.reshape(residuals, (1,))
    return (x, residuals, rank, linalg.svdvals(a))


def _lstsq_rcond(a, args, kwargs):
    """lstsq's cutoff ratio: None is max(M, N) times the machine precision (float64's for NumPy, which computes in it;
    a's for another library), a negative one that precision."""
    rcond, xp = args[0] if args else kwargs.get("rcond"), namespace(a)
    eps = np.finfo(np.float64).eps if xp is np else xp.finfo(a.dtype).eps
    return eps * max(a.shape[-2:]) if rcond is None else eps if rcond < 0 else rcond


@adjoint(la.lstsq)
def lstsq(a, b, *args, **kwargs):
    """x = pinv_k(a) b: the pseudo-inverse with lstsq's cutoff (`truncated_pinv`, of fixed rank); the residuals
    ||b - a x||^2 have gradients -2 r x^T and 2 r (x is optimal); the rank is an integer, and the singular values get
    their svd rule. The array API has no lstsq: another library's arrays need its own (JAX's, torch's)."""
    a, b = as_operand(a), as_operand(b)
    linalg, xp = _linalg(a, b), namespace(a)
    if linalg is la:
        result = la.lstsq(a, b, *args, **kwargs)
    else:
        if getattr(linalg, "lstsq", None) is None:
            raise ZygoteError(f"np.linalg.lstsq: the array namespace {xp.__name__} has no lstsq (the array API "
                              f"defines none); use pinv(a) @ b, or solve(a.T @ a, a.T @ b)")
        result = _numpy_meaning(linalg.lstsq(a, b, *args, **kwargs), a, b, linalg, xp)
    x = result[0]

    def back(dy):
        dx, dres, ds = _field(dy, 0, "x", result), _field(dy, 1, "residuals", result), _field(dy, 3, "s", result)
        da = db = None
        vector = b.ndim == 1 if hasattr(b, "ndim") else np.ndim(b) == 1
        if dx is not None:
            X, pb = truncated_pinv(a, _lstsq_rcond(a, args, kwargs))
            dX = (dx[:, None] * conj(b)[None, :]) if vector else dx @ _H(b)  # (dx b^H)
            da, db = pb(dX), _H(X) @ dx
        if dres is not None and math.prod(tuple(result[1].shape)):
            r = b - a @ x
            w = xp.asarray(dres)
            ga = -2 * (r[:, None] * conj(x)[None, :] * w if vector else (r * w) @ _H(x))
            gb = 2 * r * w
            da, db = ga if da is None else da + ga, gb if db is None else db + gb
        if ds is not None:
            _, pb = svd(a, False, False)
            gs = pb(ds)[0]
            da = gs if da is None else da + gs
        return (da, db, *(None for _ in args))
    return result, back


# computed with the namespace of their input: the array API's linalg has vector_norm, matrix_norm, cholesky, qr, eigh,
# eigvalsh, svd and svdvals (lstsq needs the library's own: the array API has none)
namespace_generic(la.norm, la.vector_norm, la.matrix_norm, la.cholesky, la.qr, la.eigh, la.eigvalsh, la.svd, la.svdvals,
                  la.lstsq)

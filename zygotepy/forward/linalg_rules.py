"""Forward (tangent) rules for `np.linalg`: the matrix functions' derivatives, in matrix form (`dA^-1 = -A^-1 dA A^-1`).

Like every tangent rule (rules.py), they compute with NumPy's functions and operators, never on plain arrays only: the
primals may be dual numbers of an outer level, which reach these rules again through NumPy's protocols.
"""
import numpy as np

from ..errors import ForwardModeError
from .dual import dispatch, strip, tangent_rule
from .rules import _total

_NUMPY_2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


@tangent_rule(np.linalg.inv)
def inv(fn, p, t, kw):
    y = dispatch(fn, p, kw)
    return y, None if t[0] is None else -(y @ t[0] @ y)


@tangent_rule(np.linalg.solve)
def solve(fn, p, t, kw):
    """dx = A^-1 (db - dA x). NumPy 2 reads b as one vector for every matrix of A's stack exactly when b is 1-D (x is
    then (..., n)), else as a stack of matrices (..., n, m) (NumPy 1: vectors where b has one axis fewer than A): the
    tangent's right side is made a stack of matrices (a column for vectors), so that the one a vector b makes with a
    stack of A is never read as a matrix."""
    given = {**dict(zip(("a", "b"), p)), **kw}
    da, db = (list(t) + [None])[:2]
    a, b = given["a"], given["b"]
    y = fn(a, b)
    vector = np.ndim(strip(b)) == (1 if _NUMPY_2 else np.ndim(strip(a)) - 1)
    x = y[..., None] if vector else y
    rhs = _total([None if db is None else db[..., None] if vector else db, None if da is None else -(da @ x)])
    if rhs is None:
        return y, None
    dx = np.linalg.solve(a, rhs)
    return y, dx[..., 0] if vector else dx


@tangent_rule(np.linalg.norm)
def norm(fn, p, t, kw):
    """Vector p-norms along an axis (or of a vector), the Frobenius norm, and the nuclear and spectral (2, -2) norms
    of matrices, through the singular values' tangents."""
    names = ("x", "ord", "axis", "keepdims")
    given = {**dict(zip(names, p)), **kw}
    if any(ti is not None for ti in t[1:]):
        raise ForwardModeError("np.linalg.norm: only the array may carry a derivative")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    x, dx = p[0], t[0]
    order, axis, keepdims = given.get("ord"), given.get("axis"), given.get("keepdims", False)
    ndim = np.ndim(strip(x))
    matrix = isinstance(axis, tuple) and len(axis) == 2 or axis is None and ndim == 2
    if axis is None and ndim > 2 and order is None or order == "fro" or matrix and order is None:
        order, axis = 2, (None if axis is None else tuple(axis))
        matrix = False
    if matrix:
        return y, _matrix_norm(x, dx, order, (-2, -1) if axis is None else axis, keepdims)
    if np.iscomplexobj(strip(x)):
        if order not in (None, 2):
            raise ForwardModeError("forward mode supports the 2-norm of a complex array only")
        return y, np.real(np.sum(np.conj(x) * dx, axis=axis, keepdims=keepdims)) / _kept_nonzero(y)
    order = 2 if order is None else order
    kept = y if keepdims or axis is None else np.expand_dims(y, axis)
    if order in (np.inf, -np.inf):
        picked = strip(np.abs(x)) == strip(kept)
        return y, np.sum(picked * np.sign(x) * dx, axis=axis, keepdims=keepdims) / np.sum(
            picked, axis=axis, keepdims=keepdims)
    if order == 0 or not isinstance(order, (int, float)):
        raise ForwardModeError(f"forward mode has no tangent for np.linalg.norm with ord={order!r} of a vector")
    if order == 1:
        return y, np.sum(np.sign(x) * dx, axis=axis, keepdims=keepdims)
    scale = np.abs(x) ** (order - 1) * np.sign(x)
    return y, np.sum(scale * dx, axis=axis, keepdims=keepdims) / _kept_nonzero(y) ** (order - 1)


def _kept_nonzero(y):
    return np.where(strip(y) == 0, 1.0, y)


def _matrix_norm(x, dx, order, axes, keepdims):
    """The nuclear norm (the sum of the singular values) and the 2 / -2 norms (the largest / smallest one)."""
    if order not in ("nuc", 2, -2):
        raise ForwardModeError(f"forward mode has no tangent for np.linalg.norm with ord={order!r} of a matrix")
    xm, dm = np.moveaxis(x, axes, (-2, -1)), np.moveaxis(dx, axes, (-2, -1))
    s, ds = _singular_values(xm, dm)
    out = np.sum(ds, axis=-1) if order == "nuc" else _picked(s, ds, np.max if order == 2 else np.min)
    if keepdims:
        out = np.expand_dims(out, tuple(sorted(a % np.ndim(strip(x)) for a in axes)))
    return out


def _picked(s, ds, which):
    hit = strip(s) == which(strip(s), axis=-1, keepdims=True)
    return np.sum(ds * hit, axis=-1) / np.sum(hit, axis=-1)


@tangent_rule(np.linalg.cholesky)
def cholesky(fn, p, t, kw):
    """dL = L (tril(S, -1) + Re diag(S) / 2), S = L^-1 dA L^-H (a Hermitian, or real symmetric, positive-definite A),
    dA the Hermitian matrix of the lower triangle of the tangent (NumPy reads that triangle only, and its diagonal's
    real part, as the reverse rule does)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    upper = kw.get("upper", False)  # (U = L^H, read from the upper triangle, as the reverse rule takes it)
    low = _H(y) if upper else y
    inv_l = np.linalg.inv(low)
    s = inv_l @ _hermitian(t[0], "U" if upper else "L") @ _H(inv_l)
    d_low = low @ (np.tril(s, -1) + 0.5 * _re(s) * np.eye(np.shape(strip(s))[-1]))
    return y, _H(d_low) if upper else d_low


def _trace_of_solve(a, da):
    """tr(A^-1 dA), over the last two axes: d log det A."""
    return np.einsum("...ii->...", np.linalg.solve(a, da))


def _trace_of_adjugate(a, da):
    """tr(adj(A) dA), over the last two axes, where A may be singular: with A = U diag(s) Vh, adj(A) = det(U) det(Vh)
    Vh^H diag(prod_{j != i} s_j) U^H (no inverse)."""
    U, s, Vh = np.linalg.svd(a)
    n = np.shape(strip(s))[-1]
    others = np.prod(np.where(np.eye(n, dtype=bool), 1.0, s[..., None, :]), axis=-1)
    adj = (np.linalg.det(U) * np.linalg.det(Vh))[..., None, None] * ((_H(Vh) * others[..., None, :]) @ _H(U))
    return np.einsum("...ij,...ji->...", adj, da)


@tangent_rule(np.linalg.det)
def det(fn, p, t, kw):
    """d det A = tr(adj(A) dA): det A tr(A^-1 dA) where det A is not 0 (a degenerate triangle's area: the SVD's)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    if np.any(np.asarray(strip(y)) == 0):
        return y, _trace_of_adjugate(p[0], t[0])
    return y, y * _trace_of_solve(p[0], t[0])


@tangent_rule(np.linalg.slogdet)
def slogdet(fn, p, t, kw):
    """(sign, log |det A|): d log |det A| = Re tr(A^-1 dA); the sign of a real A is piecewise constant, a complex
    one's turns by i Im tr(A^-1 dA)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    d = _trace_of_solve(p[0], t[0])
    complex_ = np.iscomplexobj(strip(p[0])) or np.iscomplexobj(strip(t[0]))
    return y, (y[0] * 1j * np.imag(d) if complex_ else None, np.real(d))


def _complex(*values):
    return any(np.iscomplexobj(strip(v)) for v in values if v is not None)


def _real(name, *values, why=""):
    if _complex(*values):
        raise ForwardModeError(f"forward mode supports np.linalg.{name} of real matrices only{why}")


def _T(a):
    return np.swapaxes(a, -1, -2)


def _re(a):
    """The real part of a complex array; a real one itself."""
    return np.real(a) if _complex(a) else a


def _H(a):
    """The conjugate transpose (a real matrix's transpose)."""
    return np.conj(_T(a)) if np.iscomplexobj(strip(a)) else _T(a)


def _gaps(w, what):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it; equal values (a degenerate spectrum) have no such
    derivative."""
    d = w[..., None, :] - w[..., :, None]
    eye = np.eye(np.shape(strip(w))[-1], dtype=bool)
    if np.any((strip(d) == 0) & ~eye):
        raise ForwardModeError(f"np.linalg: the {what} of a matrix with repeated values have no derivative")
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, d))


def _hermitian(a, uplo):
    """The Hermitian (real: symmetric) matrix eigh and cholesky read from one triangle of a: that triangle, the real
    part of its diagonal (LAPACK ignores the imaginary one), and the conjugate of its mirror image."""
    low = a if uplo == "L" else _H(a)
    strict = np.tril(low, -1)
    return strict + _H(strict) + _re(low) * np.eye(np.shape(strip(a))[-1])


@tangent_rule(np.linalg.eigh, np.linalg.eigvalsh)
def eigh(fn, p, t, kw):
    """dw_i = Re v_i^H dA v_i, dV = V (F o (V^T dA V)) for the Hermitian matrix read from one triangle (the
    eigenvectors of a real one only: a complex one's are fixed up to a phase each, which LAPACK picks)."""
    if fn is np.linalg.eigh:
        _real("eigh", p[0], t[0], why=" (of a complex Hermitian one, its eigenvalues: np.linalg.eigvalsh)")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    uplo = p[1] if len(p) > 1 else kw.get("UPLO", "L")
    w, V = np.linalg.eigh(p[0], uplo)
    inner = _H(V) @ _hermitian(t[0], uplo) @ V
    dw = np.diagonal(inner, axis1=-2, axis2=-1)
    if fn is np.linalg.eigvalsh:
        return y, _re(dw)
    return y, (dw, V @ (_gaps(w, "eigenvectors") * inner))


def _singular_values(a, da):
    """The reduced SVD's values and their tangents, Re diag(U^H dA V) (the values are real: a complex matrix's take
    the real part)."""
    U, s, Vh = np.linalg.svd(a, full_matrices=False)
    ds = np.diagonal(_H(U) @ da @ _H(Vh), axis1=-2, axis2=-1)
    return s, _re(ds)


@tangent_rule(np.linalg.svd)
def svd(fn, p, t, kw):
    """The reduced SVD a = U diag(s) Vh (Townsend's tangents): with P = U^T dA V, ds = diag(P),
    dU = U (F o (P S + S P^T)) + (I - U U^T) dA V / s, dV = V (F o (S P + P^T S)) + (I - V V^T) dA^T U / s, F over the
    squared singular values."""
    names = ("a", "full_matrices", "compute_uv", "hermitian")
    given = {**dict(zip(names, p)), **kw}
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    if given.get("hermitian"):
        raise ForwardModeError("forward mode supports np.linalg.svd without hermitian=True")
    a, da = p[0], t[0]
    if not given.get("compute_uv", True):
        return y, _singular_values(a, da)[1]
    _real("svd", a, da, why=" (of a complex one, its singular values: compute_uv=False; its singular vectors are "
                            "fixed up to a phase each, which LAPACK picks)")
    m, n = np.shape(strip(a))[-2:]
    U, s, Vh = np.linalg.svd(a, full_matrices=False)
    V = _T(Vh)
    P = _T(U) @ da @ V
    F = _gaps(s * s, "singular vectors")
    row, col = s[..., None, :], s[..., :, None]
    dU = U @ (F * (P * row + col * _T(P)))
    dV = V @ (F * (col * P + _T(P) * row))
    if m > n:
        dU = dU + (da @ V - U @ (_T(U) @ da @ V)) / row
    if n > m:
        dV = dV + (_T(da) @ U - V @ (Vh @ _T(da) @ U)) / row
    dVh = _T(dV)
    if given.get("full_matrices", True) and m != n:  # the completing vectors are not unique: nan tangents, not zeros
        dU, dVh = _completed(dU, m), _T(_completed(dV, n))
    return y, (dU, np.diagonal(P, axis1=-2, axis2=-1), dVh)


if hasattr(np.linalg, "svdvals"):  # (NumPy 2)
    @tangent_rule(np.linalg.svdvals)
    def svdvals(fn, p, t, kw):
        """svd's singular values (compute_uv=False), of a real or complex matrix."""
        y = dispatch(fn, p, kw)
        return y, None if t[0] is None else _singular_values(p[0], t[0])[1]


def _completed(d, size):
    """The tangent of a full_matrices=True factor: the reduced one's columns, then nan for the completing ones (any
    result reading them is nan, never a silently arbitrary number)."""
    extra = size - np.shape(strip(d))[-1]
    if extra == 0:
        return d
    return np.concatenate([d, np.full((*np.shape(strip(d))[:-1], extra), np.nan)], axis=-1)


@tangent_rule(np.linalg.qr)
def qr(fn, p, t, kw):
    """Reduced QR of a tall or square a: with C = Q^H dA R^-1 and O = tril(C, -1) - tril(C, -1)^H + i Im diag(C)
    (skew-Hermitian; LAPACK's R has a real diagonal, so dR's is real too), dR = (C - O) R,
    dQ = Q O + (I - Q Q^H) dA R^-1."""
    mode = p[1] if len(p) > 1 else kw.get("mode", "reduced")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    a, da = p[0], t[0]
    m, n = np.shape(strip(a))[-2:]
    if mode not in ("reduced", "r") and not (mode == "complete" and m == n) or m < n:
        raise ForwardModeError("forward mode supports np.linalg.qr of tall or square matrices, mode 'reduced' or 'r'")
    Q, R = np.linalg.qr(a)
    da_rinv = _T(np.linalg.solve(_T(R), _T(da)))
    C = _H(Q) @ da_rinv
    low = np.tril(C, -1)
    O = low - _H(low)  # noqa: E741
    if _complex(C):
        O = O + 1j * np.imag(C) * np.eye(n)  # noqa: E741
    dR = (C - O) @ R
    if mode == "r":
        return y, dR
    return y, (Q @ O + da_rinv - Q @ C, dR)


@tangent_rule(np.linalg.pinv)
def pinv(fn, p, t, kw):
    """For a of constant rank: dA+ = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+."""
    if any(ti is not None for ti in t[1:]):
        raise ForwardModeError("np.linalg.pinv: only the matrix may carry a derivative")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    args = {**dict(zip(("rcond", "hermitian"), p[1:])), **kw}
    rcond = args.get("rcond") if args.get("rcond") is not None else 1e-15 if "rtol" not in args else \
        args["rtol"] if args["rtol"] is not None else max(np.shape(p[0])[-2:]) * np.finfo(float).eps
    _full_rank("pinv", p[0], rcond)
    if args.get("hermitian"):  # (NumPy's eigh reads the lower triangle only: the matrix is the one it makes)
        return y, _pinv_tangent(_hermitian(p[0], "L"), y, _hermitian(t[0], "L"))
    return y, _pinv_tangent(p[0], y, t[0])


def _full_rank(name, a, rcond):
    """The tangents here are those of a pseudo-inverse of full rank: where the cutoff drops a singular value, forward
    mode says so (jacobian then takes reverse mode, hessian reverse-over-reverse, whose rules follow the cutoff)."""
    s = np.linalg.svd(strip(a), compute_uv=False)
    if np.any(s <= np.asarray(rcond)[..., None] * np.max(s, axis=-1, keepdims=True)):
        raise ForwardModeError(f"np.linalg.{name}: forward mode differentiates it at full rank only, and the cutoff "
                               f"drops a singular value here")


def _pinv_tangent(a, x, da):
    dah, xh = _H(da), _H(x)
    return -(x @ da @ x) + x @ xh @ dah - x @ xh @ dah @ a @ x + dah @ xh @ x - x @ a @ dah @ xh @ x


@tangent_rule(np.linalg.lstsq)
def lstsq(fn, p, t, kw):
    """x = pinv(a) b (a of full rank); the residuals ||a x - b||^2 per column (d: 2 Re sum conj(r) dr); the rank is an
    integer; the singular values as svd's."""
    y = dispatch(fn, p, kw)
    da, db = t[0], t[1] if len(t) > 1 else None
    if da is None and db is None:
        return y, None
    a, b = p[0], p[1]
    x, residuals = y[0], y[1]
    rcond = p[2] if len(p) > 2 else kw.get("rcond")
    eps = np.finfo(float).eps
    _full_rank("lstsq", a, eps * max(np.shape(a)[-2:]) if rcond is None else eps if rcond < 0 else rcond)
    plus = np.linalg.pinv(a)
    dx = _total([None if da is None else _pinv_tangent(a, plus, da) @ b, None if db is None else plus @ db])
    dres = None
    if np.size(strip(residuals)):
        r = a @ x - b
        dr = _total([None if da is None else da @ x, a @ dx, None if db is None else -db])
        dres = 2 * np.sum(_re(np.conj(r) * dr) if _complex(r) else r * dr, axis=0)
    ds = None if da is None else _singular_values(a, da)[1]
    return y, (dx, dres, None, ds)


@tangent_rule(np.linalg.multi_dot)
def multi_dot(fn, p, t, kw):
    """Linear in each matrix of the list: the sum over them of the product with that one's tangent in its place."""
    if any(ti is not None for ti in t[1:]):
        raise ForwardModeError("np.linalg.multi_dot: only the list of arrays may carry a derivative")
    y = dispatch(fn, p, kw)
    tangents = t[0]
    if tangents is None:
        return y, None
    arrays = list(p[0])
    return y, _total([None if ti is None else fn([*arrays[:i], ti, *arrays[i + 1:]], **kw)
                      for i, ti in enumerate(tangents)])


@tangent_rule(np.linalg.matrix_power)
def matrix_power(fn, p, t, kw):
    """d(a^n) = sum_k a^k da a^(n-1-k); a negative n: the power of inv(a), whose tangent is -inv(a) da inv(a)."""
    a, n = p
    if t[1] is not None:
        raise ForwardModeError("np.linalg.matrix_power: the exponent carries no derivative")
    y = dispatch(fn, p, kw)
    if t[0] is None or n == 0:
        return y, None
    base, dbase = a, t[0]
    if n < 0:
        base = np.linalg.inv(a)
        dbase = -(base @ dbase @ base)
    power, dpower = base, dbase
    for _ in range(abs(n) - 1):
        power, dpower = power @ base, dpower @ base + power @ dbase
    return y, dpower

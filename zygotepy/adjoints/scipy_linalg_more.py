"""`scipy.linalg`: rules for the special matrices (toeplitz, circulant, block_diag), the decompositions (eigh,
eigvalsh, svd, svdvals, qr), pinv, lstsq, norm and the LU factorization (lu_factor, lu_solve).

Why rules: SciPy builds toeplitz and circulant with `as_strided` over a concatenated buffer, block_diag by updates in
place, and wraps its decompositions (`_apply_over_batch`) in code with `try`: each was refused. Each rule gives
SciPy's own value. toeplitz, circulant and block_diag are linear: their backs gather the cotangent's diagonals or
blocks (summed over broadcast batch axes). The decompositions' backs are NumPy's rules' formulas
(numpy/decompositions.py) evaluated at SciPy's own factors, so that a loss that reads the vectors (whose signs the
LAPACK driver picks) gets the gradient of what SciPy returned; they are for real matrices, as NumPy's. lu_factor's back
is the LU factorization's derivative (A = P L U: F = L^-1 P^T dA U^-1, dL = L tril(F, -1), dU = triu(F) U), and
lu_solve's gradient is that of a NumPy twin that reads what LAPACK's getrs reads from `lu` (L's strict lower triangle
with a unit diagonal, U's upper triangle). Arguments that change what is computed in ways the rules do not follow
(a generalized eigenproblem's `b`, `subset_by_*`, qr's mode 'raw', ...) raise a `ZygoteError` naming the argument.
The `overwrite_*` flags are turned off (as in scipy_linalg.py), and `check_finite`, `lwork` and the LAPACK drivers
only steer the computation.

Importing this module never imports SciPy: `register()` runs when `scipy.linalg` has been imported.
"""
import sys

import numpy as np

from ..ast_adjoint.dispatch import J
from ..errors import ZygoteError
from . import registry
from .numpy.decompositions import _eigh_back, _svd_back
from .numpy.decompositions import norm as _numpy_norm
from .numpy.linalg import _field, truncated_pinv
from .registry import adjoint, keyword_cotangents, keyword_rule


def _h(m):
    return np.conj(np.swapaxes(m, -1, -2))


def _like(g, x, shape=None):
    """g summed over the axes broadcasting added to (or stretched in) x's `shape` (default np.shape(x)), given x's
    shape, and real where x is real."""
    shape = np.shape(x) if shape is None else shape
    extra = g.ndim - len(shape)
    g = np.sum(g, axis=tuple(range(extra))) if extra > 0 else g
    stretched = tuple(k for k, (s, t) in enumerate(zip(shape, g.shape)) if s == 1 and t != 1)
    g = np.sum(g, axis=stretched, keepdims=True) if stretched else g
    g = g if np.iscomplexobj(x) else np.real(g)
    return g.reshape(np.shape(x))


def _diagonal_sums(d, m, n):
    """s[..., k + n - 1]: the sum of d[..., i, j] over i - j = k, for k from -(n - 1) to m - 1."""
    if m == 0 or n == 0:
        return np.zeros(d.shape[:-2] + (max(m + n - 1, 0),), dtype=d.dtype)
    return np.stack([np.trace(d, offset=-k, axis1=-2, axis2=-1) for k in range(1 - n, m)], axis=-1)


def _kept(names, args, kwargs):
    """The call's arguments with the `overwrite_*` flags off (scipy_linalg._kept's reason: the back reads inputs)."""
    args = tuple(False if k < len(names) and names[k].startswith("overwrite_") else v for k, v in enumerate(args))
    return args, {k: False if k.startswith("overwrite_") else v for k, v in kwargs.items()}


def _refuse(name, argument, why, tail=""):
    raise ZygoteError(f"zygotepy differentiates scipy.linalg.{name} {why}; {argument} is not supported{tail}")


def _real(name, x):
    if np.iscomplexobj(x):
        _refuse(name, "complex input", "of real matrices only (as NumPy's rules)")


# --- the rules' backs, from SciPy's bound arguments and result: `prepare(bound, y)` refuses what it does not follow and
# returns `back(dy) -> {parameter: cotangent}` ------------------------------------------------------------------------
def _toeplitz(bound, y):
    c0, r0 = bound["c"], bound["r"]  # (as given: the cotangents take their shapes)
    c = np.atleast_1d(c0)
    r = None if r0 is None else np.atleast_1d(r0)
    m, n = c.shape[-1], (c if r is None else r).shape[-1]

    def back(dy):
        s = _diagonal_sums(np.asarray(dy), m, n)
        dc, dr = s[..., n - 1:], s[..., :n - 1][..., ::-1]
        dr = np.concatenate([np.zeros(dr.shape[:-1] + (1,), dtype=dr.dtype), dr], axis=-1)  # (r[0] is not read)
        if r is None:  # (r = conj(c): its cotangent goes to c conjugated)
            return {"c": _like(dc + np.conj(dr), c0, c.shape)}
        return {"c": _like(dc, c0, c.shape), "r": _like(dr, r0, r.shape)}
    return back


def _circulant(bound, y):
    c0 = bound["c"]
    c = np.atleast_1d(c0)
    n = c.shape[-1]

    def back(dy):
        s = _diagonal_sums(np.asarray(dy), n, n)  # (entry i, j is c[(i - j) mod n])
        wrapped = np.concatenate([np.zeros(s.shape[:-1] + (1,), dtype=s.dtype), s[..., :n - 1]], axis=-1)
        return {"c": _like(s[..., n - 1:] + wrapped, c0, c.shape)}
    return back


def _eigh(bound, y, vectors):
    name = "eigh" if vectors else "eigvalsh"
    for argument in ("b", "type", "subset_by_index", "subset_by_value"):
        if (bound[argument] != 1) if argument == "type" else (bound[argument] is not None):
            _refuse(name, argument, "of one symmetric matrix and its whole spectrum")
    a = np.asarray(bound["a"])
    _real(name, a)
    uplo = "L" if bound["lower"] else "U"
    if vectors and not bound["eigvals_only"]:
        w, V = y

        def back(dy):
            dw, dV = _field(dy, 0, "w"), _field(dy, 1, "v")
            return {"a": None if dw is None and dV is None else _eigh_back(w, V, dw, dV, uplo)}
        return back
    return lambda dy: {"a": _eigh_back(*np.linalg.eigh(a, uplo), dy, None, uplo)}


def _svd(bound, y):
    a = np.asarray(bound["a"])
    _real("svd", a)
    if not bound["compute_uv"]:
        return lambda dy: {"a": _svd_back(*np.linalg.svd(a, full_matrices=False), None, dy, None)}
    U, s, Vh = y
    k, full = s.shape[-1], bound["full_matrices"]

    def back(dy):
        dU, ds, dVh = _field(dy, 0, "U"), _field(dy, 1, "s"), _field(dy, 2, "Vh")
        if dU is None and ds is None and dVh is None:
            return {}
        if full:  # (the columns completing a basis are arbitrary: no cotangent may reach them)
            for extra in (None if dU is None else dU[..., :, k:], None if dVh is None else dVh[..., k:, :]):
                if extra is not None and np.any(extra != 0):
                    _refuse("svd", "full_matrices=True", "where the singular vectors completing a basis carry no "
                            "cotangent (they are not unique)", " with a cotangent on them: use full_matrices=False")
            dU = None if dU is None else dU[..., :, :k]
            dVh = None if dVh is None else dVh[..., :k, :]
        return {"a": _svd_back(U[..., :, :k], s, Vh[..., :k, :], dU, ds, dVh)}
    return back


def _svdvals(bound, y):
    a = np.asarray(bound["a"])
    _real("svdvals", a)
    return lambda dy: {"a": _svd_back(*np.linalg.svd(a, full_matrices=False), None, dy, None)}


def _tall_qr_back(Q, R, dQ, dR):
    """The reduced QR's back for m >= n (NumPy's rule, TensorFlow's QrGrad)."""
    qdq, rdr = _h(Q) @ dQ, R @ _h(dR)
    M = np.tril(qdq - _h(qdq) + rdr - _h(rdr))
    Rinv_T = _h(np.linalg.inv(R))
    return Q @ (dR + M @ Rinv_T) + (dQ - Q @ qdq) @ Rinv_T


def _qr(bound, y):
    mode, pivoting = bound["mode"], bound["pivoting"]
    if mode not in ("full", "economic", "r"):
        _refuse("qr", f"mode={mode!r}", "with mode 'full', 'economic' or 'r'")
    a = np.asarray(bound["a"])
    _real("qr", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "r":
        # (the same R: the same LAPACK factorization)
        Q, R = sys.modules["scipy.linalg"].qr(a, mode="economic", pivoting=pivoting)[:2]
    else:
        Q, R = y[0][..., :, :k], y[1][..., :k, :]
    P = y[-1] if pivoting else None

    def back(dy):
        dQ, dR = (None, _field(dy, 0, "R")) if mode == "r" else (_field(dy, 0, "Q"), _field(dy, 1, "R"))
        if dQ is None and dR is None:
            return {}
        if dQ is not None and dQ.shape[-1] > k:  # (mode 'full' of a tall matrix: the completing columns)
            if np.any(dQ[..., :, k:] != 0):
                _refuse("qr", "mode='full'", "where the columns completing Q to a basis carry no cotangent (they "
                        "are not unique)", " with a cotangent on them: use mode='economic'")
            dQ = dQ[..., :, :k]
        dQ = np.zeros_like(Q) if dQ is None else dQ
        dR = np.zeros_like(R) if dR is None else dR[..., :k, :]  # (R's rows below k are zeros: constant)
        if m >= n:
            g = _tall_qr_back(Q, R, dQ, dR)
        else:  # a = [X Y], X = Q R[:, :m] and Y = Q R[:, m:]
            dV = dR[..., :, m:]
            g = np.concatenate([_tall_qr_back(Q, R[..., :, :m], dQ + a[..., :, m:] @ _h(dV), dR[..., :, :m]), Q @ dV],
                               axis=-1)
        return {"a": g if P is None else np.take_along_axis(g, np.argsort(P, axis=-1)[..., None, :], axis=-1)}
    return back


def _pinv(bound, y):
    a = np.asarray(bound["a"])
    s = np.linalg.svd(a, compute_uv=False)
    top = np.max(s, axis=-1, initial=0.0)
    atol = 0.0 if bound["atol"] is None else bound["atol"]
    rtol = max(a.shape[-2:]) * np.finfo(np.result_type(a.dtype, 1.0)).eps if bound["rtol"] is None else bound["rtol"]
    rcond = np.where(top > 0, (atol + top * rtol) / np.where(top > 0, top, 1.0), 1.0)  # (SciPy: s > atol + rtol max s)
    ranked = bound["return_rank"]

    def back(dy):
        dB = _field(dy, 0, "B") if ranked else dy
        return {"a": None if dB is None else truncated_pinv(a, rcond)[1](dB)}
    return back


def _lstsq(bound, y):
    a, b = np.asarray(bound["a"]), np.asarray(bound["b"])
    if a.ndim != 2:
        _refuse("lstsq", "a stack of matrices", "of one matrix")
    x, residues, rank, _ = y
    s = np.linalg.svd(a, compute_uv=False)
    # the pseudo-inverse of SciPy's rank (its cutoff: cond, or gelsy's rank-revealing QR): keep the largest `rank`
    rcond = 0.0 if rank >= s.size else 1.0 if rank == 0 else (s[rank - 1] + s[rank]) / (2 * s[0])

    def back(dy):
        dx, dres, ds = _field(dy, 0, "x"), _field(dy, 1, "residues"), _field(dy, 3, "s")
        da = db = None
        vector = b.ndim == 1
        if dx is not None:
            X, pb = truncated_pinv(a, rcond)
            da, db = pb(np.multiply.outer(dx, np.conj(b)) if vector else dx @ _h(b)), _h(X) @ dx
        if dres is not None and np.size(residues):
            r, w = b - a @ x, np.asarray(dres)
            ga = -2 * (np.multiply.outer(r, np.conj(x)) * w if vector else (r * w) @ _h(x))
            da, db = ga if da is None else da + ga, 2 * r * w if db is None else db + 2 * r * w
        if ds is not None:
            _real("lstsq's singular values", a)
            gs = _svd_back(*np.linalg.svd(a, full_matrices=False), None, ds, None)
            da = gs if da is None else da + gs
        return {"a": da, "b": db}
    return back


def _norm(bound, y):
    _, pb = _numpy_norm(bound["a"], bound["ord"], bound["axis"], bound["keepdims"])  # (NumPy's semantics: SciPy's)

    def back(dy):
        da, dord, _, _ = pb(dy)
        return {"a": da, "ord": dord}
    return back


def _permutation(piv):
    """perm with a[perm] = L U, from LAPACK's row interchanges (row i swapped with row piv[i], in turn)."""
    perm = np.broadcast_to(np.arange(piv.shape[-1]), piv.shape).copy()
    for i in range(piv.shape[-1]):
        j = piv[..., i:i + 1]
        here, there = perm[..., i:i + 1].copy(), np.take_along_axis(perm, j, axis=-1)
        perm[..., i:i + 1] = there
        np.put_along_axis(perm, j, here, axis=-1)
    return perm


def _lu_factor(bound, y):
    lu, piv = y
    if lu.shape[-1] != lu.shape[-2]:
        _refuse("lu_factor", "a non-square matrix", "of square matrices")
    inverse = np.argsort(_permutation(piv), axis=-1)
    low = np.tril(lu, -1) + np.eye(lu.shape[-1], dtype=lu.dtype)
    up = np.triu(lu)

    def back(dy):
        g = _field(dy, 0, "lu")
        if g is None:
            return {}
        x = np.tril(_h(low) @ np.tril(g, -1), -1) + np.triu(np.triu(g) @ _h(up))
        z = np.linalg.solve(_h(low), _h(np.linalg.solve(up, _h(x))))  # L^-H x U^-H: the cotangent of a[perm]
        return {"a": np.take_along_axis(z, inverse[..., :, None], axis=-2)}
    return back


def lu_solve_twin(lu, b, perm, inverse, trans):
    low = np.tril(lu, -1) + np.eye(lu.shape[-1])
    up = np.triu(lu)
    if trans in (0, "N"):
        return np.linalg.solve(up, np.linalg.solve(low, b[perm]))
    t = _h if trans in (2, "C") else (lambda m: np.swapaxes(m, -1, -2))
    return np.linalg.solve(t(low), np.linalg.solve(t(up), b))[inverse]


# name: (SciPy's parameters in order, their defaults, prepare)
_SPECS = {
    "toeplitz": (("c", "r"), {"r": None}, _toeplitz),
    "circulant": (("c",), {}, _circulant),
    "eigh": (("a", "b"), {"b": None, "lower": True, "eigvals_only": False, "type": 1, "subset_by_index": None,
                          "subset_by_value": None}, lambda bound, y: _eigh(bound, y, True)),
    "eigvalsh": (("a", "b"), {"b": None, "lower": True, "type": 1, "subset_by_index": None, "subset_by_value": None},
                 lambda bound, y: _eigh(bound, y, False)),
    "svd": (("a", "full_matrices", "compute_uv", "overwrite_a", "check_finite", "lapack_driver"),
            {"full_matrices": True, "compute_uv": True}, _svd),
    "svdvals": (("a", "overwrite_a", "check_finite"), {}, _svdvals),
    "qr": (("a", "overwrite_a", "lwork", "mode", "pivoting", "check_finite"), {"mode": "full", "pivoting": False}, _qr),
    "pinv": (("a",), {"atol": None, "rtol": None, "return_rank": False}, _pinv),
    "lstsq": (("a", "b", "cond", "overwrite_a", "overwrite_b", "check_finite", "lapack_driver"), {}, _lstsq),
    "norm": (("a", "ord", "axis", "keepdims", "check_finite"), {"ord": None, "axis": None, "keepdims": False}, _norm),
    "lu_factor": (("a", "overwrite_a", "check_finite"), {}, _lu_factor),
}


def _rule(target, names, defaults, prepare):
    @keyword_rule
    @adjoint(target)
    def rule(*args, **kwargs):
        bound = {**defaults, **dict(zip(names, args)), **kwargs}
        kept_args, kept_kwargs = _kept(names, args, kwargs)
        y = target(*kept_args, **kept_kwargs)
        of = prepare(bound, y)

        def back(dy):
            grads = {} if dy is None else of(dy)
            return keyword_cotangents([grads.get(n) for n in names[:len(args)]], kwargs,
                                      **{k: grads.get(k) for k in kwargs})
        return y, back
    rule.__qualname__ = f"scipy_linalg_{target.__name__}"
    return rule


def _block_diag_rule(target):
    @adjoint(target)
    def block_diag(*arrs):
        y = target(*arrs)
        shapes = [np.shape(a)[:-2] + (1,) * (2 - np.ndim(a)) + np.shape(a)[-2:] for a in arrs]  # (at least 2-D)

        def back(dy):
            if dy is None:
                return tuple(None for _ in arrs)
            out, r, c = [], 0, 0
            for a, shape in zip(arrs, shapes):
                rows, cols = shape[-2:]
                out.append(_like(dy[..., r:r + rows, c:c + cols], a, shape))
                r, c = r + rows, c + cols
            return tuple(out)
        return y, back
    return block_diag


def _lu_solve_rule(target):
    @keyword_rule
    @adjoint(target)
    def lu_solve(lu_and_piv, b, *args, **kwargs):
        names = ("trans", "overwrite_b", "check_finite")
        lu, piv = lu_and_piv
        trans = {"trans": 0, **dict(zip(names, args)), **kwargs}["trans"]
        kept_args, kept_kwargs = _kept(names, args, kwargs)
        y = target(lu_and_piv, b, *kept_args, **kept_kwargs)
        if np.ndim(lu) != 2:
            _refuse("lu_solve", "a stack of factorizations", "of one factorization")
        perm = _permutation(np.asarray(piv))
        _, pb = J(lu_solve_twin, lu, b, perm, np.argsort(perm), trans)

        def back(dy):
            _, dlu, db, *_ = pb(dy)
            return keyword_cotangents(((dlu, None), db, *(None for _ in args)), kwargs)
        return y, back
    return lu_solve


def register():
    linalg = sys.modules["scipy.linalg"]
    for name, (names, defaults, prepare) in _SPECS.items():
        _rule(getattr(linalg, name), names, defaults, prepare)
    _block_diag_rule(linalg.block_diag)
    _lu_solve_rule(linalg.lu_solve)


registry.on_import("scipy.linalg", register)

"""np.linalg's inverses and solves (inv, solve, det, slogdet, pinv, matrix_power), batched over leading axes, the
np.linalg names of functions whose rules live elsewhere (cross, vecdot, tensordot, outer, matmul, matrix_transpose,
trace, diagonal), and the helpers decompositions.py shares.
"""
import numpy as np

from ...backends import conj, is_complex, namespace, namespace_of, on, traced, unbroadcast
from ...errors import ZygoteError
from ..registry import adjoint, namespace_generic
from .common import _H
from .diagonals import diagonal
from .elementwise import as_operand
from .products import _cross_rule, _vecdot_rule, matmul, outer, tensordot
from .reductions import trace
from .reshaping import matrix_transpose


la = np.linalg


def _linalg(*xs):
    """The linalg namespace of the arrays xs: np.linalg for NumPy arrays, else their library's (the array API's)."""
    xp = namespace_of(*xs)
    return la if xp is np else xp.linalg


def _field(dy, k, name, result=None):
    """Entry k (named `name`, or as the named tuple `result` names it: a namedtuple's `_fields`, a torch result's
    `__match_args__`) of the cotangent of a tuple-like result (tuple, namedtuple, or StructGrad)."""
    if dy is None:
        return None
    if isinstance(dy, dict):
        fields = getattr(type(result), "_fields", None) or getattr(type(result), "__match_args__", None)
        key = fields[k] if fields else name
        unknown = {f for f, v in dy.items() if v is not None} - set(fields or ()) - {name}
        if unknown:  # never a silent zero for a field read under a name this rule does not know
            raise ZygoteError(f"a cotangent for the field(s) {sorted(unknown)} of a linalg result, which the rule "
                              f"reads as {name!r} (entry {k}); index the result instead")
        return dy.get(key)
    return dy[k]


def _eye_like(x):
    return np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)


def _lower(g):
    """A cotangent for a function that reads only the lower triangle of a symmetric matrix (cholesky, eigh): the
    symmetric gradient g folded onto the lower triangle."""
    xp = namespace(g)
    if xp is not np:
        return xp.tril(g + _H(g), k=-1) + g * xp.eye(g.shape[-1], dtype=g.dtype, **on(g))
    return np.tril(g + _H(g), -1) + g * np.eye(g.shape[-1], dtype=g.dtype)


def _gaps(w, what):
    """F_ij = 1 / (w_j - w_i) off the diagonal; raises where two values coincide (the vectors are not unique)."""
    xp = namespace(w)
    diff = w[..., None, :] - w[..., :, None]
    off = ~xp.eye(w.shape[-1], dtype=xp.bool, **on(w))
    scale = xp.maximum(xp.max(xp.abs(w)), 1.0)  # (no float(): w may be a dual number, under hessian)
    if not traced(w) and bool(xp.any(xp.logical_and(off, xp.abs(diff) <= 1e-12 * scale))):
        raise ZygoteError(f"the gradient of the {what} is undefined: repeated values {w}")
    return xp.where(off, 1 / xp.where(off, diff, xp.ones_like(diff)), xp.zeros_like(diff))


# --- inverses and solves ---------------------------------------------------------------------------------------------------
@adjoint(la.inv)
def inv(a):
    y = _linalg(a).inv(a)
    return y, lambda dy: (None if dy is None else -_H(y) @ dy @ _H(y),)


@adjoint(la.solve)
def solve(a, b):
    """x = a^-1 b: db = a^-H dx, da = -db x^H (b a vector when 1-d)."""
    linalg = _linalg(a, b)
    x = linalg.solve(a, b)

    def back(dy):
        if dy is None:
            return (None, None)
        vector = (b.ndim if hasattr(b, "ndim") else np.ndim(b)) == 1
        db = linalg.solve(_H(a), dy[..., None] if vector else dy)
        da = -db @ _H(x[..., None] if vector else x)
        return unbroadcast(da, a), unbroadcast(db[..., 0] if vector else db, b)
    return x, back


@adjoint(la.tensorsolve)
def tensorsolve(a, b, *args, **kwargs):
    """x with tensordot(a, x, x.ndim) = b: NumPy solves the matrix m (a's axes in `axes` moved last, reshaped to
    (b.size, x.size)) for the flat b, so db = m^-H dx and dm = -db x^H, reshaped and moved back. (NumPy's own Python
    sets `res.shape`, which reverse mode cannot follow.)"""
    x = la.tensorsolve(a, b, *args, **kwargs)
    axes = args[0] if args else kwargs.get("axes")
    order = list(range(np.ndim(a)))
    for k in axes or ():  # (as NumPy moves them)
        order.remove(k)
        order.append(k)

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        moved = np.transpose(a, order)
        db = la.solve(_H(np.reshape(moved, (np.size(b), np.size(x)))), np.ravel(dy))
        dm = -np.outer(db, conj(np.ravel(x)))
        return (np.transpose(np.reshape(dm, moved.shape), np.argsort(order)), np.reshape(db, np.shape(b)),
                *(None for _ in args))
    return x, back


def _dual(v):
    return getattr(type(v), "__zygote_number__", False)


def _array(xp, v):
    """`v` as an array of namespace `xp`, but a dual number (`hessian` runs these rules on them) as it is."""
    return v if _dual(v) else xp.asarray(v)


def _det_back(a, y, dy, linalg):
    """dy adj(a)^H: adj(a) = det(a) a^-1 (y = det(a)) where a is regular; where a det is 0, from the SVD a = U diag(s)
    Vh, adj(a)^H = conj(det(U) det(Vh)) U diag(prod_{j != i} s_j) Vh, which needs no inverse. NumPy's inv shares det's
    LU, which has no zero pivot where det is not 0; other libraries' may pivot otherwise (torch's inv fails on a
    singular matrix whose det is 1e-17): for them, a det far from 0 for the rows' norms (Hadamard's bound). (No
    try/except: an outer level of nested differentiation transforms this code.)"""
    xp = namespace(a)
    if xp is np:
        regular = not (y == 0).any()  # (the method: NumPy's function costs more)
    else:
        regular = not traced(y) and bool(xp.all(xp.abs(y) > 1e-8 * xp.prod(xp.linalg.vector_norm(a, axis=-1),
                                                                             axis=-1)))
    if regular:
        return _array(xp, dy * conj(y))[..., None, None] * _H(linalg.inv(a))
    U, s, Vh = linalg.svd(a)
    hole = xp.eye(s.shape[-1], dtype=xp.bool, **on(s))
    others = xp.prod(xp.where(hole, xp.ones_like(s)[..., None, :], s[..., None, :]), axis=-1)  # prod_{j != i} s_j
    return _array(xp, dy * conj(linalg.det(U) * linalg.det(Vh)))[..., None, None] * ((U * others[..., None, :]) @ Vh)


@adjoint(la.det)
def det(a):
    """d det(a) = tr(adj(a) da): the cotangent dy adj(a)^H (`_det_back`: a singular a too)."""
    linalg = _linalg(a)
    y = linalg.det(a)
    return y, lambda dy: (None if dy is None else _det_back(a, y, dy, linalg),)


@adjoint(la.slogdet)
def slogdet(a):
    """d log|det a| = Re tr(a^-1 da); a real matrix's sign is piecewise constant, a complex one's, exp(i arg det),
    turns by i Im tr(a^-1 da). At a singular matrix (logabsdet = -inf, found by the
    same LU whose zero pivot would make the inverse fail) log|det| has no finite derivative: a ZygoteError where a
    cotangent reaches it; a matrix of the batch whose logabsdet gets a zero cotangent contributes zeros."""
    linalg = _linalg(a)
    result = linalg.slogdet(a)
    xp = namespace(a)
    asarray = np.asarray if linalg is la else xp.asarray

    def back(dy):
        d = _field(dy, 1, "logabsdet", result)
        d_sign = _field(dy, 0, "sign", result)
        if d_sign is not None and is_complex(result[0]):  # the sign exp(i arg det) turns with Im tr(a^-1 da)
            turn = -xp.imag(result[0] * conj(asarray(d_sign)))
            d = 1j * turn if d is None else asarray(d) + 1j * turn
        if d is None:
            return (None,)
        d = d if _dual(d) else asarray(d)  # (hessian's dual numbers pass)
        singular = result[1] == -np.inf
        per_matrix = xp.reshape(d, tuple(np.shape(d)) + (1, 1))  # (not `d[..., None, None]`: a dual of a number)
        if not traced(singular) and not bool(xp.any(singular)):
            return (per_matrix * _H(linalg.inv(a)),)
        if not traced(singular) and bool(xp.any(xp.logical_and(singular, d != 0))):
            raise ZygoteError("np.linalg.slogdet: the gradient of logabsdet is undefined at a singular matrix "
                              "(log|det| is -inf there, and its derivative unbounded nearby)")
        eye = xp.eye(a.shape[-1], dtype=a.dtype, **on(a))
        regular = xp.where(singular[..., None, None], eye, a)  # (their cotangent is 0: any invertible stand-in)
        return (xp.where(singular[..., None, None], xp.zeros_like(a), per_matrix * _H(linalg.inv(regular))),)
    return result, back


def truncated_pinv(a, rcond):
    """X = pinv(a) less the singular values s <= rcond * max(s) (NumPy's cutoff), and its back at that rank. X = G a^H,
    G = f(a^H a), f(l) = 1/l above the cutoff, else 0, whatever the dropped values are (Golub and Pereyra's formula on
    the truncation misses the coupling to them): with Gb = dX a, Mb = V (F o V^H Gb V) V^H (Daleckii-Krein, F_ij =
    (f_i - f_j) / (l_i - l_j); to a's null space P = I - V V^H, f_i / l_i), da = a (Mb + Mb^H) + dX^H G."""
    xp = namespace(a)
    U, s, Vh = _linalg(a).svd(a, full_matrices=False)
    V, lam = _H(Vh), s * s
    keep = s > (np.asarray(rcond)[..., None] if xp is np else rcond) * xp.max(s, axis=-1, keepdims=True)
    f = xp.where(keep, 1 / xp.where(keep, lam, xp.ones_like(lam)), xp.zeros_like(lam))

    def back(dX):
        ki, kj, fi, fj = keep[..., :, None], keep[..., None, :], f[..., :, None], f[..., None, :]
        gap = xp.where(ki != kj, lam[..., :, None] - lam[..., None, :], xp.ones_like(fi * fj))
        F = xp.where(ki & kj, -fi * fj, xp.where(ki != kj, (fi - fj) / gap, xp.zeros_like(gap)))
        Gb, c = dX @ a, f * f
        GbV, VhGb = Gb @ V, Vh @ Gb
        Mb = V @ (F * (Vh @ GbV)) @ Vh + (V * c[..., None, :]) @ (VhGb - (VhGb @ V) @ Vh) \
            + ((GbV - V @ (Vh @ GbV)) * c[..., None, :]) @ Vh
        return a @ (Mb + _H(Mb)) + _H(dX) @ ((V * f[..., None, :]) @ Vh)
    return (V * (f * s)[..., None, :]) @ _H(U), back


def _pinv_rcond(a, xp, args, kwargs):
    """The cutoff ratio pinv used: NumPy's rcond (1e-15 by default) or rtol (None: max(M, N) eps), the array API's rtol
    (None: max(M, N) eps)."""
    kw = {**dict(zip(("rcond", "hermitian") if xp is np else ("rtol", "hermitian"), args)), **kwargs}
    if kw.get("rcond") is not None:
        return kw["rcond"]
    if xp is np and "rtol" not in kw:
        return 1e-15
    return max(a.shape[-2:]) * (np.finfo(np.result_type(a.dtype, 1.0)) if xp is np else xp.finfo(a.dtype)).eps \
        if kw.get("rtol") is None else kw["rtol"]


@adjoint(la.pinv)
def pinv(a, *args, **kwargs):
    """The derivative of the pseudo-inverse X of a at constant rank (decompositions.truncated_pinv: exact where the
    cutoff drops nonzero singular values, Golub & Pereyra's formula where it drops none), transposed. With hermitian=True,
    NumPy reads only the lower triangle, and the gradient goes there (eigh's convention). Another library's pinv takes
    the cutoff as the array API's `rtol` (NumPy's `rcond` means the same)."""
    a = as_operand(a)
    xp = namespace(a)
    hermitian = xp is np and kwargs.get("hermitian", args[1] if len(args) > 1 else False)
    if xp is np:
        X = la.pinv(a, *args, **kwargs)
        if hermitian:  # (NumPy's eigh reads the lower triangle: the derivative is of that Hermitian matrix)
            a = np.tril(a) + _H(np.tril(a, -1))
    else:
        kw = {**dict(zip(("rtol", "hermitian"), args)), **kwargs}
        rtol = kw.pop("rtol", None)
        rtol = kw.pop("rcond", None) if rtol is None else rtol
        if kw.pop("hermitian", False) or kw:
            raise ZygoteError(f"np.linalg.pinv of another library's arrays: {sorted(kw) or ['hermitian']} is not "
                              f"supported by the namespace-generic rule (rtol is)")
        X = xp.linalg.pinv(a) if rtol is None else xp.linalg.pinv(a, rtol=rtol)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        g = truncated_pinv(a, _pinv_rcond(a, xp, args, kwargs))[1](dy)  # (of fixed rank: the cutoff's truncation)
        if hermitian:  # a Hermitian perturbation, folded onto the lower triangle that was read (as eigh's rule)
            g = _lower(0.5 * (g + _H(g)))
        return (g, *(None for _ in args))
    return X, back


@adjoint(la.matrix_power)
def matrix_power(a, n):
    """d(a^n) = sum_k a^k da a^(n-1-k); a negative n is the power of the inverse."""
    a = as_operand(a)
    linalg, xp = _linalg(a), namespace(a)
    base = linalg.inv(a) if n < 0 else a
    powers = [xp.broadcast_to(xp.eye(a.shape[-1], dtype=base.dtype, **on(a)), tuple(a.shape))]
    for _ in range(abs(n) - 1):
        powers.append(powers[-1] @ base)

    def back(dy):
        if dy is None:
            return (None, None)
        g = sum((_H(powers[k]) @ dy @ _H(powers[abs(n) - 1 - k]) for k in range(abs(n))),
                xp.zeros(tuple(a.shape), dtype=base.dtype, **on(a)))
        return (-_H(base) @ g @ _H(base) if n < 0 else g, None)
    return linalg.matrix_power(a, n), back


# --- the same functions under other names ------------------------------------------------------------------------------
def _last_two(rule, fn):
    """np.linalg.trace / np.linalg.diagonal: the np. rule over the last two axes (offset is keyword-only)."""
    def rule_(x, **kwargs):
        y, back = rule(x, kwargs.get("offset", 0), -2, -1)
        if namespace(x) is not np and set(kwargs) - {"offset"}:
            raise ZygoteError(f"np.linalg.{fn.__name__} of another library's arrays takes offset= only")
        return fn(x, **kwargs) if namespace(x) is np else y, lambda dy: back(dy)[:1]
    rule_.__qualname__ = f"linalg_{fn.__name__}_rule"
    return rule_


ALIASES = {np.cross: _cross_rule(np.cross), la.cross: _cross_rule(la.cross), np.vecdot: _vecdot_rule(np.vecdot),
           la.vecdot: _vecdot_rule(la.vecdot), la.tensordot: tensordot, la.outer: outer, la.matmul: matmul,
           la.matrix_transpose: matrix_transpose, la.trace: _last_two(trace, la.trace),
           la.diagonal: _last_two(diagonal, la.diagonal)}
for _fn, _rule in ALIASES.items():
    adjoint(_fn)(_rule)


# computed with the namespace of their input: the array API's linalg has them
namespace_generic(la.inv, la.solve, la.det, la.slogdet, la.matrix_power, la.pinv, la.tensordot, la.trace, la.outer,
                  np.cross, la.cross, np.vecdot, la.vecdot, la.matmul, la.matrix_transpose, la.diagonal)

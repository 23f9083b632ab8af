"""NumPy linear algebra: contractions (vdot, tensordot, einsum, kron, cross, vecdot, matvec, multi_dot) and
`np.linalg` (inv, solve, det, slogdet, norms, cholesky, qr, eigh, svd, pinv, lstsq, matrix_power). Matrix rules are
batched over leading axes. Where a gradient is undefined (repeated eigenvalues or singular values with a cotangent on the
vectors, a wide QR) they raise `ZygoteError` rather than return a wrong number. The decompositions are for real input.
"""
import string

import numpy as np
from numpy._core.einsumfunc import _parse_einsum_input

from ..backends import conj, namespace, namespace_of, on, on_any, scatter_add, unbroadcast
from ..errors import ZygoteError
from .numpy import matmul, outer
from .numpy_reductions import trace
from .numpy_shapes import diagonal, matrix_transpose
from .registry import adjoint, namespace_generic, nondifferentiable

la = np.linalg


def _T(x):
    xp = namespace(x)
    return np.swapaxes(x, -1, -2) if xp is np else xp.matrix_transpose(x)


def _H(x):
    return conj(_T(x))


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
    scale = max(1.0, float(xp.max(xp.abs(w))))
    if bool(xp.any(xp.logical_and(off, xp.abs(diff) <= 1e-12 * scale))):
        raise ZygoteError(f"the gradient of the {what} is undefined: repeated values {w}")
    return xp.where(off, 1 / xp.where(off, diff, xp.ones_like(diff)), xp.zeros_like(diff))


# --- contractions ----------------------------------------------------------------------------------------------------------
@adjoint(np.vdot)
def vdot(a, b):
    """sum(conj(a) * b) over the flattened arrays."""
    xp = namespace_of(a, b)
    if xp is not np:
        where = on_any(a, b)  # (a list or a number made where the array lives)
        a1, b1 = xp.reshape(xp.asarray(a, **where), (-1,)), xp.reshape(xp.asarray(b, **where), (-1,))
        return xp.sum(conj(a1) * b1), lambda dy: (None, None) if dy is None else (
            xp.reshape(conj(dy) * b1, tuple(np.shape(a))), xp.reshape(dy * a1, tuple(np.shape(b))))

    def back(dy):
        if dy is None:
            return (None, None)
        return (np.reshape(conj(dy) * np.ravel(b), np.shape(a)), np.reshape(dy * np.ravel(a), np.shape(b)))
    return np.vdot(a, b), back


def _einsum(xp, spec, *operands):
    """einsum with explicit output in the namespace xp; where xp has none (the array API), a product of the operands
    broadcast over all indices, summed over those not in the output (a repeated index of an operand is its diagonal)."""
    fn = np.einsum if xp is np else getattr(xp, "einsum", None)
    if fn is not None:
        return fn(spec, *operands)
    inputs, output = spec.split("->")
    letters = list(dict.fromkeys(output + inputs.replace(",", "")))
    total = None
    for x, s in zip(operands, inputs.split(","), strict=True):
        x = xp.asarray(x)
        for c in set(s):
            while s.count(c) > 1:  # the diagonal of two axes of the same index: an identity mask, then one axis summed
                i, j = s.index(c), s.index(c, s.index(c) + 1)
                mask = xp.reshape(xp.eye(x.shape[i], dtype=x.dtype, **on(x)), tuple(
                    x.shape[i] if k in (i, j) else 1 for k in range(x.ndim)))
                x, s = xp.sum(x * mask, axis=j), s[:j] + s[j + 1:]
        present = [c for c in letters if c in s]
        if present != list(s):
            x = xp.permute_dims(x, tuple(s.index(c) for c in present))
        x = xp.reshape(x, tuple(x.shape[present.index(c)] if c in s else 1 for c in letters))
        total = x if total is None else total * x
    summed = tuple(range(len(output), len(letters)))
    return xp.sum(total, axis=summed) if summed else total


def _einsum_back(xp, inputs, output, operands, dy, k):
    """The cotangent of operand k: contract dy with the other operands onto operand k's unique indices, broadcast the
    indices only it had, and put repeated indices (a diagonal, 'ii') back on the diagonal with identity matrices."""
    spec = inputs[k]
    unique = "".join(dict.fromkeys(spec))
    elsewhere = set(output).union(*(inputs[j] for j in range(len(inputs)) if j != k))
    kept = "".join(c for c in unique if c in elsewhere)
    terms = [output] + [inputs[j] for j in range(len(inputs)) if j != k]
    args = [dy] + [conj(operands[j]) for j in range(len(inputs)) if j != k]
    g = _einsum(xp, ",".join(terms) + "->" + kept, *args)
    sizes = {c: n for c, n in zip(spec, _shape_only(operands[k]).shape, strict=True)}
    if kept != unique:
        g = xp.broadcast_to(xp.reshape(g, tuple(sizes[c] if c in kept else 1 for c in unique)),
                            tuple(sizes[c] for c in unique))
    if len(unique) == len(spec):
        return _einsum(xp, unique + "->" + spec, g) if unique != spec else g
    free = iter(c for c in string.ascii_letters if c not in spec and c not in elsewhere)
    renamed, eyes, seen = "", [], set()
    for c in spec:
        if c in seen:
            fresh = next(free)
            eyes.append((c + fresh, xp.eye(sizes[c], dtype=g.dtype, **on(g))))
            renamed += fresh
        else:
            renamed += c
            seen.add(c)
    return _einsum(xp, ",".join([unique, *(s for s, _ in eyes)]) + "->" + renamed, g, *(e for _, e in eyes))


def _shape_only(x):
    """A NumPy stand-in of x's shape (no copy of its data, which may live on another device)."""
    return np.broadcast_to(np.empty(()), tuple(x.shape) if hasattr(x, "shape") else np.shape(x))


# NumPy's parser of the subscripts (Python, with try/except): an outer level differentiating the rule below (nested
# reverse mode) runs it as the constant it is, strings from shapes
nondifferentiable(_parse_einsum_input)


@adjoint(np.einsum)
def einsum(subscripts, *operands, **kwargs):
    """Operands of another library are contracted by its einsum (composed from products and sums where the namespace
    has none): the subscripts are parsed by NumPy, with the ellipses named."""
    if not isinstance(subscripts, str):
        raise ZygoteError("np.einsum: the gradient rule takes the subscripts-string form only")
    xp = namespace_of(*operands)
    if xp is np:
        y = np.einsum(subscripts, *operands, **kwargs)
        inputs, output, _ = _parse_einsum_input((subscripts, *operands))
    else:
        if any(k != "optimize" for k in kwargs):
            raise ZygoteError(f"np.einsum of another library's arrays: {sorted(set(kwargs) - {'optimize'})} is not "
                              f"supported by the namespace-generic rule")
        inputs, output, _ = _parse_einsum_input((subscripts, *(_shape_only(x) for x in operands)))
        where = on_any(*operands)
        operands = tuple(x if hasattr(x, "shape") else xp.asarray(x, **where) for x in operands)
        y = _einsum(xp, inputs + "->" + output, *operands)
    inputs = inputs.split(",")

    def back(dy):
        if dy is None:
            return (None, *(None for _ in operands))
        return (None, *(unbroadcast(_einsum_back(xp, inputs, output, operands, dy, k), x)
                        for k, x in enumerate(operands)))
    return y, back


def _tensordot_subscripts(na, nb, axes):
    if isinstance(axes, int):
        axes = (list(range(na - axes, na)), list(range(axes)))
    left, right = ([a] if isinstance(a, int) else list(a) for a in axes)
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(na)]
    sb = [next(letters) for _ in range(nb)]
    for i, j in zip(left, right, strict=True):
        sb[j % nb] = sa[i % na]
    out = [c for i, c in enumerate(sa) if i % na not in {x % na for x in left}] + \
          [c for j, c in enumerate(sb) if j % nb not in {x % nb for x in right}]
    return "".join(sa) + "," + "".join(sb) + "->" + "".join(out)


@adjoint(np.tensordot)
def tensordot(a, b, *args, **kwargs):
    """tensordot as the einsum it is."""
    axes = args[0] if args else kwargs.get("axes", 2)
    _, back = einsum(_tensordot_subscripts(np.ndim(a), np.ndim(b), axes), a, b)
    xp = namespace_of(a, b)
    y = np.tensordot(a, b, *args, **kwargs) if xp is np else xp.tensordot(a, b, axes=axes)
    return y, lambda dy: (*back(dy)[1:], *(None for _ in args))


@adjoint(np.kron)
def kron(a, b):
    """y[(i, k), (j, l)] = a[i, j] b[k, l]: view dy with a's and b's axes interleaved, and contract."""
    xp = namespace_of(a, b)
    if xp is not np:
        where = on_any(a, b)
        a, b = xp.asarray(a, **where), xp.asarray(b, **where)
    shape_a, shape_b = tuple(np.shape(a)), tuple(np.shape(b))
    n = max(len(shape_a), len(shape_b))
    full_a, full_b = (1,) * (n - len(shape_a)) + shape_a, (1,) * (n - len(shape_b)) + shape_b
    A = xp.reshape(a, tuple(s for d in full_a for s in (d, 1)))
    B = xp.reshape(b, tuple(s for d in full_b for s in (1, d)))

    def back(dy):
        if dy is None:
            return (None, None)
        d = xp.reshape(dy, tuple(s for pair in zip(full_a, full_b, strict=True) for s in pair))
        da = xp.sum(d * conj(B), axis=tuple(range(1, 2 * n, 2)))
        db = xp.sum(d * conj(A), axis=tuple(range(0, 2 * n, 2)))
        return xp.reshape(da, shape_a), xp.reshape(db, shape_b)
    if xp is not np:  # the interleaved product, its axis pairs merged
        return xp.reshape(A * B, tuple(p * q for p, q in zip(full_a, full_b, strict=True))), back
    return np.kron(a, b), back


def _cross_rule(fn):
    def rule(a, b, **kwargs):
        """<dy, a x b> = <a, b x dy> = <b, dy x a>."""
        xp = namespace_of(a, b)
        cross = fn if xp is np else _cross_foreign(xp, fn, kwargs)

        def back(dy):
            if dy is None:
                return (None, None)
            return unbroadcast(cross(b, dy, **kwargs), a), unbroadcast(cross(dy, a, **kwargs), b)
        return cross(a, b, **kwargs), back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _cross_foreign(xp, fn, kwargs):
    """The array API's linalg.cross (3-vectors along `axis`); NumPy's axisa/axisb/axisc and 2-vectors it lacks."""
    if set(kwargs) - {"axis"}:
        raise ZygoteError(f"np.{fn.__name__} of another library's arrays takes axis= only (not {sorted(kwargs)})")

    def cross(a, b, axis=-1):
        where = on_any(a, b)
        a, b = xp.asarray(a, **where), xp.asarray(b, **where)
        if a.shape[axis] != 3 or b.shape[axis] != 3:
            raise ZygoteError(f"np.{fn.__name__} of another library's arrays: only 3-vectors (the array API's "
                              f"linalg.cross), not shapes {tuple(a.shape)} and {tuple(b.shape)}")
        return xp.linalg.cross(a, b, axis=axis)
    return cross


def _vecdot_rule(fn):
    def rule(a, b, **kwargs):
        """sum(conj(a) * b, axis)."""
        axis = kwargs.get("axis", -1)
        xp = namespace_of(a, b)

        def back(dy):
            if dy is None:
                return (None, None)
            d = xp.expand_dims(xp.asarray(dy, **on_any(dy, a, b)), axis=axis)
            return unbroadcast(conj(d) * b, a), unbroadcast(d * a, b)
        if xp is not np:
            if set(kwargs) - {"axis"}:
                raise ZygoteError(f"np.{fn.__name__} of another library's arrays takes axis= only")
            where = on_any(a, b)
            a_, b_ = xp.asarray(a, **where), xp.asarray(b, **where)
            ndim = max(a_.ndim, b_.ndim)  # the array API counts the axis from the end of the broadcast shape
            return xp.vecdot(a_, b_, axis=axis - ndim if axis >= 0 else axis), back
        return fn(a, b, **kwargs), back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _matvec(A, v):
    """A @ v over stacks of matrices and vectors: NumPy's matvec, else a matmul with v as a column."""
    xp = namespace_of(A, v)
    return np.matvec(A, v) if xp is np else (A @ v[..., None])[..., 0]


@adjoint(np.matvec)
def matvec(A, v):
    def back(dy):
        if dy is None:
            return (None, None)
        return unbroadcast(dy[..., :, None] * conj(v)[..., None, :], A), unbroadcast(_matvec(_H(A), dy), v)
    return _matvec(A, v), back


@adjoint(np.vecmat)
def vecmat(v, A):
    """conj(v) @ A."""
    def back(dy):
        if dy is None:
            return (None, None)
        return unbroadcast(_matvec(A, conj(dy)), v), unbroadcast(v[..., :, None] * dy[..., None, :], A)
    if namespace_of(v, A) is not np:  # conj(v) as a row times A
        return (conj(v)[..., None, :] @ A)[..., 0, :], back
    return np.vecmat(v, A), back


@adjoint(la.multi_dot)
def multi_dot(arrays, **kwargs):
    """A chain of matmuls (first and last may be vectors), each with its own pullback."""
    pullbacks, y = [], arrays[0]
    for x in arrays[1:]:
        y, back = matmul(y, x)
        pullbacks.append(back)

    def back(dy):
        if dy is None:
            return (None,)
        grads = []
        for pb in reversed(pullbacks):
            dy, dx = pb(dy)
            grads.append(dx)
        return (type(arrays)([dy, *reversed(grads)]) if isinstance(arrays, (list, tuple)) else [dy, *reversed(grads)],)
    if namespace_of(*arrays) is not np:  # the chain's product, left to right
        if kwargs:
            raise ZygoteError("np.linalg.multi_dot of another library's arrays takes no keywords")
        return y, back
    return la.multi_dot(arrays, **kwargs), back


# --- 1-d convolutions and polynomials -------------------------------------------------------------------------------------
def _full_offset(n, m, mode):
    """Where np.convolve's `mode` output starts inside the 'full' one."""
    return {"full": 0, "same": (min(n, m) - 1) // 2, "valid": min(n, m) - 1}[mode]


def _mode_size(n, m, mode):
    return {"full": n + m - 1, "same": max(n, m), "valid": max(n, m) - min(n, m) + 1}[mode]


def _convolve_full(xp, a, v, name, mode):
    """The full convolution of two 1-d arrays of another library: the products a_i v_j summed into entry i + j (the
    array API has no convolve: a scatter of the outer product), and its back (dy gathered at i + j, times the other
    input)."""
    if mode not in ("full", "same", "valid"):
        raise ZygoteError(f"{name} of another library's arrays: no mode {mode!r} (full, same, valid)")
    where = on(a) or on(v)  # the device of the input that is an array of xp
    a, v = (xp.reshape(xp.asarray(t), (-1,)) if hasattr(t, "shape") else
            xp.reshape(xp.asarray(t, dtype=xp.float64, **where), (-1,)) for t in (a, v))
    n, m = a.shape[0], v.shape[0]
    if n == 0 or m == 0:
        raise ZygoteError(f"{name}: an empty input")
    index = xp.asarray(np.add.outer(np.arange(n), np.arange(m)).reshape(-1), **where)
    full = scatter_add(xp, n + m - 1, index, xp.reshape(a[:, None] * v[None, :], (-1,)))

    def back_full(d):
        g = xp.reshape(xp.take(d, index, axis=0), (n, m))
        return g @ conj(v), conj(a) @ g
    return full, back_full, n, m


def _shaped(xp, g, like):
    """A 1-d cotangent in the shape of its argument (a 0-d array; a list gets the 1-d array)."""
    return xp.reshape(g, tuple(like.shape)) if hasattr(like, "shape") else g


def _mode_slice(xp, full, back_full, start, size, args, after=lambda da, dv: (da, dv)):
    """The `mode` output, a slice of the full one, and the back that puts dy into a full-length cotangent."""
    total = full.shape[0]

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        dy = xp.asarray(dy, **on(full))
        d = xp.concat([xp.zeros((start,), dtype=dy.dtype, **on(full)), dy,
                       xp.zeros((total - start - size,), dtype=dy.dtype, **on(full))])
        return (*after(*back_full(d)), *(None for _ in args))
    return full[start:start + size], back


@adjoint(np.convolve)
def convolve(a, v, *args, **kwargs):
    """y_k = sum_i a_i v_(k-i): each cotangent is dy (placed in the full output) correlated with the other input."""
    mode = args[0] if args else kwargs.get("mode", "full")
    xp = namespace_of(a, v)
    if xp is not np:
        full, back_full, n, m = _convolve_full(xp, a, v, "np.convolve", mode)
        return _mode_slice(xp, full, back_full, _full_offset(n, m, mode), _mode_size(n, m, mode), args,
                           lambda da, dv: (_shaped(xp, da, a), _shaped(xp, dv, v)))
    y = np.convolve(a, v, *args, **kwargs)

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        n, m = np.size(a), np.size(v)
        full = np.zeros(n + m - 1, dtype=np.result_type(dy, np.float64 if np.asarray(dy).dtype.kind not in "fc"
                                                         else dy))
        start = _full_offset(n, m, mode)
        full[start:start + np.size(dy)] = dy
        return (np.correlate(full, conj(np.ravel(v)), "valid").reshape(np.shape(a)),
                np.correlate(full, conj(np.ravel(a)), "valid").reshape(np.shape(v)), *(None for _ in args))
    return y, back


@adjoint(np.correlate)
def correlate(a, v, *args, **kwargs):
    """correlate(a, v, "full") = convolve(a, conj(v[::-1]), "full"); the other modes are slices of it (for "same"
    with the longer v, NumPy centres the slice the other way)."""
    mode = args[0] if args else kwargs.get("mode", "valid")
    xp = namespace_of(a, v)
    if xp is not np:
        v_ = xp.asarray(v) if hasattr(v, "shape") else xp.asarray(v, dtype=xp.float64, **on(a))
        full, back_full, n, m = _convolve_full(xp, a, conj(xp.flip(xp.reshape(v_, (-1,)))), "np.correlate", mode)
        start = n - 1 - (n - 1) // 2 if mode == "same" and n < m else _full_offset(n, m, mode)
        return _mode_slice(xp, full, back_full, start, _mode_size(n, m, mode), args,
                           lambda da, dw: (_shaped(xp, da, a), _shaped(xp, conj(xp.flip(dw)), v)))
    y = np.correlate(a, v, *args, **kwargs)
    _, back_full = convolve(a, conj(np.flip(v)))

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        n, m = np.size(a), np.size(v)
        start = _full_offset(n, m, mode)
        if mode == "same" and n < m:
            start = n - 1 - (n - 1) // 2
        full = np.zeros(n + m - 1, dtype=np.result_type(dy, np.float64))
        full[start:start + np.size(dy)] = dy
        da, dw = back_full(full)
        return (da, conj(np.flip(dw)), *(None for _ in args))
    return y, back


@adjoint(np.polyval)
def polyval(p, x):
    """y = sum_i p_i x^(N-1-i): dp_i = x^(N-1-i), dx = polyval(polyder(p), x)."""
    xp = namespace_of(p, x)
    if xp is not np:
        return _polyval_foreign(xp, p, x)
    y = np.polyval(p, x)

    def back(dy):
        if dy is None:
            return (None, None)
        n = np.size(p)
        powers = np.asarray(x)[..., None] ** np.arange(n - 1, -1, -1)
        dp = np.sum(np.reshape(np.asarray(dy)[..., None] * conj(powers), (-1, n)), axis=0)
        dx = dy * conj(np.polyval(np.polyder(p), x)) if n > 1 else None
        return (np.reshape(dp, np.shape(p)), unbroadcast(dx, x) if dx is not None else None)
    return y, back


def _polyval_foreign(xp, p, x):
    """np.polyval in another library's namespace: Horner's rule; dp_i = sum dy x^(N-1-i) from the powers of x, dx = dy
    times the derivative polynomial at x (Horner's rule again)."""
    p_ = xp.asarray(p) if hasattr(p, "shape") else xp.asarray(p, dtype=xp.float64, **on(x))
    if p_.ndim != 1:
        raise ZygoteError(f"np.polyval of another library's arrays: p must be 1-d, not of shape {tuple(p_.shape)}")
    x_ = xp.asarray(x) if hasattr(x, "shape") else xp.asarray(x, dtype=p_.dtype, **on(p_))
    n = p_.shape[0]
    y = xp.zeros(tuple(x_.shape), dtype=xp.result_type(p_, x_), **on(x_))
    for k in range(n):
        y = y * x_ + p_[k]

    def back(dy):
        if dy is None:
            return (None, None)
        dy = xp.asarray(dy) if hasattr(dy, "shape") else dy
        powers = [xp.ones_like(y)]
        for _ in range(n - 1):
            powers.append(powers[-1] * x_)
        dp = xp.stack([xp.sum(dy * conj(powers[n - 1 - k])) for k in range(n)])
        dx = None
        if n > 1:
            der = xp.zeros_like(y)
            for k in range(n - 1):
                der = der * x_ + (n - 1 - k) * p_[k]
            dx = unbroadcast(dy * conj(der), x)
        return (xp.reshape(dp, tuple(p_.shape)) if hasattr(p, "shape") else dp, dx)
    return y, back


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


@adjoint(la.det)
def det(a):
    linalg = _linalg(a)
    y = linalg.det(a)
    if linalg is not la:
        xp = namespace(a)
        return y, lambda dy: (None if dy is None else xp.asarray(dy * conj(y))[..., None, None] * _H(linalg.inv(a)),)
    return y, lambda dy: (None if dy is None else (dy * conj(y))[..., None, None] * _H(la.inv(a)),)


@adjoint(la.slogdet)
def slogdet(a):
    """d log|det a| = tr(a^-1 da); the sign is piecewise constant."""
    linalg = _linalg(a)
    result = linalg.slogdet(a)
    asarray = np.asarray if linalg is la else namespace(a).asarray

    def back(dy):
        d = _field(dy, 1, "logabsdet", result)
        return (None if d is None else asarray(d)[..., None, None] * _H(linalg.inv(a)),)
    return result, back


@adjoint(la.pinv)
def pinv(a, *args, **kwargs):
    """Golub & Pereyra's derivative of the pseudo-inverse X of a (of constant rank), transposed. Another library's
    pinv takes the cutoff as the array API's `rtol` (NumPy's `rcond` means the same)."""
    xp = namespace(a)
    if xp is np:
        X = la.pinv(a, *args, **kwargs)
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
        I_m, I_n = xp.eye(a.shape[-2], dtype=X.dtype, **on(X)), xp.eye(a.shape[-1], dtype=X.dtype, **on(X))
        g = -_H(X) @ dy @ _H(X) + (I_m - a @ X) @ _H(dy) @ X @ _H(X) + _H(X) @ X @ _H(dy) @ (I_n - X @ a)
        return (g, *(None for _ in args))
    return X, back


@adjoint(la.matrix_power)
def matrix_power(a, n):
    """d(a^n) = sum_k a^k da a^(n-1-k); a negative n is the power of the inverse."""
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


# computed with the namespace of their input: the array API's linalg has them (einsum is composed where it has none)
namespace_generic(la.inv, la.solve, la.det, la.slogdet, la.matrix_power, la.pinv, np.einsum, np.tensordot,
                  la.tensordot, la.trace, np.outer, la.outer, np.inner, np.vdot, np.kron, np.cross, la.cross, np.vecdot,
                  la.vecdot, np.matvec, np.vecmat, la.multi_dot, la.matmul, la.matrix_transpose, la.diagonal,
                  # composed: Horner's rule, the outer product scattered along its anti-diagonals
                  np.polyval, np.convolve, np.correlate)

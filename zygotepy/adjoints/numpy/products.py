"""NumPy's products and contractions: dot, matmul, outer, inner, vdot, einsum, tensordot, kron, cross, vecdot,
matvec/vecmat and linalg.multi_dot (their np.linalg names are linalg.py's aliases).
"""
import string

import numpy as np
from numpy._core.einsumfunc import _parse_einsum_input

from ...backends import conj, namespace_of, on, on_any, unbroadcast
from ...errors import ZygoteError
from ...forward.dual import has_dual
from ..registry import adjoint, namespace_generic, nondifferentiable
from ..matmul import matmul as operator_matmul
from ..operators import mul
from .common import _H, arrayed

la = np.linalg


def _array_like(x):
    """x as an array: lists and numbers converted, arrays (and array-like values such as forward mode's dual numbers,
    which must not be flattened into plain arrays) kept."""
    return x if hasattr(x, "ndim") else np.asarray(x)


# --- products ------------------------------------------------------------------------------------------------------------
@adjoint(np.dot)
def dot(a, b):
    if namespace_of(a, b) is not np:  # np.dot of arrays up to 2-d (or a 2-d b) is matmul, or a product with a scalar
        if getattr(a, "ndim", 0) == 0 or getattr(b, "ndim", 0) == 0:
            return mul(a, b)
        if b.ndim > 2:
            raise ZygoteError("dot of another library's arrays with a second argument of more than 2 axes has no "
                              "namespace-generic rule: use matmul or tensordot")
        return matmul(a, b)
    y = np.dot(a, b)

    def back(dy):
        if dy is None:
            return (None, None)
        a_, b_ = _array_like(a), _array_like(b)
        if a_.ndim == 0 or b_.ndim == 0:
            return unbroadcast(dy * conj(b), a), unbroadcast(dy * conj(a), b)
        if b_.ndim == 1:
            da = np.multiply.outer(dy, conj(b_))
            db = np.tensordot(conj(a_), dy, axes=(tuple(range(a_.ndim - 1)), tuple(range(np.ndim(dy)))))
        else:
            da = np.dot(dy, np.swapaxes(conj(b_), -1, -2)) if b_.ndim == 2 else np.tensordot(
                dy, conj(b_), axes=(tuple(range(a_.ndim - 1, np.ndim(dy))), tuple(i for i in range(b_.ndim)
                                                                               if i != b_.ndim - 2)))
            db = np.tensordot(conj(a_), dy, axes=(tuple(range(a_.ndim - 1)), tuple(range(a_.ndim - 1))))
            if b_.ndim > 2:
                db = np.moveaxis(db, 0, -2)
        return (da if not isinstance(a, (int, float)) else float(np.sum(da)),
                db if not isinstance(b, (int, float)) else float(np.sum(db)))
    return y, back


@adjoint(np.matmul)
def matmul(a, b):
    return operator_matmul(_array_like(a), _array_like(b))


@adjoint(np.outer)
def outer(a, b):
    xp = namespace_of(a, b)
    if xp is not np:  # the flattened arrays' broadcast product (the array API has no outer)
        where = on(a) or on(b)
        a1, b1 = xp.reshape(xp.asarray(a, **where), (-1,)), xp.reshape(xp.asarray(b, **where), (-1,))
        return a1[:, None] * b1[None, :], lambda dy: (None, None) if dy is None else (
            xp.reshape(dy @ conj(b1), tuple(np.shape(a))), xp.reshape(conj(a1) @ dy, tuple(np.shape(b))))

    def back(dy):
        if dy is None:
            return (None, None)
        return ((dy @ conj(np.ravel(b))).reshape(np.shape(a)), (conj(np.ravel(a)) @ dy).reshape(np.shape(b)))
    return np.outer(a, b), back


@adjoint(np.inner)
def inner(a, b):
    """y[I, J] = sum_k a[I, k] b[J, k]: contract dy's J axes with b's, and its I axes with a's."""
    xp = namespace_of(a, b)
    if xp is not np:
        where = on(a) or on(b)
        return _inner_foreign(xp, xp.asarray(a, **where), xp.asarray(b, **where))

    def back(dy):
        if dy is None:
            return (None, None)
        if np.ndim(a) == 0 or np.ndim(b) == 0:
            return unbroadcast(dy * conj(b), a), unbroadcast(dy * conj(a), b)
        na, nb = np.ndim(a) - 1, np.ndim(b) - 1
        dy_ = arrayed(dy)
        return (np.tensordot(dy_, conj(b), axes=(list(range(na, na + nb)), list(range(nb)))),
                np.tensordot(dy_, conj(a), axes=(list(range(na)), list(range(na)))))
    return np.inner(a, b), back


def _inner_foreign(xp, a, b):
    """np.inner in another library's namespace: its tensordot over the last axes (a product where one is 0-d)."""
    if a.ndim == 0 or b.ndim == 0:
        return a * b, lambda dy: (None, None) if dy is None else (unbroadcast(dy * conj(b), a),
                                                                   unbroadcast(dy * conj(a), b))
    na, nb = a.ndim - 1, b.ndim - 1
    return xp.tensordot(a, b, axes=([na], [nb])), lambda dy: (None, None) if dy is None else (
        xp.tensordot(dy, conj(b), axes=(list(range(na, na + nb)), list(range(nb)))),
        xp.tensordot(dy, conj(a), axes=(list(range(na)), list(range(na)))))


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
        # (by shapes alone: hessian's dual numbers, which forward mode's einsum takes, are no arrays to NumPy's parser)
        inputs, output, _ = _parse_einsum_input((subscripts, *(_shape_only(x) for x in operands)))
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
    if isinstance(axes, (int, np.integer)):  # (NumPy's integer too: `axes=np.int64(1)`)
        axes = (list(range(na - axes, na)), list(range(axes)))
    left, right = ([a] if isinstance(a, (int, np.integer)) else list(a) for a in axes)
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


def _padded(xp, v):
    """Vectors along the last axis as 3-vectors: a 2-vector gets a zero third component."""
    return v if v.shape[-1] == 3 else xp.concat([v, xp.zeros_like(v[..., :1])], axis=-1)


def _as_array(xp, v, where):
    """`v` as an array of `xp` on the device `where`; `hessian`'s dual numbers as they are (they carry tangents)."""
    return v if has_dual((v,)) else xp.asarray(v, **where)


def _cross_axes(kwargs):
    """(axisa, axisb, axisc) of a cross call: axis= sets all three."""
    axis = kwargs.get("axis")
    return tuple(kwargs.get(k, -1) if axis is None else axis for k in ("axisa", "axisb", "axisc"))


def _cross_rule(fn):
    def rule(a, b, **kwargs):
        """<dy, a x b> = <a, conj(b) x dy> = <b, dy x conj(a)>, with the vectors moved to the last axis (axisa, axisb,
        and axisc for the result). A 2-vector is a 3-vector with a zero third component (its cotangent's is dropped);
        the product of two 2-vectors is the third component of theirs."""
        xp = namespace_of(a, b)
        cross = fn if xp is np else _cross_foreign(xp, fn)

        def back(dy):
            if dy is None:
                return (None, None)
            (ka, kb, kc), where = _cross_axes(kwargs), on_any(a, b)
            a_, b_ = (xp.moveaxis(_as_array(xp, v, where), k, -1) for v, k in ((a, ka), (b, kb)))
            dy = _as_array(xp, dy, where)
            if a_.shape[-1] == 2 and b_.shape[-1] == 2:
                dy = xp.stack([xp.zeros_like(dy), xp.zeros_like(dy), dy], axis=-1)
            else:
                dy = xp.moveaxis(dy, kc, -1)
            da, db = cross(conj(_padded(xp, b_)), dy), cross(dy, conj(_padded(xp, a_)))
            return (unbroadcast(xp.moveaxis(unbroadcast(da[..., :a_.shape[-1]], a_), -1, ka), a),
                    unbroadcast(xp.moveaxis(unbroadcast(db[..., :b_.shape[-1]], b_), -1, kb), b))
        return cross(a, b, **kwargs), back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _cross_foreign(xp, fn):
    """NumPy's cross from the array API's linalg.cross (3-vectors along the last axis): the vectors moved there,
    2-vectors padded (np.cross only), the result moved to axisc (or the third component, for two 2-vectors)."""
    def cross(a, b, **kwargs):
        (ka, kb, kc), where = _cross_axes(kwargs), on_any(a, b)
        a, b = (xp.moveaxis(xp.asarray(v, **where), k, -1) for v, k in ((a, ka), (b, kb)))
        if {a.shape[-1], b.shape[-1]} - ({2, 3} if fn is np.cross else {3}):
            raise ValueError(f"np.{fn.__name__}: incompatible dimensions for cross product: shapes {tuple(a.shape)} "
                             f"and {tuple(b.shape)} (vectors moved last)")
        y = xp.linalg.cross(_padded(xp, a), _padded(xp, b), axis=-1)
        return y[..., 2] if a.shape[-1] == 2 and b.shape[-1] == 2 else xp.moveaxis(y, -1, kc)
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


# computed with the namespace of their input (einsum is composed where the namespace has none; the others from
# matmul, tensordot, broadcast products and sums)
namespace_generic(np.dot, np.matmul, np.einsum, np.tensordot, np.outer, np.inner, np.vdot, np.kron, np.matvec,
                  np.vecmat, la.multi_dot)

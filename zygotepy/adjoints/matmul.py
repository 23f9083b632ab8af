"""The `@` operator's rule (`operator.matmul`): matrix products of NumPy arrays and of every array library, written
against the array namespace of its operands, with the conjugate-cotangent convention (for y = a @ b,
da = dy @ conj(b).T). Its `need` mask spares the product nobody reads (a weight's input rarely wants its cotangent).
"""
import operator

import numpy as np

from ..backends import conj, namespace, on, unbroadcast
from .registry import adjoint
from .operators import ALL, sequence_operand


def vector_product_cotangent(dy, a, b, k):
    """The cotangent of operand `k` of `a @ b` for real NumPy arrays of one dtype, a matrix and a vector (else None):
    what the general code of the matmul rule's back computes for them, without its reshaping calls. (The array
    path's second form, numpy/array_inline.py, computes with it too.)"""
    if type(dy) is np.ndarray and a.dtype == b.dtype == dy.dtype:
        if a.ndim == 2 and b.ndim == 1:
            return dy[:, None] * b if k == 0 else (a.T @ dy[:, None])[:, 0]
        if a.ndim == 1 and b.ndim == 2:
            return (dy[None, :] @ b.T)[0, :] if k == 0 else a[:, None] * dy
    return None


@adjoint(operator.matmul, need=True)
def matmul(a, b):
    if type(a) is not np.ndarray and isinstance(a, (list, tuple)) or type(b) is not np.ndarray and isinstance(
            b, (list, tuple)):
        return sequence_operand(operator.matmul, matmul, a, b) or (a @ b, None)  # (two sequences: Python raises first)
    y = a @ b

    def back(dy, need=ALL):
        if dy is None:
            return (None, None)
        if type(a) is type(b) is np.ndarray and a.dtype.kind != "c" != b.dtype.kind and type(dy) is np.ndarray:
            if a.ndim == b.ndim == 2:  # the common cases, directly: what the general code below computes for them
                return (dy @ b.T if need[0] else None), (a.T @ dy if need[1] else None)
            if {a.ndim, b.ndim} == {1, 2} and a.dtype == b.dtype == dy.dtype:  # a matrix and a vector
                return tuple(vector_product_cotangent(dy, a, b, k) if need[k] else None for k in (0, 1))
        xp = namespace(y)
        a2, b2 = (a[None, ...] if a.ndim == 1 else a), (b[..., None] if b.ndim == 1 else b)
        # a 1-d b is a column, a 1-d a a row: restore their axes in dy (b's first: dy may be 0-d)
        dy2 = dy if hasattr(dy, "shape") or xp is np else xp.asarray(dy, dtype=y.dtype, **on(y))
        if b.ndim == 1:
            dy2 = xp.expand_dims(dy2, -1)
        if a.ndim == 1:
            dy2 = xp.expand_dims(dy2, -2)
        mT = (lambda m: xp.swapaxes(m, -1, -2)) if xp is np else (lambda m: m.mT)  # the array API has .mT only
        da = dy2 @ mT(conj(b2)) if need[0] else None
        db = mT(conj(a2)) @ dy2 if need[1] else None
        if a.ndim == 1 and da is not None:
            da = da[..., 0, :]
        if b.ndim == 1 and db is not None:
            db = db[..., :, 0]
        return unbroadcast(da, a), unbroadcast(db, b)
    return y, back

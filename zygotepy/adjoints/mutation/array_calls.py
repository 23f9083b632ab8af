"""NumPy routines called as functions that update an array argument in place (`mutcall`'s cases for them):
`np.add.at` / `np.subtract.at` (unbuffered `x[index] += value`) and `np.copyto`; each journals the array, so that its
back undoes the update, and refuses values that share memory with the array written into."""
import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...backends import unbroadcast
from ...errors import ZygoteError
from .overlap import shares_memory


def _keyword_grads(kwargs, grads=None):
    return () if not kwargs else ({k: (grads or {}).get(k) for k in kwargs},)


def _add_at(x, index, value, sign=1):
    """`np.add.at(x, index, value)`: unbuffered `x[index] += value` (repeated positions add up); `np.subtract.at`
    (sign -1) subtracts."""
    if isinstance(value, np.ndarray) and isinstance(x, np.ndarray) and shares_memory(x, value):
        raise ZygoteError(f"np.{'add' if sign == 1 else 'subtract'}.at: zygotepy does not differentiate values that "
                          f"share memory with the array they are added into (`np.add.at(a, i, a[1:3])`: which of them "
                          f"NumPy reads before or after a write is its own business); pass a copy of them")
    entry = mt.journal_whole(x)
    (np.add if sign == 1 else np.subtract).at(x, index, value)

    def back(dy):
        entry.undo(lambda: x.copy())
        if dy is None:
            return (None, None, None, None)
        dx, dv = dy[1], dy[3]
        if dx is not None and getattr(getattr(x, "dtype", None), "kind", "f") in "fc":
            g = unbroadcast((dx if hasattr(dx, "shape") else np.asarray(dx))[index], value)  # (a dual array kept)
            dv = rt.acc(dv, g if sign == 1 else -g)
        return (None, dx, None, dv)
    return (None, x, index, value), back


def _copyto(dst, src, **kwargs):
    if "where" in kwargs:
        raise ZygoteError("zygotepy cannot differentiate np.copyto(..., where=...); use dst[mask] = src[mask]")
    if isinstance(src, np.ndarray) and isinstance(dst, np.ndarray) and shares_memory(dst, src):
        raise ZygoteError("np.copyto: zygotepy does not differentiate a source that shares memory with the array it "
                          "is copied into (`np.copyto(y[1:], y[:-1])`: the source's cotangent would be read where the "
                          "copy wrote); pass a copy of it, or write `y[1:] = y[:-1]`")
    entry = mt.journal_whole(dst)
    np.copyto(dst, src, **kwargs)
    real = getattr(dst, "dtype", np.dtype(float)).kind in "fc"  # into an int array: truncated data, no cotangent

    def back(dy):
        entry.undo(lambda: dst.copy())
        if dy is None:
            return (None, None, None, *_keyword_grads(kwargs))
        into = unbroadcast(dy[1], src) if dy[1] is not None and real else None
        return (None, None, rt.acc(dy[2], into), *_keyword_grads(kwargs))
    return (None, dst, src), back


def at_shape(a, shape):
    """A ufunc's argument broadcast to its `out=` array's shape (a read-only view), or as it is if not a number or a
    real array (`with_out` where a `where=` mask leaves entries alone)."""
    real = type(a) in (float, int) or isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind in "fciub"
    return np.broadcast_to(a, shape) if real else a


def masked_cotangent(g, a, where):
    """The cotangent of the argument `a` from the one of its broadcast view (`at_shape`): zero where the mask left
    the output alone (NumPy computed nothing there; the rule's derivative, inf or nan, times zero would be nan), then
    summed down to `a`'s shape."""
    if g is None or not hasattr(g, "shape"):
        return g
    return unbroadcast(np.where(np.broadcast_to(where, g.shape), g, 0), a)

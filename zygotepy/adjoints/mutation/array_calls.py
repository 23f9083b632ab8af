"""NumPy routines called as functions that update an array argument in place (`mutcall`'s cases for them): the `at`
methods of `np.add`, `np.subtract`, `np.multiply`, `np.maximum` and `np.minimum` (unbuffered `x[index] op= value`:
repeated positions apply one after another) and `np.copyto`; each journals the array, so that its back undoes the
update, and refuses values that share memory with the array written into."""
import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...backends import conj, unbroadcast
from ...errors import ZygoteError
from ..numpy.segments import run_products
from .overlap import shares_memory


def _keyword_grads(kwargs, grads=None):
    return () if not kwargs else ({k: (grads or {}).get(k) for k in kwargs},)


def ufunc_at(ufunc, x, index, value):
    """`ufunc.at(x, index, value)` for a ufunc of UFUNC_AT."""
    if isinstance(value, np.ndarray) and isinstance(x, np.ndarray) and shares_memory(x, value):
        raise ZygoteError(f"{call_site() or 'a call'}: np.{ufunc.__name__}.at: zygotepy does not differentiate values "
                          f"that share memory with the array they update (`np.add.at(a, i, a[1:3])`: which of them "
                          f"NumPy reads before or after a write is its own business); pass a copy of them")
    if ufunc is np.add or ufunc is np.subtract:
        return _add_at(x, index, value, 1 if ufunc is np.add else -1)
    return _combined_at(ufunc, x, index, value)


def _add_at(x, index, value, sign):
    """`np.add.at(x, index, value)`: unbuffered `x[index] += value` (repeated positions add up); `np.subtract.at`
    (sign -1) subtracts."""
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


def _combined_at(ufunc, x, index, value):
    """`np.multiply.at`, `np.maximum.at`, `np.minimum.at`: each entry of x ends as the product (or the extremum) of its
    old value and of all the values landing on it. The back reads the entries before and after the update from the
    journal, and lists the updates as (target position, value) pairs, in NumPy's order: the flat positions of
    `x[index]` with `value` broadcast against them. Products: each factor gets the product of the others at its
    position (prefix and suffix products, no division: zeros are fine). Extrema: the cotangent goes to whichever
    candidates (the old entry and the values landing there) equal the final entry, shared evenly among all the tied
    ones, as np.max's rule shares it (not pairwise, update by update, as np.maximum's would); a NaN entry gets none."""
    entry = mt.journal_whole(x)
    ufunc.at(x, index, value)

    def back(dy):
        entry.undo(lambda: x.copy())
        if dy is None:
            return (None, None, None, None)
        dx, dv = dy[1], dy[3]
        if dx is None or x.dtype.kind not in "fc":
            return (None, dx, None, dv)
        old, new = entry.before.reshape(-1), entry.after.reshape(-1)
        d = np.broadcast_to(dx, x.shape).reshape(-1)
        at = np.asarray(np.arange(x.size).reshape(x.shape)[index])  # the flat positions updated, in order
        t, v = at.reshape(-1), np.broadcast_to(np.asarray(value), at.shape).astype(x.dtype).reshape(-1)
        if ufunc is np.multiply:
            order = np.argsort(t, kind="stable")
            runs = t[order]
            others, prefix = run_products(v[order], runs)
            last = np.append(runs[1:] != runs[:-1], True)  # each run's last: its prefix, the product of all of them
            total = np.ones_like(new)
            total[runs[last]] = prefix[last]  # (the product of the values landing on each entry)
            gx, gv = d * conj(total), np.empty(t.shape, np.result_type(d.dtype, x.dtype))
            gv[order] = d[runs] * conj(old[runs] * others)
        else:
            hit_x, hit_v = old == new, v == new[t]
            share = d / (hit_x + np.bincount(t, hit_v, minlength=x.size)).clip(1).astype(x.dtype)
            gx, gv = np.where(hit_x, share, 0), np.where(hit_v, share[t], 0)
        dv = rt.acc(dv, unbroadcast(gv.reshape(at.shape), value))
        return (None, gx.reshape(x.shape).astype(np.result_type(gx.dtype, x.dtype), copy=False), None, dv)
    return (None, x, index, value), back


UFUNC_AT = frozenset((np.add, np.subtract, np.multiply, np.maximum, np.minimum))


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

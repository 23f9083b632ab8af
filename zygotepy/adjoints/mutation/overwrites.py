"""NumPy's functions that overwrite entries of their first argument with values from another: `np.put` (and the
method `x.put`), `np.place`, `np.putmask`, `np.put_along_axis`, `np.fill_diagonal` and `np.copyto(..., where=...)`,
one rule for all.

Which value lands in which entry is NumPy's own business (broadcasting, a short list of values used cyclically, the
last of repeated indices winning), so the rule asks NumPy: it runs the same call on a marker array, with every value
replaced by its flat position. An overwritten entry's cotangent does not reach the array before the call; each value
gets the cotangents of the entries it landed in, summed.
"""
import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...backends import is_array_type
from ...errors import ZygoteError
from ..in_place import updates_in_place
from ..numpy.common import _restore
from ..numpy.gathering import _scatter
from .overlap import shares_memory

VALUES = {np.put: 2, np.place: 2, np.putmask: 2, np.put_along_axis: 2, np.fill_diagonal: 1, np.copyto: 1}  # position


def overwrites(fn, args, kwargs):
    """Does `fn(*args, **kwargs)` overwrite entries of a NumPy array with values this rule can follow?"""
    k = VALUES.get(fn)
    if k is None or len(args) <= k or type(args[0]) is not np.ndarray or fn is np.copyto and "where" not in kwargs:
        return False
    values = args[k]
    return not getattr(type(values), "__zygote_number__", False) and \
        (isinstance(values, (np.ndarray, np.generic)) or not is_array_type(type(values)))


def overwrite(fn, args, kwargs):
    """`fn(dst, ..., values, ...)`: `(None, *args)` and the back, as `mutcall`'s rules return them."""
    dst, k = args[0], VALUES[fn]
    shape = np.shape(args[k])
    where = np.full(dst.shape, -1, dtype=np.int64)  # the flat position of the value each entry gets; -1: none
    fn(where, *args[1:k], np.arange(int(np.prod(shape))).reshape(shape), *args[k + 1:], **kwargs)
    if dst.dtype.kind == "f" and np.iscomplexobj(args[k]):
        raise ZygoteError(f"np.{fn.__name__}: zygotepy does not differentiate storing complex values into a real "
                          f"array (NumPy drops their imaginary part)")
    if isinstance(args[k], np.ndarray) and shares_memory(dst, args[k]):
        raise ZygoteError(f"np.{fn.__name__}: zygotepy does not differentiate values that share memory with the array "
                          f"they are written into (which of them NumPy reads before or after a write is its own "
                          f"business); pass a copy of them")
    entry = mt.journal_whole(dst)
    fn(*args, **kwargs)
    real = dst.dtype.kind in "fc"  # (into an integer array: truncated data, no cotangent)
    hit = where >= 0

    def back(dy):
        entry.undo(lambda: dst.copy())
        grads = [None] * (len(args) + 1)
        if dy is not None:
            ddst = dy[1]
            if ddst is not None and real:
                ddst = np.asarray(ddst)
                grads[1] = np.where(hit, 0, ddst)
                into = _scatter(ddst, where, np.empty(shape))
                grads[1 + k] = rt.acc(dy[1 + k], _restore(into, args[k]))
            else:
                grads[1 + k] = dy[1 + k]
        return (*grads, *([dict.fromkeys(kwargs)] if kwargs else []))  # (the keywords: no cotangent)
    return (None, *args), back


@updates_in_place(np.ndarray, "put")
def _array_put(x, ind, v, mode="raise"):
    """`x.put(ind, v)`, as methods.py's rules take it: `back(d_result, d_x_after) -> (d_x_before, d_ind, d_v)`."""
    args = (x, ind, v)
    if not overwrites(np.put, args, {}):
        raise ZygoteError("zygotepy cannot differentiate ndarray.put of these values, which updates its object in "
                          "place; work on a copy, or add an @adjoint rule")
    _, run_back = overwrite(np.put, args, {"mode": mode})

    def back(dr, dx):
        grads = run_back((dr, dx, None, None, None))
        return grads[1:4]
    return None, back

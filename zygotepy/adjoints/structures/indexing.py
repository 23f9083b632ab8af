"""Item reads, `x[index]` (`operator.getitem`): of a sequence (its cotangent: `dy` at the index, None elsewhere), a
dict, or an array (zeros with `dy` added at `x[index]`, by `scatter_array`, with `add.at` so that repeated integer
indices accumulate; generated code's own running cotangent gets it added in place). `np.r_[a, b]` and `np.c_[a, b]`
are concatenations (numpy/index_tricks.py)."""
import collections
import math
import operator
import sys

import numpy as np

from ...ast_adjoint import runtime as rt
from ...ast_adjoint.dispatch import call_site, differentiable
from ...backends import is_array_type, namespace, on, scatter_add, to_numpy, zeros as zeros_on
from ...errors import MissingAdjoint, ZygoteError
from ..numpy.index_tricks import CONCATENATORS, concatenator_getitem
from ..registry import adjoint, namespace_generic
from .common import _float_dtype, like
from .dicts import inserted_by_lookup, key_cotangent


def _is_mask(index):
    return "bool" in str(getattr(index, "dtype", ""))


def _is_fancy(index):
    """Does `index` pick entries by arrays of positions (so one may repeat)? An array or a list, or inside a tuple
    index also a tuple: NumPy reads `x[(0, 0), (1, 2)]` as `x[[0, 0], [1, 2]]`."""
    if type(index) is tuple:
        return any(hasattr(p, "shape") or isinstance(p, (list, tuple)) for p in index)
    return hasattr(index, "shape") or isinstance(index, list)


def scatter(n, picks, items):
    """A list of `n` Nones with `items` at the positions `picks`: a sequence's cotangent from those of some entries."""
    grads = [None] * n
    for pos, g in zip(picks, items):
        grads[pos] = g
    return grads


@adjoint(scatter)
def scatter_rule(n, picks, items):
    def back(dg):  # a rule, so that an outer level differentiates getitem's back without seeing item assignment
        return (None, None, None if dg is None else tuple(dg[pos] for pos in picks))
    return scatter(n, picks, items), back


_SPECIAL = frozenset((*CONCATENATORS, collections.defaultdict))  # (one test for the rare kinds, on the hot path)


@adjoint(operator.getitem, accumulates=True)
def getitem(x, index):
    if type(x) in _SPECIAL:
        if type(x) in CONCATENATORS:  # np.r_[a, b], np.c_[a, b]: a concatenation
            return concatenator_getitem(x, index)
        if differentiable(index) and index not in x:  # a defaultdict's lookup of a missing key puts the key in
            return _inserting_lookup(x, index)
    if getattr(type(x), "shape", None) is None and is_array_type(type(x)) and differentiable(index):
        # another library's index trick (`jnp.r_[x, 0.5]`): it computes with the key, which a lookup's rule would
        # give no cotangent
        raise MissingAdjoint(type(x), f"{type(x).__module__}.{type(x).__name__}[...] with a key that carries a "
                                      f"gradient (use the library's concatenate or stack)", where=call_site())
    y = x[index]
    if type(index) is int and type(x) is np.ndarray and x.ndim == 1 and x.dtype.kind == "f":
        return y, _number_back(x, index)
    if type(index) is str and isinstance(x, np.ndarray):
        raise structured_refused()

    def back(dy, need=None, *into):
        if dy is None:
            return into or (None, None)
        if into and into[0] is not None and rt.sole(into[0]):  # generated code's own running cotangent: add in place
            if _add_in_place(into[0], x, index, dy):
                return into
        dx = _getitem_cotangent(x, index, dy)
        return (rt.acc(into[0], dx), into[1]) if into else (dx, None)
    return y, back


def _inserting_lookup(d, key):
    """`d[key]` of a defaultdict missing `key`, which puts the key object in: the back hands the key what reads of it
    out of `d` filed, unless a later store under this very object took it (dicts.py `inserted_by_lookup`)."""
    inserted_by_lookup(key)
    y = d[key]

    def back(dy, need=None, *into):
        dk = key_cotangent(key)
        return (into[0], rt.acc(into[1], dk)) if into else (None, dk)
    return y, back


def structured_refused():
    """A field of a structured (record) array read or written (`r["a"]`): its cotangent would need the record dtype
    (it crashed in the backward)."""
    where = call_site()
    return ZygoteError(f"{where + ': ' if where else ''}zygotepy does not differentiate structured (record) arrays "
                       f"(`r['a']`); keep each field in an array of its own, or in a dict of arrays")


def _number_back(x, index):
    """The back of `x[i]` for an int `i` and a 1-d real array `x` (a loop reading items): the running cotangent that
    generated code hands over gets `dy` added at `i` in place when it owns it, and is made on the first read."""
    shape, dtype = x.shape, x.dtype

    def back(dy, need=None, *into):
        if dy is None:
            return into or (None, None)
        if into and (type(dy) is float or type(dy) is dtype.type):  # a real dy: no cast can lose a part of it
            if into[0] is None:  # the first read the backward meets: the dense cotangent, built once
                return scatter_array(x, index, dy), into[1]
            if type(into[0]) is np.ndarray and rt.sole(into[0]) and into[0].dtype == dtype and into[0].shape == shape:
                into[0][index] += dy
                return into
        dx = _getitem_cotangent(x, index, dy)
        return (rt.acc(into[0], dx), into[1]) if into else (dx, None)
    return back


def _add_in_place(dx, x, index, dy):
    """`dx[index] += dy` where that is what accumulating `getitem`'s cotangent means: a list's entry, or an array of
    the dtype `scatter_array` would build and a real dy (a complex dy must not be cast). False: do it out of place."""
    if type(dx) is np.ndarray:
        if type(x) is not np.ndarray or dx.shape != x.shape or dx.dtype != _float_dtype(x) \
                or not (type(dy) is float or type(dy) is dx.dtype.type or type(dy) is np.ndarray and dy.dtype == dx.dtype):
            return False
        if type(index) is not int and _is_fancy(index) and not _is_mask(index):
            np.add.at(dx, index, dy)  # repeated indices accumulate
        else:
            dx[index] += dy
        return True
    if type(index) is not int or type(x) is not list or len(dx) != len(x):
        return False
    dx[index] = rt.acc(dx[index], dy)
    return True


def _getitem_cotangent(x, index, dy):
    """The cotangent `getitem`'s back gives `x`: dy at x[index], zero (None) elsewhere."""
    if isinstance(x, (tuple, list, collections.deque)):  # (a deque's cotangent: a list, see `like`)
        picks = range(*index.indices(len(x))) if isinstance(index, slice) else (index,)
        grads = scatter(len(x), picks, dy if isinstance(index, slice) else (dy,))
        return type(x)(grads) if type(x) in (tuple, list) else like(x, list(grads))
    if isinstance(x, dict):
        return {index: dy}
    if hasattr(x, "shape"):
        return scatter_array(x, index, dy)
    return None


def scatter_array(x, index, dy):
    """Zeros shaped like `x` with `dy` added at `x[index]`: an array's cotangent from that of `x[index]`."""
    xp = namespace(x)
    zeros = getattr(type(dy), "__zygote_zeros__", None)  # forward mode's duals: zeros that can hold dy
    g = zeros(x.shape, dy) if zeros is not None else \
        zeros_on(xp, x.shape, _float_dtype(x) if not rt.is_complex_like(dy) else xp.complex128, x)  # on x's device
    if hasattr(g, "at") and not isinstance(g, np.ndarray):  # JAX arrays are immutable: a functional update
        return g.at[index].add(dy)
    if xp is not np and getattr(dy, "dtype", g.dtype) != g.dtype and hasattr(dy, "shape") and namespace(dy) is xp:
        dy = xp.astype(dy, g.dtype)  # (a float32 array's entry times a float64 one: the array API stores no other dtype)
    if xp is not np and type(index) is tuple and any(i is None for i in index):
        index = tuple(i for i in index if i is not None)  # the array API assigns through no new axis: drop them
        dy = xp.reshape(dy, tuple(g[index].shape))
    if not _is_fancy(index):
        g[index] = dy
    elif xp is not np and _is_mask(index):
        g[index] = dy  # a mask selects each entry at most once
    elif hasattr(g, "index_put_") and all(
            hasattr(p, "shape") or isinstance(p, (list, tuple)) for p in (index if type(index) is tuple else (index,))):
        torch = sys.modules["torch"]  # (torch's scatter-add: repeated indices accumulate)
        parts = tuple(torch.as_tensor(p, device=g.device) for p in (index if type(index) is tuple else (index,)))
        g.index_put_(parts, torch.as_tensor(dy, dtype=g.dtype, device=g.device), accumulate=True)
    else:
        if xp is not np:
            return _scattered_by_positions(xp, x, index, dy, g.dtype)
        np.add.at(g, index, dy)
    return g


def _scattered_by_positions(xp, x, index, dy, dtype):
    """An array-API namespace with no scatter (array_api_strict's arrays): the index read, on the host, off an array
    of x's flat positions, and dy added there by `scatter_add` (repeated indices accumulate)."""
    parts = tuple(to_numpy(p) if hasattr(p, "shape") else p for p in (index if type(index) is tuple else (index,)))
    shape = tuple(x.shape)
    positions = np.arange(math.prod(shape)).reshape(shape)[parts if type(index) is tuple else parts[0]]
    values = xp.reshape(xp.broadcast_to(xp.astype(xp.asarray(dy, **on(x)), dtype), positions.shape), (-1,))
    flat = scatter_add(xp, math.prod(shape), xp.asarray(positions.reshape(-1), **on(x)), values)
    return xp.reshape(flat, shape)


namespace_generic(operator.getitem)  # scatter_array computes in x's namespace


@adjoint(scatter_array)
def scatter_array_rule(x, index, dy):
    def back(dg):  # the adjoint of scattering is gathering
        return (None, None, None if dg is None else dg[index])
    return scatter_array(x, index, dy), back

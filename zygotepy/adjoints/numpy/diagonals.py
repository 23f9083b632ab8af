"""Diagonals and triangles of NumPy arrays: diagonal (and the ndarray method), diag, diagflat, tril and triu.
"""
import numpy as np

from ...backends import is_foreign, namespace
from ..registry import adjoint, namespace_generic
from .common import _as_array, _nones, _restore
from .gathering import _foreign_gather, _scatter


# --- triangles --------------------------------------------------------------------------------------------------------
def _triangle(fn):
    """np.tril / np.triu: the cotangent keeps the same triangle (the array API takes k as a keyword)."""
    def rule(x, *k, **kwargs):
        xp = namespace(x)
        if xp is not np:
            kw = {**dict(zip(("k",), k)), **kwargs}
            f = getattr(xp, fn.__name__)
            return f(x, **kw), lambda dy: (None if dy is None else f(dy, **kw), *_nones(k))
        return fn(x, *k, **kwargs), lambda dy: (None if dy is None else fn(dy, *k, **kwargs), *_nones(k))
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


tril = adjoint(np.tril)(_triangle(np.tril))
triu = adjoint(np.triu)(_triangle(np.triu))


# --- diagonals --------------------------------------------------------------------------------------------------------
@adjoint(np.diagonal)
def diagonal(x, *args, **kwargs):
    """The diagonal is the last axis of the output: scatter it back through x's flat indices."""
    if type(x) is not np.ndarray and is_foreign(x):
        return _foreign_gather(np.diagonal, x, args, kwargs)
    x_ = _as_array(x)  # (a nested list: its cotangent a list again)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        source = np.arange(x_.size).reshape(x_.shape)
        return (_restore(_scatter(dy, np.diagonal(source, *args, **kwargs), x_), x), *_nones(args))
    return np.diagonal(x_, *args, **kwargs), back


adjoint(np.ndarray.diagonal)(diagonal)


@adjoint(np.diag)
def diag(v, *k, **kwargs):
    """A 1-d v becomes a matrix (its cotangent is the diagonal of dy); a matrix gives its diagonal."""
    if type(v) is not np.ndarray and is_foreign(v):
        return _foreign_gather(np.diag, v, k, kwargs)
    def back(dy):
        if dy is None:
            return (None, *_nones(k))
        if np.ndim(v) == 1:  # (v itself, not as an array: a dual number of hessian's passes through np.diag)
            return (np.diag(dy, *k, **kwargs), *_nones(k))
        if not isinstance(v, np.ndarray) and hasattr(v, "shape"):  # (a dual matrix, under hessian: a product with
            return (_placed_on_diagonal(dy, v.shape, k, kwargs), *_nones(k))  # a 0/1 tensor keeps its tangents)
        v_arr = np.asarray(v)
        return (_scatter(dy, np.diag(np.arange(v_arr.size).reshape(v_arr.shape), *k, **kwargs), v_arr), *_nones(k))
    return np.diag(v, *k, **kwargs), back


def _placed_on_diagonal(dy, shape, k, kwargs):
    """A matrix of `shape` holding dy on the diagonal np.diag(., *k) reads, zeros elsewhere, by operations a dual
    number passes through (a contraction with the 0/1 tensor of the diagonal's positions)."""
    positions = np.diag(np.arange(int(np.prod(shape))).reshape(shape), *k, **kwargs)
    picks = np.zeros((positions.size, int(np.prod(shape))))
    picks[np.arange(positions.size), positions] = 1.0
    return np.reshape(np.tensordot(dy, picks, axes=1), shape)


@adjoint(np.diagflat)
def diagflat(v, *k, **kwargs):
    if type(v) is not np.ndarray and is_foreign(v):
        return _foreign_gather(np.diagflat, v, k, kwargs)
    return np.diagflat(v, *k, **kwargs), lambda dy: (
        None if dy is None else np.reshape(np.diag(dy, *k, **kwargs), np.shape(v)), *_nones(k))


# computed with the namespace of their input: gathered through NumPy's run on x's flat indices
namespace_generic(np.tril, np.triu, np.diagonal, np.diag, np.diagflat)

"""Conversions and copies: `np.array`/`np.asarray` of differentiable scalars (and of forward mode's dual numbers),
`np.float64(x)`, `np.copy`, `np.ascontiguousarray`, ..., `np.atleast_1d/2d/3d`, and the ndarray methods item and
tolist. The values are the argument's, so the cotangent is the result's, in the argument's own form.
"""
import numbers

import numpy as np

from ...ast_adjoint.call_checks import call_site
from ...ast_adjoint.dispatch import differentiable
from ...backends import is_foreign, namespace, truncated, unbroadcast
from ...errors import ZygoteError
from ...forward.dual import dispatch, has_dual
from ..registry import adjoint, namespace_generic, nondifferentiable
from .common import _float_dtype, _nones, _restore, arrayed


# --- np.array and np.asarray of differentiable scalars ----------------------------------------------------------------
def _array(make):
    return lambda obj, *args, **kwargs: _array_rule(make, obj, *args, **kwargs)


def _array_rule(make, obj, *args, **kwargs):
    """`np.array([a, b, c])` of differentiable scalars: the cotangent goes back to each element. `np.asarray` keeps
    NumPy's aliasing (an array comes back as itself, so an update in place through either is seen by the other)."""
    if _holds_duals(obj):  # (hessian, forward-over-reverse: NumPy cannot hold dual numbers; no try here, which an
        y = _dual_array(make, obj, *args, **kwargs)  # outer level of nesting could not transform)
    else:
        y = make(obj, *args, **kwargs)
        if type(y) is np.ndarray and y.dtype.kind == "O" and isinstance(obj, (list, tuple)):
            _refuse_objects(y)

    def back(dy):
        if dy is None or truncated(y, (obj,)):  # (`np.array(x, dtype=int)`: piecewise constant)
            return (None, *(None for _ in args))
        if isinstance(obj, (list, tuple)):
            items = [dy[k] for k in range(len(obj))]  # (a named tuple's type takes its fields one by one: slogdet's)
            return (type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items), *(None for _ in args))
        shape = tuple(np.shape(obj))  # (another library's dy stays its own: `jnp.asarray(x)`)
        return (dy if tuple(np.shape(dy)) == shape else namespace(dy).reshape(dy, shape), *(None for _ in args))
    return y, back


def _refuse_objects(y):
    """A NumPy array of objects of a user's class: NumPy's functions run the objects' own operators on it (`np.sum` adds
    them with `__add__`), which the array rules, written for numbers, do not differentiate."""
    for v in y.flat:
        refuse_object(v)


def refuse_object(v):
    """Refused where `v`, to be held by a NumPy object array, is an object of a user's class holding a gradient."""
    if not isinstance(v, (numbers.Number, np.ndarray, str, bytes, type(None))) and differentiable(v):
        raise ZygoteError(f"{call_site() or 'np.array'}: zygotepy cannot differentiate a NumPy array of "
                          f"{type(v).__name__} objects: NumPy's functions would run their operators, which its "
                          f"array rules do not follow; keep them in a list (sum(items), functools.reduce)")


def _holds_duals(obj):
    """Is `obj` a dual number, or are there dual numbers among its elements (a list or tuple given to np.array)?"""
    return has_dual((obj,))


def _dual_array(make, obj, *args, **kwargs):
    """np.array of a list holding dual numbers: forward mode's rule builds the dual array of primals and tangents."""
    return dispatch(make, (obj, *args), kwargs)


nondifferentiable(_holds_duals)
array = adjoint(np.array)(_array(np.array))
# another library's `asarray`/`array` (`jnp.asarray(x)`, which resolves to these as its twins): the same rule
array.__zygote_foreign__ = _array
adjoint(np.asarray)(_array(np.asarray)).__zygote_foreign__ = _array


# --- conversions and copies ------------------------------------------------------------------------------------------------
def _converter(fn):
    """`np.float64(x)`, `np.copy(x)`, `np.ascontiguousarray(x)`, ...: same values, maybe another dtype; the cotangent
    returns in the argument's own form (Python float, list, array dtype). A float32 cast of a float64 keeps the
    float32 rounding in the forward pass; the gradient is that of the identity."""
    def rule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)

        def back(dy):
            if dy is None or truncated(y, (x,)):
                return (None, *_nones(args))
            if isinstance(x, (list, tuple)):
                return (_restore(arrayed(dy), x), *_nones(args))
            g = unbroadcast(np.reshape(dy, np.shape(x)) if np.ndim(dy) else dy, x)
            dtype = getattr(x, "dtype", None)
            if dtype is not None and dtype.kind in "fc" and getattr(g, "dtype", dtype) != dtype:
                g = g.astype(dtype) if hasattr(g, "astype") else dtype.type(g)
            elif type(x) is float and type(g) is not float:
                g = float(np.real(g))
            return (g, *_nones(args))
        return y, back
    rule.__qualname__ = f"{getattr(fn, '__name__', 'convert')}_rule"
    return rule


for _fn in (np.float64, np.float32, np.complex128, np.copy, np.asanyarray,
            np.ascontiguousarray, np.asfortranarray, np.atleast_1d, np.atleast_2d, np.atleast_3d):
    adjoint(_fn)(_converter(_fn))


# --- atleast_1d/2d/3d: NumPy's converter rule; another library's array reshaped ---------------------------------------
def _atleast(x, n):
    """NumPy's atleast_1d/2d/3d of another library's array: (N,) -> (1, N) -> (1, N, 1); (M, N) -> (M, N, 1)."""
    shape = tuple(x.shape)
    if len(shape) >= n:
        return x
    new = {0: (1,) * n, 1: {1: shape, 2: (1, *shape), 3: (1, *shape, 1)}[n], 2: (*shape, 1)}[len(shape)]
    return namespace(x).reshape(x, new)


_LIFTS = {np.atleast_1d: 1, np.atleast_2d: 2, np.atleast_3d: 3}


def _lift_rule(fn):
    """np.atleast_1d/2d/3d: NumPy's converter rule; another library's array is reshaped in its namespace. Given several
    arrays (`a, b = np.atleast_1d(x, y)`), NumPy returns a tuple of them (a list before NumPy 2): each is lifted by the
    one-array rule, and each part of the tuple's cotangent goes back through its own."""
    numpy_rule, n = _converter(fn), _LIFTS[fn]

    def rule(*arys):
        if len(arys) != 1:
            return _lifted_each(rule, arys)
        if type(arys[0]) is not np.ndarray and is_foreign(arys[0]):
            x = arys[0]
            return _atleast(x, n), lambda dy: (None if dy is None else namespace(x).reshape(dy, tuple(x.shape)),)
        return numpy_rule(*arys)
    rule.__qualname__ = f"{fn.__name__}_rule"
    return adjoint(fn)(rule)


_SEVERAL = type(np.atleast_1d(0.0, 0.0))  # (the sequence NumPy returns several lifted arrays in)


def _lifted_each(one, arys):
    """`np.atleast_nd(x, y, ...)`: the one-array rule `one` applied to each array, the results in NumPy's sequence;
    its back hands each result's cotangent (None where that result was not used) to that result's back."""
    pairs = [one(a) for a in arys]

    def back(dy):
        if dy is None:
            return _nones(arys)
        return tuple(None if d is None else b(d)[0] for (_, b), d in zip(pairs, dy, strict=True))
    return _SEVERAL(y for y, _ in pairs), back


for _fn in _LIFTS:
    _lift_rule(_fn)


# --- ndarray.item and ndarray.tolist ----------------------------------------------------------------------------------
def item(x, *index):
    """`x.item()`, `x.item(k)`, `x.item(i, j)`, `x.item((i, j))`: a Python number; its cotangent is one entry of a zero
    array (found by asking the same question of an array of flat positions, so every form NumPy accepts means the same
    here), or a number for a NumPy scalar (`np.float64(2.0).item()`)."""
    def back(dy):
        if dy is None:
            return (None, *_nones(index))
        dtype = _float_dtype(x.dtype) if not isinstance(dy, complex) else np.complex128
        if isinstance(x, np.generic):
            return (np.dtype(dtype).type(dy), *_nones(index))
        g = np.zeros(x.shape, dtype=dtype)
        position = np.arange(x.size).reshape(x.shape).item(*index)
        if has_dual((dy,)):  # (hessian's dual number, which a plain array cannot hold: a one-hot array times it)
            g.flat[position] = 1.0
            return (g * dy, *_nones(index))
        g.flat[position] = dy
        return (g, *_nones(index))
    return x.item(*index), back


adjoint(np.ndarray.item)(item)
adjoint(np.generic.item)(item)


@adjoint(np.ndarray.tolist)
def tolist(x):
    def back(dy):
        if dy is None:
            return (None,)
        items = _zero_nones(dy, x.shape)
        if has_dual((items,)):  # (hessian's dual numbers: an array of them, with their tangents)
            return (dispatch(np.asarray, (items,), {}),)
        return (np.asarray(items, dtype=_float_dtype(x.dtype)),)
    return x.tolist(), back


def _zero_nones(dy, shape):
    if dy is None:
        return np.zeros(shape)
    if isinstance(dy, (list, tuple)):
        return [_zero_nones(d, shape[1:]) for d in dy]
    return dy


# computed with the namespace of their input (reshaped there)
namespace_generic(*_LIFTS)


def _astype_rule(cast):
    """`cast(x, dtype)`, NumPy 2's `np.astype` or another library's `xp.astype` (which ran that library's own Python
    code, whose object stores crashed): the cotangent is cast back to the argument's dtype (an integer or boolean
    argument is data: no gradient)."""
    def astype(x, dtype, *args, **kwargs):
        y = cast(x, dtype, *args, **kwargs)

        def back(dy):
            kind = str(getattr(x, "dtype", "float"))
            if dy is None or "int" in kind or "bool" in kind or truncated(y, (x,)):
                return (None, None, *_nones(args))
            return (namespace(x).astype(dy, x.dtype), None, *_nones(args))
        return y, back
    return astype


if hasattr(np, "astype"):
    adjoint(np.astype)(_astype_rule(np.astype)).__zygote_foreign__ = _astype_rule

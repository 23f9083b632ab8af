"""NumPy's reshapes and axis permutations: reshape and ravel (in any `order`), transpose, squeeze, expand_dims,
moveaxis, swapaxes, matrix_transpose, the flips, broadcast_to, broadcast_arrays and meshgrid, and the ndarray methods
transpose and swapaxes. Each moves entries without changing them, so the cotangent goes back by the inverse move.
"""
import numpy as np

from ...backends import function, namespace, namespace_of, on, on_any, unbroadcast
from ...errors import ZygoteError
from ...forward.dual import strip
from ..registry import adjoint, namespace_generic
from .common import _call, _nones, _shape


# --- reshapes, transposes, squeezes -----------------------------------------------------------------------------------
@adjoint(np.reshape)
def reshape(x, *shape, **kwargs):
    """`order=` reads and writes the entries in that order, so the cotangent goes back by a reshape in the same order
    (np.reshape's positional order comes after the shape)."""
    xp = namespace(x)
    if xp is not np and shape and isinstance(shape[0], int):  # the array API wants a tuple
        shape = ((shape[0],), *shape[1:])
    order = _order(x, shape[1] if len(shape) > 1 else kwargs.get("order", "C"))
    if xp is not np and (len(shape) > 1 or "order" in kwargs):  # the array API's reshape has no order
        y = _reshaped(x, shape[0] if shape else kwargs["shape"], order)
    else:
        y = _call(np.reshape, x, *shape, **kwargs)
    return y, lambda dy: (None if dy is None else _unflatten(dy, x, order), *(None for _ in shape))


def _order(x, order):
    """The order a reshape or ravel with `order` reads x in: "C", "F", or (for "K", x's memory order) the axes of x
    from the largest stride to the smallest. "A" means F for an array stored in Fortran order only."""
    order = (order or "C").upper()
    x = strip(x)  # (hessian's reverse pass: a dual array's layout is its value's)
    flags = getattr(x, "flags", None)
    if order == "A":
        return "F" if flags is not None and flags.f_contiguous and not flags.c_contiguous else "C"
    if order != "K" or flags is None or flags.c_contiguous:
        return order if order != "K" else "C"
    if any(s < 0 for s in x.strides):  # NumPy then reverses those axes too
        raise ZygoteError("ravel(x, order='K') of an array with negative strides has no gradient rule; use "
                          "order='C' or 'F'")
    if any(s == 0 for s, n in zip(x.strides, x.shape) if n > 1):
        return _visited(x)  # (a broadcast view: NumPy leaves an axis of stride 0 where it is, no sort tells where)
    axes = tuple(int(a) for a in np.argsort([-s for s in x.strides], kind="stable"))
    return "C" if axes == tuple(range(x.ndim)) else axes


def _visited(x):
    """The flat (C) positions of x's entries in the order NumPy's iteration in memory order visits them (`order="K"`,
    as `ravel` reads x)."""
    it = np.nditer(x, flags=["multi_index", "refs_ok", "zerosize_ok"], order="K")
    positions = []
    while not it.finished:
        positions.append(it.multi_index)
        it.iternext()
    return np.ravel_multi_index(tuple(np.array(positions, dtype=np.intp).T), x.shape) if positions else \
        np.zeros(0, dtype=np.intp)


def _unflatten(dy, x, order):
    """The cotangent of x from that of a reshape of x read in `order` (see _order)."""
    if isinstance(order, np.ndarray):  # (`_visited`'s positions)
        flat = np.zeros(x.size, dtype=np.result_type(dy, np.float64) if np.iscomplexobj(dy) else x.dtype)
        flat[order] = np.reshape(dy, -1)
        return flat.reshape(x.shape)
    if order in ("C", "F"):
        return _reshaped(dy, _shape(x), order)
    return np.transpose(np.reshape(dy, tuple(x.shape[a] for a in order)), np.argsort(order))


def _reshaped(x, shape, order):
    """x reshaped in order "C" or "F", in x's namespace (Fortran order: a C reshape of the reversed axes)."""
    xp = namespace(x)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if order == "C" or xp is np:
        return xp.reshape(x, shape) if xp is not np else np.reshape(x, shape, order=order)
    return _permute(xp.reshape(_permute(x, None), shape[::-1]), None)


def _permute(x, axes):
    """np.transpose(x, axes) in x's namespace (the array API calls it permute_dims and wants the axes)."""
    xp = namespace(x)
    if xp is np or not hasattr(xp, "permute_dims"):  # (torch's transpose swaps two dimensions: permute_dims first)
        return function(np.transpose, xp)(x, axes)
    return xp.permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else tuple(axes))


def _inverse(axes, x):
    """The permutation undoing `axes`, read as NumPy reads them: a negative axis counts from the end, so `(-1, 0)` is
    `(1, 0)` (sorting the axes as written would put -1 first)."""
    ndim = np.ndim(x)
    return np.argsort([int(a) % ndim for a in axes]) if ndim else np.argsort(axes)


@adjoint(np.transpose)
def transpose(x, *args, **kwargs):
    axes = args[0] if args else kwargs.get("axes")
    inverse = None if axes is None else _inverse(axes, x)
    return _permute(x, axes), lambda dy: (None if dy is None else _permute(dy, inverse), *(None for _ in args))


@adjoint(np.ndarray.transpose)
def transpose_method(x, *axes):
    """`x.transpose()`, `x.transpose(1, 0)` and `x.transpose((1, 0))`."""
    perm = axes[0] if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)) else axes or None
    inverse = None if perm is None else _inverse(perm, x)
    return x.transpose(*axes), lambda dy: (None if dy is None else _permute(dy, inverse), *(None for _ in axes))


@adjoint(np.ravel)
def ravel(x, *args, **kwargs):
    """`np.ravel(x, order)` and `x.ravel(order)` (`x.flatten(order)` too): the cotangent is reshaped back in the
    order the entries were read in."""
    xp = namespace(x)
    order = _order(x, args[0] if args else kwargs.get("order", "C"))
    if xp is np:
        y = np.ravel(x, *args, **kwargs)
    else:
        y = _reshaped(x, (-1,), order)
    return y, lambda dy: (None if dy is None else _unflatten(dy, x, order), *(None for _ in args))


@adjoint(np.squeeze)
def squeeze(x, *args, **kwargs):
    xp = namespace(x)
    if xp is np:
        y = np.squeeze(x, *args, **kwargs)
    else:  # the array API's squeeze wants the axes
        axis = args[0] if args else kwargs.get("axis")
        y = xp.squeeze(x, axis=tuple(i for i, n in enumerate(x.shape) if n == 1) if axis is None else axis)
    return y, lambda dy: (None if dy is None else xp.reshape(dy, _shape(x)), *(None for _ in args))


@adjoint(np.expand_dims)
def expand_dims(x, axis):
    xp = namespace(x)
    return _call(np.expand_dims, x, axis), lambda dy: (None if dy is None else xp.reshape(dy, _shape(x)), None)


# --- permutations whose inverse is one call ------------------------------------------------------------------------------
@adjoint(np.moveaxis)
def moveaxis(x, source, destination):
    xp = namespace(x)
    return xp.moveaxis(x, source, destination), lambda dy: (
        None if dy is None else namespace(dy).moveaxis(dy, destination, source), None, None)


def _swap(ndim, a, b):
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


@adjoint(np.swapaxes)
def swapaxes(x, axis1, axis2):
    if namespace(x) is not np:  # the array API has no swapaxes: a permutation (its own inverse)
        perm = _swap(x.ndim, axis1, axis2)
        return _permute(x, perm), lambda dy: (None if dy is None else _permute(dy, perm), None, None)
    return np.swapaxes(x, axis1, axis2), lambda dy: (
        None if dy is None else namespace(dy).swapaxes(dy, axis1, axis2), None, None)


adjoint(np.ndarray.swapaxes)(swapaxes)


@adjoint(np.matrix_transpose)
def matrix_transpose(x):
    xp = namespace(x)
    if xp is not np:
        return xp.matrix_transpose(x), lambda dy: (None if dy is None else xp.matrix_transpose(dy),)
    return np.matrix_transpose(x), lambda dy: (None if dy is None else namespace(dy).swapaxes(dy, -1, -2),)


@adjoint(np.flip)
def flip(x, *args, **kwargs):
    xp = namespace(x)
    if xp is not np:  # the array API's flip takes axis as a keyword
        kwargs = {**dict(zip(("axis",), args)), **kwargs}
        return xp.flip(x, **kwargs), lambda dy: (None if dy is None else xp.flip(dy, **kwargs), *_nones(args))
    return np.flip(x, *args, **kwargs), lambda dy: (None if dy is None else np.flip(dy, *args, **kwargs),
                                                     *_nones(args))


def _flip_along(fn, axis):
    """fliplr and flipud are flips of one axis (NumPy's own flip gives the same view; the array API has only flip)."""
    def rule(x):
        xp = namespace(x)
        return xp.flip(x, axis=axis), lambda dy: (None if dy is None else xp.flip(dy, axis=axis),)
    rule.__qualname__ = f"{fn.__name__}_rule"
    return adjoint(fn)(rule)


fliplr = _flip_along(np.fliplr, 1)
flipud = _flip_along(np.flipud, 0)


@adjoint(np.broadcast_to)
def broadcast_to(x, shape):
    xp = namespace(x)
    if xp is not np:
        return xp.broadcast_to(x, tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)), \
            lambda dy: (unbroadcast(dy, x), None)
    return np.broadcast_to(x, shape), lambda dy: (unbroadcast(dy, x), None)


@adjoint(np.broadcast_arrays)
def broadcast_arrays(*arrays):
    def back(dy):
        if dy is None:
            return _nones(arrays)
        return tuple(unbroadcast(d, a) for d, a in zip(dy, arrays, strict=True))
    xp = namespace_of(*arrays)
    if xp is not np:
        where = on_any(*arrays)
        return xp.broadcast_arrays(*(xp.asarray(a, **where) for a in arrays)), back
    return np.broadcast_arrays(*arrays), back


@adjoint(np.meshgrid)
def meshgrid(*xi, **kwargs):
    """Output k repeats xi[k] along every other axis: its cotangent sums over them (with indexing="xy" the first two
    axes are swapped)."""
    n = len(xi)
    xp = namespace_of(*xi)
    if xp is not np:
        return _meshgrid_foreign(xp, xi, kwargs)
    ys = np.meshgrid(*xi, **kwargs)

    def back(dy):
        if dy is None:
            return _nones(xi)
        grads = []
        for k, (d, x) in enumerate(zip(dy, xi, strict=True)):
            axis = {0: 1, 1: 0}.get(k, k) if kwargs.get("indexing", "xy") == "xy" and n > 1 else k
            grads.append(None if d is None else np.reshape(
                np.sum(d, axis=tuple(a for a in range(n) if a != axis)), np.shape(x)))
        return tuple(grads)
    return ys, back


def _meshgrid_foreign(xp, xi, kwargs):
    """np.meshgrid in another library's namespace: each flattened xi reshaped along its axis and broadcast to the grid
    (sparse=True keeps the reshaped arrays); the cotangent sums over the other axes."""
    indexing, sparse = kwargs.get("indexing", "xy"), kwargs.get("sparse", False)
    if set(kwargs) - {"indexing", "sparse", "copy"} or indexing not in ("xy", "ij"):
        raise ZygoteError(f"np.meshgrid of another library's arrays: unsupported arguments {kwargs}")
    where = next((on(x) for x in xi if on(x)), {})  # the device of the inputs that are arrays of xp
    flat = [xp.reshape(xp.asarray(x, **where), (-1,)) for x in xi]
    n = len(flat)
    axes = [({0: 1, 1: 0}.get(k, k) if indexing == "xy" and n > 1 else k) for k in range(n)]
    sizes = [0] * n
    for k, f in enumerate(flat):
        sizes[axes[k]] = f.shape[0]
    ys = []
    for k, f in enumerate(flat):
        y = xp.reshape(f, tuple(-1 if a == axes[k] else 1 for a in range(n)))
        ys.append(y if sparse else xp.broadcast_to(y, tuple(sizes)))

    def back(dy):
        if dy is None:
            return _nones(xi)
        return tuple(None if d is None else xp.reshape(xp.sum(d, axis=tuple(a for a in range(n) if a != axes[k])),
                                                          tuple(np.shape(x) if not hasattr(x, "shape") else x.shape))
                     for k, (d, x) in enumerate(zip(dy, xi, strict=True)))
    return tuple(ys), back


# computed with the namespace of their input: the array API (or JAX and torch under the same names) has them
namespace_generic(np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.moveaxis, np.swapaxes,
                  np.matrix_transpose, np.flip, np.fliplr, np.flipud, np.broadcast_to, np.broadcast_arrays,
                  # the grid's pieces reshaped and broadcast
                  np.meshgrid)

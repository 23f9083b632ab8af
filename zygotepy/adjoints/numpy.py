"""The starter NumPy rule set: elementwise ufuncs, reductions, products and shape functions, plus the `ndarray` methods
and attributes of the same names. Rules compute with the array namespace of their inputs (`namespace(x)`), so the
same table serves other array libraries; cotangents are reduced to their input's shape by `unbroadcast`.
"""
import math

import numpy as np

from ..ast_adjoint import runtime as rt
from ..backends import conj, function, namespace, namespace_of, on, unbroadcast
from ..errors import ZygoteError
from .handover import added, times
from .registry import adjoint, keyword_cotangents, keyword_rule, namespace_generic, nondifferentiable
from .structures import ATTRIBUTES


def _as_array(x):
    """A list or tuple argument (`np.mean([a, b, c])`) as an array; `_restore` gives its cotangent the list's form."""
    return np.asarray(x) if isinstance(x, (list, tuple)) else x


def _reduced(x):
    """A reduction's argument as an array: lists, tuples and Python numbers (`np.sum(2.0)`) converted."""
    if isinstance(x, (list, tuple, float, int, complex)) or hasattr(x, "__array__") and not hasattr(x, "shape"):
        return np.asarray(x)  # (an object with __array__: its cotangent is refused where it reaches the object)
    return x


def _array_like(x):
    """x as an array: lists and numbers converted, arrays (and array-like values such as forward mode's dual numbers,
    which must not be flattened into plain arrays) kept."""
    return x if hasattr(x, "ndim") else np.asarray(x)


def _call(fn, *args, **kwargs):
    """The NumPy function `fn` computed by the namespace of its arguments (`jnp.tanh` for JAX arrays)."""
    xp = namespace_of(*args)
    return (fn if xp is np else function(fn, xp))(*args, **kwargs)


_REDUCTION_PARAMETERS = {np.sum: ("axis", "dtype", "out", "keepdims"), np.mean: ("axis", "dtype", "out", "keepdims"),
                         np.max: ("axis", "out", "keepdims"), np.min: ("axis", "out", "keepdims"),
                         np.amax: ("axis", "out", "keepdims"), np.amin: ("axis", "out", "keepdims")}


def _reduce(fn, x, args, kwargs):
    """A reduction in x's namespace; positional parameters become keywords there (the array API takes keywords)."""
    xp = namespace(x)
    if xp is np:
        return fn(x, *args, **kwargs)
    kwargs = {**dict(zip(_REDUCTION_PARAMETERS[fn], args)), **kwargs}
    return function(fn, xp)(x, **kwargs)


def _mT(x, xp):
    """The transpose of the last two axes."""
    return xp.swapaxes(x, -1, -2) if xp is np else x.mT


def _restore(g, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_restore(g[k], item) for k, item in enumerate(x))
    if isinstance(x, (float, int, complex)) and type(g) is np.ndarray and g.ndim == 0:
        return g[()]  # a Python number's cotangent is a number
    return g


# --- elementwise, one argument: derivative in terms of the input x and the output y ----------------------------------
ELEMENTWISE = {
    np.exp: lambda x, y: y,
    np.expm1: lambda x, y: y + 1,
    np.log: lambda x, y: 1 / x,
    np.log1p: lambda x, y: 1 / (1 + x),
    np.log2: lambda x, y: 1 / (x * math.log(2)),  # a Python float keeps float32 arrays float32
    np.log10: lambda x, y: 1 / (x * math.log(10)),
    np.sqrt: lambda x, y: 0.5 / y,
    np.square: lambda x, y: 2 * x,
    np.reciprocal: lambda x, y: -y * y,
    np.sin: lambda x, y: namespace(x).cos(x),
    np.cos: lambda x, y: -namespace(x).sin(x),
    np.tan: lambda x, y: 1 + y * y,
    np.tanh: lambda x, y: 1 - y * y,
    np.sinh: lambda x, y: namespace(x).cosh(x),
    np.cosh: lambda x, y: namespace(x).sinh(x),
    np.arcsin: lambda x, y: 1 / namespace(x).sqrt(1 - x * x),
    np.arccos: lambda x, y: -1 / namespace(x).sqrt(1 - x * x),
    np.arctan: lambda x, y: 1 / (1 + x * x),
    np.negative: lambda x, y: -1,
    np.positive: lambda x, y: 1,
}


def _elementwise_rule(fn, derivative):
    def rule(x):
        y = fn(x) if type(x) is np.ndarray or namespace(x) is np else _call(fn, x)
        if type(x) is np.ndarray and x.dtype.kind == "f":  # the common case: a real array (no conj, no list)
            def back(dy, need=None, *into):  # buffers reused where nothing else can see them (handover.py)
                if dy is None:
                    return into or (None,)
                handed = into and rt.sole(dy)  # asked first: an argument list holding dy would count as a holder
                d = derivative(x, y)
                g = times(dy, d, d is not x and d is not y, handed)
                if type(g) is not np.ndarray or g.shape != x.shape:
                    g = unbroadcast(g, x)
                return added(into, (g,))
            return y, back
        x_ = _as_array(x)

        def back(dy, need=None, *into):
            if dy is None:
                return into or (None,)
            return added(into, (_restore(unbroadcast(dy * conj(derivative(x_, y)), x_), x),))
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


for _fn, _d in ELEMENTWISE.items():
    adjoint(_fn)(_elementwise_rule(_fn, _d))


@adjoint(np.abs)
def absolute(x):
    y = _call(np.abs, x)

    def back(dy):
        if dy is None:
            return (None,)
        xp = namespace(x)
        if getattr(getattr(x, "dtype", None), "kind", "") == "c" or isinstance(x, complex):
            return (dy * x / xp.where(y == 0, 1, y),)
        return (unbroadcast(dy * xp.sign(x), x),)
    return y, back


adjoint(np.absolute)(absolute)


# --- elementwise, two arguments ----------------------------------------------------------------------------------------
def _weak(a, b):
    """A Python number paired with another library's array, as an array of that array's float dtype: NumPy treats
    the number as a weak scalar, and torch's binary functions (`torch.fmax`, `torch.arctan2`) take tensors only."""
    for num, arr in ((a, b), (b, a)):
        if type(num) in (int, float) and hasattr(arr, "dtype") and type(arr) is not np.ndarray:
            xp = namespace(arr)
            if xp is not np:
                value = xp.asarray(num, dtype=arr.dtype if is_float(arr) else xp.float64, **on(arr))
                return (value, b) if num is a else (a, value)
    return a, b


def _binary(fn, da, db):
    """Rule for a broadcasting binary ufunc from its partial derivatives `da(a, b, y)` and `db(a, b, y)`."""
    def rule(a, b):
        y = _call(fn, *_weak(a, b))
        a_, b_ = _as_array(a), _as_array(b)

        def back(dy, need=(True, True)):
            if dy is None:
                return (None, None)
            return (_restore(unbroadcast(dy * conj(da(a_, b_, y)), a_), a) if need[0] else None,
                    _restore(unbroadcast(dy * conj(db(a_, b_, y)), b_), b) if need[1] else None)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _ties(a, b, y, pick_a):
    """Where a == b the gradient is split evenly between the two (in the output's float type: float32 stays)."""
    xp = namespace(a if hasattr(a, "shape") else b)
    if xp is not np:  # the array API multiplies no booleans
        w = xp.astype(pick_a, y.dtype if hasattr(y, "dtype") and is_float(y) else xp.float64)
        return xp.where(a == b, 0.5, w)
    w = xp.where(a == b, 0.5, pick_a * 1.0)
    return w.astype(y.dtype) if getattr(getattr(y, "dtype", None), "kind", "") == "f" else w


BINARY = {
    np.add: (lambda a, b, y: 1, lambda a, b, y: 1),
    np.subtract: (lambda a, b, y: 1, lambda a, b, y: -1),
    np.multiply: (lambda a, b, y: b, lambda a, b, y: a),
    np.divide: (lambda a, b, y: 1 / b, lambda a, b, y: -y / b),
    np.maximum: (lambda a, b, y: _ties(a, b, y, a > b), lambda a, b, y: _ties(a, b, y, b > a)),
    np.minimum: (lambda a, b, y: _ties(a, b, y, a < b), lambda a, b, y: _ties(a, b, y, b < a)),
    np.arctan2: (lambda a, b, y: b / (a * a + b * b), lambda a, b, y: -a / (a * a + b * b)),
    np.hypot: (lambda a, b, y: a / y, lambda a, b, y: b / y),
}
for _fn, (_da, _db) in BINARY.items():
    adjoint(_fn)(_binary(_fn, _da, _db))


@adjoint(np.power)
def power(a, b):
    y = _call(np.power, a, b)

    def back(dy):
        if dy is None:
            return (None, None)
        xp = namespace(y)
        a_ = xp.asarray(a, **on(y))
        positive = a_ > 0
        db = xp.where(positive, dy * y * xp.log(xp.where(positive, a_, 1.0)), 0.0)  # a <= 0: log undefined, taken as 0
        return unbroadcast(dy * conj(b * _call(np.power, a, b - 1)), a), unbroadcast(db, b)
    return y, back


@adjoint(np.where)
def where(cond, *ab):
    if not ab:  # np.where(cond): the indices of the true entries
        return np.where(cond), lambda dy: (None,)
    a, b = ab

    def back(dy):
        if dy is None:
            return (None, None, None)
        xp = namespace_of(dy, a, b)
        zero = xp.zeros_like(dy) if xp is not np else 0
        return None, unbroadcast(xp.where(cond, dy, zero), a), unbroadcast(xp.where(cond, zero, dy), b)
    return _call(np.where, cond, a, b), back


@keyword_rule
@adjoint(np.clip)
def clip(x, *bounds, **kwargs):
    """clip(x, lo, hi) = minimum(maximum(x, lo), hi): each entry's cotangent goes to the one of x, lo, hi it equals
    (x at the boundaries); bounds given by keyword (a_min=/a_max=, or NumPy 2's min=/max=) get theirs there."""
    y = _call(np.clip, x, *bounds, **kwargs)
    names = [k if k in kwargs else k[2:] for k in ("a_min", "a_max")[len(bounds):]]
    lo, hi = (*bounds, *(kwargs.get(k) for k in names))

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *(None for _ in bounds)), kwargs)
        xp = namespace(x)
        zero = 0 if xp is np else xp.zeros_like(dy)
        raised = x < lo if lo is not None else False
        lowered = (_call(np.maximum, x, lo) if lo is not None else x) > hi if hi is not None else False
        raised = raised & ~lowered if hi is not None else raised
        inside = ~(raised | lowered)
        grads = (unbroadcast(xp.where(raised, dy, zero), lo) if lo is not None else None,
                 unbroadcast(xp.where(lowered, dy, zero), hi) if hi is not None else None)
        by_name = dict(zip(names, grads[len(bounds):]))
        return keyword_cotangents((unbroadcast(xp.where(inside, dy, zero), x), *grads[:len(bounds)]), kwargs,
                                  **by_name)
    return y, back


# --- reductions ----------------------------------------------------------------------------------------------------------
def _expand(dy, x, axis, keepdims):
    """Broadcast a reduction's cotangent back over the reduced axes of x."""
    xp = namespace(x)
    if axis is None and type(x) is np.ndarray and np.ndim(dy) == 0:
        return np.full(x.shape, dy, dtype=np.result_type(x.dtype, dy) if x.dtype.kind in "fc" else None)
    if xp is not np and not hasattr(dy, "shape"):  # a Python number: an array of x's float type
        dy = xp.asarray(dy, dtype=x.dtype if is_float(x) else None, **on(x))
    if axis is not None and not keepdims:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if xp is np:
            dy = xp.expand_dims(dy, tuple(a % x.ndim for a in axes))
        else:  # the array API's expand_dims takes one axis
            for a in sorted(a % x.ndim for a in axes):
                dy = xp.expand_dims(dy, axis=a)
    return xp.broadcast_to(dy, tuple(x.shape))


def _axis_keepdims(args, kwargs, keepdims_at):
    """`axis` and `keepdims` of a reduction called as `f(x, *args, **kwargs)` (axis is always the first; keepdims is
    positional number `keepdims_at`: 3 for sum/mean (axis, dtype, out, keepdims), 2 for max/min (axis, out, keepdims))."""
    axis = args[0] if args else kwargs.get("axis")
    keepdims = args[keepdims_at] if len(args) > keepdims_at else kwargs.get("keepdims", False)
    return axis, keepdims


def _total_back(x, scale):
    """The pullback of a full reduction `x.sum() * scale` of a float array (the common `np.sum(x)`/`np.mean(x)`)."""
    shape, dtype, large = x.shape, x.dtype, x.size >= _LARGE

    def back(dy):
        if dy is None:
            return (None,)
        g = dy * scale if scale != 1 else dy
        if large and (type(g) is float or type(g) is np.float64):  # a read-only view of one number: no array
            return (np.broadcast_to(np.asarray(g, dtype), shape),)  # written (the API copies a gradient it returns)
        if getattr(type(g), "__zygote_number__", False):  # a dual number (hessian), which np.full cannot copy in
            return (g * np.ones(shape, dtype),)
        return (np.full(shape, g, dtype),)
    return back


_LARGE = 1 << 16  # entries from which a broadcast view (a few µs of Python) beats writing the array (np.full)


@keyword_rule
@adjoint(np.sum)
def sum_(x, *args, **kwargs):
    """`initial=` is added once to each output entry: its cotangent is the sum of dy."""
    if not args and not kwargs and type(x) is np.ndarray and x.dtype.kind == "f":
        return x.sum(), _total_back(x, 1)
    x_arr = _reduced(x)
    axis, keepdims = _axis_keepdims(args, kwargs, 3)
    where = _where(args, kwargs, 5)
    initial = _initial(args, kwargs, 4)

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *(None for _ in args)), kwargs)
        g = _expand(dy, x_arr, axis, keepdims)
        if where is not None:  # entries left out of the sum get no gradient
            g = namespace(x_arr).where(where, g, 0)
        dinitial = None if initial is np._NoValue else unbroadcast(namespace(x_arr).sum(dy), initial)
        return keyword_cotangents((_restore(g, x), *(dinitial if k == 4 else None for k in range(len(args)))),
                                  kwargs, initial=dinitial)
    return _reduce(np.sum, x, args, kwargs), back


@adjoint(np.mean)
def mean(x, *args, **kwargs):
    if not args and not kwargs and type(x) is np.ndarray and x.dtype.kind == "f" and x.size:
        return x.sum() / x.size, _total_back(x, 1 / x.size)  # what np.mean computes, without its Python wrapper
    x_arr = _reduced(x)
    y = _reduce(np.mean, x_arr, args, kwargs)
    axis, keepdims = _axis_keepdims(args, kwargs, 3)
    where = _where(args, kwargs, 5)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        if where is None:
            count = math.prod(x_arr.shape) // max(math.prod(getattr(y, "shape", ())), 1)
            return (_restore(_expand(dy / count, x_arr, axis, keepdims), x), *(None for _ in args))
        xp = namespace(x_arr)  # the mean of the selected entries: each gets dy / (how many were selected)
        mask = xp.broadcast_to(where, x_arr.shape)
        count = xp.sum(mask, axis=axis, keepdims=True)
        g = _expand(dy, x_arr, axis, keepdims) / xp.where(count == 0, 1, count)
        return (_restore(xp.where(mask, g, 0), x), *(None for _ in args))
    return y, back


def _initial(args, kwargs, at):
    """The `initial=` of a reduction (positional number `at` after x), or np._NoValue when not given."""
    return args[at] if len(args) > at else kwargs.get("initial", np._NoValue)


def _where(args, kwargs, at):
    """The `where=` mask of a reduction, or None when it selects everything."""
    where = args[at] if len(args) > at else kwargs.get("where", True)
    return None if where is True else where


def _extremum(fn):
    def rule(x, *args, **kwargs):
        x_arr = _reduced(x)
        y = _reduce(fn, x_arr, args, kwargs)
        axis, keepdims = _axis_keepdims(args, kwargs, 2)
        initial, where = _initial(args, kwargs, 3), _where(args, kwargs, 4)
        if initial is not np._NoValue or where is not None:
            return y, _extremum_with_initial(x, x_arr, y, axis, keepdims, initial, where, args, kwargs)

        def back(dy):
            if dy is None:
                return keyword_cotangents((None, *(None for _ in args)), kwargs)
            if axis is None and type(x_arr) is np.ndarray and x_arr.dtype.kind == "f" and np.ndim(dy) == 0:
                hit = x_arr == y  # the whole array: its maxima share dy evenly (none: initial= won, no gradient)
                share = (hit * (dy / max(np.count_nonzero(hit), 1))).astype(x_arr.dtype, copy=False)  # (no dtype=:
                return keyword_cotangents((_restore(share, x), *(None for _ in args)), kwargs)  # nesting's rules)
            xp = namespace(x_arr)
            hit = x_arr == _expand(y, x_arr, axis, keepdims)
            # ties share the gradient evenly; counted in x's float type so that float32 stays float32
            if xp is np:
                counts = xp.sum(hit, axis=axis, keepdims=True, dtype=x_arr.dtype if x_arr.dtype.kind == "f" else None)
            else:
                hit = xp.astype(hit, x_arr.dtype)
                counts = xp.sum(hit, axis=axis, keepdims=True)
            counts = xp.where(counts == 0, xp.ones_like(counts), counts)  # (a row where initial= won: no gradient)
            return keyword_cotangents((_restore(_expand(dy, x_arr, axis, keepdims) * hit / counts, x),
                                       *(None for _ in args)), kwargs)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return keyword_rule(rule)


def _extremum_with_initial(x, x_arr, y, axis, keepdims, initial, where, args, kwargs):
    """The back of max/min with `initial=` (a value that takes part in each output entry) or `where=` (entries left
    out): dy goes to whichever of the selected entries and `initial` equal the result, shared evenly among ties."""
    xp = namespace(x_arr)
    hit = x_arr == _expand(y, x_arr, axis, keepdims)
    if where is not None:
        hit = hit & xp.broadcast_to(xp.asarray(where, **on(x_arr)), tuple(x_arr.shape))
    hit = xp.astype(hit, x_arr.dtype) if xp is not np else hit.astype(x_arr.dtype if is_float(x_arr) else float)
    hit_initial = (y == initial) if initial is not np._NoValue else 0.0
    counts = xp.sum(hit, axis=axis, keepdims=keepdims) + hit_initial  # > 0: y is one of them

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *(None for _ in args)), kwargs)
        share = dy / counts
        dx = _restore(_expand(share, x_arr, axis, keepdims) * hit, x)
        dinitial = None if initial is np._NoValue else unbroadcast(xp.sum(share * hit_initial), initial)
        return keyword_cotangents((dx, *(dinitial if k == 3 else None for k in range(len(args)))), kwargs,
                                  initial=dinitial)
    return back


for _fn in (np.max, np.min, np.amax, np.amin):
    adjoint(_fn)(_extremum(_fn))


# --- products ------------------------------------------------------------------------------------------------------------
@adjoint(np.dot)
def dot(a, b):
    if namespace_of(a, b) is not np:  # np.dot of arrays up to 2-d (or a 2-d b) is matmul, or a product with a scalar
        if getattr(a, "ndim", 0) == 0 or getattr(b, "ndim", 0) == 0:
            from .scalar import mul
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
    from .scalar import matmul as operator_matmul
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
        dy_ = np.asarray(dy)
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


# --- shapes --------------------------------------------------------------------------------------------------------------
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
    flags = getattr(x, "flags", None)
    if order == "A":
        return "F" if flags is not None and flags.f_contiguous and not flags.c_contiguous else "C"
    if order != "K" or flags is None or flags.c_contiguous:
        return order if order != "K" else "C"
    if any(s < 0 for s in x.strides):  # NumPy then reverses those axes too
        raise ZygoteError("ravel(x, order='K') of an array with negative strides has no gradient rule; use "
                          "order='C' or 'F'")
    axes = tuple(int(a) for a in np.argsort([-s for s in x.strides], kind="stable"))
    return "C" if axes == tuple(range(x.ndim)) else axes


def _unflatten(dy, x, order):
    """The cotangent of x from that of a reshape of x read in `order` (see _order)."""
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


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _permute(x, axes):
    """np.transpose(x, axes) in x's namespace (the array API calls it permute_dims and wants the axes)."""
    xp = namespace(x)
    if xp is np or not hasattr(xp, "permute_dims"):  # (torch's transpose swaps two dimensions: permute_dims first)
        return function(np.transpose, xp)(x, axes)
    return xp.permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else tuple(axes))


@adjoint(np.transpose)
def transpose(x, *args, **kwargs):
    axes = args[0] if args else kwargs.get("axes")
    inverse = None if axes is None else np.argsort(axes)
    return _permute(x, axes), lambda dy: (None if dy is None else _permute(dy, inverse), *(None for _ in args))


@adjoint(np.ndarray.transpose)
def transpose_method(x, *axes):
    """`x.transpose()`, `x.transpose(1, 0)` and `x.transpose((1, 0))`."""
    perm = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes or None
    inverse = None if perm is None else np.argsort(perm)
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


@adjoint(np.concatenate)
def concatenate(arrays, *args, **kwargs):
    axis = args[0] if args else kwargs.get("axis", 0)
    shapes = [_shape(a) for a in arrays]
    xp = namespace_of(*arrays)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        if axis is None:  # the arrays were flattened first
            parts, start = [], 0
            for s in shapes:
                parts.append(xp.reshape(dy[start:start + math.prod(s)], s))
                start += math.prod(s)
        else:  # slices of dy along the axis, one per array
            ax, parts, start = axis % len(dy.shape), [], 0
            for s in shapes:
                parts.append(dy[(slice(None),) * ax + (slice(start, start + s[ax]), ...)])
                start += s[ax]
        return (type(arrays)(parts) if isinstance(arrays, (list, tuple)) else parts, *(None for _ in args))
    if xp is np:
        return np.concatenate(arrays, *args, **kwargs), back
    return function(np.concatenate, xp)(arrays, **{**dict(zip(("axis",), args)), **kwargs}), back


@adjoint(np.stack)
def stack(arrays, *args, **kwargs):
    axis = args[0] if args else kwargs.get("axis", 0)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        ax = axis % len(dy.shape)
        parts = [dy[(slice(None),) * ax + (k, ...)] for k in range(len(arrays))]
        return (type(arrays)(parts) if isinstance(arrays, (list, tuple)) else parts, *(None for _ in args))
    xp = namespace_of(*arrays)
    if xp is np:
        return np.stack(arrays, *args, **kwargs), back
    return xp.stack(arrays, **{**dict(zip(("axis",), args)), **kwargs}), back


def _array(make):
    return lambda obj, *args, **kwargs: _array_rule(make, obj, *args, **kwargs)


def _array_rule(make, obj, *args, **kwargs):
    """`np.array([a, b, c])` of differentiable scalars: the cotangent goes back to each element. `np.asarray` keeps
    NumPy's aliasing (an array comes back as itself, so an update in place through either is seen by the other)."""
    if _holds_duals(obj):  # (hessian, forward-over-reverse: NumPy cannot hold dual numbers; no try here, which an
        y = _dual_array(make, obj, *args, **kwargs)  # outer level of nesting could not transform)
    else:
        y = make(obj, *args, **kwargs)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        if isinstance(obj, (list, tuple)):
            return (type(obj)(dy[k] for k in range(len(obj))), *(None for _ in args))
        return (np.reshape(dy, np.shape(obj)), *(None for _ in args))
    return y, back


def _holds_duals(obj):
    """Are there dual numbers among the elements of `obj` (a list or tuple given to np.array)?"""
    if not isinstance(obj, (list, tuple)):
        return False
    from ..forward.dual import has_dual
    return has_dual(obj)


def _dual_array(make, obj, *args, **kwargs):
    """np.array of a list holding dual numbers: forward mode's rule builds the dual array of primals and tangents."""
    from ..forward.dual import dispatch
    return dispatch(make, (obj, *args), kwargs)


nondifferentiable(_holds_duals)
array = adjoint(np.array)(_array(np.array))
adjoint(np.asarray)(_array(np.asarray))


# --- ndarray methods and attributes --------------------------------------------------------------------------------------
METHODS = {np.ndarray.sum: sum_, np.ndarray.mean: mean, np.ndarray.max: _extremum(np.max),
           np.ndarray.min: _extremum(np.min), np.ndarray.dot: dot, np.ndarray.ravel: ravel,
           np.ndarray.squeeze: squeeze}
for _method, _rule in METHODS.items():
    adjoint(_method)(_rule)


@adjoint(np.ndarray.flatten)
def flatten(x, *args, **kwargs):
    """`x.flatten(order)`: a copy of `x.ravel(order)`, so the same cotangent."""
    _, back = ravel(x, *args, **kwargs)
    return x.flatten(*args, **kwargs), back


@adjoint(np.ndarray.reshape)
def reshape_method(x, *shape, **kwargs):
    """`x.reshape(2, 3)`, `x.reshape((2, 3))`, with `order=` (keyword only, for the method)."""
    order = _order(x, kwargs.get("order", "C"))
    return x.reshape(*shape, **kwargs), lambda dy: (None if dy is None else _unflatten(dy, x, order),
                                                    *(None for _ in shape))


@adjoint(np.ndarray.view)
def view(x, *args, **kwargs):
    """`x.view()` (or `x.view(ndarray)`, `x.view(x.dtype)`): the same values, so the same cotangent. A view as another
    dtype reinterprets the bytes: no gradient can follow that."""
    y = x.view(*args, **kwargs)
    if y.dtype != x.dtype or type(y) is not type(x):
        raise ZygoteError(f"x.view({', '.join(map(repr, args))}) reinterprets the array's memory as {y.dtype}: no "
                          f"gradient follows it; use x.astype(...) to convert values")
    return y, lambda dy: (dy, *(None for _ in args))


@adjoint(np.ndarray.copy)
def copy(x):
    return x.copy(), lambda dy: (dy,)


@adjoint(np.ndarray.__copy__)
def dunder_copy(x):
    """`copy.copy(x)` of an array (the standard library's `copy` calls it): a new array of the same values."""
    return x.__copy__(), lambda dy: (dy,)


@adjoint(np.ndarray.__deepcopy__)
def dunder_deepcopy(x, memo):
    """`copy.deepcopy(x)`, also of a list or dict holding arrays: a new array of the same values."""
    return x.__deepcopy__(memo), lambda dy: (dy, None)


@adjoint(np.ndarray.astype)
def astype(x, dtype, **kwargs):
    y = x.astype(dtype, **kwargs)
    keeps = y.dtype.kind in "fc"  # float <-> float keeps the gradient; to an integer type drops it

    def back(dy):
        if dy is None or not keeps:
            return (None, None)
        g = unbroadcast(dy, x)  # the real part for a real x
        return (g.astype(x.dtype) if x.dtype.kind in "fc" else g, None)
    return y, back


def is_float(x):
    """Does the array x hold real or complex floats (in any library's dtype objects)?"""
    kind = getattr(x.dtype, "kind", None)
    if kind is not None:
        return kind in "fc"
    name = str(x.dtype)
    return "float" in name or "complex" in name


ATTRIBUTES[np.ndarray, "T"] = lambda x, dy: dy.T
ATTRIBUTES[np.ndarray, "mT"] = lambda x, dy: np.swapaxes(dy, -1, -2)  # NumPy 2's stacked-matrix transpose
ATTRIBUTES[np.ndarray, "real"] = lambda x, dy: dy.real if np.iscomplexobj(x) else dy
ATTRIBUTES[np.ndarray, "imag"] = lambda x, dy: 1j * dy.real if np.iscomplexobj(x) else None

nondifferentiable(np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim, np.size, np.argmax,
                  np.argmin, np.argsort, np.floor, np.ceil, np.round, np.around, np.rint, np.isnan, np.isfinite,
                  np.isinf, np.zeros, np.ones, np.empty, np.eye, np.identity,
                  np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, np.logical_and,
                  np.logical_or, np.logical_not, np.all, np.any, np.ndarray.argmax, np.ndarray.argmin,
                  np.ndarray.argsort, np.ndarray.nonzero, np.nonzero, np.count_nonzero, np.allclose, np.isclose)

# --- rules that compute with the namespace of their inputs: they serve JAX, torch, CuPy and array-API arrays too --------
namespace_generic(*ELEMENTWISE, np.abs, np.absolute, *BINARY, np.power, np.where, np.clip, np.sum, np.mean, np.max,
                  np.min, np.amax, np.amin, np.dot, np.matmul, np.reshape, np.transpose, np.ravel, np.squeeze,
                  np.expand_dims, np.concatenate, np.stack)

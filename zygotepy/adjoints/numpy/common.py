"""Helpers shared by the NumPy rule modules: arguments as arrays (`_as_array`, `_float`), cotangents given back
the argument's form (`_restore`), NumPy functions computed by the namespace of their arguments (`_call`), the rule
factories of elementwise functions (`_elementwise_rule`, `_binary`; scipy_special.py uses them too), a reduction's
`axis`/`keepdims`/`initial`/`where` and its cotangent spread back over the reduced axes (`_expand`), scans and
concatenation in another library's namespace, and the matrix transposes of linalg.py and decompositions.py.
"""
import collections
import numbers
import operator

import numpy as np

from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...backends import conj, function, is_array_type, namespace, namespace_of, on, unbroadcast
from ...errors import ZygoteError
from ..handover import added, divided, times
from ..registry import adjoint


# --- arguments as arrays, cotangents in the argument's form -----------------------------------------------------------
def arrayed(v):
    """`np.asarray(v)` of a cotangent, but a dual number as it is (`hessian` runs the rules' backs on them: it carries
    the tangent, which `np.asarray` refuses to drop)."""
    return v if getattr(type(v), "__zygote_number__", False) else np.asarray(v)


def real_floating(x):
    """Does `x` (an array, a number, a list, a dual number) hold real or complex floats, which carry a gradient?"""
    return getattr(arrayed(x).dtype, "kind", "") in "fc"


def _as_array(x):
    """A list or tuple argument (`np.mean([a, b, c])`) as an array; `_restore` gives its cotangent the list's form. An
    object of a class that overrides NumPy's ufuncs (`__array_ufunc__`: `np.sin(obj)` runs the class's own code, and
    gives what it likes) is refused: the rule's derivative is the array function's, not that code's."""
    if isinstance(x, (list, tuple, collections.deque)):
        return np.asarray(x)
    if type(x) is not np.ndarray and getattr(type(x), "__array_ufunc__", None) is not None \
            and not isinstance(x, (np.ndarray, np.generic)) and not getattr(type(x), "__zygote_number__", False) \
            and not is_array_type(type(x)) and rt.differentiable(x):
        raise ZygoteError(f"an object of class {type(x).__name__}, which overrides NumPy's functions (__array_ufunc__), "
                          f"reached a NumPy function zygotepy differentiates as the array function: pass its array "
                          f"(np.sin(obj.a)), or give the function an @adjoint rule for {type(x).__name__} arguments")
    return x


def _call(fn, *args, **kwargs):
    """The NumPy function `fn` computed by the namespace of its arguments (`jnp.tanh` for JAX arrays)."""
    xp = namespace_of(*args)
    return (fn if xp is np else function(fn, xp))(*args, **kwargs)


def _mT(x, xp):
    """The transpose of the last two axes."""
    return xp.swapaxes(x, -1, -2) if xp is np else x.mT


def _restore(g, x):
    if isinstance(x, (list, tuple, collections.deque)):  # (a deque's cotangent: a list)
        return (list if type(x) is collections.deque else type(x))(_restore(g[k], item) for k, item in enumerate(x))
    if isinstance(x, (float, int, complex)) and type(g) is np.ndarray and g.ndim == 0:
        return g[()]  # a Python number's cotangent is a number
    return g


def is_float(x):
    """Does the array x hold real or complex floats (in any library's dtype objects)?"""
    kind = getattr(x.dtype, "kind", None)
    if kind is not None:
        return kind in "fc"
    name = str(x.dtype)
    return "float" in name or "complex" in name


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


# --- axes, arguments, dtypes ------------------------------------------------------------------------------------------
def _axes(axis, ndim):
    """The reduced axes as a sorted tuple of non-negative ints (all of them for None)."""
    if axis is None or ndim == 0:  # (a 0-d array reduced over axis 0 or -1, as NumPy allows: no axes)
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in as_axes(axis)))


def as_axes(axis):
    """An `axis` (one integer, NumPy's own too: `axis=np.argmax(x.shape)` is an np.int64, or a sequence of them) as a
    tuple of Python ints: a NumPy integer is no `int`, and is not iterable either."""
    if isinstance(axis, (int, np.integer)):
        return (operator.index(axis),)
    return tuple(operator.index(a) for a in axis)


def _float(x):
    """An array argument as an array (lists and Python numbers too)."""
    x = _as_array(x)
    return np.asarray(x) if not hasattr(x, "shape") else x


def _nones(args):
    return tuple(None for _ in args)


def _float_dtype(dtype):
    return dtype if dtype.kind in "fc" else np.float64


# --- another library's arrays: NumPy's positional parameters as the array API's keywords ---------------------------------
def _foreign_keywords(name, names, args, kwargs, supported):
    """`f(x, *args, **kwargs)` of NumPy's signature (parameters `names` after x) as keywords; `out=` and parameters the
    array API lacks (all but `supported`) raise a ZygoteError naming them."""
    kw = {**dict(zip(names, args)), **kwargs}
    if kw.get("out") is not None:
        raise ZygoteError(f"np.{name}: out= is not differentiable")
    kw.pop("out", None)
    unknown = sorted(k for k, v in kw.items() if k not in supported and v is not None)
    if unknown:
        raise ZygoteError(f"np.{name} of another library's arrays: {', '.join(unknown)} has no array-API equivalent "
                          f"in the namespace-generic rule")
    return {k: v for k, v in kw.items() if k in supported}


def _scan(xp, kind, x, axis):
    """NumPy's cumsum / cumprod (kind "sum" / "prod") of a foreign array: the array API's cumulative_sum / _prod (a
    flattened input when axis is None)."""
    if xp is np:
        return (np.cumsum if kind == "sum" else np.cumprod)(x, axis=axis)
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    return getattr(xp, "cumulative_" + kind)(x, axis=axis)


def _concat(xp, arrays, axis):
    return np.concatenate(arrays, axis=axis) if xp is np else (getattr(xp, "concat", None) or xp.concatenate)(
        arrays, axis=axis)


# --- elementwise functions, one argument (numpy/elementwise.py, scipy_special.py) -------------------------------------
def _elementwise_rule(fn, derivative, divisor=None):
    """The rule of an elementwise function from its derivative `derivative(x, y)`; where that is `1 / E`, `divisor`
    gives `E`, and a real cotangent is divided by it (derivatives.py, whose array forms do the same)."""
    def rule(x):
        y = fn(x) if type(x) is np.ndarray or namespace(x) is np else _call(fn, x)
        if type(x) is np.ndarray and x.dtype.kind == "f":  # the common case: a real array (no conj, no list)
            def back(dy, need=None, *into):  # buffers reused where nothing else can see them (handover.py)
                if dy is None:
                    return into or (None,)
                handed = into and rt.sole(dy)  # asked first: an argument list holding dy would count as a holder
                if divisor is not None and (type(dy) is not np.ndarray or dy.dtype.kind != "c"):
                    e = divisor(x, y)  # (no buffer to reuse below REUSE_BYTES: no `divided`, no `times`)
                    g = dy / e if x.nbytes < rt.REUSE_BYTES else divided(dy, e, e is not x and e is not y, handed)
                else:
                    d = derivative(x, y)
                    g = dy * d if x.nbytes < rt.REUSE_BYTES else times(dy, d, d is not x and d is not y, handed)
                if type(g) is not np.ndarray or g.shape != x.shape:
                    g = unbroadcast(g, x)
                return added(into, (g,)) if into else (g,)
            return y, back
        x_ = _as_array(x)

        def back(dy, need=None, *into):
            if dy is None:
                return into or (None,)
            return added(into, (_restore(unbroadcast(dy * conj(derivative(x_, y)), x_), x),))
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


# --- elementwise functions, two arguments -----------------------------------------------------------------------------
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
        if type(y) is not np.ndarray and not isinstance(y, _NUMBERS) and not hasattr(y, "shape"):
            raise ZygoteError(f"{call_site() or 'np.' + fn.__name__}: zygotepy cannot differentiate np.{fn.__name__} "
                              f"of objects of a user's class ({type(y).__name__}): NumPy runs their operators, which "
                              f"its rule, written for numbers, does not follow; use the operator (a + b)")
        a_, b_ = _as_array(a), _as_array(b)

        def back(dy, need=(True, True)):
            if dy is None:
                return (None, None)
            return (_restore(unbroadcast(dy * conj(da(a_, b_, y)), a_), a) if need[0] else None,
                    _restore(unbroadcast(dy * conj(db(a_, b_, y)), b_), b) if need[1] else None)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


_NUMBERS = (float, np.generic, numbers.Number)  # (the common results first: the ABC's check last)


def _ties(a, b, y, pick_a):
    """Where a == b the gradient is split evenly between the two (in the output's float type: float32 stays)."""
    xp = namespace(a if hasattr(a, "shape") else b)
    if xp is not np:  # the array API multiplies no booleans
        w = xp.astype(pick_a, y.dtype if hasattr(y, "dtype") and is_float(y) else xp.float64)
        return xp.where(a == b, 0.5, w)
    w = xp.where(a == b, 0.5, pick_a * 1.0)
    return w.astype(y.dtype) if getattr(getattr(y, "dtype", None), "kind", "") == "f" else w


# --- a reduction's axes, and its cotangent over them ------------------------------------------------------------------
def _expand(dy, x, axis, keepdims):
    """Broadcast a reduction's cotangent back over the reduced axes of x."""
    xp = namespace(x)
    if type(x) is np.ndarray and np.ndim(dy) == 0:  # (a number: the same over every entry, along any axes)
        return np.full(x.shape, dy, dtype=np.result_type(x.dtype, dy) if x.dtype.kind in "fc" else None)
    if xp is not np and not hasattr(dy, "shape"):  # a Python number: an array of x's float type
        dy = xp.asarray(dy, dtype=x.dtype if is_float(x) else None, **on(x))
    if axis is not None and not keepdims and np.ndim(x):  # (NumPy lets a 0-d array be reduced over axis 0 or -1)
        axes = as_axes(axis)
        if xp is np:
            dy = xp.expand_dims(dy, tuple(a % x.ndim for a in axes))
        else:  # the array API's expand_dims takes one axis
            for a in sorted(a % x.ndim for a in axes):
                dy = xp.expand_dims(dy, axis=a)
    return xp.broadcast_to(dy, tuple(x.shape))


def spread(g, x, axis, keepdims):
    """`_expand` for a reduction of a NumPy array: the cotangent `g` written into a fresh array of `x`'s shape
    (`np.broadcast_to`'s Python wrapper costs more than the write on small arrays). It has a rule of its own because an
    outer level of nested differentiation transforms the backs that call it, and must not see the write in place."""
    if type(g) is not np.ndarray or type(x) is not np.ndarray:
        return _expand(g, x, axis, keepdims)
    out = np.empty(x.shape, g.dtype)
    out[...] = g if keepdims or axis is None else g.reshape(kept_shape(x.shape, axis))
    return out


@adjoint(spread)
def _spread_rule(g, x, axis, keepdims):
    def back(dy):
        if dy is None:
            return None, None, None, None
        return namespace(dy).sum(dy, axis=axis, keepdims=keepdims), None, None, None
    return spread(g, x, axis, keepdims), back


def kept_shape(shape, axis):
    """The shape of a reduction of an array of `shape` over `axis` (an int or a tuple) with keepdims=True."""
    axes = {a % len(shape) for a in as_axes(axis)}
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _axis_keepdims(args, kwargs, keepdims_at):
    """`axis` and `keepdims` of a reduction called as `f(x, *args, **kwargs)` (axis is always the first; keepdims is
    positional number `keepdims_at`: 3 for sum/mean (axis, dtype, out, keepdims), 2 for max/min (axis, out, keepdims))."""
    axis = args[0] if args else kwargs.get("axis")
    keepdims = args[keepdims_at] if len(args) > keepdims_at else kwargs.get("keepdims", False)
    return axis, keepdims


def _initial(args, kwargs, at):
    """The `initial=` of a reduction (positional number `at` after x), or np._NoValue when not given."""
    return args[at] if len(args) > at else kwargs.get("initial", np._NoValue)


def _where(args, kwargs, at):
    """The `where=` mask of a reduction, or None when it selects everything."""
    where = args[at] if len(args) > at else kwargs.get("where", True)
    return None if where is True else where


# --- matrices (products.py, linalg.py, decompositions.py) -------------------------------------------------------------
def _T(x):
    xp = namespace(x)
    return np.swapaxes(x, -1, -2) if xp is np else xp.matrix_transpose(x)


def _H(x):
    return conj(_T(x))


def nan_filled(rule, fill):
    """The rule of np.nanprod, np.nancumsum or np.nancumprod: `rule` (prod's, cumsum's, cumprod's) of x with its NaNs
    replaced by `fill`, which is NumPy's own definition of them; the NaN entries, constants there, get no cotangent.
    (Differentiated through NumPy's source, they stopped at its `out=` handling, naming NumPy's lines.)"""
    def nan_rule(x, *args, **kwargs):
        x_arr = np.asarray(x)
        missing = np.isnan(x_arr)
        y, back = rule(np.where(missing, fill, x_arr), *args, **kwargs)

        def back_(dy):
            grads = back(dy)
            g = grads[0]
            return (None if g is None else _restore(np.where(missing, 0, g), x), *grads[1:])
        return y, back_
    nan_rule.__zygote_keywords__ = getattr(rule, "__zygote_keywords__", False)
    return nan_rule

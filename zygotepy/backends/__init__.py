"""Array namespaces and the two conventions every rule shares: `unbroadcast` and `conj`.

Rules call `namespace(x)` to get the array namespace of their inputs (NumPy for NumPy arrays and Python scalars), so one
rule serves every backend. The namespace is cached per array type: `array_api_compat.array_namespace` costs ~1 µs a call.
"""
import cmath
import collections
import math
import operator
import sys

import numpy as np

from ..errors import ZygoteError
from ..structgrad import NoDerivative
from .composed import composed

_SCALARS = (int, float, bool, complex)
_REAL_SCALARS = frozenset((float, np.float64))  # a real number's cotangent for a real number: nothing to reduce
_NAMESPACES = {np.ndarray: np}


def namespace(x):
    """The array namespace of `x` (NumPy for NumPy arrays, NumPy scalars and Python numbers)."""
    t = type(x)
    xp = _NAMESPACES.get(t)
    if xp is not None:
        return xp
    xp = np
    if hasattr(x, "__array_namespace__"):
        xp = x.__array_namespace__()
    elif not isinstance(x, (np.generic,) + _SCALARS):
        try:
            import array_api_compat
            xp = array_api_compat.array_namespace(x)
        except Exception:
            xp = np
    _NAMESPACES[t] = xp
    return xp


SIGN_IS_UNIT = complex(np.sign(1j)) == 1j  # NumPy 2: sign(z) = z/|z| of a complex z; NumPy 1: sign(z.real)


def is_complex(x):
    t = type(x)
    if t is float or t is int:
        return False
    if t is complex:
        return True
    if t is np.ndarray:
        return x.dtype.kind == "c"
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return False
    kind = getattr(dtype, "kind", None)
    return kind == "c" if kind is not None else "complex" in str(dtype)  # torch's and array-API dtypes have no kind


def conj(x):
    """Complex conjugate, free for real values (no copy of real arrays)."""
    if not is_complex(x):
        return x
    method = getattr(x, "conjugate", None)  # array-API arrays have no conjugate method: their namespace's conj
    return method() if method is not None else namespace(x).conj(x)


def _unbroadcast_ndarray(g, like):
    """`unbroadcast` for two NumPy arrays, the common case, with as few attribute lookups and calls as possible: the
    axes to sum for a pair of shapes are worked out once (`_sum_plan`)."""
    shape = like.shape
    if g.dtype.kind == "c" and like.dtype.kind != "c":
        g = g.real
    gshape = g.shape
    if gshape == shape:
        return g
    plan = _PLANS.get((gshape, shape))
    if plan is None:
        plan = _sum_plan(gshape, shape)
    axes, keepdims, reshape = plan
    if axes is None:  # g broadcasts to the shape (a reduction's cotangent kept unspread: array_inline `_kept`)
        out = np.empty(shape, g.dtype)
        out[...] = g
        return out
    g = _add_reduce(g, axis=axes, keepdims=keepdims)  # (what `g.sum(axis=axes)` calls, without its Python wrapper)
    return g.reshape(shape) if reshape else g


def _sum_plan(gshape, shape):
    """`(axes, keepdims, reshape)`: a cotangent of shape `gshape` summed over `axes` (keeping them when none were
    added in front) is the cotangent of an operand of shape `shape`, reshaped when that does not give the shape
    already (a shape that does not broadcast to `gshape` fails there, as NumPy would). `(None, None, None)` for a
    cotangent of the operand's rank with length 1 on axes where the operand has more, or a 0-d one (a reduction's
    cotangent, kept unspread): it is spread over the operand."""
    lead = len(gshape) - len(shape)
    if lead == 0 and all(a in (1, b) for a, b in zip(gshape, shape)) or gshape == ():  # (a 0-d total: spread too)
        plan = _PLANS[gshape, shape] = (None, None, None)
        return plan
    if shape and 1 not in shape and lead >= 0:  # only leading axes were added (a bias broadcast over a batch)
        axes = tuple(range(lead))
    else:
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
    keepdims = lead == 0
    result = tuple(1 if k in axes else n for k, n in enumerate(gshape)) if keepdims else \
        tuple(n for k, n in enumerate(gshape) if k not in axes)
    if len(_PLANS) > 4096:  # (shapes seen by a long-running process: keep the table small)
        _PLANS.clear()
    plan = _PLANS[gshape, shape] = (axes, keepdims, result != shape)
    return plan


_PLANS = {}
_add_reduce = np.add.reduce


def unbroadcast(g, like):
    """Reduce the cotangent `g` to the shape of `like`, undoing NumPy broadcasting; project it onto real `like`.

    Sums leading axes, then axes where `like` has size 1. A Python-number `like` receives a number; a list or tuple
    that NumPy took as an array (`x * [a, 2.0]`, `y[1:3] = [a, b]`) receives a list or tuple of its items' cotangents
    (`sequence_cotangent`). None stays None.
    """
    if g is None:
        return None
    if type(like) in _REAL_SCALARS:
        if type(g) in _REAL_SCALARS:
            return g
        if type(g) is np.ndarray:  # a number broadcast against an array: its cotangent is the total
            return (g.real if g.dtype.kind == "c" else g).sum()
    if type(g) is np.ndarray and type(like) is np.ndarray and g.ndim >= like.ndim:
        return _unbroadcast_ndarray(g, like)
    if (type(like) is list or type(like) is tuple or type(like) is collections.deque) and hasattr(g, "shape"):
        shaped = np.asarray(like) if type(g) is np.ndarray or isinstance(g, np.generic) else \
            namespace(g).asarray(like, **on(g))  # (made where the cotangent lives: a device's array stays there)
        return sequence_cotangent(unbroadcast(g, shaped), like)
    if type(g) is NoDerivative:  # (a rule's "no derivative here": passed on as it is)
        return g
    if not is_complex(like) and is_complex(g):
        g = g.real if type(g) is np.ndarray or isinstance(g, (complex, np.generic)) else namespace(g).real(g)
    shape = getattr(like, "shape", None)
    gshape = getattr(g, "shape", None)
    if shape is None:  # a Python number
        if gshape:
            g = g.sum() if type(g) is np.ndarray else namespace(g).sum(g)
        return g
    if gshape == shape:
        return g
    if isinstance(like, np.generic) and gshape and type(g) is not np.ndarray:  # (`t * np.float32(s)`: a tensor's
        return namespace(g).sum(g)  # total; NumPy's sum would pass torch `axis=`)
    xp = namespace(like)
    if gshape is None or gshape == ():
        # a number (or a 0-d array) broadcast: made in like's floating dtype and on its device (torch would make a
        # Python float a float32 tensor on the default device)
        dtype = like.dtype if any(k in str(like.dtype) for k in ("float", "complex")) else None
        own = gshape is not None and namespace(g) is xp
        return xp.broadcast_to(g if own else xp.asarray(g, dtype=dtype, **on(like)), shape)
    total = g.sum if type(g) is np.ndarray else lambda **kw: xp.sum(g, **kw)  # the method skips NumPy's wrapper
    lead = len(gshape) - len(shape)
    if lead:
        g = total(axis=tuple(range(lead)))
        total = g.sum if type(g) is np.ndarray else lambda **kw: xp.sum(g, **kw)
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = total(axis=axes, keepdims=True)
    return g


def sequence_cotangent(g, like):
    """The cotangent `g` (an array) of a list or tuple that NumPy took as an array, in the form of the sequence: one
    cotangent per item (nested lists item by item), which is what the rule that built the list gives back to its items.
    Anything else `like` takes `g` as it is."""
    if g is None or type(like) is not list and type(like) is not tuple and type(like) is not collections.deque:
        return g
    items = [sequence_cotangent(g[k], item) for k, item in enumerate(like)]
    return tuple(items) if type(like) is tuple else items  # (a deque's: a list)


def namespace_of(*xs):
    """The array namespace of the first argument that is not NumPy's (NumPy when all are NumPy values or numbers), so
    that `jnp.maximum(x, 0.0)` and `2.0 * x` compute in x's library."""
    for x in xs:
        if type(x) is not np.ndarray:
            xp = namespace(x)
            if xp is not np:
                return xp
    return np


def on(like):
    """`{"device": like.device}` for an array of another library, `{}` for NumPy values, numbers and arrays without a
    device (JAX's tracers). Every array a rule makes from nothing (`xp.zeros`, `xp.eye`, `xp.arange`, `xp.asarray` of a
    number) takes these keywords, so that it is made where `like` lives: torch's `cuda` tensors, CuPy arrays and
    array-API arrays on another device refuse to be combined with arrays made on the default device (issue case 11)."""
    if type(like) is np.ndarray or type(like) in _SCALAR_TYPES or isinstance(like, (np.generic, *_SCALARS)):
        return _NO_KEYWORDS
    try:
        device = like.device
    except Exception:  # a JAX tracer has no device: JAX places what it makes itself
        return _NO_KEYWORDS
    return _NO_KEYWORDS if device is None or callable(device) else {"device": device}


_NO_KEYWORDS = {}


def on_any(*likes):
    """`on` of the first of `likes` that has a device (a function of an array and a list or a number: the array's)."""
    for like in likes:
        kw = on(like)
        if kw:
            return kw
    return _NO_KEYWORDS


def zeros(xp, shape, dtype, like):
    """`xp.zeros(shape, dtype=dtype)` on `like`'s device (NumPy's zeros for NumPy)."""
    return np.zeros(shape, dtype=dtype) if xp is np else xp.zeros(shape, dtype=dtype, **on(like))


def asarray(xp, value, like, dtype=None):
    """`value` (an array of xp, or a number) as an array of xp on `like`'s device: an array of xp is kept where it is."""
    if xp is np:
        return np.asarray(value, dtype=dtype)
    if hasattr(value, "shape") and type(value) is not np.ndarray:
        return xp.asarray(value, dtype=dtype) if dtype is not None else value
    return xp.asarray(value, dtype=dtype, **on(like))


# array-API names of NumPy functions whose NumPy name a strict namespace lacks (`array_api_strict` has only these)
_ARRAY_API_NAMES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
                    "arctanh": "atanh", "arctan2": "atan2", "power": "pow", "concatenate": "concat",
                    "absolute": "abs", "amax": "max", "amin": "min", "negative": "negative", "conjugate": "conj"}
_FUNCTIONS = {}


def function(np_fn, xp):
    """`xp`'s function of the NumPy function `np_fn` (by name, or its array-API name), else one composed from array-API
    functions (backends/composed.py); `np_fn` itself for NumPy. A ZygoteError names a function neither gives."""
    if xp is np:
        return np_fn
    key = (np_fn, xp)
    fn = _FUNCTIONS.get(key)
    if fn is None:
        name = np_fn.__name__
        fn = getattr(xp, name, None) or getattr(xp, _ARRAY_API_NAMES.get(name, name), None)
        if fn is None:
            fn = composed(np_fn, xp)
        if fn is None:
            raise ZygoteError(f"the array namespace {xp.__name__} has no function {name} (nor an array-API name for "
                              f"it) to compute np.{name} with")
        _FUNCTIONS[key] = fn
    return fn


# the libraries whose array types implement operators themselves (in C or in Python): never a user class's operator
_ARRAY_LIBRARIES = frozenset(("numpy", "jax", "jaxlib", "torch", "cupy", "cupyx", "array_api_strict", "dask",
                              "sparse", "ndonnx", "mlx", "tensorflow"))
_ARRAY_TYPES = {}


def is_array_type(t):
    """Is `t` an array type of an array library (it has `__array_namespace__`, or a known library defines it)? Its
    operators mean what the operator rules say, even when the library writes them in Python (JAX, torch)."""
    hit = _ARRAY_TYPES.get(t)
    if hit is None:
        hit = _ARRAY_TYPES[t] = hasattr(t, "__array_namespace__") \
            or (getattr(t, "__module__", None) or "").partition(".")[0] in _ARRAY_LIBRARIES
    return hit


def traced(x):
    """Is `x` a value JAX is tracing (inside `jax.jit`), whose value Python cannot branch on? The rules that pick an
    exact formula by the data (a division where nothing is 0, a refusal at repeated values) take their general one."""
    core = sys.modules.get("jax._src.core")
    return core is not None and isinstance(x, core.Tracer)


def is_foreign(x):
    """Is `x` an array of another backend than NumPy (a JAX, torch, CuPy or array-API array)?"""
    t = type(x)
    return t is not np.ndarray and t not in _SCALAR_TYPES and namespace(x) is not np


def to_numpy(x):
    """Another backend's array as a NumPy array on the host (torch's through `.detach().cpu()`, which `np.asarray`
    refuses on a GPU tensor; JAX's and the array API's through `np.asarray`, their buffer protocol, after a move to
    the namespace's default device where they are on another)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        return x.detach().cpu().numpy()
    try:
        return np.asarray(x)
    except (RuntimeError, TypeError, ValueError):  # (an array-API array on another device: moved to the default one)
        info = getattr(namespace(x), "__array_namespace_info__", None)
        if info is None or not hasattr(x, "to_device"):
            raise
        return np.asarray(x.to_device(info().default_device()))


_SCALAR_TYPES = frozenset((int, float, bool, complex, np.float64, np.float32, np.complex128, np.int64, type(None)))


def scatter_add(xp, size, index, values):
    """A 1-d array of `size` zeros of values' dtype with `values` added at the 1-d integer `index` (repeated indices
    accumulate): NumPy's bincount, JAX's functional `.at[].add`, torch's index_add, CuPy's scatter_add; a one-hot sum
    (exact, memory len(index) * size) in a namespace with no scatter (the array API has none)."""
    if xp is np:
        if np.iscomplexobj(values):
            g = np.zeros(size, dtype=values.dtype)
            np.add.at(g, index, values)
            return g
        return np.bincount(index, weights=values, minlength=size).astype(values.dtype, copy=False)
    zeros = xp.zeros((size,), dtype=values.dtype, **on(values))
    if hasattr(zeros, "at") and hasattr(zeros.at, "__getitem__"):  # JAX arrays are immutable
        return zeros.at[index].add(values)
    if hasattr(zeros, "index_add"):  # torch
        return zeros.index_add(0, index, values)
    if type(zeros).__module__.partition(".")[0] == "cupy":
        import cupyx
        cupyx.scatter_add(zeros, index, values)
        return zeros
    hits = xp.astype(xp.reshape(index, (-1, 1)) == xp.reshape(xp.arange(size, **on(index)), (1, -1)), values.dtype)
    return xp.sum(hits * xp.reshape(values, (-1, 1)), axis=0)


def truncated(y, args):
    """Is `y` a NumPy integer or boolean result computed from floating arguments (`np.asarray(x, dtype=int)`,
    `np.sum(x, dtype=int)`, `np.array(x, bool)`)? It is piecewise constant in them: no gradient, no tangent. (Integer
    arguments keep theirs: a Python int the caller differentiates counts as a real number, `np.asarray(n)` too.)"""
    return isinstance(y, (np.ndarray, np.generic)) and y.dtype.kind in "biu" and any(map(_floating, args))


def _floating(x, depth=2):
    """Does `x` hold floating or complex values (a float, a float array, a list or tuple of them)?"""
    if isinstance(x, (float, complex)) or getattr(getattr(x, "dtype", None), "kind", None) in ("f", "c"):
        return True
    return depth > 0 and isinstance(x, (list, tuple)) and any(_floating(v, depth - 1) for v in x)


def principal_log(a, y):
    """The principal log of the base `a` of a complex power `y = a ** b` (a real base made complex first: log(-2) is
    log 2 + i pi), 0 where a == 0 (the derivative in the exponent taken as 0 there, as for real bases): d/db a**b =
    a**b log(a). NumPy's `a > 0` orders complex numbers by their real part, so it cannot pick the bases instead."""
    if not hasattr(y, "dtype"):  # (Python numbers)
        return cmath.log(a) if a != 0 else 0j
    xp = namespace(y)
    a = xp.asarray(a, dtype=y.dtype, **on(y))
    zero = a == 0
    return xp.where(zero, xp.zeros_like(a), xp.log(xp.where(zero, xp.ones_like(a), a)))


_REAL_SCALARS = frozenset((int, float, np.float64, np.float32, np.int64, np.int32))


def power_slope(a, b, power=operator.pow):
    """d/da a**b = b a**(b-1), and 0 where an array exponent is 0: a**0 is the constant 1, also at a = 0, where
    0 * 0**-1 is nan (`x[:, None] ** np.arange(3)`, polynomial features, at x = 0). `power`: np.power or
    np.float_power, as the rule's forward."""
    if type(b) in _REAL_SCALARS and b == 0:
        return 0 * power(a, b)  # (zeros shaped as the result)
    if hasattr(b, "shape") and not getattr(type(b), "__zygote_number__", False):
        zero = b == 0
        xp = namespace(b)
        if xp.any(zero):  # (b * a**(1 - 1) there, so that no inf arises for a derivative of this to multiply by 0)
            return b * power(a, xp.where(zero, xp.ones_like(b), b) - 1)
    if type(a) in _REAL_SCALARS and type(b) in _REAL_SCALARS and a == 0 and 0 < b < 1:
        return b * math.inf  # (NumPy's slope there: Python's `0.0 ** -0.5` raises, dropping a gradient of none)
    return b * power(a, b - 1)


def log_add_shares(a, b, power):
    """The derivatives of log_B(B**a + B**b) (logaddexp, logaddexp2; `power(t)` is B**t): B**a / (B**a + B**b) and
    its twin, from B**-|a - b|, which neither overflows nor loses the shares where a and b are huge (exp(a - y) at a =
    b = 1e16 was 1 for each, y having rounded to a)."""
    xp = namespace(a if hasattr(a, "shape") else b)
    d = a - b
    w = power(-xp.abs(d))
    first = d >= 0
    return xp.where(first, 1 / (1 + w), w / (1 + w)), xp.where(first, w / (1 + w), 1 / (1 + w))

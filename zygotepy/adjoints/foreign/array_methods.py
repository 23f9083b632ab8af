"""Methods and attributes of other libraries' arrays: all mapped to namespace-generic rules.

`x.sum()`, `x.mean(axis=0)`, `x.reshape(2, 3)`, `x.T`, `x.transpose()`, `x.max()`, `x.astype(t)` on a JAX array, a torch
tensor or an array-API array mean a NumPy function; this module says which, and with which arguments. The maps are
keyed by the objects the array classes hold (`torch.Tensor.sum`, JAX's `ArrayImpl.sum` and `Tracer.sum`, the
`getset_descriptor` of `torch.Tensor.T`), built lazily by `registry` when the library has been imported; nothing of the
foreign library is patched.

- `index(classes_seen, methods, nondiff)` fills `methods` (method object -> rule) and `nondiff` (method objects whose
  results carry no gradient) for the array classes of the libraries imported so far.
- `attribute(cls, name)`: the cotangent map `f(obj, dy)` of an array attribute (`.T`, `.mT`) of a foreign array class.

A method rule is `rule(x, *args, **kwargs) -> (y, back)` with one cotangent per positional argument, like any rule.
Methods a table does not cover, whose NumPy method has a rule, raise a ZygoteError naming the method.
"""
import inspect
import sys

import numpy as np

from ...backends import is_array_type, namespace, on
from ...errors import ZygoteError
from .. import registry
from .arguments import (_astype_rule, _generic, _is_complex, _keywords, _moment_args, _perm, _reduction_args,
                        _shape_arg, _swap, _torch_moment, _via, _with_alpha)
from .torch_views import VIEWS, keeping_views


def _classes():
    """(array class, library) for the libraries imported so far."""
    out = []
    core, array = sys.modules.get("jax._src.core"), sys.modules.get("jax._src.array")
    if array is not None and hasattr(array, "ArrayImpl"):
        out.append((array.ArrayImpl, "jax"))
    if core is not None and hasattr(core, "Tracer"):
        out.append((core.Tracer, "jax"))
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "Tensor"):
        out.append((torch.Tensor, "torch"))
    strict = sys.modules.get("array_api_strict._array_object")
    if strict is not None and hasattr(strict, "Array"):
        out.append((strict.Array, "array_api_strict"))
    cupy = sys.modules.get("cupy")  # NumPy's method names and signatures (issue case 11: CuPy's arrays had no rules)
    if cupy is not None and isinstance(getattr(cupy, "ndarray", None), type):
        out.append((cupy.ndarray, "cupy"))
    return out


def _method(name, lib, who):
    """The rule of method `name` of `lib`'s arrays, or None when the table has no entry."""
    if name in ("sum", "mean", "amax", "amin") or name in ("max", "min") and lib != "torch":
        np_fn, extremum = getattr(np, name), name not in ("sum", "mean")
        return lambda x, *a, **k: _via(np_fn, who, x, (), _reduction_args(lib, a, k, extremum), len(a))
    if name == "prod":
        return lambda x, *a, **k: _via(np.prod, who, x, (), _reduction_args(lib, a, k), len(a))
    if name in ("var", "std"):
        if lib == "torch":  # Bessel's correction by default, and torch's positional unbiased
            return _torch_moment(_generic(getattr(np, name), who), who)
        return lambda x, *a, **k: _via(getattr(np, name), who, x, (), _moment_args(a, k), len(a))
    if name in ("cumsum", "cumprod"):
        def scan(x, *a, **k):
            kw = {**dict(zip(("axis", "dtype", "out"), a)), **_keywords(lib, k)}
            if kw.pop("out", None) is not None:
                raise ZygoteError("out= is not differentiable")
            return _via(getattr(np, name), who, x, (), kw, len(a))
        return scan
    if name in ("max", "min"):  # torch: with a dim, (values, indices); with another tensor, the elementwise extremum
        def extremum(x, *a, **k):
            if a and hasattr(a[0], "shape"):
                if k:
                    raise ZygoteError(f"{who} with an other tensor and keywords is not supported")
                return _generic(np.maximum if name == "max" else np.minimum, who)(x, a[0])
            if a or k:
                raise ZygoteError(f"{who}(dim) returns (values, indices), which zygotepy has no rule for; use "
                                  f"x.a{name}(dim) (torch.a{name}) for the values")
            return _via(getattr(np, name), who, x, (), {}, 0)
        return extremum
    if name in ("reshape", "view"):
        def reshape(x, *a, **k):
            if k and lib != "jax":
                raise ZygoteError(f"{who} with keywords {sorted(k)} is not supported")
            return _via(np.reshape, who, x, (_shape_arg(a),), k, len(a))
        return reshape
    if name == "transpose" and lib == "torch":  # torch's transpose swaps two dimensions
        def swap(x, dim0, dim1):
            return _via(np.transpose, who, x, (_swap(x.ndim, dim0, dim1),), {}, 2)
        return swap
    if name == "swapaxes":
        return lambda x, a, b: _via(np.transpose, who, x, (_swap(x.ndim, a, b),), {}, 2)
    if name in ("transpose", "permute"):
        def permute(x, *a):
            perm = _perm(a)
            return _via(np.transpose, who, x, (perm,) if perm is not None else (), {}, len(a))
        return permute
    if name == "t" and lib == "torch":
        return lambda x: _via(np.transpose, who, x, (), {}, 0)
    if name in ("ravel", "flatten"):
        def ravel(x, *a, **k):
            if a or k:
                raise ZygoteError(f"{who} with arguments is not supported; use reshape")
            return _via(np.ravel, who, x, (), {}, 0)
        return ravel
    if name == "squeeze":
        return lambda x, *a, **k: _via(np.squeeze, who, x, a, _keywords(lib, k), len(a))
    if name == "dot":
        return lambda x, other: _generic(np.dot, who)(x, other)
    if name == "clip":
        def clip(x, *a, **k):
            k = dict(k)
            lo = a[0] if len(a) > 0 else k.pop("min", k.pop("a_min", None))
            hi = a[1] if len(a) > 1 else k.pop("max", k.pop("a_max", None))
            if k:
                raise ZygoteError(f"{who} with keywords {sorted(k)} is not supported")
            y, back = _generic(np.clip, who)(x, lo, hi)
            n = len(a)
            return y, lambda dy: (back(dy)[0], *(None,) * n)
        return clip
    if name == "astype":
        def astype(x, dtype, *a, **k):
            if a or k:
                raise ZygoteError(f"{who} with arguments beyond the dtype is not supported")
            y, back = _astype_rule(x, dtype, who)
            return y, lambda dy: (*back(dy), None)
        return astype
    if lib == "torch" and name in ("double", "float", "half", "bfloat16"):
        def convert(x, *a, **k):
            if a or k:
                raise ZygoteError(f"{who} with arguments is not supported")
            import torch
            return _astype_rule(x, getattr(torch, {"double": "float64", "float": "float32", "half": "float16"}
                                           .get(name, name)), who)
        return convert
    if lib == "torch" and name == "to":
        def to(x, *a, **k):
            import torch
            dtype = a[0] if len(a) == 1 and not k else k.get("dtype") if not a and set(k) == {"dtype"} else None
            if not isinstance(dtype, torch.dtype):
                raise ZygoteError(f"{who} is supported with one dtype argument only (x.to(torch.float64), "
                                  f"x.to(dtype=torch.float64))")
            y, back = _astype_rule(x, dtype, who)
            return y, lambda dy: (*back(dy), *(None for _ in a))
        return to
    if lib == "torch" and name == "trace":  # the sum of the main diagonal of a matrix
        return lambda x: _via(np.trace, who, x, (), {}, 0)
    if name == "item":  # a Python number: of a one-element array, or at a position (`x.item(1)`, `x.item(0, 2)`)
        def item(x, *index):
            xp = namespace(x)

            def back(dy):
                if dy is None:
                    return (None, *(None for _ in index))
                at = np.zeros(tuple(x.shape))
                at.flat[np.arange(at.size).reshape(at.shape).item(*index)] = 1.0  # (item's own reading of index)
                return (xp.reshape(xp.asarray(at, dtype=x.dtype, **on(x)), x.shape) * dy, *(None for _ in index))
            return x.item(*index), back
        return item
    if name in ("copy", "clone"):
        return lambda x: (getattr(x, name)(), lambda dy: (dy,))
    if name == "to_device":  # the same values on another device (was a constant: a silently dropped gradient)
        def to_device(x, device, *a, **k):
            back_to = x.device

            def back(dy):
                g = None if dy is None else dy.to_device(back_to) if hasattr(dy, "to_device") else dy
                return (g, None, *(None for _ in a))
            return x.to_device(device, *a, **k), back
        return to_device
    np_fn = getattr(np, name, None)
    if isinstance(np_fn, np.ufunc) and np_fn in registry.GENERIC:  # x.exp(), x.tanh(), x.maximum(y) (torch)
        if np_fn.nin == 1:
            return lambda x: _generic(np_fn, who)(x)
        if np_fn.nin == 2 and lib == "torch" and name in ("add", "subtract"):
            return _with_alpha(_generic(np_fn, who), who)
        if np_fn.nin == 2:
            return lambda x, other: _generic(np_fn, who)(x, other)
    return None


# methods whose results carry no gradient, beyond the NumPy methods declared nondifferentiable
_CONSTANT = ("size", "dim", "numel", "detach", "argmax", "argmin", "argsort", "nonzero", "all", "any", "round",
             "floor", "ceil", "sign", "isnan", "isfinite", "isinf", "device", "shape", "__array_namespace__")
_ATTRIBUTES = {"T": lambda x, dy: dy.T,
               "mT": lambda x, dy: dy.mT if hasattr(dy, "mT") else namespace(dy).swapaxes(dy, -1, -2),
               "real": lambda x, dy: dy if not _is_complex(x) else namespace(dy).real(dy)}


def _refusal(who):
    def refuse(*args, **kwargs):
        raise ZygoteError(f"{who}: zygotepy has no rule for this method of a foreign array (the methods it maps are "
                          f"sum, mean, max, min, reshape, transpose, T/mT, astype, ...); call the namespace's function "
                          f"instead, or register a rule with @zygotepy.adjoint({who})")
    refuse.__qualname__ = f"refuse_{who}"
    return refuse


def index(seen, methods, nondiff):
    """Fill `methods` and `nondiff` for the array classes not in `seen` (which it extends)."""
    for cls, lib in _classes():
        if cls in seen:
            continue
        seen.add(cls)
        names = {n for n in dir(cls) if not n.startswith("_") or n == "__array_namespace__"}
        for name in sorted(names):
            static = inspect.getattr_static(cls, name, None)
            if static is None or isinstance(static, (property, type, staticmethod, classmethod)) \
                    or type(static).__name__ == "getset_descriptor":
                continue
            try:
                hash(static)
            except TypeError:
                continue
            if static in methods or static in nondiff:
                continue
            who = f"{cls.__module__}.{cls.__qualname__}.{name}"
            ndmethod = getattr(np.ndarray, name, None)
            if name in _CONSTANT or ndmethod is not None and ndmethod in registry.NONDIFF:
                nondiff.add(static)
                continue
            rule = _method(name, lib, who)
            if rule is None and ndmethod is not None and registry.RULES.get(ndmethod) is not None:
                rule = _refusal(who)
            if rule is not None:
                rule.__qualname__ = f"{lib}_method_{name}"
                methods[static] = keeping_views(rule, static) if lib == "torch" and name in VIEWS else rule


_ATTRIBUTE_CACHE = {}


def attribute(cls, name):
    """The cotangent map of the array attribute `name` (`.T`, `.mT`) of a foreign array class, or None: of the classes
    `_classes` knows, and of any other array library's class (CuPy's arrays, an array-API library's: `.T` raised
    MissingAdjoint on them, issue case 11). The map transposes dy with dy's own attribute: same library, same device."""
    key = (cls, name)
    hit = _ATTRIBUTE_CACHE.get(key, False)
    if hit is False:
        hit = None
        known = any(issubclass(cls, c) for c, _ in _classes())
        if name in _ATTRIBUTES and (known or not issubclass(cls, (np.ndarray, np.generic)) and is_array_type(cls)):
            hit = _ATTRIBUTES[name]
        _ATTRIBUTE_CACHE[key] = hit
    return hit


registry.FOREIGN.index_methods = index  # (the registry sits below this table: it is given the lookup)

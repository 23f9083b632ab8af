"""Methods and attributes of other libraries' arrays, and torch's keyword names: all mapped to namespace-generic rules.

`x.sum()`, `x.mean(axis=0)`, `x.reshape(2, 3)`, `x.T`, `x.transpose()`, `x.max()`, `x.astype(t)` on a JAX array, a torch
tensor or an array-API array mean a NumPy function; this module says which, and with which arguments. The maps are
keyed by the objects the array classes hold (`torch.Tensor.sum`, JAX's `ArrayImpl.sum` and `Tracer.sum`, the
`getset_descriptor` of `torch.Tensor.T`), built lazily by `registry` when the library has been imported; nothing of the
foreign library is patched.

- `index(classes_seen, methods, nondiff)` fills `methods` (method object -> rule) and `nondiff` (method objects whose
  results carry no gradient) for the array classes of the libraries imported so far.
- `attribute(cls, name)`: the cotangent map `f(obj, dy)` of an array attribute (`.T`, `.mT`) of a foreign array class.
- `torch_function(fn, name, rule)`: the rule of a torch function `torch.<name>` whose NumPy twin's rule is `rule`,
  translating torch's `dim`/`keepdim` into NumPy's `axis`/`keepdims` (a small table), or refusing with a ZygoteError.

A method rule is `rule(x, *args, **kwargs) -> (y, back)` with one cotangent per positional argument, like any rule.
Methods a table does not cover, whose NumPy method has a rule, raise a ZygoteError naming the method.
"""
import inspect
import sys

import numpy as np

from ..backends import is_array_type, namespace, on
from ..errors import ZygoteError
from . import registry


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


def _generic(np_fn, who):
    """The namespace-generic rule of a NumPy function, or a ZygoteError naming the method that wanted it."""
    rule = registry.RULES.get(np_fn)
    if rule is None or np_fn not in registry.GENERIC:
        raise ZygoteError(f"{who} means np.{np_fn.__name__}, whose rule is written for NumPy arrays only; register a "
                          f"rule with @zygotepy.adjoint({who})")
    return rule


def _via(np_fn, who, x, args, kwargs, ncall):
    """Call np_fn's generic rule on `(x, *args, **kwargs)`; the method's own `ncall` extra positional arguments get
    None (they are axes, shapes, dtypes)."""
    y, back = _generic(np_fn, who)(x, *args, **kwargs)
    nones = (None,) * ncall

    def back_(dy):
        return (back(dy)[0], *nones)
    return y, back_


_TORCH_KEYWORDS = {"dim": "axis", "keepdim": "keepdims", "dims": "axis", "diagonal": "k", "shifts": "shift"}


def _keywords(lib, kwargs):
    if lib != "torch" or not kwargs:
        return kwargs
    return {_TORCH_KEYWORDS.get(k, k): v for k, v in kwargs.items()}


def _reduction_args(lib, args, kwargs, extremum=False):
    """Positional axis (and torch's positional keepdim) as keywords: NumPy's second positional parameter is a dtype
    (out for max and min)."""
    kwargs = dict(_keywords(lib, kwargs) or {})
    names = ("axis", "keepdims") if lib == "torch" else ("axis", "out", "keepdims") if extremum \
        else ("axis", "dtype", "out", "keepdims")
    for name, value in zip(names, args):
        kwargs[name] = value
    if kwargs.get("out") is not None:
        raise ZygoteError("out= is not differentiable")
    kwargs.pop("out", None)
    return kwargs


def _moment_args(args, kwargs):
    """x.var(axis, dtype, out, ddof, keepdims) positionally (NumPy's and JAX's method signature) as keywords."""
    kwargs = {**dict(zip(("axis", "dtype", "out", "ddof", "keepdims"), args)), **kwargs}
    if kwargs.pop("out", None) is not None:
        raise ZygoteError("out= is not differentiable")
    return kwargs


def _shape_arg(args):
    return args[0] if len(args) == 1 and not isinstance(args[0], int) else tuple(args)


def _perm(args):
    """`x.transpose()`, `x.transpose(1, 0)`, `x.transpose((1, 0))`: None for the reversal, else the permutation."""
    if not args:
        return None
    return tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else tuple(args)


def _swap(ndim, a, b):
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return tuple(perm)


def _astype_rule(x, dtype, who):
    xp = namespace(x)
    y = xp.astype(x, dtype)
    keeps = _is_float(y)

    def back(dy):
        if dy is None or not keeps or not _is_float(x):
            return (None,)
        return (xp.astype(xp.real(dy) if _is_complex(dy) and not _is_complex(x) else dy, x.dtype),)
    return y, back


def _is_float(x):
    name = str(x.dtype)
    return "float" in name or "complex" in name


def _is_complex(x):
    return "complex" in str(x.dtype)


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
            if len(a) != 1 or k or not isinstance(a[0], torch.dtype):
                raise ZygoteError(f"{who} is supported with one dtype argument only (x.to(torch.float64))")
            y, back = _astype_rule(x, a[0], who)
            return y, lambda dy: (*back(dy), None)
        return to
    if name == "item":  # a Python number of a one-element array
        def item(x):
            xp = namespace(x)
            return x.item(), lambda dy: (None if dy is None else xp.reshape(xp.asarray(dy, dtype=x.dtype, **on(x)), x.shape),)
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
                methods[static] = rule


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


# --- torch functions: torch.sum(x, dim=1, keepdim=True) -----------------------------------------------------------------
_TORCH_REDUCTIONS = ("sum", "mean", "amax", "amin", "prod", "nansum", "nanmean")
# torch functions whose positional parameters are NumPy's twin's, and whose keywords are renamed (dim -> axis, dims ->
# axis, keepdim -> keepdims, diagonal -> k)
_TORCH_RENAMED = ("squeeze", "stack", "concatenate", "concat", "expand_dims", "cumsum", "cumprod", "flip", "tril",
                  "triu", "moveaxis", "swapaxes", "roll", "norm", "diff")
_TORCH_NORMS = {"vector_norm": ("ord", "axis", "keepdims"), "matrix_norm": ("ord", "axis", "keepdims")}


def _torch_moment(rule, who):
    """torch.var / torch.std: Bessel's correction by default (correction=1, or unbiased=True), unlike NumPy's ddof=0;
    torch.var(x, dim, unbiased, keepdim) and torch.var(x, unbiased) positionally."""
    def moment(x, *a, **k):
        k, rest = dict(k), list(a)
        if rest and isinstance(rest[0], bool):
            k["unbiased"] = rest.pop(0)
        for name, value in zip(("dim", "unbiased", "keepdim"), rest):
            k[name] = value
        correction = k.pop("correction", None)
        correction = 1 if correction is None else correction
        if "unbiased" in k:
            correction = 1 if k.pop("unbiased") else 0
        kw = {"axis": k.pop("dim", None), "keepdims": k.pop("keepdim", False), "ddof": correction}
        if k:
            raise ZygoteError(f"{who} with keywords {sorted(k)} is not supported")
        y, back = rule(x, **kw)
        n = len(a)
        return y, lambda dy: (back(dy)[0], *(None,) * n)
    return moment


def _torch_norm(rule, who, names):
    """torch.linalg.vector_norm / matrix_norm: NumPy's are keyword-only; torch's matrix_norm takes dim=(-2, -1) only."""
    def norm(x, *a, **k):
        kw = {**dict(zip(names, a)), **_keywords("torch", k)}
        if who.endswith("matrix_norm"):
            axis = kw.pop("axis", (-2, -1))
            if tuple(d % x.ndim for d in axis) != (x.ndim - 2, x.ndim - 1):
                raise ZygoteError(f"{who}: only dim=(-2, -1) is supported")
        if kw.pop("dtype", None) is not None:
            raise ZygoteError(f"{who} with dtype= is not supported")
        y, back = rule(x, **kw)
        n = len(a)
        return y, lambda dy: (back(dy)[0], *(None,) * n)
    return norm


def _torch_sort(rule, who):
    """torch.sort(x, dim=-1, descending=False, stable=False): (values, indices), the values by np.sort's rule."""
    def sort(x, *a, **k):
        import torch
        kw = {**dict(zip(("dim", "descending"), a)), **k}
        dim, descending = kw.pop("dim", -1), kw.pop("descending", False)
        kw.pop("stable", None)
        if kw:
            raise ZygoteError(f"{who} with keywords {sorted(kw)} is not supported")
        values, back = rule(x, dim, descending=descending)
        indices = torch.argsort(x, dim=dim, descending=descending, stable=True)
        return torch.return_types.sort((values, indices)), lambda dy: (back(_first(dy))[0], *(None,) * len(a))
    return sort


def _torch_median(who):
    """torch.median(x): the lower of the two middle values (not NumPy's mean of them); torch.median(x, dim, keepdim):
    (values, indices). The entry torch picks receives the cotangent (np.take / np.take_along_axis's rules)."""
    def median(x, *a, **k):
        import torch
        kw = {**dict(zip(("dim", "keepdim"), a)), **k}
        dim, keepdim = kw.pop("dim", None), kw.pop("keepdim", False)
        if kw:
            raise ZygoteError(f"{who} with keywords {sorted(kw)} is not supported")
        if dim is None:
            _, index = torch.median(x.reshape(-1), 0)
            return _generic(np.take, who)(x, index)[0], lambda dy: (
                _generic(np.take, who)(x, index)[1](dy)[0],)
        _, indices = torch.median(x, dim, keepdim=True)
        y, back = _generic(np.take_along_axis, who)(x, indices, dim)
        nones = (None,) * len(a)
        if keepdim:
            return torch.return_types.median((y, indices)), lambda dy: (back(_first(dy))[0], *nones)
        return torch.return_types.median((y.squeeze(dim), indices.squeeze(dim))), lambda dy: (
            back(None if _first(dy) is None else _first(dy).unsqueeze(dim))[0], *nones)
    return median


def _first(dy):
    """The cotangent of a torch (values, indices) result's values (read by index, or as .values)."""
    if isinstance(dy, dict):
        return dy.get("values")
    return None if dy is None else dy[0]


def _torch_keyword(rule, who, renamed):
    """A torch function whose keywords are NumPy's under other names (torch.tensordot's dims= is axes=)."""
    def call(*a, **k):
        return _call_renamed(rule, a, k, renamed)
    return registry.keyword_rule(call)


def _call_renamed(rule, args, kwargs, renamed):
    """`rule(*args, **kwargs)` with the keywords renamed (torch's to NumPy's), as a keyword-aware rule: the keyword
    cotangents a keyword-aware `rule` states go back under the caller's names; other rules state none."""
    y, back = rule(*args, **{renamed.get(k, k): v for k, v in kwargs.items()})
    if not kwargs:
        return y, back
    aware = getattr(rule, "__zygote_keywords__", False)

    def back_(dy):
        grads = back(dy)
        stated = grads[-1] if aware else {}
        grads = grads[:-1] if aware else grads
        return (*grads, {k: stated[renamed.get(k, k)] for k in kwargs if renamed.get(k, k) in stated})
    return y, back_


# torch functions whose meaning differs from their NumPy twin's: refused, never a wrong number
_TORCH_OTHER_MEANING = {
    "split": "torch.split(x, n) cuts pieces of size n, np.split(x, n) n pieces: use torch.tensor_split (not "
             "differentiated here) or write the slices",
    "cross": "torch.cross's default dim is the first axis of size 3, np.cross's the last: use torch.linalg.cross",
}


def _torch_qr(rule, who):
    """torch.linalg.qr: mode='r' gives (an empty Q, R) there, R alone in NumPy."""
    def qr(x, *a, **k):
        if (a[0] if a else k.get("mode", "reduced")) != "reduced":
            raise ZygoteError(f"{who}: only mode='reduced' has a rule (torch's mode='r' returns an empty Q)")
        return rule(x, *a, **k)
    return qr


def _torch_lstsq(rule, who):
    """torch.linalg.lstsq keeps torch's result (its residuals and singular values, empty with the CPU driver, are
    constants); the solution and its gradient come from NumPy's rule."""
    def lstsq(a, b, *args, **kwargs):
        import torch
        result, back = rule(a, b)
        raw = torch.linalg.lstsq(a, b, *args, **kwargs)
        out = torch.return_types.linalg_lstsq((result[0], raw[1], raw[2], raw[3]))

        def torch_back(dy):
            dx = None if dy is None else dy.get("solution") if isinstance(dy, dict) else dy[0]
            return (*back(None if dx is None else (dx, None, None, None))[:2], *(None for _ in args))
        return out, torch_back
    return lstsq


def torch_function(fn, name, rule):
    """The rule of torch.<name> (whose NumPy twin has the generic rule `rule`): torch's dim/keepdim become axis/keepdims
    for the reductions; torch.max/min, torch.transpose and torch.var/std, whose meanings differ, are translated; other
    functions given dim/keepdim refuse."""
    who = f"torch.{getattr(fn, '__name__', name)}"
    if name in _TORCH_REDUCTIONS:
        def reduction(x, *a, **k):
            y, back = rule(x, **_reduction_args("torch", a, k))
            n = len(a)
            return y, lambda dy: (back(dy)[0], *(None,) * n)
        return reduction
    if name in ("max", "min") or name == "transpose" and getattr(fn, "__name__", name) == "transpose":
        return _method(name, "torch", who)
    if name in ("var", "std"):
        return _torch_moment(rule, who)
    if name == "sort":
        return _torch_sort(rule, who)
    if name == "median":
        return _torch_median(who)
    if name == "qr":
        return _torch_qr(rule, who)
    if name == "lstsq":
        return _torch_lstsq(rule, who)
    if name == "tensordot":
        return _torch_keyword(rule, who, {"dims": "axes"})
    if name in _TORCH_OTHER_MEANING and not getattr(fn, "__name__", "").startswith("linalg_"):
        def refused(*a, **k):
            raise ZygoteError(f"{who}: {_TORCH_OTHER_MEANING[name]}")
        return refused
    if name in ("cross", "vecdot"):  # torch.linalg's: dim= is NumPy's axis=
        return _torch_keyword(rule, who, {"dim": "axis"})
    if name in _TORCH_NORMS:
        return _torch_norm(rule, who, _TORCH_NORMS[name])
    if name in _TORCH_RENAMED:
        def renamed(x, *a, **k):
            return _call_renamed(rule, (x, *a), k, _TORCH_KEYWORDS)
        return registry.keyword_rule(renamed)

    def plain(*a, **k):
        if "dim" in k or "keepdim" in k:
            raise ZygoteError(f"{who} with dim=/keepdim= is not translated to NumPy's axis=/keepdims= (only "
                              f"{', '.join(_TORCH_REDUCTIONS + _TORCH_RENAMED)}, var, std and the norms are)")
        return rule(*a, **k)
    plain.__zygote_keywords__ = getattr(rule, "__zygote_keywords__", False)  # the same keywords: the same cotangents
    return plain

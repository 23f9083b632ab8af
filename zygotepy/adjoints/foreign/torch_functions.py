"""torch's functions, whose keywords are torch's: `torch.sum(x, dim=1, keepdim=True)` and the like.

`torch_function(fn, name, rule)`: the rule of a torch function `torch.<name>` whose NumPy twin's rule is `rule`,
translating torch's `dim`/`keepdim` into NumPy's `axis`/`keepdims` (a small table), torch's own meanings (`torch.max`,
`torch.transpose`, `torch.var`, `torch.sort`, `torch.median`, `torch.linalg.qr` and `lstsq`), or refusing with a
ZygoteError. Built lazily by `registry` for the functions of torch's namespaces.
"""
import numpy as np

from ...errors import ZygoteError
from .. import registry
from .arguments import _TORCH_KEYWORDS, _generic, _keywords, _reduction_args, _torch_moment, _with_alpha
from .array_methods import _method
from .torch_views import VIEWS, keeping_views


_TORCH_REDUCTIONS = ("sum", "mean", "amax", "amin", "prod", "nansum", "nanmean")
# torch functions whose positional parameters are NumPy's twin's, and whose keywords are renamed (dim -> axis, dims ->
# axis, keepdim -> keepdims, diagonal -> k)
_TORCH_RENAMED = ("squeeze", "stack", "concatenate", "concat", "expand_dims", "cumsum", "cumprod", "flip", "tril",
                  "triu", "moveaxis", "swapaxes", "roll", "norm", "diff")
_TORCH_NORMS = {"vector_norm": ("ord", "axis", "keepdims"), "matrix_norm": ("ord", "axis", "keepdims")}


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
    made = _torch_function(fn, name, rule)
    return keeping_views(made, fn) if name in VIEWS and made is not None else made


def _torch_function(fn, name, rule):
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
    if name in ("add", "subtract"):
        return _with_alpha(rule, who)
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


registry.FOREIGN.torch_function = torch_function  # (the registry sits below this table: it is given the lookup)

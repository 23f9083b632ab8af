"""What the rules of other libraries' array methods and torch's functions share: the namespace-generic rule of a
NumPy function (`_generic`, `_via`), and their arguments in NumPy's terms: torch's keyword names (`dim` -> `axis`,
`keepdim` -> `keepdims`), positional axes and dtypes as keywords, shapes and permutations, casts (`_astype_rule`), and
torch's Bessel-corrected `var`/`std` (`_torch_moment`)."""
from ...backends import namespace
from ...errors import ZygoteError
from .. import registry


def _generic(np_fn, who):
    """The namespace-generic rule of a NumPy function, or a ZygoteError naming the method that wanted it."""
    rule = registry.RULES.get(np_fn)
    if rule is None or np_fn not in registry.GENERIC:
        raise ZygoteError(f"{who} means np.{np_fn.__name__}, whose rule is written for NumPy arrays only; register a "
                          f"rule with @zygotepy.adjoint({who})")
    return rule


def _with_alpha(rule, who):
    """torch's add and subtract (the functions and the methods) scale the other operand: `x + alpha * other`. The
    rule of NumPy's add/subtract, called on the scaled operand; `alpha` is a number (torch takes no tensor there)."""
    def scaled(x, other, *a, alpha=1, **k):
        if a or k:
            raise ZygoteError(f"{who} with arguments beyond other and alpha is not supported")
        if alpha == 1:
            return rule(x, other)
        y, back = rule(x, other * alpha)

        def back_(dy):
            dx, d_other = back(dy)
            return dx, None if d_other is None else d_other * alpha
        return y, back_
    return scaled


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

"""Rules for torch's activations and losses, and for calling a `torch.nn.Module`, inside a differentiated function.

Why: `torch.relu`, `torch.sigmoid`, `torch.clamp`, `torch.logsumexp`, `torch.softmax`, `torch.log_softmax` (and the
tensor methods of those names) are C functions without a NumPy twin, and `torch.nn.functional`'s `relu`, `sigmoid`,
`softmax`, `log_softmax`, `gelu`, `silu`, `softplus`, `leaky_relu`, `elu`, `mse_loss`, `cross_entropy` are C functions
or Python functions ending in them: each raised MissingAdjoint. (`torch.tanh`, `F.tanh` and `torch.clip` already had
rules: np.tanh's and np.clip's twins.) A Module instance's call went into torch's module machinery (a `nonlocal`
statement: UnsupportedSyntax).

Invariants:
- The forward is torch's own function (exact values); the pullbacks compute with torch ops on the saved tensors, so a
  cotangent is a tensor of its argument's dtype and device. Derivatives at kinks follow torch's: relu'(0) = 0,
  leaky_relu'(0) = negative_slope, elu'(0) = alpha, clamp passes the gradient to x where min <= x <= max.
- Rules are keyword-aware: every parameter that can carry a gradient (a tensor bound of clamp, leaky_relu's
  negative_slope, elu's alpha, softplus's beta, mse_loss's target and weight, cross_entropy's probability target,
  weight and label_smoothing) gets its cotangent, by position or by keyword; never a silent None. `inplace=True`
  refuses (the rules do not update their input).
- cross_entropy is differentiated by torch's own autograd (`torch.autograd.grad` of the call on detached copies of its
  float tensors): first derivatives only. A Module call's rule is torch_module.py's, registered here.
- Importing this module never imports torch: `register()` runs when torch has been imported (`registry.on_import`:
  now if torch is already imported, else at the first rule lookup after it is).
"""
import math
import sys

from ..backends import unbroadcast
from ..errors import ZygoteError
from . import registry
from .torch_module import module_call

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_registered = [False]


def _torch():
    import torch
    return torch


def _is_float(t):
    torch = _torch()
    return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())


def _merge(who, names, rest, kw):
    """The call's parameters beyond the first, by name (positional ones named by `names`)."""
    if len(rest) > len(names):
        raise ZygoteError(f"{who}: more positional arguments than it takes")
    params = dict(zip(names, rest))
    for k, v in kw.items():
        if k not in names or k in params:
            raise ZygoteError(f"{who}: keyword {k}= has no rule here")
        params[k] = v
    return params


def _as(x, g):
    """`g` in x's dtype (a cotangent never changes dtype)."""
    return g if g is None or g.dtype == x.dtype else g.to(x.dtype)


def _cotangents(names, rest, kw, dx, given):
    """The keyword-aware back's result: dx, one cotangent per positional parameter, then the keywords' (see
    registry.keyword_cotangents)."""
    return registry.keyword_cotangents((dx, *(given.get(n) for n in names[:len(rest)])), kw,
                                       **{k: given.get(k) for k in kw})


def _rule(fn, who, names, body):
    """The keyword-aware rule of `fn(x, *rest, **kw)`: `body(x, y, dy, params) -> (dx, {param: cotangent})`."""
    def rule(x, *rest, **kw):
        params = _merge(who, names, rest, kw)
        if params.get("inplace"):
            raise ZygoteError(f"{who} with inplace=True is not differentiated (it overwrites its input): use "
                              f"inplace=False")
        y = fn(x, *rest, **kw)

        def back(dy):
            dx, given = (None, {}) if dy is None else body(x, y, dy, params)
            return _cotangents(names, rest, kw, _as(x, dx), given)
        return y, back
    rule.__qualname__ = f"rule_{who}"
    return registry.keyword_rule(rule)


# --- activations: body(x, y, dy, params) -> (dx, {param: cotangent}) -----------------------------------------------------
def _relu(x, y, dy, p):
    return dy * (x > 0).to(dy.dtype), {}


def _sigmoid(x, y, dy, p):
    return dy * y * (1 - y), {}


def _silu(x, y, dy, p):
    s = _torch().sigmoid(x)
    return dy * s * (1 + x * (1 - s)), {}


def _gelu(x, y, dy, p):
    torch = _torch()
    approximate = p.get("approximate", "none")
    if approximate == "tanh":
        t = torch.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
    elif approximate == "none":
        d = 0.5 * (1 + torch.erf(x / math.sqrt(2.0))) + x * torch.exp(-0.5 * x * x) * _INV_SQRT_2PI
    else:
        raise ZygoteError(f"torch.nn.functional.gelu: approximate={approximate!r} has no rule")
    return dy * d, {}


def _softplus(x, y, dy, p):
    """Above `threshold` (beta x > threshold) torch returns x itself; below, log(1 + exp(beta x)) / beta."""
    torch = _torch()
    beta, threshold = p.get("beta", 1.0), p.get("threshold", 20.0)
    linear = x * beta > threshold
    s = torch.sigmoid(x * beta)
    dbeta = torch.where(linear, torch.zeros_like(x), (x * s - y) / beta)
    return torch.where(linear, dy, dy * s), {"beta": unbroadcast(dy * dbeta, beta)}


def _leaky_relu(x, y, dy, p):
    torch = _torch()
    slope = p.get("negative_slope", 0.01)
    positive = x > 0
    return torch.where(positive, dy, dy * slope), {
        "negative_slope": unbroadcast(torch.where(positive, torch.zeros_like(dy), dy * x), slope)}


def _elu(x, y, dy, p):
    torch = _torch()
    alpha = p.get("alpha", 1.0)
    positive = x > 0
    e = torch.exp(torch.where(positive, torch.zeros_like(x), x))
    return torch.where(positive, dy, dy * alpha * e), {
        "alpha": unbroadcast(torch.where(positive, torch.zeros_like(dy), dy * (e - 1)), alpha)}


def _softmax(log):
    """softmax: `dx = y (dy - sum(dy y))`; log_softmax: `dx = dy - exp(y) sum(dy)`; summed over dim, kept. F's dim=None
    means torch's implicit choice (0 for 0-, 1- and 3-d input, else 1)."""
    def body(x, y, dy, p):
        torch = _torch()
        dim = p.get("dim")
        if dim is None:
            dim = 0 if x.ndim in (0, 1, 3) else 1
        if log:
            dx = dy - torch.exp(y) * torch.sum(dy, dim=dim, keepdim=True)
        else:
            dx = y * (dy - torch.sum(dy * y, dim=dim, keepdim=True))
        return dx, {}
    return body


def _dims(dim, ndim):
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    return tuple(sorted(d % ndim for d in ((dim,) if isinstance(dim, int) else dim)))


def _logsumexp(x, y, dy, p):
    """`dx = dy exp(x - y)`, y and dy with the reduced dims put back."""
    torch = _torch()
    if not p.get("keepdim", False):  # (reshape, not unsqueeze: a method with a rule, for nested gradients)
        kept = [1 if d in _dims(p.get("dim"), x.ndim) else n for d, n in enumerate(x.shape)]
        y, dy = y.reshape(kept), dy.reshape(kept)
    return dy * torch.exp(x - y), {}


def _clamp(x, y, dy, p):
    """torch's own clamp backward: x gets dy where min <= x <= max; min where x < min (and min < max); max where
    x > max (or max < min)."""
    torch = _torch()
    lo, hi = p.get("min"), p.get("max")
    if lo is None and hi is None:
        raise ZygoteError("torch.clamp needs min or max")
    keep = torch.ones_like(x, dtype=torch.bool)
    zero = torch.zeros_like(dy)
    given = {}
    if lo is not None:
        keep = keep & (x >= lo)
        below = (x < lo) & (torch.as_tensor(lo < hi) if hi is not None else True)
        given["min"] = unbroadcast(torch.where(below, dy, zero), lo)
    if hi is not None:
        keep = keep & (x <= hi)
        above = (x > hi) | (torch.as_tensor(hi < lo) if lo is not None else False)
        given["max"] = unbroadcast(torch.where(above, dy, zero), hi)
    return torch.where(keep, dy, zero), given


def _mse_loss(x, y, dy, p):
    torch = _torch()
    t, w, reduction = p.get("target"), p.get("weight"), p.get("reduction", "mean")
    if p.get("size_average") is not None or p.get("reduce") is not None:
        reduction = _legacy_reduction(p.get("size_average"), p.get("reduce"))
    e = x - t
    g = dy / ((torch.sum(w) if w is not None else e.numel()) if reduction == "mean" else 1)
    d = 2 * e * g * (w if w is not None else 1)
    given = {"target": unbroadcast(-d, t) if _is_float(t) else None}
    if w is not None:
        given["weight"] = g * (e * e - y) if reduction == "mean" else g * e * e
    return unbroadcast(d, x), given


def _legacy_reduction(size_average, reduce):
    """(Its own function: an import inside a rule's code would keep an outer level from transforming it.)"""
    from torch.nn import _reduction
    return _reduction.legacy_get_string(size_average, reduce)


# --- cross_entropy: torch's autograd ------------------------------------------------------------------------------------
_CE = ("target", "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing")


def _cross_entropy(fn):
    """cross_entropy(input, target, ...), differentiated by torch.autograd.grad of the call on detached copies of its
    float tensors (input, a probability target). torch's loss is not differentiable in `weight`: its cotangent comes
    from autograd of `_ce_weighted`, the same loss written with torch ops, after checking that it gives torch's value.
    label_smoothing's cotangent is exact too: the loss is affine in it, so its derivative is `loss(1) - loss(0)`."""
    who = "torch.nn.functional.cross_entropy"

    def rule(x, *rest, **kw):
        torch = _torch()
        params = _merge(who, _CE, rest, kw)
        leaves = {}
        for name, value in (("input", x), ("target", params.get("target"))):
            if _is_float(value):
                leaves[name] = value.detach().requires_grad_(True)
        weight = params.get("weight")
        call = {**params, **leaves, "weight": weight.detach() if _is_float(weight) else weight}
        with torch.enable_grad():
            out = fn(call.pop("input", x), **call)

        def back(dy):
            given = {}
            if dy is not None:
                dy = torch.as_tensor(dy, dtype=out.dtype, device=out.device)
                if out.requires_grad:
                    found = torch.autograd.grad(out, list(leaves.values()), dy, retain_graph=True, allow_unused=True)
                    given = {k: _as(leaves[k], g) for k, g in zip(leaves, found, strict=True)}
                if _is_float(weight):
                    given["weight"] = _ce_weight_cotangent(x, params, out, dy)
                if "label_smoothing" in params:
                    with torch.no_grad():
                        ends = [fn(x, **{**params, "label_smoothing": e}) for e in (1.0, 0.0)]
                    given["label_smoothing"] = torch.sum(dy * (ends[0] - ends[1]))
            return _cotangents(_CE, rest, kw, given.get("input"), given)
        return out.detach(), back
    rule.__qualname__ = "rule_cross_entropy"
    return registry.keyword_rule(rule)


def _ce_weighted(x, target, weight, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch's cross_entropy with torch ops (differentiable in `weight`): class indices or probabilities as target."""
    torch = _torch()
    cdim = 0 if x.ndim == 1 else 1
    n = x.shape[cdim]
    logp = torch.log_softmax(x, cdim)
    shape = [1] * x.ndim
    shape[cdim] = n
    w = weight.reshape(shape)
    if _is_float(target):
        loss = -torch.sum(w * (target * (1 - label_smoothing) + label_smoothing / n) * logp, dim=cdim)
        scale = loss.numel()
    else:
        keep = target != ignore_index
        index = torch.where(keep, target, torch.zeros_like(target))
        picked = torch.gather(logp, cdim, index.unsqueeze(cdim)).squeeze(cdim)
        wt = weight[index] * keep
        smooth = -torch.sum(w * logp, dim=cdim) * keep
        loss = -(1 - label_smoothing) * wt * picked + label_smoothing / n * smooth
        scale = torch.sum(wt)
    if reduction == "none":
        return loss
    return torch.sum(loss) / (scale if reduction == "mean" else 1)


def _ce_weight_cotangent(x, params, out, dy):
    torch = _torch()
    if params.get("size_average") is not None or params.get("reduce") is not None:
        raise ZygoteError("torch.nn.functional.cross_entropy: a gradient for weight= with the legacy size_average= or "
                          "reduce= has no rule (use reduction=)")
    weight = params["weight"].detach().requires_grad_(True)
    keys = ("ignore_index", "reduction", "label_smoothing")
    with torch.enable_grad():
        mine = _ce_weighted(x.detach(), params["target"].detach(), weight, **{k: params[k] for k in keys if k in params})
    if mine.shape != out.shape or not torch.allclose(mine.detach(), out.detach(), rtol=1e-4, atol=1e-6):
        raise ZygoteError("torch.nn.functional.cross_entropy: this call's gradient for weight= has no rule (torch's "
                          "loss is not differentiable in weight, and zygotepy's own formula does not reproduce it)")
    return _as(params["weight"], torch.autograd.grad(mine, weight, dy)[0])


def register():
    """Register the rules on torch's objects (once; a user's later @adjoint for one of them wins)."""
    if _registered[0]:
        return
    _registered[0] = True
    torch = sys.modules["torch"]
    F = torch.nn.functional
    tensor = torch.Tensor
    table = [  # (target, its name, the names of its parameters after the first, the derivative)
        (torch.relu, "torch.relu", (), _relu), (tensor.relu, "Tensor.relu", (), _relu),
        (torch.sigmoid, "torch.sigmoid", (), _sigmoid), (tensor.sigmoid, "Tensor.sigmoid", (), _sigmoid),
        (torch.clamp, "torch.clamp", ("min", "max"), _clamp), (tensor.clamp, "Tensor.clamp", ("min", "max"), _clamp),
        (torch.logsumexp, "torch.logsumexp", ("dim", "keepdim"), _logsumexp),
        (tensor.logsumexp, "Tensor.logsumexp", ("dim", "keepdim"), _logsumexp),
        (torch.softmax, "torch.softmax", ("dim", "dtype"), _softmax(False)),
        (tensor.softmax, "Tensor.softmax", ("dim", "dtype"), _softmax(False)),
        (torch.log_softmax, "torch.log_softmax", ("dim", "dtype"), _softmax(True)),
        (tensor.log_softmax, "Tensor.log_softmax", ("dim", "dtype"), _softmax(True)),
        (F.relu, "F.relu", ("inplace",), _relu),
        (F.sigmoid, "F.sigmoid", (), _sigmoid),
        (F.softmax, "F.softmax", ("dim", "_stacklevel", "dtype"), _softmax(False)),
        (F.log_softmax, "F.log_softmax", ("dim", "_stacklevel", "dtype"), _softmax(True)),
        (F.gelu, "F.gelu", ("approximate",), _gelu),
        (F.silu, "F.silu", ("inplace",), _silu),
        (F.softplus, "F.softplus", ("beta", "threshold"), _softplus),
        (F.leaky_relu, "F.leaky_relu", ("negative_slope", "inplace"), _leaky_relu),
        (F.elu, "F.elu", ("alpha", "inplace"), _elu),
        (F.mse_loss, "F.mse_loss", ("target", "size_average", "reduce", "reduction", "weight"), _mse_loss),
    ]
    for target, name, names, body in table:
        registry.adjoint(target)(_rule(target, name.replace("F.", "torch.nn.functional."), names, body))
    registry.adjoint(F.cross_entropy)(_cross_entropy(F.cross_entropy))
    registry.adjoint(torch.nn.Module.__call__)(module_call)


registry.on_import("torch", register)  # now if torch is imported, else at the first rule lookup after

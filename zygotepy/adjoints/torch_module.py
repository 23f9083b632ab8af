"""Calling a `torch.nn.Module` instance inside a differentiated function: the rule for `torch.nn.Module.__call__`
(registered by torch_nn.register, so it serves every Module whose class does not define `__call__` itself).

Why: without it the call went into torch's module machinery, whose source the transform refuses (a `nonlocal`
statement: UnsupportedSyntax, naming torch's file rather than the user's call).

Invariants:
- The call is differentiated by torch's own autograd: `torch.func.functional_call` of the module with detached copies
  of its float parameters, on detached copies of the float tensor arguments, then `torch.autograd.grad` in the
  pullback: first derivatives only (a gradient of a gradient through it raises).
- Cotangents: the float tensor arguments (positional or keyword) get tensors of their dtype; the module gets what
  reading its parameters as attributes gives, `StructGrad({'_parameters': {...}, '_modules': {name: StructGrad(...)}})`,
  so both add up when a function does both. Buffers are constants, as in torch. A parameter shared by two submodules
  gets its whole gradient under its first name.
- What it cannot differentiate raises a ZygoteError naming the user's call: an argument that may carry a gradient and
  is not a tensor (a float, a list of tensors), an output that is not tensors in tuples/lists. The message names the
  other way, `zygotepy.torch_function(module)`, and what it gives (inputs' gradients only, on NumPy arrays).
"""
from ..ast_adjoint.dispatch import call_site, differentiable
from ..errors import ZygoteError
from ..structgrad import StructGrad
from . import registry


def _torch():
    import torch
    return torch


def _is_float(t):
    torch = _torch()
    return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())


def _as(x, g):
    return g if g is None or g.dtype == x.dtype else g.to(x.dtype)


def _refuse_module(module, why):
    site = call_site()
    raise ZygoteError(
        f"{site + ': ' if site else ''}calling the torch.nn.Module {type(module).__name__} inside a differentiated "
        f"function: {why}. zygotepy differentiates a Module call with torch's autograd when its arguments are tensors "
        f"(and values without a gradient) and it returns a tensor or a tuple/list of tensors. Otherwise wrap it: "
        f"zygotepy.torch_function(module) takes NumPy arrays and gives gradients with respect to its inputs only, "
        f"not to the module's parameters.")


def _flat(out, module):
    """The tensors of a Module's output (a tensor, or tuples/lists of them), in order."""
    torch = _torch()
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o, module)]
    if out is None or isinstance(out, (int, bool, str)):
        return []
    _refuse_module(module, f"it returned a {type(out).__name__}")


def _detached(out):
    torch = _torch()
    if isinstance(out, torch.Tensor):
        return out.detach()
    if isinstance(out, (tuple, list)):
        items = [_detached(o) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out


def _flat_like(dy, out):
    """The cotangents of `_flat(out)`, in the same order (None where none came; a named tuple's may come by field)."""
    torch = _torch()
    if isinstance(out, torch.Tensor):
        return [dy]
    if isinstance(out, (tuple, list)):
        if isinstance(dy, dict):
            dy = [dy.get(name) for name in getattr(out, "_fields", range(len(out)))]
        return [c for i, o in enumerate(out) for c in _flat_like(None if dy is None else dy[i], o)]
    return []


def _module_cotangent(grads):
    """`{"a.b.weight": g}` as the StructGrad tree that reading the parameters as attributes builds."""
    tree = {}
    for name, g in grads.items():
        *path, leaf = name.split(".")
        node = tree
        for part in path:
            node = node.setdefault("_modules", {}).setdefault(part, {})
        node.setdefault("_parameters", {})[leaf] = g

    def build(node):
        out = StructGrad()
        if "_parameters" in node:
            out["_parameters"] = node["_parameters"]
        if "_modules" in node:
            out["_modules"] = {k: build(v) for k, v in node["_modules"].items()}
        return out
    return build(tree) if tree else None


def module_call(module, *args, **kwargs):
    """`module(*args, **kwargs)` by torch's autograd: gradients for the float tensor arguments and the parameters."""
    torch = _torch()
    for a in (*args, *kwargs.values()):
        if not isinstance(a, torch.Tensor) and differentiable(a):
            _refuse_module(module, f"an argument of type {type(a).__name__} may carry a gradient and is not a tensor "
                                   f"(pass it as a tensor, or as a constant)")
    params = {n: p.detach().requires_grad_(True) for n, p in module.named_parameters() if _is_float(p)}
    ins = [a.detach().requires_grad_(True) if _is_float(a) else a for a in args]
    kins = {k: v.detach().requires_grad_(True) if _is_float(v) else v for k, v in kwargs.items()}
    with torch.enable_grad():
        out = torch.func.functional_call(module, params, tuple(ins), kins)
    outs = _flat(out, module)

    def back(dy):
        if dy is None:  # no cotangent in: none out
            return registry.keyword_cotangents((None,) * (1 + len(args)), kwargs, **dict.fromkeys(kwargs))
        wrt = [t for t in (*ins, *kins.values(), *params.values()) if _is_float(t)]
        live = [(o, c) for o, c in zip(outs, _flat_like(dy, out), strict=True)
                if c is not None and o.requires_grad]
        found = dict.fromkeys(map(id, wrt))
        if wrt and live:
            cts = [torch.as_tensor(c, dtype=o.dtype, device=o.device) for o, c in live]
            got = torch.autograd.grad([o for o, _ in live], wrt, cts, retain_graph=True, allow_unused=True)
            found = {id(t): g for t, g in zip(wrt, got, strict=True)}
        dargs = tuple(_as(t, found[id(t)]) if _is_float(t) else None for t in ins)
        dparams = _module_cotangent({n: _as(p, found[id(p)]) for n, p in params.items()})
        dkw = {k: _as(t, found[id(t)]) if _is_float(t) else None for k, t in kins.items()}
        return registry.keyword_cotangents((dparams, *dargs), kwargs, **dkw)
    return _detached(out), back


module_call = registry.keyword_rule(module_call)

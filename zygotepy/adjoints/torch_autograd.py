"""torch's functions and tensor methods that have no rule of zygotepy's (`torch.cdist`, `torch.rsqrt`, `x.clamp_min(0)`,
`torch.layer_norm`, the C functions `torch.nn.functional` calls): differentiated by torch's own autograd, which knows
every one of them. The rule runs the function on detached copies of its tensor arguments that require gradients and
its back is `torch.autograd.grad` of the outputs. Functions that update a tensor in place (`exp_`) are not served
(mutation/torch_methods.py has the rules there are, the lowering refuses the others), nor is `torch.autograd` itself.

Found by `registry.find_rule` where no rule is registered (`registry.FALLBACKS`); the rules it makes are kept here,
not in the registry's tables, so each target gets one, made at its first call."""
import sys
import types

from ..errors import ZygoteError
from ..runtime.context import current
from . import registry
from .foreign.torch_views import _shares
from .in_place import in_place_by_name

_MADE = {}  # target -> its rule (None: not served)
_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft", "torch.functional")
_C_MODULES = ("torch._C._nn", "torch._C._special", "torch._C._fft", "torch._C._linalg")


def fallback(target):
    """The autograd rule of `target`, a function of torch's namespaces or a method of its tensors, or None."""
    try:
        return _MADE[target]
    except KeyError:
        pass
    except TypeError:
        return None
    torch = sys.modules.get("torch")
    rule = None
    if torch is not None and _served(torch, target):
        rule = _autograd_rule(target, _name(target))
    _MADE[target] = rule
    return rule


def _served(torch, target):
    name = getattr(target, "__name__", "")
    if not name or in_place_by_name(name) or name.startswith("_"):
        return False
    if type(target) is types.MethodDescriptorType or type(target) is types.WrapperDescriptorType:
        return getattr(target, "__objclass__", None) is torch._C.TensorBase
    if type(target) is types.FunctionType:  # (torch.functional's Python wrappers: `cdist`, `norm`, whose source
        return getattr(target, "__module__", None) == "torch.functional"  # calls `_VF` with its arguments as given)
    if type(target) is types.BuiltinFunctionType:
        owner = getattr(target, "__self__", None)  # (`torch._C._nn.hardtanh`, `torch._C._special.special_erfinv`)
        if isinstance(owner, types.ModuleType) and owner.__name__ in _C_MODULES:
            return True
        return getattr(target, "__module__", None) in _NAMESPACES and (
            getattr(torch._C._VariableFunctions, name, None) is target  # (what `torch._VF.cdist` calls)
            or any(getattr(sys.modules.get(m), name, None) is target for m in _NAMESPACES))
    return False


def _name(target):
    owner = getattr(target, "__objclass__", None)
    return f"Tensor.{target.__name__}" if owner is not None else f"torch.{target.__name__}"


def _autograd_rule(fn, who):
    def rule(*args, **kwargs):
        import torch
        leaves, places, numbers = [], [], set()

        def lift(a, where):
            if isinstance(a, torch.Tensor) and (a.is_floating_point() or a.is_complex()):
                t = a.detach().requires_grad_(True)
                leaves.append(t)
                places.append(where)
                return t
            if type(a) is float and floats and type(where[0]) is int:  # (`x.mul(a)`, `torch.lerp(x, y, a)`: a 0-d
                numbers.add(len(leaves))  # tensor in its place, whose gradient goes back as a number: a float passed
                return lift(torch.tensor(a, dtype=torch.float64), where)  # so had none, silently)
            if type(a) in (list, tuple) and len(where) == 1:  # `torch.cat([a, b])`, `torch.stack((a, b))`
                return type(a)(lift(b, (*where, i)) for i, b in enumerate(a))
            return a
        floats = True
        given = [lift(a, (k,)) for k, a in enumerate(args)]
        named = {k: lift(v, (k,)) for k, v in kwargs.items()}
        try:
            with torch.enable_grad():
                try:
                    out = fn(*given, **named)
                except (TypeError, RuntimeError):
                    if not numbers:
                        raise
                    floats, leaves[:], places[:] = False, [], []  # (a function that takes a number only: as given,
                    numbers.clear()  # the number a constant)
                    given, named = [lift(a, (k,)) for k, a in enumerate(args)], {k: lift(v, (k,)) for k, v in
                                                                                  kwargs.items()}
                    out = fn(*given, **named)
        except RuntimeError as e:
            raise ZygoteError(f"{who} failed under torch's autograd: {e}") from None
        y = _detached(out)
        if isinstance(out, torch.Tensor) and not out.requires_grad and any(_shares(out, t) for t in leaves):
            current().cuts[id(y)] = y  # (`t.detach()`: an update through it changes `t`, its gradient cut: links.py)

        def back(dy):
            outs, seeds = [], []
            for o, d in zip(_tensors(out), _parts(dy, out)):
                if d is not None and isinstance(o, torch.Tensor) and o.requires_grad:
                    outs.append(o)
                    d = d if isinstance(d, torch.Tensor) else torch.as_tensor(d, dtype=o.dtype)
                    seeds.append(d.to(o.dtype) if o.is_complex() and not d.is_complex() else d)  # (`.real` of it)
            if not outs or not leaves:
                grads = [None] * len(leaves)
            else:
                try:
                    grads = torch.autograd.grad(outs, leaves, seeds, allow_unused=True)
                except RuntimeError as e:
                    raise ZygoteError(f"the gradient of {who} failed under torch's autograd: {e}") from None
            positional, by_name = [None] * len(args), {}
            for k, (where, g) in enumerate(zip(places, grads)):
                g = float(g) if k in numbers and g is not None else g
                into = by_name if isinstance(where[0], str) else positional
                if len(where) == 1:
                    _put(into, where[0], g)
                else:
                    held = args[where[0]] if isinstance(where[0], int) else kwargs[where[0]]
                    if _get(into, where[0]) is None:
                        _put(into, where[0], [None] * len(held))
                    _get(into, where[0])[where[1]] = g
            for k, a in (*enumerate(args), *kwargs.items()):  # (a tuple argument's cotangent is a tuple)
                got = _get(by_name if isinstance(k, str) else positional, k)
                if type(a) is tuple and got is not None:
                    _put(by_name if isinstance(k, str) else positional, k, tuple(got))
            return registry.keyword_cotangents(positional, kwargs, **by_name)
        return y, back
    return registry.keyword_rule(rule)


def _get(into, k):
    return into.get(k) if isinstance(into, dict) else into[k]


def _put(into, k, v):
    into[k] = v


def _tensors(out):
    """The parts of a function's result, in order: a tensor alone, or the items of a tuple (torch's named tuples)."""
    return (out,) if not isinstance(out, (tuple, list)) else tuple(out)


def _parts(dy, out):
    """The cotangents of `_tensors(out)`, in order: `dy` is one tensor's, a tuple's, or a StructGrad of a named result's
    fields (`torch.topk(x, 2).values`)."""
    if not isinstance(out, (tuple, list)):
        return (dy,)
    if isinstance(dy, dict):
        names = getattr(type(out), "__match_args__", None) or getattr(out, "_fields", ())
        return tuple(dy.get(n) for n in names)
    return (None,) * len(out) if dy is None else tuple(dy)


def _detached(out):
    import torch
    if isinstance(out, torch.Tensor):
        return out.detach()
    if isinstance(out, tuple):
        parts = [_detached(o) for o in out]
        return type(out)(parts) if not hasattr(out, "_fields") else type(out)(*parts)
    if isinstance(out, list):
        return [_detached(o) for o in out]
    return out


registry.FALLBACKS.append(fallback)
registry.SOURCE_FALLBACKS.append(fallback)

"""torch's in-place tensor methods, the way torch code writes `x += y` and `x[...] = v`: `x.add_(y)`, `sub_`, `mul_`,
`div_`, `zero_`, `fill_(v)`, `copy_(src)`.

Each is a method rule of methods.py's form, `back(d_result, d_object_after) -> (d_object_before, *d_args)`; the method
returns its own tensor, so both cotangents are of the object after the update. The arithmetic ones are the in-place
operators' rules (operators.py: the tensor updated in place, its values before in the journal, which the back puts
back first); the others store into the whole tensor the same way.

The names are declared when this module loads, so that the lowering sees `x.add_(y)` as an update of `x` whatever `x`
turns out to be (`_NotYetTorch` holds them until then); the rules themselves, for `torch.Tensor` and
`torch.nn.Parameter`, when torch has been imported (zygotepy never imports it). Keywords (`alpha=`,
`rounding_mode=`, `non_blocking=`) raise a ZygoteError rather than run unseen.
"""
import operator

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...backends import unbroadcast
from ...errors import ZygoteError
from ..in_place import updates_in_place, updates_without_rule
from ..registry import on_import
from .operators import _in_place_rule

_ARITHMETIC = {"add_": (operator.add, operator.iadd), "sub_": (operator.sub, operator.isub),
               "mul_": (operator.mul, operator.imul), "div_": (operator.truediv, operator.itruediv)}
_STORES = ("zero_", "fill_", "copy_")


class _NotYetTorch:
    """Stands for torch.Tensor in the declarations of the names, until torch is imported."""


updates_without_rule(_NotYetTorch, *_ARITHMETIC, *_STORES)


def _refuse_keywords(name, kwargs):
    if kwargs:
        raise ZygoteError(f"zygotepy cannot differentiate Tensor.{name} with {', '.join(f'{k}=' for k in kwargs)}; "
                          f"write the update with an operator (x += alpha * y) or a store (x[...] = ...)")


def _arithmetic(name, plain, inplace):
    in_place = _in_place_rule(plain, inplace)

    def rule(x, other, **kwargs):
        _refuse_keywords(name, kwargs)
        y, pb = in_place(x, other)

        def back(dr, dx):
            return pb(rt.acc(dr, dx))  # (it undoes the update first)
        return y, back
    rule.__qualname__ = f"tensor_{name}_rule"
    return rule


def _store(name):
    def rule(x, *args, **kwargs):
        _refuse_keywords(name, kwargs)
        before = x.clone()
        getattr(x, name)(*args)
        entry = mt.Entry(lambda s: x.__setitem__(Ellipsis, s), before, x)

        def back(dr, dx):
            entry.undo(lambda: x.clone())
            g = rt.acc(dr, dx)
            if g is None or not args:  # (`zero_`: the entries written have no cotangent to pass on)
                return (None, *(None for _ in args))
            value = args[0]
            dv = unbroadcast(g, value) if hasattr(value, "shape") else g.sum().item()
            return (None, dv)
        return x, back
    rule.__qualname__ = f"tensor_{name}_rule"
    return rule


def register():
    import torch
    for cls in (torch.Tensor, torch.nn.Parameter):
        for name, (plain, inplace) in _ARITHMETIC.items():
            updates_in_place(cls, name)(_arithmetic(name, plain, inplace))
        for name in _STORES:
            updates_in_place(cls, name)(_store(name))


on_import("torch", register)

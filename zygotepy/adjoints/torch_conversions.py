"""Rules for making a torch tensor of other data: `torch.tensor`, `torch.as_tensor`, `torch.asarray`,
`torch.from_numpy`; and a NumPy array of a tensor, `t.numpy()` (a tensor reaching it carries a gradient here, where
torch's own autograd, which would serve it, refuses one that requires grad; `t.detach().numpy()` carries none, its
cotangent stopping at `detach`).

Why: a differentiated function that turns its NumPy array or float argument into a tensor (`t * torch.from_numpy(a)`)
got no gradient for it: torch's autograd, which serves torch's functions without a rule (torch_autograd.py), sees only
the tensors among the arguments. The back sends the tensor cotangent to the data it was made of, in that data's form:
a NumPy array of its dtype, a float, a tensor of its dtype and device, a list or tuple of those. Integer and boolean
data gets none. Keywords (`dtype=`, `device=`, `copy=`) are constants.
Importing this module never imports torch: `register()` runs when torch has been imported (`registry.on_import`).
"""
import sys

import numpy as np

from ..backends import asarray, namespace, to_numpy
from ..errors import ForwardModeError
from ..forward.dual import has_dual
from . import registry

_registered = [False]


def cotangent_of(data, dy):
    """The cotangent `dy` (a tensor of the shape made from `data`) in `data`'s own form."""
    if dy is None or isinstance(data, (bool, int, np.integer, np.bool_, str)) or data is None:
        return None
    torch = sys.modules["torch"]
    if isinstance(data, torch.Tensor):
        return dy.to(dtype=data.dtype, device=data.device) if data.is_floating_point() or data.is_complex() else None
    if isinstance(data, (list, tuple)):
        parts = [cotangent_of(v, dy[i]) for i, v in enumerate(data)]
        return None if all(p is None for p in parts) else type(data)(parts)
    if isinstance(data, (float, complex, np.inexact)):
        value = dy.detach().cpu().item()
        return float(value.real) if isinstance(data, (float, np.floating)) else complex(value)
    if isinstance(data, np.ndarray):
        return to_numpy(dy).astype(data.dtype, copy=False).reshape(data.shape) if data.dtype.kind in "fc" else None
    return asarray(namespace(data), to_numpy(dy), data)  # (another library's array: its gradient in its library)


def _conversion(target):
    def rule(data, *args, **kwargs):
        if has_dual((data,)):  # (torch cannot hold one: forward mode's error, not torch's TypeError from inside it)
            raise ForwardModeError(f"{target.__name__}: forward mode cannot pass a dual number into a torch tensor")

        def back(dy):
            return (cotangent_of(data, dy), *(None,) * len(args))
        return target(data, *args, **kwargs), back
    return rule


def _to_numpy_rule(t, *args, **kwargs):
    def back(dy):
        return (None if dy is None else cotangent_of(t, sys.modules["torch"].as_tensor(np.asarray(dy))),
                *(None,) * len(args))
    return t.detach().numpy(*args, **kwargs), back


def register():
    """Register the rules on torch's conversions (once; a user's later @adjoint for one of them wins)."""
    if _registered[0]:
        return
    _registered[0] = True
    torch = sys.modules["torch"]
    for target in (torch.tensor, torch.as_tensor, torch.asarray, torch.from_numpy):
        registry.adjoint(target)(_conversion(target))
    registry.adjoint(torch.Tensor.numpy)(_to_numpy_rule)


registry.on_import("torch", register)  # now if torch is imported, else at the first rule lookup after

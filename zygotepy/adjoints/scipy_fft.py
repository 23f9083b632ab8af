"""`scipy.fft`: its transforms and shifts, differentiated as np.fft's (numpy/fft.py, whose module says why each back is
its transform's adjoint).

SciPy's transforms take NumPy's first parameters (`n`/`s`, `axis`/`axes`, `norm`) and three of their own that do not
change the values: `overwrite_x` (leave the input as it was, as the scipy.linalg rules do with their overwrite flags),
`workers` (threads) and `plan` (refused unless None: a plan made for other inputs). The value is SciPy's own (a float32
input stays single precision, where NumPy computes in double); the back is np.fft's rule's, run on the same
parameters. `fftfreq`/`rfftfreq` are NumPy's too (their spacing `d` differentiated). Importing this module never imports SciPy: `register()` runs when
`scipy.fft` has been imported (`registry.on_import`).
"""
import sys

import numpy as np

from ..errors import ZygoteError
from . import registry
from .numpy import fft as numpy_fft
from .registry import adjoint, nondifferentiable

_TRANSFORMS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
               "rfftn", "irfftn", "fftshift", "ifftshift")
_OWN = ("overwrite_x", "workers", "plan")  # SciPy's parameters after NumPy's three (positions 4 and 5 of them)


def _rule(target, twin, numpy_rule):
    """The rule of `scipy.fft.<name>`: SciPy's value, the back of np.fft's `twin` (the cotangent of a single-precision
    input comes back in its own dtype)."""
    def rule(x, *args, **kwargs):
        own = {k: kwargs.pop(k) for k in _OWN if k in kwargs}
        if own.get("plan") is not None:
            raise ZygoteError(f"scipy.fft.{target.__name__}: plan= is not differentiable; call it without a plan")
        y = target(x, *args, **kwargs, **{k: v for k, v in own.items() if k != "overwrite_x"})
        shared = args[:1] if target.__name__.endswith("shift") else args[:3]  # (the shifts take `axes` alone)
        if twin in numpy_fft.TRANSFORMS:  # (its back from the parameters alone: NumPy's value is not computed again)
            kind, names, defaults = numpy_fft.TRANSFORMS[twin]
            back = numpy_fft.transform_back(kind, numpy_fft._parameters(twin, names, defaults, shared, kwargs), x,
                                            len(shared))
        else:  # (hfft, ihfft and the shifts: their NumPy rule, run again)
            _, back = numpy_rule(x, *shared, **kwargs)

        def scipy_back(dy):
            grads = back(None if dy is None else np.asarray(dy))
            return (*grads, *(None for _ in args[len(shared):]))
        return y, scipy_back
    rule.__qualname__ = f"scipy_{target.__name__}_rule"
    return rule


def register():
    fft = sys.modules["scipy.fft"]
    for name in _TRANSFORMS:
        target = getattr(fft, name, None)
        if target is not None and registry.find_rule(target) is None:
            twin = getattr(np.fft, name)
            adjoint(target)(_rule(target, twin, registry.find_rule(twin)))
    for name in ("fftfreq", "rfftfreq"):
        target = getattr(fft, name, None)
        if target is not None and registry.find_rule(target) is None:
            adjoint(target)(numpy_fft.spacing_rule(target))
    if hasattr(fft, "next_fast_len"):
        nondifferentiable(fft.next_fast_len)


registry.on_import("scipy.fft", register)

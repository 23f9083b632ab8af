"""NumPy's Python functions that have no rule of ours (`np.piecewise`, `np.i0`, `np.apply_along_axis`): NumPy wraps each
in a dispatcher object (`numpy._ArrayFunctionDispatcher`), which is not a Python function, so `J` found neither a rule
nor source for it. Its `_implementation` is the Python function itself: the rule made here differentiates that, as any
Python function is (what it calls needs rules in turn, and a construct zygotepy cannot follow is refused there).

Found by `registry.find_rule` where no rule is registered (`registry.FALLBACKS`), as torch_autograd.py's are; the
rules made are kept here, one per dispatcher."""
import types

import numpy as np

from ...ast_adjoint.dispatch import J, J_kw
from .. import registry

_DISPATCHER = type(np.piecewise)
_MADE = {}  # dispatcher -> its rule (None: its implementation is no Python function)


def fallback(target):
    """The rule of `target`, a NumPy dispatcher of a Python function, or None."""
    if type(target) is not _DISPATCHER:
        return None
    try:
        return _MADE[target]
    except KeyError:
        pass
    implementation = getattr(target, "_implementation", None)
    rule = _through(implementation) if type(implementation) is types.FunctionType else None
    _MADE[target] = rule
    return rule


def _through(implementation):
    def rule(*args, **kwargs):
        y, pb = J_kw(implementation, *args, **kwargs) if kwargs else J(implementation, *args)
        return y, lambda dy: pb(dy)[1:]  # (the arguments' cotangents, then the keywords' dict if called with any)
    rule.__qualname__ = f"{implementation.__name__}_through_its_python"
    rule.__zygote_keywords__ = True
    return rule


registry.FALLBACKS.append(fallback)

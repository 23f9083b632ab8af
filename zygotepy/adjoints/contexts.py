"""`with` blocks: the rules of the two runtime calls a with block lowers to (`enter`, `leave`; see ast_adjoint/lower/control.py).

The manager is entered and left in the forward pass only; the backward of the block's body runs after it was left.
`leave` carries no gradient. `enter` carries one only when the manager holds a differentiable value (a model object
used as a context, `nullcontext(x)`): a Python `__enter__` is differentiated like any callee; one that cannot be
(a C method, or code with unsupported syntax, found before it runs) is called plainly, and then a gradient reaching
its value is passed to the manager when the value is the manager itself (`return self`), else refused, never dropped.
"""
import types

from ..ast_adjoint import runtime as rt
from ..ast_adjoint.dispatch import J
from ..errors import UnsupportedSyntax, ZygoteError
from ..runtime.context import current
from .registry import adjoint, nondifferentiable

nondifferentiable(rt.leave)


@adjoint(rt.enter)
def enter(manager):
    method = type(manager).__enter__
    pb = None
    if type(method) is types.FunctionType:
        try:
            value, pb = J(method, manager)
        except UnsupportedSyntax as e:
            from .mutation.calls import _before_running  # (the mutation table registers last: imported when needed)
            if not _before_running(e, method, (manager,)):
                raise
            value = method(manager)
    else:
        value = method(manager)
    current().contexts.append(manager)

    def back(dy):
        if dy is None:
            return (None,)
        if pb is not None:
            return (pb(dy)[1],)
        if value is manager:
            return (dy,)
        raise ZygoteError(f"a gradient reaches the value {type(manager).__name__}.__enter__ returned ('with ... as "
                          f"name'), and zygotepy cannot differentiate that __enter__")
    return value, back

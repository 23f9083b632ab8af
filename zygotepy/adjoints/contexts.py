"""`with` blocks: the rules of the two runtime calls a with block lowers to (`enter`, `leave`; see ast_adjoint/lower/control.py).

The manager is entered and left in the forward pass only; the backward of the block's body runs after it was left.
`leave` carries no gradient; an `__enter__` or `__exit__` that updates a manager carrying a gradient in place is
refused. `enter` carries one only when the manager holds a differentiable value (a model object used as a context,
`nullcontext(x)`): a Python `__enter__` is differentiated like any callee; one that cannot be (a C method, or code
with unsupported syntax, found before it runs) is called plainly, and then a gradient reaching its value is passed to
the manager when the value is the manager itself (`return self`), else refused, never dropped.
"""
import types

from ..ast_adjoint import runtime as rt
from ..ast_adjoint.call_checks import COMPILER, call_site
from ..ast_adjoint.dispatch import J
from ..errors import UnsupportedSyntax, ZygoteError
from ..runtime.context import current
from ..runtime.snapshots import same_fields
from .registry import adjoint, nondifferentiable


@adjoint(rt.leave)
def leave(manager):
    """Leaving carries no gradient; an `__exit__` of the user's that updates the manager, or state outside it, in
    place (`self.total = self.total * 2`), given a manager that may carry a gradient, is refused: it runs plainly,
    and its update would go unseen (the gradient through it silently lost)."""
    if not _untouched(manager, current().inert_managers.pop(id(manager), None)):
        _refuse_updating(manager, type(manager).__exit__, "__exit__")
        _refuse_updating(manager, type(manager).__enter__, "__enter__")  # (an enter whose value nobody read ran plainly)
    made = current().generator_managers.pop(id(manager), None) if type(manager) is rt.FROM_GENERATOR else None
    if made is not None:  # `@contextlib.contextmanager`: the code after its yield runs plainly, in `__exit__`
        func, args, kwds = made
        if type(func) is types.FunctionType and COMPILER.updates_state(func) and any(
                rt.differentiable(a) for a in (*args, *kwds.values())):
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate a with block of "
                              f"{func.__name__}, a @contextmanager function that updates in place what it is given, "
                              f"here values carrying gradients (its code runs plainly, and the update would go "
                              f"unseen); update them before or after the block instead")
    if type(manager).__module__.startswith("torch.") and type(manager).__name__ in _TORCH_GRAD_MODES:
        rt.leave(manager)
        where = call_site()
        raise ZygoteError(f"{where + ': ' if where else ''}zygotepy differentiates what `with torch."
                          f"{type(manager).__name__}(...)` computes: torch's switches are its autograd's, which "
                          f"zygotepy does not use; wrap a value that must carry no gradient in zygotepy.dropgrad")
    rt.leave(manager)
    return None, lambda dy: (None,)


_TORCH_GRAD_MODES = frozenset(("no_grad", "set_grad_enabled", "inference_mode"))

nondifferentiable(rt.entered)
leave.__zygote_always__ = True  # (a with statement's leave looks inactive: its rule runs even so)


def _untouched(manager, after_enter):
    """Did a manager that held no gradient when it was entered (a timer, a logger) get nothing from the block since its
    `__enter__` (its fields, the same objects, none of them, nor the manager, updated in place by the block's code: it
    may have appended to a list the manager holds)? Then what its `__exit__` updates carries no gradient either."""
    if after_enter is None or not same_fields(manager, after_enter[0]):
        return False
    updated = set(current().log[after_enter[1]:])
    return not updated or id(manager) not in updated and all(id(v) not in updated for v in after_enter[0].values())


def _refuse_updating(manager, method, name):
    """The manager's `__enter__` or `__exit__`, a Python function updating the manager (or state outside it) in
    place, on a manager that may carry a gradient: refused (the update would go unseen by the caller's code)."""
    if type(method) is types.FunctionType and rt.differentiable(manager) and COMPILER.updates_state(method):
        where = call_site()
        raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate a with block whose "
                          f"{type(manager).__name__}.{name} updates the manager (or other state) in place; update it "
                          f"before or after the block instead")


@adjoint(rt.enter)
def enter(manager):
    rt.note_generator_manager(manager)
    method = type(manager).__enter__
    pb = None
    inert = not rt.differentiable(manager)  # (what its enter and exit update then carries no gradient: `_untouched`)
    _refuse_updating(manager, method, "__enter__")
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
    rt.entered(manager, inert)

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

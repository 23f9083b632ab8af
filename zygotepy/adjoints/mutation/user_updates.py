"""A call of a function whose user's rule is declared `@adjoint(target, updates=True)`: `target` updates its first
argument in place (docs/api.md). The lowering takes the call as an update of that argument (the registration declares
`target` as updating its first argument, adjoints/in_place.py), so code after the call reads the argument's new
version, whose cotangent reaches the rule's back; the journal puts the argument back as the call left it once the
backward is over (the back may undo the update, as zygotepy's own mutation rules do).
"""
from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...errors import ZygoteError
from .. import registry


def updating_user_rule(fn):
    """The user's rule for `fn` if it is declared `updates=True`, else None."""
    if not registry.is_user_rule(fn):
        return None
    rule = registry.find_rule(fn)
    return rule if getattr(rule, "updates", False) else None


def user_update(rule, fn, args, kwargs):
    """`fn(*args, **kwargs)` through its user's rule, as `mutcall` gives it: `(result, *args)`, with a back taking the
    cotangents after the call, `(d_result, d_first, *d_rest)`. The rule's back receives the cotangent of the first
    argument after the call (with the result's, where `fn` returns that argument) and returns those of the arguments
    before it."""
    name = getattr(fn, "__qualname__", fn)
    if not args:
        raise ZygoteError(f"{name} has a rule declared updates=True, which updates its first argument, and was called "
                          f"without one")
    target = args[0]
    entry = mt.journal_whole(target)
    y, rule_back = rule.rule(*args, **kwargs)  # (the user's function itself: the registry's wrapper refuses)
    if y is not None and y is not target:
        raise ZygoteError(f"the adjoint rule for {name}, declared updates=True, returned neither the object it updates "
                          f"(its first argument) nor None: return one of them, or declare no updates and return a new "
                          f"object")
    after = mt.snapshot(target) if entry is not None else None
    n = len(args)

    def back(dy):
        d_result, d_target = (None, None) if dy is None else dy[:2]
        grads = tuple(rule_back(rt.acc(d_target, d_result) if y is target else d_target) or (None,) * n)
        if entry is not None:
            entry.undo(lambda: after)
        rest = dy[2:n + 1] if dy is not None else (None,) * (n - 1)
        return (None, grads[0], *map(rt.acc, grads[1:n], rest), *dy[n + 1:]) if dy is not None else \
            (None, *grads[:n], *((None,) * len(kwargs)))
    return (y, *args, *kwargs.values()), back

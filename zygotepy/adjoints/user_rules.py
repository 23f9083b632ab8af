"""A user's `@adjoint` rule as the registry calls it (`UserRule`): checked, since a rule is ordinary code that may do
what its back cannot say (update an argument in place), and given forward mode's tangent from its back.
"""
import functools

from ..errors import MissingTangentRule, ZygoteError
from ..forward.dual import FORWARD, apply, has_dual
from ..forward.levels import tangent_by_pullback
from ..runtime.snapshots import updating

USER_RULE = ("it has a reverse-mode rule (@adjoint) and no tangent rule, and forward mode takes the tangent from the "
             "rule's back only for an output that is a real number or a real array of at most 64 elements")


class UserRule:
    """A user's rule as the registry calls it. Its back defines the derivative, but its forward computes the output
    with ordinary code; where forward mode's dual numbers flow in (hessian runs the reverse pass on them), that code
    would give the output the tangent of the code it runs (zero for `np.round`), not the rule's. So the output takes
    its tangent from the target's tangent rule or, without one, from the rule's back (a small real output: one back
    per element); failing both, the call raises MissingTangentRule (hessian then takes reverse over reverse, which
    uses the rule). Otherwise it is the user's function: its name, module, marks and
    code (whose parameter names the dispatch reads) are the user's. `updates`: declared `updates=True` (its calls are
    updates of their first argument: adjoints/mutation/user_updates.py, which calls `rule` itself)."""

    def __init__(self, rule, target, key, updates):
        functools.update_wrapper(self, rule, updated=())
        self.__code__ = getattr(rule, "__code__", None)
        self.rule, self.target, self.key, self.updates = rule, target, key, updates

    def __getattr__(self, name):  # (the marks, `keyword_rule`'s included, which may come after the registration)
        return getattr(self.rule, name)

    def __call__(self, *args, **kwargs):
        if not has_dual(args, kwargs):
            if self.updates:  # (a call the lowering did not take as an update: `half_(x)` through a local name)
                raise ZygoteError(f"{_name(self.target)} has a rule declared updates=True, and this call of it is one "
                                  f"zygotepy cannot take as an update of its first argument: call it by the name it "
                                  f"has in its module")
            return _arguments_unchanged(self, args, kwargs)
        if _tangent_rule(self.key) is None:
            if self.updates:  # (its back says the update's cotangent, not the tangent the updated argument takes)
                raise MissingTangentRule(self.target, "it has a rule declared updates=True and no tangent rule")
            done = tangent_by_pullback(self.rule, args, kwargs)
            if done is None:
                raise MissingTangentRule(self.target, USER_RULE)
            return done
        y, back = self.rule(*args, **kwargs)
        return apply(self.key, args, kwargs), back


def _name(target):
    return getattr(target, "__qualname__", target)


def _tangent_rule(key):
    try:
        return FORWARD.get(key)
    except TypeError:  # (an unhashable target: no tangent rule can be keyed by it)
        return None


def _arguments_unchanged(user_rule, args, kwargs):
    """A user's rule not declared `updates=True` must not update an argument in place (a kernel writing into `out`, a
    function storing into a dict, a list or an object it was given): nothing would give the updated value's cotangent
    back, and a gradient through it would be silently lost."""
    given = (*args, *kwargs.values())
    result, k = updating(lambda: user_rule.rule(*args, **kwargs), given)
    if k is not None:
        raise ZygoteError(f"the adjoint rule {user_rule.__qualname__} for {_name(user_rule.target)} updated its "
                          f"argument {k} ({type(given[k]).__name__}) in place, and a rule's back cannot give the "
                          f"cotangent of an updated object: give the rule to a function that returns what it makes "
                          f"instead (`out = f(x)`, not `f(out, x)`; a value it stores, returned)")
    return result

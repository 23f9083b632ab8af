"""A user's `@adjoint` rule as the registry calls it (`UserRule`): checked, since a rule is ordinary code that may do
what its back cannot say (update an argument in place), and given forward mode's tangent from its back.

What a rule may be given (`classmethod_target`): a function, a builtin, `Class.method` (the class's function: every
object's calls), a staticmethod (its function) or a classmethod (`Ops.cube`, bound to its class); never a method bound
to one object (`obj.f`), whose rule could only be keyed by the class's function and so would serve every object. A
classmethod's rule takes the arguments of the call (`def _(x)` for `Ops.cube(x)`); one that takes the class first
under the classmethod's own name for it (`def _(cls, x)`) gets it, its back giving the class's cotangent first.
"""
import functools
import inspect
import types

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
    updates of their first argument: adjoints/mutation/user_updates.py, which calls `rule` itself). `drops`: a
    classmethod's rule written for the call (`def _(x)`), called by the dispatch as the function is, class first: it
    is not given the class, its back's cotangents get a None for it, and its code here names the class first (a stub's
    parameters, never run: the dispatch maps keywords to positions by them)."""

    def __init__(self, rule, target, key, updates):
        functools.update_wrapper(self, rule, updated=())
        self.__code__ = getattr(rule, "__code__", None)
        self.rule, self.target, self.key, self.updates = rule, target, key, updates
        self.drops = classmethod_target(target) and _written_for_call(rule, target, key)
        if self.drops and self.__code__ is not None:
            self.__code__ = _class_first(self.__code__, key)

    def __getattr__(self, name):  # (the marks, `keyword_rule`'s included, which may come after the registration)
        return getattr(self.rule, name)

    def __call__(self, *args, **kwargs):
        given = args[1:] if self.drops else args
        if not has_dual(args, kwargs):
            if self.updates:  # (a call the lowering did not take as an update: `half_(x)` through a local name)
                raise ZygoteError(f"{_name(self.target)} has a rule declared updates=True, and this call of it is one "
                                  f"zygotepy cannot take as an update of its first argument: call it by the name it "
                                  f"has in its module")
            return self._adapted(_arguments_unchanged(self, given, kwargs), len(given))
        if _tangent_rule(self.key) is None:
            if self.updates:  # (its back says the update's cotangent, not the tangent the updated argument takes)
                raise MissingTangentRule(self.target, "it has a rule declared updates=True and no tangent rule")
            done = tangent_by_pullback(self.rule, given, kwargs)
            if done is None:
                raise MissingTangentRule(self.target, USER_RULE)
            return self._adapted(done, len(given))
        y, back = self._adapted(self.rule(*given, **kwargs), len(given))
        return apply(self.key, args, kwargs), back

    def _adapted(self, result, nargs):
        """A classmethod's rule written for the call (`drops`): its `(y, back)` with the back adapted (`_Back`);
        anything else as it is, for the dispatch's checks (pullbacks.py `RulePullback`, which takes a list for a
        tuple)."""
        if self.drops and type(result) is tuple and len(result) == 2 and callable(result[1]):
            return result[0], _Back(result[1], self, nargs)
        return result


class _Back:
    """The back of a classmethod's rule written for the call (`UserRule.drops`) as the dispatch calls it: no `need`
    entry for the class, and None for the class's cotangent. (No `__slots__`: nested differentiation runs this code
    through zygotepy's twins, which make objects by their `__dict__`.)"""

    def __init__(self, back, user_rule, nargs):
        self.back, self.user_rule, self.nargs = back, user_rule, nargs

    def __call__(self, dy, *rest, **named):
        if rest and rest[0] is not None:  # (`back(dy, need)`: the class's entry is the dispatch's own)
            rest = (rest[0][1:], *rest[1:])
        grads = self.back(dy, *rest, **named)
        if type(grads) is list:
            grads = tuple(grads)
        code, n = getattr(self.user_rule.rule, "__code__", None), self.nargs
        if type(grads) is not tuple or len(grads) < n or code is not None and len(grads) > max(n, code.co_argcount):
            rule = self.user_rule
            got = f"{len(grads)} cotangents" if type(grads) is tuple else repr(type(grads).__name__)
            raise ZygoteError(f"the adjoint rule {rule.__qualname__} for the classmethod {_name(rule.target)} "
                              f"returned {got} for a call with {n} positional arguments; its back(dy) must return a "
                              f"tuple with one cotangent per positional argument of the call (the class not counted), "
                              f"None for an argument with no gradient")
        return (None, *grads)


def classmethod_target(target):
    """Is `target` a classmethod (`Ops.cube`, bound to its class; the classmethod object itself)? A method bound to one
    object (`obj.f`; `C.f` where `f` is a metaclass's method) is refused: a bound method is made anew at each access,
    so its rule could only be keyed by its function, and would then serve the calls of every object of its class."""
    if isinstance(target, classmethod):
        return True
    if not isinstance(target, types.MethodType):
        return False
    owner, fn = target.__self__, target.__func__
    if isinstance(owner, type) and any(isinstance(v, classmethod) and v.__func__ is fn
                                       for c in owner.__mro__ for v in vars(c).values()):
        return True
    cls = next((c for c in type(owner).__mro__ if any(v is fn for v in vars(c).values())), type(owner))
    name, of = getattr(fn, "__name__", "method"), cls.__qualname__
    raise ZygoteError(f"@adjoint was given {target!r}, the method {of}.{name} bound to one object; a bound method is "
                      f"made anew at each access, so its rule could only be keyed by the function {of}.{name} and "
                      f"would serve the calls of every {of} object, not this one's. Register the rule on the class's "
                      f"function, @adjoint({of}.{name}), written with self first (`def _(self, x)`, computing the "
                      f"value as {of}.{name}(self, x), its back returning self's cotangent first, None for none): it "
                      f"applies to every object's calls, and reads the object's fields from self")


def _written_for_call(rule, target, key):
    """Does the classmethod's rule take the arguments of the call (`def _(x)` for `Ops.cube(x)`)? Not where its
    positional parameters are the classmethod's own in number, the first under the same name (`def _(cls, x)`); the
    same number under another first name is refused, as it could be either."""
    mine, theirs = getattr(rule, "__code__", None), getattr(key, "__code__", None)
    if mine is None or theirs is None or mine.co_argcount != theirs.co_argcount or not theirs.co_argcount:
        return True
    first = theirs.co_varnames[0]
    if mine.co_varnames[0] == first:
        return False
    raise ZygoteError(f"the adjoint rule {rule.__qualname__} for the classmethod {_name(target)} takes as many "
                      f"positional parameters as {_name(key)} itself, and its first is not named {first!r}, so it "
                      f"could be written for the call or for the function: write it with the arguments of a call "
                      f"(`def _(x)` for a call {_name(key)}(x)), or, to be given the class, name its first "
                      f"parameter {first!r} (its back then returns the class's cotangent first, None)")


def _class_first(code, key):
    """A code object with `code`'s parameters after one for the class (named as the classmethod names it, or a name
    of none of `code`'s) and `code`'s constants (its backs' code, which tests/adjoints/test_registry.py reads): what
    the dispatch reads of a rule it calls class first. Never run."""
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    varargs = code.co_varnames[len(names)] if code.co_flags & inspect.CO_VARARGS else None
    varkw = code.co_varnames[len(names) + bool(varargs)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    taken, theirs = set(code.co_varnames), getattr(key, "__code__", None)
    first = theirs.co_varnames[0] if theirs is not None and theirs.co_argcount else "cls"
    while first in taken:
        first = "_" + first
    pos, posonly = names[:code.co_argcount], code.co_posonlyargcount
    parts = [first, *pos[:posonly], *(["/"] if posonly else []), *pos[posonly:]]
    kwonly = names[code.co_argcount:]
    if varargs or kwonly:
        parts.append("*" + (varargs or ""))
    parts += [*kwonly, *(["**" + varkw] if varkw else [])]
    scope = {}
    exec(f"def stub({', '.join(parts)}): pass", scope)  # noqa: S102 (parameter names of the user's code)
    names = {"co_qualname": code.co_qualname} if hasattr(code, "co_qualname") else {}  # (Python 3.11 on)
    return scope["stub"].__code__.replace(co_name=code.co_name, co_filename=code.co_filename,
                                          co_firstlineno=code.co_firstlineno, co_consts=code.co_consts or (None,),
                                          **names)


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

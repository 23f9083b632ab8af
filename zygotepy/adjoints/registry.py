"""The rule registry: every semantic the adjoint pass does not hard-code lives here, keyed by the callable object.

Three tables, all keyed by the target object itself (never by a string):
- RULES: `target -> rule`, where `rule(*args, **kwargs)` returns `(y, back)` and `back(dy)` returns one cotangent per
  positional argument (the public `@adjoint` form of API.md).
- SCALAR: `target -> derivative`, a lambda `(dy, y, *args) -> tuple of cotangents` valid when every argument is a Python
  int/float/bool. The compiler inlines its body into generated code, guarded by a type check (the fast path).
- NONDIFF: callables that never carry a gradient (comparisons, len, isinstance, ...): they run as constants.

Registration bumps `generation`, so compiled functions that inlined an older rule are rebuilt ("latest registration wins").
"""
import types

RULES = {}
SCALAR = {}
NONDIFF = set()
MUTATING = set()   # primitives that update an object in place: their `back` runs even with no cotangent (to undo)
MUTATING_IF_ACTIVE = set()  # operators that may update in place (`x += y`): the same, where a gradient flows
CLASS_RULES = []  # (predicate on a class, rule): constructors of whole families of classes (dataclasses, namedtuples)
_UNHASHABLE = {}  # id(target) -> (target, rule), for targets that cannot be dict keys
generation = [0]


def _key(target):
    """The dictionary key of a target: the object itself; the underlying function of a method given as Class.method."""
    if isinstance(target, (types.MethodType, classmethod, staticmethod)):
        return target.__func__
    return target


def adjoint(target):
    """Register a custom reverse rule for `target`; the latest registration for a target wins.

    The decorated function takes the same arguments as `target` and returns `(y, back)`; `back(dy)` returns a tuple with
    one cotangent per positional argument (None for none, `()` for a function of no arguments). `dy` may be None.

    >>> import math
    >>> from zygotepy import adjoint, gradient
    >>> def square(x): return x * x
    >>> @adjoint(square)
    ... def _(x): return square(x), lambda dy: (2 * x * dy,)
    >>> gradient(square, 3.0)
    (6.0,)
    """
    def register(rule):
        key = _key(target)
        user = not getattr(rule, "__module__", "").startswith("zygotepy.")
        try:
            RULES[key] = rule
            if user:  # a user's rule replaces the built-in fast path too (built-in tables register both)
                SCALAR.pop(key, None)
            NONDIFF.discard(key)
        except TypeError:
            _UNHASHABLE[id(key)] = (key, rule)
        rule.__zygote_target__ = target
        generation[0] += 1
        return rule
    return register


def scalar_rule(target, derivative):
    """Register the inlinable scalar derivative `(dy, y, *args) -> cotangents` of `target` (internal tables)."""
    SCALAR[_key(target)] = derivative
    generation[0] += 1


def nondifferentiable(*targets):
    """Declare callables whose results never carry a gradient: they run as constants."""
    for t in targets:
        NONDIFF.add(_key(t))
    generation[0] += 1


def mutating(*targets, if_active=False):
    """Declare primitives that update an object in place (see adjoints/mutation.py); `if_active`: only where a
    gradient flows through them (elsewhere they run as written, and the transform keeps saved values safe)."""
    (MUTATING_IF_ACTIVE if if_active else MUTATING).update(_key(t) for t in targets)
    generation[0] += 1


def is_mutating(target, active=False):
    try:
        return target in MUTATING or active and target in MUTATING_IF_ACTIVE
    except TypeError:
        return False


def find_rule(target):
    """The reverse rule registered for `target`, or None."""
    try:
        return RULES.get(target)
    except TypeError:
        hit = _UNHASHABLE.get(id(target))
        return hit[1] if hit and hit[0] is target else None


def class_rule(predicate):
    """Register `rule(cls, args, kwargs) -> (y, pullback)` for calling any class `cls` with `predicate(cls)` true;
    `pullback(dy)` returns the internal form `(dself, *dargs)`, plus a dict of keyword cotangents when `kwargs` is not
    None. Later registrations are tried first."""
    def register(rule):
        CLASS_RULES.insert(0, (predicate, rule))
        generation[0] += 1
        return rule
    return register


def find_class_rule(cls):
    """The constructor rule for the class `cls`, or None."""
    for predicate, rule in CLASS_RULES:
        if predicate(cls):
            return rule
    return None


def find_scalar(target):
    """The inlinable scalar derivative of `target`, or None."""
    try:
        return SCALAR.get(target)
    except TypeError:
        return None


def is_nondifferentiable(target):
    try:
        return target in NONDIFF
    except TypeError:
        return False


def is_builtin(rule):
    """A rule of zygotepy's own tables: tested, so its results skip the checks a user's rule gets."""
    return getattr(rule, "__module__", "").startswith("zygotepy.")


def callable_directly(rule):
    """A built-in rule whose `back` returns exactly one cotangent per argument it was called with (rules with
    optional parameters may return more, which J trims), so generated code may call it without J."""
    return is_builtin(rule) and not getattr(rule, "__defaults__", None)


def takes_need(rule):
    """Does the rule's `back` accept the optional `need` mask (`def back(dy, need=...)`)?"""
    code = getattr(rule, "__code__", None)
    return code is not None and any(getattr(c, "co_name", "") == "back" and c.co_argcount >= 2
                                    for c in code.co_consts)

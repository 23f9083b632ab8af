"""The rule registry: every semantic the adjoint pass does not hard-code lives here, keyed by the callable object.

Three tables, all keyed by the target object itself (never by a string):
- RULES: `target -> rule`, where `rule(*args, **kwargs)` returns `(y, back)` and `back(dy)` returns one cotangent per
  positional argument (the public `@adjoint` form of docs/api.md).
- SCALAR: `target -> derivative`, a lambda `(dy, y, *args) -> tuple of cotangents` valid when every argument is a Python
  int/float/bool. The compiler inlines its body into generated code, guarded by a type check (the fast path).
- ARRAY: `target -> ArrayDerivative`, the same kind of lambda for real NumPy arrays (adjoints/numpy/array_inline.py):
  the compiler inlines it behind its own guard (the array fast path), as a careful person writes NumPy backprop.
- NONDIFF: callables that never carry a gradient (comparisons, len, isinstance, ...): they run as constants.
Registration bumps `generation`, so compiled functions that inlined an older rule are rebuilt ("latest registration wins").

Other array libraries: a function of another array namespace (`jnp.tanh`, `array_api_strict.sum`, `torch.tanh`) with no
rule of its own resolves, in `find_rule`, to the rule of the NumPy function of the same name (its NumPy "twin"), when
that rule is declared namespace-generic (`namespace_generic`: it computes with `namespace(x)`, so its results and
cotangents are arrays of x's library). A twin whose rule is NumPy-only resolves to a rule that raises a ZygoteError
naming it. The map from foreign function objects to twins (foreign_names.py) is built lazily, per namespace module,
when such a module has been imported; nothing of the foreign library is patched. The methods of foreign array
classes (`torch.Tensor.sum`, JAX's `ArrayImpl.sum`) resolve, keyed by the method objects, to the rules
`foreign/array_methods.py` builds from the same namespace-generic rules (`_METHODS`, `_METHOD_NONDIFF`); torch's
functions translate `dim`/`keepdim` in `foreign/torch_functions.py`.
"""
import sys
import types


from ..forward.dual import FORWARD
from . import foreign_names as foreign
from .in_place import updates_first_argument
from .user_rules import UserRule, classmethod_target
from .foreign_names import FOREIGN, _METHOD_NONDIFF, _METHODS, _TORCH, _TWINS, _seen  # noqa: F401

RULES = {}
SCALAR = {}
SHARED = {}  # target -> (partner, derivative from the partner's value): registry.scalar_rule's `shares`
ARRAY = {}
ARRAY_METHODS = {}  # a method name of NumPy's arrays -> the function with an array derivative it computes (`x.sum()`)
NONDIFF = set()
REPLACED = []  # (target, old, new) where one built-in table's registration replaced another's
MUTATING = set()   # primitives that update an object in place: their `back` runs even with no cotangent (to undo)
MUTATING_IF_ACTIVE = set()  # operators that may update in place (`x += y`): the same, where a gradient flows
CLASS_RULES = []  # (predicate on a class, rule): constructors of whole families of classes (dataclasses, namedtuples)
# code object -> rule, for the methods a factory makes anew for each class it makes, all from one code object (every
# namedtuple class's own `_replace`): no one function object could key their rule
CODE_RULES = {}
_UNHASHABLE = {}  # id(target) -> (target, rule), for targets that cannot be dict keys
generation = [0]
STRAIGHT = {}
"""`target -> rule` for J_args: a built-in rule that generated code may call as it is (`callable_directly`), found once
by the first call and kept until the next registration of anything (`_changed`): `J_args` is then one lookup."""
GENERIC = set()  # targets whose rule computes with the array namespace of its inputs (serves every backend)
# id() of each target whose rule runs even where no gradient flows into the call (a user's rule: `nestlevel`; the
# nesting rules marked `__zygote_always__`): generated code tests a callee it cannot know at transform time (a closure
# cell, a local name) against it (`has_rule`). Targets are held by RULES, so their ids are never reused.
RULED = set()
# functions `target -> rule or None` that `find_rule` asks where no rule is registered (torch_autograd.py: torch's
# functions without a rule of ours, differentiated by torch's autograd); the rules they make are theirs to keep.
# FALLBACKS are asked of callables that are no Python function, SOURCE_FALLBACKS of Python functions (a library whose
# code zygotepy does not transform: jax_autograd.py)
FALLBACKS = []
SOURCE_FALLBACKS = []


def _changed():
    """A rule, a mark or a switch changed: compiled code that inlined an older rule is rebuilt (`generation`), and J
    looks every target up again."""
    generation[0] += 1
    STRAIGHT.clear()


def _key(target):
    """The dictionary key of a target: the object itself; the underlying function of a method given as Class.method."""
    if isinstance(target, (types.MethodType, classmethod, staticmethod)):
        return target.__func__
    return target


def adjoint(target, *, need=False, accumulates=False, updates=False, optional=False):
    """Register a custom reverse rule for `target`; the latest registration for a target wins.

    The decorated function takes the same arguments as `target` and returns `(y, back)`; `back(dy)` returns a tuple with
    one cotangent per positional argument (None for none, `()` for a function of no arguments). `dy` may be None.
    `need=True` declares that `back` takes a second argument, `back(dy, need)`: one bool per argument, False where the
    caller reads no cotangent, so that `back` may skip computing it (None in its place).
    `accumulates=True` declares a faster form of `back`, `back(dy, need=None, *into)`: handed the running cotangents of
    the arguments (`into`), it returns them with its own added, in place where it alone holds them (`runtime.sole`).
    `updates=True` declares that `target` updates an argument in place (a user's function its first: mutation/
    user_updates.py): the backward calls `back` even when no cotangent reached the result (`dy` None), so that it can
    undo the update; `updates="if_active"`: only where a gradient flows through the call (`x += y`).
    `optional=True` declares that `back` returns a cotangent for each parameter, optional ones included, even where a
    call leaves them out (`enumerate(seq)`'s back gives `start` one too): J drops those (they must be None).

    >>> import math
    >>> from zygotepy import adjoint, gradient
    >>> def square(x): return x * x
    >>> @adjoint(square)
    ... def _(x): return square(x), lambda dy: (2 * x * dy,)
    >>> gradient(square, 3.0)
    (6.0,)
    """
    classmethod_target(target)  # (refuses a method bound to one object: user_rules.py)

    def register(rule):
        key = _key(target)
        user = not getattr(rule, "__module__", "").startswith("zygotepy.")
        made = UserRule(rule, target, key, bool(updates)) if user else None  # (may refuse the rule: before any change)
        try:
            old = RULES.get(key)
            if old is not None and old is not rule and not user and old.__module__.startswith("zygotepy."):
                REPLACED.append((target, old, rule))  # (a built-in rule replaced by another: tests/adjoints)
            RULES[key] = rule
            if user:  # a user's rule replaces the built-in fast paths and tangent rule (forward mode: the back's)
                SCALAR.pop(key, None)
                ARRAY.pop(key, None)
                if getattr(FORWARD.get(target), "__module__", "").startswith("zygotepy."):
                    del FORWARD[target]
            NONDIFF.discard(key)
        except TypeError:
            _UNHASHABLE[id(key)] = (key, rule)
        rule.__zygote_target__ = target
        if need or accumulates:  # (properties of the rule's back: a later registration of the same rule keeps them)
            rule.__zygote_need__ = True
        if accumulates:
            rule.__zygote_accumulates__ = True
        if optional:
            rule.__zygote_optional__ = True
        if updates:
            (MUTATING_IF_ACTIVE if updates == "if_active" else MUTATING).add(key)
            if user and type(target) is types.FunctionType:  # (the lowering takes its calls as updates of argument 0)
                updates_first_argument(target)
        if user or getattr(rule, "__zygote_always__", False):
            RULED.add(id(key))
        if user:
            _store(key, made)
        _changed()
        foreign.forget()
        return rule
    return register


def _store(key, rule):
    try:
        RULES[key] = rule
    except TypeError:
        _UNHASHABLE[id(key)] = (key, rule)


def is_user_rule(target):
    """Is the rule registered for `target` a user's (`@adjoint` outside zygotepy)? Forward mode then refuses to
    differentiate `target`'s source where it has no tangent rule: the user's rule defines its derivative."""
    try:
        rule = RULES.get(_key(target))
    except TypeError:
        return False
    return type(rule) is UserRule


def keyword_rule(rule):
    """Mark `rule` as keyword-aware: called with keyword arguments, its back returns one cotangent per positional
    argument and then a dict of keyword cotangents (`keyword_cotangents` builds it); called without, only the former.

    Why a mark: a rule's back returns one cotangent per positional argument (docs/api.md), so a value passed by keyword
    (`np.clip(x, a_min=lo)`) had nowhere to send its gradient. A keyword the dict leaves out counts as "no cotangent":
    fine for a constant, an error where a gradient flows into it (keywords._WithKeywords), never a silent zero.

    >>> import numpy as np
    >>> from zygotepy import adjoint, gradient
    >>> def scaled(x, *, by=1.0): return x * by
    >>> @keyword_rule
    ... @adjoint(scaled)
    ... def _(x, *, by=1.0):
    ...     return scaled(x, by=by), lambda dy: keyword_cotangents((dy * by,), {"by": by}, by=dy * x)
    >>> gradient(lambda b: scaled(3.0, by=b), 2.0)
    (3.0,)
    """
    rule.__zygote_keywords__ = True
    return rule


def keyword_cotangents(positional, kwargs, **given):
    """A keyword-aware back's result: the positional cotangents, then (when the call had keywords) the cotangents
    `given` of the call's keywords; keywords not given are left out (no cotangent)."""
    if not kwargs:
        return tuple(positional)
    return (*positional, {k: v for k, v in given.items() if k in kwargs})


def scalar_rule(target, derivative, shares=None):
    """Register the inlinable scalar derivative `(dy, y, *args) -> cotangents` of `target` (internal tables).
    `shares=(partner, d)`: where one iteration of a loop computes `partner` of the same argument too, `d(dy, y, p)`
    gives the same cotangent from partner's value `p` (sin's derivative is the cos the loop computes anyway)."""
    SCALAR[_key(target)] = derivative
    if shares is not None:
        SHARED[_key(target)] = shares
    _changed()


def array_rule(target, derivative):
    """Register the inlinable array derivative (an `array_inline.ArrayDerivative`) of `target` (internal tables)."""
    ARRAY[_key(target)] = derivative
    _changed()


def array_method(name, function):
    """Declare that `x.name(...)` on a NumPy array computes `function(x, ...)`, whose inlinable array derivative (an
    `array_rule`) the method call then takes: array methods of exact NumPy arrays cannot be rebound."""
    ARRAY_METHODS[name] = function
    _changed()


def find_array_method(name):
    """The function the NumPy array method `name` computes, with an array derivative of its own; None for others."""
    return ARRAY_METHODS.get(name) if type(name) is str else None


def nondifferentiable(*targets):
    """Declare callables whose results never carry a gradient: they run as constants."""
    for t in targets:
        NONDIFF.add(_key(t))
    _changed()
    foreign.forget()


def namespace_generic(*targets):
    """Declare built-in rules that compute with `namespace(x)` (so they serve JAX, torch, CuPy and array-API arrays)."""
    for t in targets:
        GENERIC.add(_key(t))


def is_generic(target):
    try:
        return _key(target) in GENERIC
    except TypeError:
        return False


def is_mutating(target, active=False):
    try:
        return target in MUTATING or active and target in MUTATING_IF_ACTIVE
    except TypeError:
        return False


# library name -> functions that register rules keyed by that library's own objects (adjoints/torch_nn.py, jax_nn.py),
# each run once, at the first rule lookup after the library has been imported: zygotepy itself never imports it
ON_IMPORT = {}
_on_import_seen = [-1]


def on_import(library, register):
    """Run `register()` now if the module `library` has been imported, else at the first `find_rule` after it has."""
    if library in sys.modules:
        register()
    else:
        ON_IMPORT.setdefault(library, []).append(register)
        _on_import_seen[0] = -1


def _run_on_import():
    _on_import_seen[0] = len(sys.modules)
    for library in [name for name in ON_IMPORT if name in sys.modules]:
        for register in ON_IMPORT.pop(library):
            register()


def find_rule(target):
    """The reverse rule registered for `target`, or None; a foreign namespace's function gets its NumPy twin's rule."""
    if ON_IMPORT and _on_import_seen[0] != len(sys.modules):
        _run_on_import()
    try:
        rule = RULES.get(target)
    except TypeError:
        hit = _UNHASHABLE.get(id(target))
        return hit[1] if hit and hit[0] is target else None
    if rule is None and type(target) is types.FunctionType and CODE_RULES:
        rule = CODE_RULES.get(target.__code__)
        if rule is not None:
            return rule
    if rule is None and (_seen[0] != len(sys.modules) or target in _TWINS or target in _METHODS):
        twin = twin_of(target)
        if twin is not None:
            rule = RULES.get(twin)
            if rule is not None and twin not in GENERIC:
                return foreign.numpy_only(twin, target, rule)
            if rule is not None and target in _TORCH:
                rule = foreign.torch_rule(target, twin, rule)
        else:
            rule = _METHODS.get(target)
    if rule is None and target not in NONDIFF:
        for fallback in SOURCE_FALLBACKS if type(target) is types.FunctionType else FALLBACKS:
            rule = fallback(target)
            if rule is not None:
                break
    return rule


def code_rule(code):
    """Register `rule` for every Python function whose code object is `code` (internal tables: the per-class methods
    a factory makes from one code, such as namedtuple's `_replace`); a rule registered for the function itself wins."""
    def register(rule):
        CODE_RULES[code] = rule
        _changed()
        return rule
    return register


def class_rule(predicate):
    """Register `rule(cls, args, kwargs) -> (y, pullback)` for calling any class `cls` with `predicate(cls)` true;
    `pullback(dy)` returns the internal form `(dself, *dargs)`, plus a dict of keyword cotangents when `kwargs` is not
    None. Later registrations are tried first."""
    def register(rule):
        CLASS_RULES.insert(0, (predicate, rule))
        _changed()
        return rule
    return register


def find_class_rule(cls):
    """The constructor rule for the class `cls`, or None."""
    for predicate, rule in CLASS_RULES:
        if predicate(cls):
            return rule
    return None


def has_rule(fn):
    """Does `fn` have a rule that runs even where no gradient flows into the call (RULED)? The test generated code
    makes before an inactive call of a callee it could not know at transform time (a closure cell, a local name); the
    emitter prints it inline, `id(fn) in _RULED`."""
    return id(fn) in RULED


def find_scalar(target):
    """The inlinable scalar derivative of `target`, or None."""
    try:
        return SCALAR.get(target)
    except TypeError:
        return None


def find_shared(target):
    """`(partner, derivative)` of a scalar rule declared with `shares`, or None."""
    try:
        return SHARED.get(target)
    except TypeError:
        return None


def find_array(target):
    """The inlinable array derivative of `target`, or None."""
    try:
        return ARRAY.get(target)
    except TypeError:
        return None


def twin_of(target):
    """The NumPy function that the foreign namespace function `target` means, or None (foreign_names.py)."""
    return foreign.twin_of(target, _known)


def _known(twin):
    return twin in RULES or twin in NONDIFF


def is_nondifferentiable(target):
    try:
        if target in NONDIFF:
            return True
    except TypeError:
        return False
    if _seen[0] != len(sys.modules) or target in _TWINS or target in _METHOD_NONDIFF:
        return twin_of(target) in NONDIFF or target in _METHOD_NONDIFF
    return False


def is_builtin(rule):
    """A rule of zygotepy's own tables: tested, so its results skip the checks a user's rule gets."""
    return getattr(rule, "__module__", "").startswith("zygotepy.")


def callable_directly(rule):
    """A built-in rule whose `back` returns exactly one cotangent per argument it was called with (a rule declared
    `optional=True` may return more, which J trims), so generated code may call it without J."""
    return is_builtin(rule) and not getattr(rule, "__zygote_optional__", False) \
        and not hasattr(rule, "__zygote_nested__")


def takes_need(rule):
    """Does the rule's `back` accept the `need` mask (`back(dy, need)`)? Declared at registration
    (`adjoint(target, need=True)`, implied by `accumulates=True`), never read off the code."""
    return getattr(rule, "__zygote_need__", False)


def accumulates(rule):
    """Does the rule's `back` take the running cotangents of its arguments (`def back(dy, need=None, *into)`) and
    return them with its own added? Generated code then hands them over, so the rule may add in place
    (`runtime.sole`): reading `x[i]` in a loop costs O(1) per read, not a dense zero array each. Declared at
    registration (`adjoint(target, accumulates=True)`), never read off the code."""
    return getattr(rule, "__zygote_accumulates__", False)

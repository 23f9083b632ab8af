"""The registry reads what a rule offers from its declaration, never from its code: `need`, `accumulates` and
`optional` are declared at registration (`adjoint(target, need=True)`, ...). This test holds the declarations to the
code: a rule declared to accumulate has a back that takes the running cotangents (`*into`), and every back written
that way is declared (else generated code would not hand it its cotangents, and the faster form would go unused); the
same for `need` and for optional parameters."""
import functools
import inspect
import operator

import numpy as np
import pytest

import zygotepy  # noqa: F401  (registers the built-in rules)
from zygotepy import adjoint, gradient
from zygotepy.adjoints import registry


def _backs_take_into(rule):
    code = getattr(rule, "__code__", None)
    backs = [c for c in getattr(code, "co_consts", ()) if getattr(c, "co_name", "") == "back"]
    return bool(backs) and all(c.co_flags & inspect.CO_VARARGS and c.co_varnames[c.co_argcount] == "into"
                               for c in backs)


def test_every_built_in_rule_declares_what_its_back_takes():
    rules = {id(r): r for r in registry.RULES.values()}.values()
    declared = [r for r in rules if registry.accumulates(r)]
    assert len(declared) > 40  # the elementwise NumPy and scipy.special rules, mul, getitem, setitem
    wrong = [getattr(r, "__qualname__", r) for r in rules if registry.accumulates(r) != _backs_take_into(r)]
    assert not wrong, f"declared accumulates=... does not match the back's parameters: {wrong}"


def _backs_take_need(rule):
    code = getattr(rule, "__code__", None)
    backs = [c for c in getattr(code, "co_consts", ()) if getattr(c, "co_name", "") == "back"]
    return bool(backs) and all(c.co_argcount >= 2 and c.co_varnames[1] == "need" for c in backs)


def test_every_built_in_rule_declares_whether_its_back_takes_need():
    rules = {id(r): r for r in registry.RULES.values()}.values()
    declared = [r for r in rules if registry.takes_need(r)]
    assert len(declared) > 100  # the elementwise and binary NumPy and scipy rules, the arithmetic operators, draws
    wrong = [getattr(r, "__qualname__", r) for r in rules if registry.takes_need(r) != _backs_take_need(r)]
    assert not wrong, f"declared need=... does not match the back's parameters: {wrong}"


def test_every_built_in_rule_with_optional_parameters_declares_it():
    """A back that gives its optional parameters cotangents even where a call leaves them out (`enumerate(seq)`) is
    declared `optional=True`, so that J trims them and generated code never calls it directly: held to the code."""
    rules = {id(r): r for r in registry.RULES.values() if registry.is_builtin(r)}.values()
    declared = [r.__qualname__ for r in rules if getattr(r, "__zygote_optional__", False)]
    assert sorted(declared) == ["_gauss", "accumulate", "dict_fromkeys", "enumerate_", "float_", "frozenset_rule",
                                "list_", "refresh_iter", "set_rule", "tuple_", "update_wrapper"]
    wrong = [r.__qualname__ for r in rules if bool(getattr(r, "__defaults__", None))
             != getattr(r, "__zygote_optional__", False)]
    assert not wrong, f"declared optional=... does not match the rule's parameters: {wrong}"
    assert not any(registry.callable_directly(r) for r in rules if getattr(r, "__zygote_optional__", False))


def square(x):
    return x * x


def times(a, b):
    return a * b


def twice_times(x):
    return times(x, 2.0)


def _seen_by_back(declared):
    """The `need` a user's rule of two arguments is handed where only the first carries a gradient."""
    seen = []

    @adjoint(times, need=declared)
    def _(a, b):
        def back(dy, need="not handed"):
            seen.append(need)
            return dy * b, dy * a
        return a * b, back
    try:
        assert gradient(twice_times, 3.0) == pytest.approx((2.0,))
    finally:
        registry.RULES.pop(times, None)
        registry.generation[0] += 1
    return seen


def test_need_is_handed_to_a_back_only_where_declared():
    assert _seen_by_back(True) == [(True, False)]
    assert _seen_by_back(False) == ["not handed"]


def test_a_rule_not_declared_is_never_handed_cotangents():
    @adjoint(square)
    def _(x):
        def back(dy, need=None, *into):
            assert not into
            return (2 * x * dy,)
        return x * x, back
    try:
        assert gradient(lambda x: square(x) * np.float64(1.0), 3.0) == pytest.approx((6.0,))
    finally:
        registry.RULES.pop(square, None)
        registry.generation[0] += 1


def test_in_place_operators_have_the_mutation_tables_rules():
    """`x += y` on an array updates x in place: its rule is the mutation table's, whatever order the modules load
    in. (scalar.py registered the plain operator's rule for it too, and the later registration won: moving an import
    of the mutation table up in contexts.py turned `+=` into `+` on arrays, and the fuzzer found programs whose
    arguments changed. Now only the mutation table registers these rules; it still loads after scalar.py, whose
    rules it takes as it loads: tests/test_layers.py INSIDE_FUNCTIONS.)"""
    for op in (operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow, operator.imod,
               operator.imatmul):
        assert registry.find_rule(op).__module__ == "zygotepy.adjoints.mutation.operators", op


def updates_its_argument(a):
    a[0] += 1.0
    return a


@pytest.mark.parametrize("updates", [False, True, "if_active"])
def test_updating_in_place_is_declared_at_registration(updates):
    """`adjoint(target, updates=...)` is what tells the adjoint pass that a call updates an argument in place (its
    back then runs even with no cotangent, to undo the update; "if_active": only where a gradient flows)."""
    adjoint(updates_its_argument, updates=updates)(lambda a: (updates_its_argument(a), lambda dy: (dy,)))
    try:
        assert registry.is_mutating(updates_its_argument) == (updates is True)
        assert registry.is_mutating(updates_its_argument, active=True) == bool(updates)
    finally:
        registry.RULES.pop(updates_its_argument, None)
        registry.MUTATING.discard(updates_its_argument)
        registry.MUTATING_IF_ACTIVE.discard(updates_its_argument)
    for op in (operator.iadd, operator.imul, operator.ior):  # the built-in declarations
        assert registry.is_mutating(op, active=True) and not registry.is_mutating(op)


def test_no_built_in_table_replaces_another_tables_rule():
    """The later registration for a target wins, so two tables registering the same target would make a rule depend
    on the order the modules load in (complex.py and numpy/complex_parts.py both registered np.real, np.imag,
    np.conjugate and np.angle). A module may still replace its own rule (a table row, then a rule written out)."""
    across = [(t, old.__module__, new.__module__) for t, old, new in registry.REPLACED if old.__module__ != new.__module__]
    assert not across, across


def test_a_rule_registered_after_a_call_replaces_the_one_that_call_found():
    """J finds a built-in rule once and keeps it (`registry.STRAIGHT`); a later registration for the same target must
    be the one the next gradient uses, in the plain form (every optimisation off: each call goes through J) too."""
    def f(x):
        return np.sum(np.cos(x))
    x = np.array([0.2, 0.9])
    before = registry.RULES[np.cos], registry.SCALAR.get(np.cos), registry.ARRAY.get(np.cos), registry.FORWARD[np.cos]
    with zygotepy.optimizations(False):
        np.testing.assert_allclose(gradient(f, x)[0], -np.sin(x))
        assert np.cos in registry.STRAIGHT
        try:
            @adjoint(np.cos)
            def _(x):
                return np.cos(x), lambda dy: (dy * 7.0,)
            assert np.cos not in registry.STRAIGHT
            np.testing.assert_allclose(gradient(f, x)[0], [7.0, 7.0])
        finally:  # (the user's rule took the fast paths' and the tangent rule's entries too)
            registry.RULES[np.cos], registry.FORWARD[np.cos] = before[0], before[3]
            for table, entry in ((registry.SCALAR, before[1]), (registry.ARRAY, before[2])):
                if entry is not None:
                    table[np.cos] = entry
            registry._changed()
        np.testing.assert_allclose(gradient(f, x)[0], -np.sin(x))


# --- a user's rule declared need=True: its `back(dy, need)` has no default, on every path that calls it ----------

def _mulxy(x, y):
    return x * y


@adjoint(_mulxy, need=True)
def _mulxy_rule(x, y):
    def back(dy, need):
        return (dy * y if need[0] else None, dy * x if need[1] else None)
    return _mulxy(x, y), back


NEED_PATHS = {  # each raised "back() missing 1 required positional argument: 'need'"
    "star args": (lambda: gradient(lambda x, y: _mulxy(*(x, y)), 2.0, 3.0), (3.0, 2.0)),
    "partial": (lambda: gradient(lambda x: functools.partial(_mulxy, 4.0)(x), 2.0), (4.0,)),
    "map": (lambda: gradient(lambda xs: sum(map(_mulxy, xs, xs)), [1.0, 2.0]), ([2.0, 4.0],)),
    "reduce": (lambda: gradient(lambda xs: functools.reduce(_mulxy, xs), [1.0, 2.0, 3.0]), ([6.0, 3.0, 2.0],)),
    "keyword": (lambda: gradient(lambda x, y: _mulxy(x, y=y), 2.0, 3.0), (3.0, 2.0)),
    "passed in": (lambda: gradient(lambda x, y: (lambda g: g(x, y))(_mulxy), 2.0, 3.0), (3.0, 2.0)),
    "gradient of a gradient": (lambda: gradient(lambda x: gradient(lambda y: _mulxy(y, y), x)[0], 2.0), (2.0,)),
}


@pytest.mark.parametrize("path", NEED_PATHS)
def test_a_need_rule_is_given_need_on_every_path(path):
    run, want = NEED_PATHS[path]
    assert run() == want

"""The declarations of the methods that update their object in place (`lst.append(v)`, `a.sort()`, `s.add(k)`), and of
the library functions that update their first argument (`np.put(a, i, v)`, `np.add.at(y, i, v)`).

Two sides read them. The mutation rules (adjoints/mutation/methods.py) declare each such method with the rule that
runs it and undoes it, and find it here when a call runs. The compiler's lowering (ast_adjoint/lower/scan.py) reads
the declared names to know which calls give their object a new version: when it lowers `obj.pop()` it cannot know
`obj`'s type (a list's, a dict's or a user's method), so a name declared for any type counts. A method declared here
is seen by both.

Beside the registry, below the rule tables and the compiler, which both import it (tests/test_layers.py).
"""
import operator
import types

import numpy as np

# (type, method name) -> rule(obj, *args, **kwargs) -> (result, back(d_result, d_object_after) -> (d_object_before,
# *d_args)); None for a method that updates in place without a rule (a call where a gradient flows raises)
METHODS = {}
FUNCTIONS = set()  # library functions that update their first argument in place (every ufunc's `.at` too)
UNDECLARED = object()  # what `METHODS.get(key, UNDECLARED)` gives for a method nobody declared
_names = [None, None]  # the declared methods' and functions' names, worked out again after a declaration


def updates_in_place(cls, name):
    """Declare the decorated rule as how `cls.name(...)` runs and is undone; the method updates its object in place."""
    def declare(rule):
        METHODS[(cls, name)] = rule
        _names[0] = None
        return rule
    return declare


def updates_without_rule(cls, *names):
    """Declare methods of `cls` that update their object in place and have no rule: the lowering sees the update, and a
    call on an object that carries a gradient raises rather than running unseen (a set's holds none: it runs)."""
    for name in names:
        METHODS[(cls, name)] = None
    _names[0] = None


def updating_names():
    """The names of the declared methods: a call `obj.name(...)` of one may update `obj` in place. Dunder names are
    left out: the lowering writes `d.__setitem__(k, v)` as the store it is."""
    if _names[0] is None:
        _names[0] = frozenset(name for _, name in METHODS if not name.startswith("__"))
    return _names[0]


def updates_first_argument(*functions):
    """Declare library functions that update their first argument in place: the lowering makes a call of one an update
    of that argument wherever the call stands (`r = np.add.at(...)`, inside a comprehension), not only as a statement;
    the mutation rules run those they have a rule for and refuse the others where a gradient flows."""
    FUNCTIONS.update(functions)
    _names[1] = None


def unbound_method(fn):
    """`(cls, name)` when `fn` is a declared method taken from its class (`list.append`, `set.add`, `np.ndarray.fill`),
    which updates its first argument as `cls.name` updates its object; else None."""
    if type(fn) not in (types.MethodDescriptorType, types.WrapperDescriptorType):
        return None
    key = (fn.__objclass__, fn.__name__)
    return key if key in METHODS else None


def updates_first(fn):
    """Does the library function `fn` update its first argument in place (declared, a declared method taken from its
    class (`list.append(ys, v)`), or a ufunc's `.at`)?"""
    if getattr(fn, "__name__", "") == "at" and isinstance(getattr(fn, "__self__", None), np.ufunc):
        return True
    if unbound_method(fn) is not None:
        return True
    try:
        if fn in FUNCTIONS:
            return True
    except TypeError:  # (unhashable)
        return False
    return in_place_by_name(getattr(fn, "__name__", "")) and \
        str(getattr(fn, "__module__", None)).split(".")[0] == "torch"  # (`torch.exp_(y)`, `nn.init.normal_(w)`)


def in_place_by_name(name):
    """Does `name` follow torch's convention for what updates its tensor in place (`exp_`, `clamp_`, `zero_`)?"""
    return len(name) > 1 and name[-1] == "_" and name[-2] != "_" and name[0] != "_"


def updating_function_names():
    """The names of the declared functions (and `at`): a call `...name(...)` of one may update its first argument."""
    if _names[1] is None:
        _names[1] = frozenset({"at", *(fn.__name__ for fn in FUNCTIONS)})
    return _names[1]


_STORE_FUNCTIONS = (setattr, delattr, operator.setitem, operator.delitem, object.__setattr__, object.__delattr__)
_STORE_SLOTS = frozenset(("__setitem__", "__delitem__", "__setattr__", "__delattr__"))
_SLOT_TYPES = (type(list.__setitem__), type([].__setitem__))  # (a class's slot, and the slot bound to an object)


def store_callable(fn):
    """Is `fn` a store taken as a value: `setattr`, `operator.setitem`, `list.__setitem__`, `ys.__setitem__`, ...?
    Written as a call in the function (`setattr(o, k, v)`), a store is lowered as the store it is; reached as a value
    (given to `map`, kept in a name) it is C code updating its object, which no rule follows."""
    return any(fn is f for f in _STORE_FUNCTIONS) or type(fn) in _SLOT_TYPES and fn.__name__ in _STORE_SLOTS

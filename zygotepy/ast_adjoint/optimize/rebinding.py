"""When a guard on a global callee still proves what the code it guards assumes.

A guard tests that a global (`cell`, `np.sin`, `Cfg.act`) still names the function seen at transform time. That is not
enough in three cases, each handled here:

- The function object stays, its code does not: `g.__code__ = h.__code__`, which is how IPython's `%autoreload`
  updates a function in place. An inlined copy of `g`'s body (`ast_adjoint/speculate.py`) is used only while `g` also
  runs the code object it was copied from (`callee_test`).
- A callee from another module reads that module's globals; its inlined copy reads the caller's. The copy is used
  only while every global it reads names the same object in both modules (`names_agree`), so `cfg.scale = 4.0` after
  `from cfg import helper, scale` takes the call, which reads `cfg.scale` as Python does.
- A guard hoisted out of a loop is tested once, at entry. A loop whose body may rebind what the guard tests (a
  schedule `set_act(i)` storing `Cfg.act = cube`) must test it in every iteration: a guard is hoisted only out of a
  loop whose every call cannot run the user's code or store an attribute (`steady`): arithmetic and indexing,
  NumPy, `math`, a few builtins, and the lowering's own helpers. Any method call counts as the user's code
  (`sched.step()`, and so `hist.append(h)` too: the object's type is not known here). The operators, properties,
  `__repr__` and iterators of a user's class are taken as arithmetic is: one that rebinds a global is not looked for.
"""
import builtins
import operator

import numpy as np

from ...adjoints.registry import nondifferentiable
from .. import guards_runtime as gr
from .. import mutate as mt
from .. import runtime as rt
from ..analysis import callee_object
from ..ir import Assign, Call, Const, Global, If, Loop, walk

_MISSING = object()
_BUILTINS_DICT = vars(builtins)


def names_agree(fn, names, *values):
    """Does each global `names[i]` of `fn`'s module name `values[i]` (the caller's object of that name)? Builtins
    count when the module does not define the name. (The test before an inlined callee from another module.)"""
    home = fn.__globals__
    for name, value in zip(names, values):
        if home.get(name, _MISSING) is not value and (name in home or _BUILTINS_DICT.get(name, _MISSING) is not value):
            return False
    return True


nondifferentiable(names_agree)  # (a guard: an outer level runs it as a constant)


def callee_test(fn, target, caller_globals, roots):
    """The guard of an inlined copy of `target`'s body, called through the Global `fn`: `fn` still names `target`,
    which still runs the code copied, and, for a callee from another module, the globals `roots` it reads name the
    same objects there as in the caller's module, which the copy reads. Printed as one `and`: `fn.__code__` is read
    only where `fn` is the function."""
    tests = [Call(Const(rt.is_same), (fn, Const(target))),
             Call(Const(rt.is_same), (Global(fn.path + ".__code__"), Const(target.__code__)))]
    if target.__globals__ is not caller_globals and roots:
        names = tuple(sorted(roots))
        tests.append(Call(Const(names_agree), (Const(target), Const(names), *(Global(n) for n in names))))
    return Call(Const(rt.all_true), tuple(tests))


# --- loops whose body cannot rebind a global -------------------------------------------------------------------------

_BUILTINS = frozenset((len, range, abs, min, max, sum, float, int, bool, complex, round, isinstance, type, enumerate,
                       zip, reversed, tuple, list, dict, slice, divmod, pow, getattr, hasattr, print))
_HELPER_NAMES = ("tuple_of list_of dict_of set_of unpack unpack_starred splat splat_list contained_in not_contained_in "
                 "class_of append set_add dict_put flat_index format_value join_str is_scalar is_native is_same is_none "
                 "is_not_none all_true pick is_range number_value type_test raise_ raise_from assertion_failed "
                 "unreachable none_set any_set new_cell set_cell global_store isscalar global_read iterate").split()
_HELPERS = frozenset((*(getattr(rt, n, None) or getattr(gr, n) for n in _HELPER_NAMES),  # (the lowering's helpers)
                      mt.setitem, mt.delitem, mt.logged, mt.put_item, mt.refresh_iter))
_FORWARDING = frozenset((mt.mutcall, mt.splatcall, mt.objectcall))  # (`mutcall(f, *args)` calls `f`)
_CALLING_BACK = frozenset((np.apply_along_axis, np.apply_over_axes, np.piecewise, np.fromfunction))


def _inert(fn):
    """Can a call of `fn` (an object) not run the user's code nor store an attribute? (Operators, indexing and
    NumPy's functions of a user's class are taken as arithmetic: see the module docstring.)"""
    try:
        if fn in _BUILTINS or fn in _HELPERS:
            return True
        if fn in _CALLING_BACK:
            return False
    except TypeError:  # an unhashable callee
        return False
    if type(fn) is np.ufunc or isinstance(fn, type) and issubclass(fn, BaseException) and fn.__module__ == "builtins":
        return True
    module = getattr(fn, "__module__", None) or ""
    return module in ("_operator", "operator", "math", "cmath") and fn is not getattr(operator, "call", None) \
        or module.split(".")[0] == "numpy" and callable(fn)


def _calls(stmt):
    """The calls statement `stmt` makes itself (nested calls in its arguments included)."""
    values = [stmt.value] if isinstance(stmt, Assign) else [stmt.iter, stmt.cond, stmt.exit] \
        if isinstance(stmt, Loop) else [stmt.cond] if isinstance(stmt, If) else []
    found = []
    while values:
        v = values.pop()
        if isinstance(v, Call):
            found.append(v)
            values += [*v.args, *(x for _, x in v.kwargs), *([v.star] if v.star is not None else [])]
    return found


def steady(loop, globals_):
    """Can nothing the loop runs (its iterable, condition and body) rebind a global or an attribute that a guard
    hoisted before it tests? Only then is such a guard tested once, at entry (see the module docstring)."""
    for s in walk([loop]):
        for call in _calls(s):
            fn = callee_object(call.fn, globals_)
            if fn in _FORWARDING and call.args:
                fn = callee_object(call.args[0], globals_)
            if fn is None or not _inert(fn) or fn in _BUILTINS and (call.kwargs or call.star is not None):
                return False
    return True

"""Helpers that generated code calls: the lowering's primitives (displays, unpacking, iteration, cells, with blocks,
flags), and, re-exported from their modules, the backward's bookkeeping (`accumulate.py`: None-aware accumulation,
closure-free pullback objects) and the tests of values (`guards_runtime.py`: type guards, `differentiable`).

Each primitive is an ordinary Python function, so the adjoint pass treats it like any callee; the rules that give the
differentiable ones their gradients live in `zygotepy/adjoints/structures/`. Generated code and the rules reach every
helper as `rt.<name>` (this module, imported as `rt`): a helper keeps its identity wherever it is defined.
"""
import importlib
import importlib.util
import operator
import types

import numpy as np

from ..backends import is_array_type, unbroadcast
from ..errors import ForwardModeError, UnsupportedSyntax, ZygoteError
from ..runtime.context import current
from ..structgrad import NoDerivative  # noqa: F401 (re-exported: rt.NoDerivative)
from ..runtime.snapshots import fields, first_updated, state
from .accumulate import (  # noqa: F401 (re-exported: rt.acc, rt.sole, ...)
    REUSE_BYTES,
    DroppedKeyword,
    Pullback,
    acc,
    acc_scalar,
    acc_var,
    closure_cotangent,
    field,
    iter_cotangent,
    kwarg_cotangent,
    owned,
    settled,
    sole,
    star_cotangent,
)
from .lazy_watch import (  # noqa: F401
    LazyWatch, bounded_generator, kept_iterator, lazy_changed, lazy_unchanged, watch_lazy)
from .mutate import ATOMIC
from .guards_runtime import (  # noqa: F401 (re-exported: rt.is_scalar, rt.differentiable, ...)
    FROM_GENERATOR,
    NATIVE,
    SCALARS,
    UNBOUND,
    all_true,
    any_array,
    check_bound,
    class_of,
    differentiable,
    is_complex_like,
    is_native,
    is_none,
    is_not_none,
    is_range,
    is_real_array,
    is_real_data,
    is_real_matrix,
    is_real_value,
    is_real_vector,
    is_same,
    is_scalar,
    note_generator_manager,
    pick,
    refuse_eager_items,
)


class _Itself:
    """What a recursive nested function's cell of its own name holds when it is made: the function itself, bound
    just after (`make_closure`'s values; call_checks.check_cells)."""
    def __repr__(self):
        return "ITSELF"


ITSELF = _Itself()


# --- lowering primitives -----------------------------------------------------------------------------------------------

def tuple_of(*items):
    return items


def list_of(*items):
    return list(items)


def dict_of(*flat):
    return dict(zip(flat[::2], flat[1::2]))


def dict_merge(*parts):
    """`{**a, "k": v, **b}` as one step: the mappings (a display's plain pairs come as dicts) merged left to right,
    a later part winning a key both have, at the place the key first appeared (Python's order)."""
    return {k: p[k] for p in parts for k in p.keys()}


def unpack(value, n):
    """`a, b = value` as one step: a tuple of the `n` items of `value` (ValueError like Python's otherwise)."""
    items = tuple(value)
    if len(items) != n:
        raise ValueError(f"{'too many' if len(items) > n else 'not enough'} values to unpack (expected {n})")
    return items


def splat(stars, *items):
    """`(a, *b, c)` as one step: the items flagged in `stars` are iterables whose entries are spliced in."""
    out = []
    for star, item in zip(stars, items):
        if star:
            out.extend(item)
        else:
            out.append(item)
    return tuple(out)


def splat_list(stars, *items):
    """`[a, *b, c]`."""
    return list(splat(stars, *items))


def unpack_starred(value, before, after):
    """`a, *b, c = value` as one step: `(a, [b...], c)` for `before` = 1 and `after` = 1."""
    items = tuple(value)
    if len(items) < before + after:
        raise ValueError(f"not enough values to unpack (expected at least {before + after}, got {len(items)})")
    return (*items[:before], list(items[before:len(items) - after]), *items[len(items) - after:])


def unreachable(what, filename, line):
    """A nested function or class in code CPython dropped as unreachable, which it never makes: reached all the same,
    the lowering went wrong, and says so."""
    raise ZygoteError(f"{filename}:{line}: zygotepy reached {what}, whose code CPython dropped as unreachable; "
                      f"please report this")


def flat_index(x, index):
    """The index of `x` that `x.flat[index]` reads or writes (`K.flat[::n + 1] += s`, a diagonal): the positions in
    C order, as arrays of `x`'s axes. Generated code indexes `x` itself, whose updates and gradients are followed."""
    if type(x) is not np.ndarray:
        raise ZygoteError(f"zygotepy follows `.flat[...]` of a NumPy array only, not of {type(x).__name__}; index "
                          f"the object itself")
    if isinstance(index, np.ndarray) and index.dtype == bool:
        index = index.ravel()
    return np.unravel_index(np.arange(x.size)[index], x.shape)



def iterate(iterable):
    """What a `for` loop walks: sequences as they are; an iterator that cannot tell how many items it has left
    (`itertools.count`, a generator, zip or map over one, a class that is its own iterator) as it is too, its items
    taken as the loop reaches them, as Python's are (it may be endless, left by `break`); anything else (a dict, a
    set, an iterator over a sequence such as zygotepy's `Items`) materialised."""
    if isinstance(iterable, (list, tuple, range, np.ndarray, str)):
        return iterable
    if hasattr(type(iterable), "__next__") and operator.length_hint(iterable, -1) < 0:
        return iterable
    return list(iterable)


def captured_updated(old, new, name, file, line):
    """After `y *= v` on a name a nested function captures: refused where it updated the object in place (an array,
    a list), whose new version the closure's derived code cannot follow; a number or a tuple is a new object, which
    the closure's cell holds as Python's does."""
    if new is old and not isinstance(old, ATOMIC):
        raise UnsupportedSyntax(f"updating '{name}' in place, which a nested function captures", file, line,
                                hint="give the updated value a name of its own (`y2 = y * v`), or pass it to the "
                                "function as an argument")


def view_refreshed(view, mapping, method):
    """`vals = d.values()` (or `d.items()`) kept in a name, after `d` was updated in place: Python's view shows the
    dict as it is now. The rules of `values` and `items` make lists, which this makes again (its rule routes their
    cotangents to the dict's new version); a real view is live already."""
    return list(getattr(mapping, method)()) if type(mapping) is dict and type(view) is list else view


def callobject(obj, *args, **kwargs):
    """`cell(x)` on a local name, where some class's `__call__` may update its object (`self.h = ...`): the callee
    as an argument, so that the call can give it a new version (`mutate.valuecall`'s rule, adjoints/mutation/calls.py)."""
    return obj(*args, **kwargs)


def callmethod(obj, name, *args, **kwargs):
    """`obj.name(*args)`: a method call as one operation, so the rule can differentiate `obj` and the arguments."""
    return getattr(obj, name)(*args, **kwargs)


def contained_in(a, b):
    return a in b


def not_contained_in(a, b):
    return a not in b


def none_set(*flags):
    """True when none of the jump flags (break/continue/return) is set: the rest of a block runs."""
    for f in flags:
        if f:
            return False
    return True


def any_set(*flags):
    return not none_set(*flags)


def new_cell():
    return types.CellType()


def set_cell(cell, value):
    cell.cell_contents = value


def make_closure(code, globals_, cells, defaults, kwdefaults, *values):
    """A nested def/lambda, built from the user's own code object so that its source stays readable. `values` are the
    cells' contents (one per free variable): unused here, they carry the data flow for nested differentiation, whose
    rule (adjoints/nesting/helper_rules.py) gives them the closure's cotangent."""
    fn = types.FunctionType(code, globals_, code.co_name, defaults, cells)
    fn.__kwdefaults__ = kwdefaults
    if defaults:
        fn.__zygote_defaults__ = True  # a call leaving a parameter to its default gives the default its cotangent
    if values:
        fn.__zygote_made__ = values  # what the cells held: their cotangents go there (see call_checks.check_cells)
    if values or defaults:
        fn.__zygote_mark__ = len(current().log)  # (and which updates in place came after)
    return fn


def recursive_closure(fn, name):
    """A nested function that calls itself through its cell `name`: the function as it is. Its rule folds the
    cotangents its calls of itself nest in the closure's cotangent (entry `name`, and that entry's, ...) into one."""
    return fn


def import_name(package, module, name, level):
    """An `import` statement inside differentiated code, run where Python would run it: `import a.b` binds `a`
    (`name` None), `import a.b as c` binds `a.b` (`name` ""), `from .m import x` binds `x`; relative to `package`."""
    path = importlib.util.resolve_name("." * level + module, package) if level else module
    mod = importlib.import_module(path)
    if name is None:
        return importlib.import_module(path.partition(".")[0])
    if not name:
        return mod
    try:
        return getattr(mod, name)
    except AttributeError:  # a submodule not imported yet (`from os import path` finds it; `from pkg import sub`)
        try:
            return importlib.import_module(f"{path}.{name}")
        except ModuleNotFoundError:
            raise ImportError(f"cannot import name {name!r} from {path!r}") from None


def enter(manager):
    """`with manager:` in generated code: Python's `__enter__`, remembered so that an exception can leave it (and, for
    a manager that held no gradient, its fields after it: adjoints/contexts.py `leave`)."""
    inert = not differentiable(manager)
    note_generator_manager(manager)
    value = type(manager).__enter__(manager)
    entered(manager, inert)
    return value


def entered(manager, inert):
    """A with block's manager was entered: kept to be left (this thread's blocks entered and not yet left, innermost
    last), and, where it held no gradient before its `__enter__` (`inert`), its fields after it."""
    ctx = current()
    ctx.contexts.append(manager)
    if inert:
        ctx.inert_managers[id(manager)] = (fields(manager), len(ctx.log))


def leave(manager):
    current().contexts.pop()
    type(manager).__exit__(manager, None, None, None)


def unwind(mark, exc):
    """Leave, innermost first, the with blocks entered since `mark` that `exc` is escaping, passing it to `__exit__`
    as Python would. Generated code cannot resume after a block, so a manager that suppresses the exception is
    refused with a ZygoteError; an exception raised by `__exit__` replaces `exc`, as in Python."""
    contexts = current().contexts
    while len(contexts) > mark:
        manager = contexts.pop()
        try:
            suppressed = type(manager).__exit__(manager, type(exc), exc, exc.__traceback__)
        except Exception as raised:
            exc = raised
            continue
        if suppressed:
            exc = ZygoteError(f"{type(manager).__name__}.__exit__ suppressed {type(exc).__name__}: zygotepy cannot "
                              f"differentiate a with block that swallows an exception")
    return exc


def attempt(fn, caught, named, *args):
    """`try: fn(*args)` for generated code (lower/tries.py): `(True, result)`, or `(False, exception)` where `fn`
    raised an instance of `caught` (a tuple of exception types, one per handler; `named`: which handlers bind the
    exception to a name). Its rule (adjoints/control.py) differentiates `fn`; this is the call as it is, which
    refuses updates of the arguments as the rule does."""
    before, mark = [state(a) for a in args], len(current().eager_items)
    try:
        result = fn(*args)
    except BaseException as exc:
        refuse_eager_items(mark, exc)
        if not isinstance(exc, caught) or isinstance(exc, ZygoteError):  # (zygotepy's refusals are never the user's)
            raise
        refuse_try_update(fn, args, before)
        return False, exc
    refuse_try_update(fn, args, before)
    return True, result


def refuse_try_update(fn, args, before):
    """A `try` body that updated one of the variables it reads in place: the code around it takes the body as reading
    them (a gradient to the update would be lost), so that is refused, naming the body's line and the variable."""
    k = first_updated(args, before)
    if k is not None:
        code = fn.__code__
        raise UnsupportedSyntax(f"a try whose body updates '{code.co_varnames[k]}' in place", code.co_filename,
                                code.co_firstlineno, "update it after the try, or update a copy")


def raise_(exc):
    raise exc


def raise_from(exc, cause):
    raise exc from cause


def assertion_failed(msg):
    raise AssertionError(msg) if msg is not None else AssertionError()


def format_value(value, conversion, spec):
    if conversion == 115:
        value = str(value)
    elif conversion == 114:
        value = repr(value)
    elif conversion == 97:
        value = ascii(value)
    return format(value, spec)


def join_str(*parts):
    return "".join(parts)


def item_cotangents(dy, index, value):
    """`x[i] = v`'s cotangents from a cotangent `dy` of the new `x` that is not a real array (a complex one)."""
    dx = dy.copy()
    dx[index] = 0
    return dx, None, unbroadcast(dy[index], value) if not isinstance(value, bool) else None


def global_store(obj, name, where, key, value):
    """`NAME[key] = value` on a module global container, in differentiated code (lower/updates.py, global_item): a value
    that carries no gradient (a call counter, a flag, data) is stored, as plain Python would; one that does is refused,
    since its gradient could not reach its sources through a global (and any later read of it would get none)."""
    if differentiable(value):
        raise UnsupportedSyntax("updating a global or constant object in place with a value that carries a gradient",
                                *where, f"pass '{name}' as an argument, or work on a copy")
    obj[key] = value


def global_attr_store(obj, name, where, attr, value):
    """`NAME.attr = value` (or `NAME.attr += value`) on a module global (a class, a module, an object): stored as
    plain Python would where `value` carries no gradient (a count of instances made), refused otherwise, as
    `global_store` does."""
    if differentiable(value):
        raise UnsupportedSyntax(f"storing a value that carries a gradient into {name}.{attr}", *where,
                                f"keep it in a local variable, or pass '{name}' as an argument")
    setattr(obj, attr, value)


def foreign_rule(args):
    """The rule hook of a number type of zygotepy's own among `args` (forward mode's dual numbers, which `math`'s C
    code would convert with float(), dropping their derivative), or of a user's class whose `__float__` is Python
    (`math.sin(obj)`: converted as `float(obj)` is, `USER_NUMBER_HOOK`), or None."""
    for a in args:
        if type(a) not in _PLAIN_NUMBERS:
            hook = getattr(type(a), "__zygote_rule__", None)
            if hook is not None:
                return hook
            if type(getattr(type(a), "__float__", None)) is types.FunctionType and not is_array_type(type(a)):
                return USER_NUMBER_HOOK[0]  # (an array library's Python `__float__`: its rules' business)
    return None


USER_NUMBER_HOOK = [None]  # set by adjoints/scalar.py: `hook(fn, *args)` for a math function of a user's number


_PLAIN_NUMBERS = frozenset((int, float, bool))


def number_value(fn, *args):
    """`fn(*args)`, a `math` function no gradient flows through: the C function on Python numbers; a number type of
    zygotepy's own (forward mode's duals: hessian, nested gradients by forward-over-reverse), which the C function
    would convert with float() and refuse (ForwardModeError), goes through that type's rule hook. (The call comes
    first: math.sin of a float measured 84 ns called directly, 115 ns through this, 444 ns when the hook was looked
    up before the call.)"""
    try:
        return fn(*args)
    except ForwardModeError:
        hook = foreign_rule(args)
        if hook is None:
            raise
        return hook(fn, *args)[0]


def type_test(fn, obj, *rest):
    """`isinstance(x, float)` or `type(x)` of a value a gradient flows through: hessian's forward-over-reverse (and a
    nested gradient by dual numbers) runs this code on dual numbers, which stand for the numbers they carry, so the
    test sees those (forward mode's own calls strip them too): a branch on it takes the path the plain call takes."""
    while getattr(type(obj), "__zygote_number__", False):  # (a dual number of forward mode, of any level)
        obj = obj.primal
    return fn(obj, *rest)


def append(lst, value):
    """A comprehension's accumulator step: the list is fresh and private, so appending in place is safe."""
    lst.append(value)
    return lst


def set_of(*items):
    return set(items)


def set_add(s, value):
    """A set comprehension's accumulator step (the set is fresh and private)."""
    s.add(value)
    return s


def dict_put(d, key, value):
    d[key] = value
    return d

"""The tests generated code makes of values at run time: the type guards of the fast paths (the emitter prints most of
them inline; their bodies here serve nested differentiation), None tests, and `differentiable`, whether a value can
carry a gradient; and `kept_lookup`, the check before a read of a memo (ast_adjoint/kept_lookups.py).

Part of the runtime layer (tests/test_layers.py); `runtime.py` re-exports these names, which generated code and the
rules reach as `rt.<name>`.
"""
import collections
import contextlib
import functools
import sys
import types

import numpy as np

from ..backends import is_array_type
from ..errors import UnsupportedSyntax, ZygoteError
from ..forward.dual import Dual, strip
from ..runtime.context import current


SCALARS = frozenset((int, float, bool, np.float64))  # types the inlined scalar derivatives are valid for (never complex)


def is_scalar(x):
    return type(x) in SCALARS


def class_of(x):
    """`x.__class__`: a dual number's (hessian's reverse pass runs on them) is its value's, as `type(x)`'s is."""
    return type(strip(x)) if type(x) is Dual else x.__class__


class _Unbound:
    """The value of a name on a path where Python would not have bound it (an arm of an `if`, or a loop's body that
    did not run, assigned it): the lowering's joins give it to the other path (lower/control.py)."""
    def __repr__(self):
        return "UNBOUND"


UNBOUND = _Unbound()


def check_bound(value, name):
    """The test before a read of a name that some path leaves unbound (lower/expressions.py `checked_read`): Python's
    own error where it is unbound now, instead of the placeholder flowing on into arithmetic or a list."""
    if value is UNBOUND:
        raise UnboundLocalError(_UNBOUND_MESSAGE.format(name))


_UNBOUND_MESSAGE = "cannot access local variable '{}' where it is not associated with a value" \
    if sys.version_info >= (3, 11) else "local variable '{}' referenced before assignment"  # (Python's own words)


def pick(cond, a, b):
    """`a if cond else b`; the emitter prints it as that expression (only the chosen side is computed)."""
    return a if cond else b


# the array fast path's guards (ast_adjoint/optimize/array_paths.py): real NumPy arrays, with real numbers mixed in
def is_real_array(x):
    return type(x) is np.ndarray and x.dtype.kind == "f"


def any_array(*xs):
    return any(type(x) is np.ndarray for x in xs)


def is_real_value(x):
    return type(x) is np.float64 or type(x) is np.ndarray and x.dtype.kind == "f"


def is_real_matrix(x):
    return type(x) is np.ndarray and x.ndim == 2 and x.dtype.kind == "f"


def is_real_vector(x):
    return type(x) is np.ndarray and x.ndim == 1 and x.dtype.kind == "f"


def is_real_data(x):
    return type(x) in SCALARS or type(x) is np.ndarray and x.dtype.kind in "fbiu"


NATIVE = frozenset((int, float, bool, complex, np.ndarray, np.float64, np.float32, np.complex128, np.int64, tuple,
                    list, dict, str, slice, type(None)))


def is_native(x):
    """A Python number or container, or a NumPy array or scalar: an operator on it means what the rules say."""
    return type(x) in NATIVE


def is_range(x):
    return type(x) is range


def all_true(*conds):
    return all(conds)


def is_same(a, b):
    return a is b


def is_none(x):
    return x is None


def is_not_none(x):
    return x is not None


def is_complex_like(x):
    dtype = getattr(x, "dtype", None)
    return type(x) is complex or (dtype is not None and getattr(dtype, "kind", "") == "c")


_FLOAT_KINDS = frozenset("fc")


def differentiable(x, depth=3):
    """Does `x` hold a value a gradient can flow through (floats, complex, float arrays, containers of them)?
    Ints and bools are data here: a call that receives only them runs as a constant. The first `depth` levels are
    looked at directly; a structure deeper than that (a list of layers holding parameter objects) is walked whole,
    each object once, since a False here lets a call run as a constant: its gradient would be lost."""
    t = type(x)
    if t is float or t is np.ndarray:  # (the common cases first, asked without a call)
        return t is float or x.dtype.kind in _FLOAT_KINDS
    if t is int or t is bool or x is None:
        return False
    if (t is tuple or t is list) and depth:
        return any(differentiable(v, depth - 1) for v in x)
    known = _leaf(x)
    if known is not None:
        return known
    if not depth:
        return _held_deeper(x)
    return any(differentiable(v, depth - 1) for v in _parts(x))


def _held_deeper(x):
    """`differentiable` of a structure past its quick look's depth: all of it, each object once (parents, cycles)."""
    seen, work = set(), [x]
    while work:
        v = work.pop()
        known = _leaf(v)
        if known:
            return True
        if known is None and id(v) not in seen:
            seen.add(id(v))
            work.extend(_parts(v))
    return False


def _leaf(x):
    """True or False where `x` itself says whether it carries a gradient; None for a structure to look into."""
    t = type(x)
    if t is float or t is complex:
        return True
    if t is int or t is bool or t is str or x is None or isinstance(x, type):  # (jnp.float64 has a float dtype)
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", None) in _FLOAT_KINDS or "float" in str(dtype) or "complex" in str(dtype)
    if isinstance(x, (list, tuple, set, frozenset, collections.deque, dict)) or hasattr(x, "__dict__") and not \
            isinstance(x, (types.ModuleType, types.FunctionType)):
        return None
    return False


def _parts(x):
    """The values a container or an object holds (`_leaf` said it is one)."""
    if isinstance(x, dict):
        return x.values()
    if isinstance(x, (list, tuple, set, frozenset, collections.deque)):
        return x
    return vars(x).values()


def reads_gradients(fn, seen=None):
    """Does the function `fn` read a value that carries a gradient from its closure or its defaults (`def T(n):
    return a * n` called as `T(2)`, `defaultdict(lambda: x * 2)`: its result depends on `a`, `x`)? A bound method's
    object counts too, as do a partial's arguments, a callable object's fields, and a function its closure holds that
    reads one (`lambda x: g(f(x))`)."""
    if type(fn) is types.MethodType:
        return differentiable(fn.__self__) or reads_gradients(fn.__func__, seen)
    if type(fn) is functools.partial:  # (its arguments, then its function)
        return differentiable((fn.args, fn.keywords)) or reads_gradients(fn.func, seen)
    if type(fn) is not types.FunctionType:  # a callable object: its fields (not a class, nor a C function)
        return hasattr(fn, "__dict__") and not isinstance(fn, type) and differentiable(fn)
    seen = seen or set()
    seen.add(id(fn))
    for cell in fn.__closure__ or ():
        try:
            held = cell.cell_contents
        except ValueError:  # (an empty cell)
            continue
        if differentiable(held) or callable(held) and id(held) not in seen and reads_gradients(held, seen):
            return True
    return any(differentiable(d) for d in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()))


def carries_gradient(x):
    """`differentiable(x)`, or a callable reading a gradient (`reads_gradients`), or a list, tuple or dict holding one
    (`functools.reduce(compose, [np.sin, lambda t: t * a])`): may a call given `x` depend on a gradient?"""
    if differentiable(x) or callable(x) and reads_gradients(x):
        return True
    items = x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple)) else ()
    return any(callable(v) and reads_gradients(v) for v in items)


def kept_lookup(container, key, where):
    """Before `container[key]` (or `.get(key)`) in differentiated code, where `container` was kept outside the function
    (a closure's or a module's dict: a memo) and `key` may carry a gradient: refused when the key is a real or complex
    number, or an array of them, and the dict was not updated in this differentiated call, so its entry was computed
    before it (the gradient through the entry's value would be silently lost)."""
    if isinstance(container, dict) and _real_key(key):
        ctx = current()
        if ctx.depth and id(container) not in ctx.log:
            raise ZygoteError(f"{where[0]}:{where[1]}: zygotepy cannot differentiate reading a dict kept outside the "
                              f"function (a memo) by a key that carries a gradient: its entry was computed before "
                              f"this call, and the gradient through it would be lost; compute the value (or clear the "
                              f"memo) inside the differentiated call")


def isscalar(x):
    """`np.isscalar(x)` of the value a dual number carries, which the lowering calls for `np.isscalar`: hessian's
    reverse pass runs on dual numbers, and NumPy's own answer for one is False (the array branch, silently)."""
    return np.isscalar(strip(x))


def _real_key(key, depth=0):
    """Is `key` a real or complex number, an array of them, or a tuple or frozenset holding one (`memo[(n, t)]`)?"""
    if isinstance(key, (float, complex, np.inexact)) or isinstance(key, np.ndarray) and key.dtype.kind in "fc":
        return True
    return isinstance(key, (tuple, frozenset)) and depth < 4 and any(_real_key(k, depth + 1) for k in key)


def global_method(obj, name, method, where, *args, **kwargs):
    """`NAME.method(*args)` on a module global container `NAME` (a list, dict or set): runs it and notes the update,
    so a later read of the container in the same differentiated call raises (`global_read`) instead of giving its
    reads no gradient. `where` is (file, line) of the update."""
    ctx = current()
    if ctx.depth:
        if method in _READS_BACK:  # (`STACK.append(v)`, then `STACK.pop()`: a read of what was updated)
            global_read(obj, name, where)
        if method in _BY_KEY and args:  # (`MEMO.pop(t)`, `MEMO.setdefault(t, v)`: a memo read by the key)
            kept_lookup(obj, args[0], where)
        if method == "setdefault" and len(args) > 1 and differentiable(args[1]):
            raise ZygoteError(f"{where[0]}:{where[1]}: zygotepy cannot differentiate {name}.setdefault(key, value) "
                              f"on a module global with a value that carries a gradient (what it gives back is "
                              f"taken as data); write `if key not in {name}: {name}[key] = value`, or use a local dict")
        ctx.global_updates[id(obj)] = (name, where)
    return getattr(obj, method)(*args, **kwargs)


_READS_BACK = frozenset(("pop", "popitem", "popleft"))  # (the updating methods that give back an item)
_BY_KEY = frozenset(("pop", "setdefault"))  # (a dict's that give back the entry of a key)


def global_read(obj, name, where):
    """A read of the module global container `NAME` in differentiated code: refused if the same differentiated call
    already updated it in place (the updated items' gradients could not reach their sources)."""
    ctx = current()
    if ctx.depth and (ctx.global_updates or ctx.log):
        key = id(obj)
        if key in ctx.global_updates or key in ctx.log:
            file, line = where
            _, (ufile, uline) = ctx.global_updates.get(key, (name, (None, None)))
            upd = f" at {ufile}:{uline}" if uline is not None else ""
            raise ZygoteError(
                f"{file}:{line}: zygotepy cannot differentiate reading the global '{name}' after it was updated in "
                f"place{upd} in the same differentiated call (its reads would get no gradient); pass it as an "
                f"argument or use a local container")
    return obj


_COMPARISON_SIGNS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def compared(op, a, b, where):
    """`op(a, b)` for a comparison whose result is used as a value and may carry a gradient
    (ast_adjoint/compare_checks.py): refused where a user's object answers with a value that can carry one."""
    y = op(a, b)
    if type(y) is bool or type(y) is np.bool_ or not differentiable(y):
        return y
    for v in (a, b):
        t = type(v)
        if t not in NATIVE and not is_array_type(t) and not getattr(t, "__zygote_number__", False):
            sign = _COMPARISON_SIGNS[op.__name__]
            raise ZygoteError(f"{where[0]}:{where[1]}: the comparison `{sign}` of a {t.__name__} answers a "
                              f"{type(y).__name__}, not a truth value: zygotepy takes a comparison as data (no "
                              f"gradient), so the gradient through {t.__name__}'s comparison method would be lost; "
                              f"give that computation a name of its own (a method such as `a.soft_less(b)`, or a "
                              f"function) and call it")
    return y


def kept_iterator_taken_in_part(value, name, file, line):
    """Before `any(...)`, `all(...)` or `next(...)` of a generator expression over `name`, or a generator expression
    or a call of zip, map, enumerate, ... over it kept in a name, where the function reads `name` again later: refused
    where it is an iterator (`it = iter(xs)`). zygotepy computes a generator's items when it is made, which uses the
    iterator up, where Python takes only the items asked for: the later reads would see other items (a list walked so
    is left as it is; an argument that is no iterable, itertools.accumulate's function, is no iterator)."""
    if _iterator(value):
        raise UnsupportedSyntax(f"a lazy iterator over the iterator {name!r} (a generator expression, zip, map, "
                                f"enumerate, iter, ...), which may take it in part, then {name!r} read again",
                                file, line, hint=f"make {name!r} a list (list(...)), or take its items in a loop")


def _iterator(value):
    try:
        return iter(value) is value
    except TypeError:
        return False


def iterator_taken_in_its_loop(value, name, file, line, read_line):
    """Before a loop over `name` whose body reads `name` too (`for v in it: w = next(it, 1.0)`, `sum(it)`, an inner
    loop over it): refused where it is an iterator. zygotepy's loop takes all of the iterator's items when it begins,
    Python one per iteration, leaving the rest to the body (the value and the gradient differed; `next(it)` raised
    StopIteration). A list walked so is left as it is."""
    if _iterator(value):
        raise UnsupportedSyntax(f"a loop over the iterator {name!r} whose body takes from {name!r} too (line "
                                f"{read_line})", file, line, hint=f"zygotepy's loop takes all of the iterator's items "
                                f"when it begins, Python one per iteration: make {name!r} a list and walk it by "
                                f"index, or take the items with next() in a while loop")


FROM_GENERATOR = type(contextlib.contextmanager(lambda: (yield))())  # a `@contextlib.contextmanager` function's


def note_generator_manager(manager):
    """Before a with block enters `manager`: where it is made by a `@contextlib.contextmanager` function, that function
    and its arguments, which its `__enter__` forgets, kept for the block's end (adjoints/contexts.py `leave`)."""
    if type(manager) is FROM_GENERATOR and hasattr(manager, "func"):
        current().generator_managers[id(manager)] = (manager.func, manager.args, manager.kwds)


def eager_items(file, line):
    """Before zygotepy computes every item of a generator expression that Python may take in part (`next(...)`,
    `any(...)`, kept in a name): noted, so that an exception an item raises is not taken for one Python raises."""
    current().eager_items.append((file, line))


def eager_items_done():
    current().eager_items.pop()


def refuse_eager_items(mark, exc):
    """Where a `try` body raised `exc` while a generator expression computed its items (more notes than `mark`, the
    count when the body began): refused, since Python may never have computed that item (a handler would run where
    Python's does not)."""
    notes = current().eager_items
    if len(notes) > mark:
        file, line = notes[mark]
        del notes[mark:]
        raise UnsupportedSyntax(f"an item of a generator expression that may be taken in part raised "
                                f"{type(exc).__name__} inside a try", file, line,
                                hint="zygotepy computes every item when the generator is made, Python only those "
                                     "taken: take the items in a loop, or keep them from raising") from exc

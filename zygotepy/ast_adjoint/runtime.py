"""Helpers that generated code calls: the lowering's primitives (displays, unpacking, iteration, cells, flags) and the
backward's bookkeeping (None-aware accumulation, closure-free pullback objects).

Each primitive is an ordinary Python function, so the adjoint pass treats it like any callee; the rules that give the
differentiable ones their gradients live in `zygotepy/adjoints/structures.py`.
"""
import sys
import types

import numpy as np

from ..backends import unbroadcast
from ..errors import ForwardModeError
from ..options import OPTIONS
from ..runtime.context import current
from ..structgrad import StructGrad

SCALARS = frozenset((int, float, bool, np.float64))  # types the inlined scalar derivatives are valid for (never complex)


class _Unbound:
    """The value of a name on a path where Python would not have bound it."""
    def __repr__(self):
        return "UNBOUND"


UNBOUND = _Unbound()


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


def iterate(iterable):
    """What a `for` loop walks: sequences as they are, anything else (iterators, generators) materialised."""
    if isinstance(iterable, (list, tuple, range, np.ndarray, str)):
        return iterable
    return list(iterable)


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
    rule (adjoints/nesting.py) gives them the closure's cotangent."""
    fn = types.FunctionType(code, globals_, code.co_name, defaults, cells)
    fn.__kwdefaults__ = kwdefaults
    if values:
        fn.__zygote_made__ = values  # what the cells held: their cotangents go there (see dispatch.check_cells)
    return fn


def enter(manager):
    """`with manager:` in generated code: Python's `__enter__`, remembered so that an exception can leave it."""
    value = type(manager).__enter__(manager)
    current().contexts.append(manager)  # (this thread's with blocks entered and not yet left, innermost last)
    return value


def leave(manager):
    current().contexts.pop()
    type(manager).__exit__(manager, None, None, None)


def unwind(mark, exc):
    """Leave, innermost first, the with blocks entered since `mark` that `exc` is escaping, passing it to `__exit__`
    as Python would. Generated code cannot resume after a block, so a manager that suppresses the exception is
    refused with a ZygoteError; an exception raised by `__exit__` replaces `exc`, as in Python."""
    from ..errors import ZygoteError
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


def raise_(exc):
    raise exc


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


# --- backward bookkeeping ----------------------------------------------------------------------------------------------



def acc_var(d, g):
    """Generated code's `dx = _acc(dx, g)`: `acc`, but when the array of `dx` is held by that variable alone (`owned`)
    the sum goes into it in place, so a loop accumulating a weight's cotangent makes no new array per iteration. The
    same result bit for bit: same dtype, same shape, the same additions. Rules call `acc`, which never updates."""
    if type(d) is np.ndarray and type(g) is np.ndarray and g.dtype is d.dtype and g.shape == d.shape \
            and OPTIONS.acc_in_place and owned(d):
        d += g
        return d
    return acc(d, g)


def acc(a, b):
    """Add two cotangents where None means zero; containers and structural gradients add entry by entry."""
    if a is None:
        return b
    if b is None:
        return a
    ta = type(a)
    if ta is tuple or ta is list:
        return ta(acc(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        out = type(a)(a)
        for k, v in b.items():
            out[k] = acc(out.get(k), v)
        return out
    return a + b


def _sole_holder_count():
    """What `sole` sees for an array that only the caller's one local variable holds, measured in the very call shapes
    it serves (a local of generated code passed to a rule's `back(dy, need, *into)`, which asks `sole(dy)` or
    `sole(into[k])`): CPython versions count the references of frames and of the value stack differently, so the
    number is measured, never assumed. The smaller of the two, so that neither shape can pass with a second holder."""
    def back(dy, need=None, *into):
        return min(_probe(dy), _probe(into[0]))

    def generated_code():
        dy, dx = np.empty(2), np.empty(2)
        return back(dy, None, dx)
    if not hasattr(sys, "getrefcount") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return 0  # no reference counts to trust (another implementation, or a free-threaded build): never in place
    return generated_code()


def _probe(a):  # the same frame as `sole`'s and `owned`'s: one parameter, counted by getrefcount
    return sys.getrefcount(a)


def _acc_holder_count():
    """What `owned` sees, called from `acc_var`, for an array only the caller's one local variable holds (generated
    code's `dx = _acc(dx, g)`), measured in that call shape like `_sole_holder_count`."""
    def acc_like(a, b):
        return _probe(a)

    def generated_code():
        dx, g = np.empty(2), np.empty(2)
        dx = acc_like(dx, g)
        return dx
    if not hasattr(sys, "getrefcount") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return 0
    return generated_code()


def owned(a):
    """`sole` for `acc_var`'s first argument: an array that owns its memory, writable, and held by nothing but the
    variable of generated code being rebound to the sum (another variable, a tuple, the tape, a closure, a view or the
    user's own reference each count one more)."""
    return a.base is None and a.flags.writeable and sys.getrefcount(a) <= _ACC_SOLE


def sole(a):
    """May the backward pass update `a` in place? Only a list, or an array that owns its memory (no view of another
    array, no subclass, writable), and only when nothing but the caller's one variable refers to it: the reference
    count shows every other holder (a second variable, a tuple, the tape, the user, a view of it). This is how PyTorch's
    engine decides to accumulate into a gradient buffer in place.

    Only rule backs that generated code calls as `back(dy, need, *into)` ask it, as `sole(dy)` or `sole(into[k])`
    straight from their parameters (a copy in a local first counts as one more holder: never wrong, only slower).
    That call hands over the running cotangents `into` (the caller rebinds each variable to the back's result) and
    `dy` (dead after the call: it is the cotangent of the value the call defined), so their buffers may be reused."""
    t = type(a)
    return (t is list or t is np.ndarray and a.base is None and a.flags.writeable) and sys.getrefcount(a) <= _SOLE


class Pullback:
    """A closure-free pullback: `back(tape, dy)` with its tape. `pb(dy)` returns `(dself, *dargs)`."""
    __slots__ = ("back", "tape")

    def __init__(self, back, tape):
        self.back, self.tape = back, tape

    def __call__(self, dy, need=None):
        return self.back(self.tape, dy)


# --- guards and cotangent plumbing the emitter prints inline (their bodies here serve nested differentiation) ---------

def is_scalar(x):
    return type(x) in SCALARS


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


_FLOAT_KINDS = frozenset("fc")


def differentiable(x, depth=3):
    """Does `x` hold a value a gradient can flow through (floats, complex, float arrays, containers of them)?
    Ints and bools are data here: a call that receives only them runs as a constant."""
    t = type(x)
    if t is float or t is complex:
        return True
    if t is int or t is bool or t is str or x is None or isinstance(x, type):  # (jnp.float64 has a float dtype)
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", None) in _FLOAT_KINDS or "float" in str(dtype) or "complex" in str(dtype)
    if depth and isinstance(x, (list, tuple)):
        return any(differentiable(v, depth - 1) for v in x)
    if depth and isinstance(x, dict):
        return any(differentiable(v, depth - 1) for v in x.values())
    if depth and hasattr(x, "__dict__") and not isinstance(x, (type, types.ModuleType, types.FunctionType)):
        return any(differentiable(v, depth - 1) for v in vars(x).values())
    return isinstance(x, np.number) and x.dtype.kind in _FLOAT_KINDS



def item_cotangents(dy, index, value):
    """`x[i] = v`'s cotangents from a cotangent `dy` of the new `x` that is not a real array (a complex one)."""
    dx = dy.copy()
    dx[index] = 0
    return dx, None, unbroadcast(dy[index], value) if not isinstance(value, bool) else None



def global_store(obj, name, where, key, value):
    """`NAME[key] = value` on a module global container, in differentiated code (lower_mutation.global_item): a value
    that carries no gradient (a call counter, a flag, data) is stored, as plain Python would; one that does is refused,
    since its gradient could not reach its sources through a global (and any later read of it would get none)."""
    if differentiable(value):
        from ..errors import UnsupportedSyntax
        raise UnsupportedSyntax("updating a global or constant object in place with a value that carries a gradient",
                                *where, f"pass '{name}' as an argument, or work on a copy")
    obj[key] = value


def is_none(x):
    return x is None


def is_not_none(x):
    return x is not None


def acc_scalar(d, g):
    return g if d is None else d + g


class DroppedKeyword:
    """The cotangent of a keyword argument whose rule cannot give it (the rule is not keyword-aware, or did not state
    it), when the value is differentiable. It is not an error yet: most such values are constants (`a_min=0.0`), whose
    cotangent nobody reads. Generated code reads a keyword's cotangent only where the value carries a gradient
    (`kwarg_cotangent`), and there it raises, so the gradient is never silently dropped."""
    __slots__ = ("rule", "callee", "name")

    def __init__(self, rule, callee, name):
        self.rule, self.callee, self.name = rule, callee, name

    def __repr__(self):
        return f"DroppedKeyword({self.name!r})"

    def error(self):
        from ..errors import ZygoteError
        callee = getattr(self.callee, "__qualname__", None) or getattr(self.callee, "__name__", None) \
            or repr(self.callee)
        module = getattr(self.callee, "__module__", None)
        callee = f"{module}.{callee}" if module and module != "builtins" and "." not in callee else callee
        rule = getattr(self.rule, "__qualname__", repr(self.rule))
        return ZygoteError(
            f"a gradient flows into the keyword argument {self.name}= of {callee}, and its adjoint rule {rule} gives "
            f"no cotangent for that keyword, so the gradient would be dropped. Pass the value positionally if the "
            f"rule takes it there, or make the rule keyword-aware (zygotepy.adjoints.registry.keyword_rule: its back "
            f"returns the positional cotangents and then a dict {{{self.name!r}: cotangent}}).")


def settled(g):
    """`g`, unless it is a keyword cotangent a rule could not give (`DroppedKeyword`): then raise its error."""
    if type(g) is DroppedKeyword:
        raise g.error()
    return g


def kwarg_cotangent(dkw, name, value):
    """The cotangent of a keyword argument (`name=value`), or of a `**value` expansion when `name` is None. Generated
    code asks only for values that carry a gradient, so a cotangent the rule could not give raises here."""
    if dkw is None:
        return None
    if name is None:
        return {k: settled(dkw.get(k)) for k in value}
    return settled(dkw.get(name))


def field(g, name):
    """Entry `name` of a structural cotangent (None-aware)."""
    return None if g is None else g.get(name)


def foreign_rule(args):
    """The rule hook of a number type of zygotepy's own among `args` (forward mode's dual numbers, which `math`'s C
    code would convert with float(), dropping their derivative), or None."""
    for a in args:
        if type(a) not in _PLAIN_NUMBERS:
            hook = getattr(type(a), "__zygote_rule__", None)
            if hook is not None:
                return hook
    return None


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


def closure_cotangent(*flat):
    """The cotangent of a closure: its captured variables' cotangents, by name."""
    pairs = {k: v for k, v in zip(flat[::2], flat[1::2]) if v is not None}
    return StructGrad(pairs) if pairs else None


def iter_cotangent(seq, dts):
    """Cotangent of the sequence a `for` loop walked, from its per-iteration cotangents (collected in reverse)."""
    if isinstance(seq, range) or all(d is None for d in dts):
        return None
    items = list(reversed(dts)) + [None] * (len(seq) - len(dts))
    if isinstance(seq, np.ndarray):
        return np.stack([np.zeros_like(seq[i]) if d is None else d for i, d in enumerate(items)])
    return type(seq)(items) if isinstance(seq, (list, tuple)) else items


def is_complex_like(x):
    dtype = getattr(x, "dtype", None)
    return type(x) is complex or (dtype is not None and getattr(dtype, "kind", "") == "c")



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


_SOLE = _sole_holder_count()
_ACC_SOLE = _acc_holder_count()

"""The backward's bookkeeping, called by generated code and by the rules: None-aware accumulation of cotangents (in
place where the array is held by the accumulating variable alone), the closure-free pullback object, and the plumbing
of cotangents (a structure's field, a closure's, a loop's sequence's, a keyword argument's).

Part of the runtime layer (tests/test_layers.py); `runtime.py` re-exports these names, which generated code and the
rules reach as `rt.<name>`.
"""
import sys

import numpy as np

from ..errors import ZygoteError
from ..options import OPTIONS
from ..backends import asarray, namespace, zeros
from ..structgrad import StructGrad


def acc_var(d, g):
    """Generated code's `dx = _acc(dx, g)`: `acc`, but when the array of `dx` is held by that variable alone (`owned`)
    and is not small (`REUSE_BYTES`), the sum goes into it in place, so a loop accumulating a weight's cotangent makes
    no new array per iteration. The same result bit for bit: same dtype, same shape, the same additions. Rules call
    `acc`, which never updates."""
    if d is None:  # (the first cotangent a variable gets: the common case)
        return g
    if type(d) is np.ndarray and type(g) is np.ndarray:
        if d.nbytes < REUSE_BYTES:
            return d + g  # (`acc`'s sum of two arrays)
        if OPTIONS.acc_in_place and g.dtype is d.dtype and g.shape == d.shape and owned(d):
            d += g
            return d
    return acc(d, g)


REUSE_BYTES = 1 << 15
"""The smallest array whose whole-array sum or product the backward computes in place rather than in a new array
(`acc_var` here, the rules' buffers in adjoints/handover.py): both do the same O(n) arithmetic, and below this size NumPy
allocates a new array for less than the checks that prove an update invisible cost (a reference count, the base, the
flags, the shapes); above it the update saves the allocation, the page faults of new memory and the memory itself.
(`sole` asks no size: an update of one item in place is O(1) where a copy is O(n).)"""


def acc(a, b):
    """Add two cotangents where None means zero; containers and structural gradients add entry by entry."""
    if a is None:
        return b
    if b is None:
        return a
    ta = type(a)
    if ta is tuple or ta is list:
        if len(a) != len(b):
            raise _lengths_differ(a, b)
        return ta(acc(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        out = type(a)(a)
        for k, v in b.items():
            out[k] = acc(out.get(k), v)
        return out
    if (type(b) is list or type(b) is tuple) and hasattr(a, "shape") and _holds_none(b):
        # a list's cotangent from an array rule (`np.vstack(L)`: an array) beside one in the list's own form (`L[0][0]`
        # read: a list holding None, which NumPy cannot add): entry by entry, in the list's form
        return type(b)(acc(a[k], g) for k, g in enumerate(b))
    return a + b


def _lengths_differ(a, b):
    """Two cotangents of one list or tuple with different lengths: routes of the gradient that met the list at
    different lengths (it grew or shrank in place between them) were not told apart, which only an update in place
    through objects linked both ways (a parent pointer a helper set beside the parent's list) leaves undone."""
    return ZygoteError(f"zygotepy cannot differentiate this: two cotangents of one list have {len(a)} and {len(b)} "
                       f"entries (the list grew or shrank in place between two routes to it that zygotepy did not "
                       f"tell apart; this happens with objects that point at each other, a parent pointer beside the "
                       f"parent's list of children, made by a helper). Build the structure in the differentiated "
                       f"function itself, or keep the back reference out of it (the parent's index instead)")


def _holds_none(items):
    """Is None among the entries of nested lists and tuples?"""
    return any(g is None or (type(g) is list or type(g) is tuple) and _holds_none(g) for g in items)


def acc_scalar(d, g):
    return g if d is None else d + g


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
    engine decides to accumulate into a gradient buffer in place. Whatever the array's size: a back that adds one item
    into a dense cotangent, or zeroes one entry, does O(1) work in place and O(n) on a copy.

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


def field(g, name):
    """Entry `name` of a structural cotangent (None-aware)."""
    return None if g is None else g.get(name)


def closure_cotangent(*flat):
    """The cotangent of a closure: its captured variables' cotangents, by name."""
    pairs = {k: v for k, v in zip(flat[::2], flat[1::2]) if v is not None}
    return StructGrad(pairs) if pairs else None


def iter_cotangent(seq, dts):
    """Cotangent of the sequence a `for` loop walked, from its per-iteration cotangents (collected in reverse)."""
    if isinstance(seq, range) or all(d is None for d in dts):
        return None
    # (an iterator walked as it went, `runtime.iterate`: the items it gave; those it has left get nothing)
    items = list(reversed(dts)) + [None] * (len(seq) - len(dts) if hasattr(seq, "__len__") else 0)
    if isinstance(seq, np.ndarray):
        return np.stack([np.zeros_like(seq[i]) if d is None else d for i, d in enumerate(items)])
    if isinstance(seq, tuple) and hasattr(type(seq), "_fields"):  # a namedtuple: a structural gradient, by field
        return StructGrad((k, g) for k, g in zip(seq._fields, items) if g is not None)
    return type(seq)(items) if isinstance(seq, (list, tuple)) else items


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

    def __add__(self, other):  # (met by another cotangent of the same value: the gradient would be dropped there)
        raise self.error()

    __radd__ = __add__

    def error(self):
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


def star_cotangent(value, items):
    """The cotangent of a `*value` expansion in a call, from its items' cotangents: a namedtuple's is keyed by its
    fields (as its other uses give it: `p.x`, `a, b = p`), anything else's is the tuple of them."""
    if hasattr(type(value), "_fields") and isinstance(value, tuple):
        return StructGrad((k, g) for k, g in zip(value._fields, items) if g is not None) or None
    if hasattr(value, "shape") and getattr(value, "ndim", 0):  # `g(*X)` of an array: its rows' cotangents, stacked
        if all(g is None for g in items):
            return None
        xp = namespace(value)
        dtype = value.dtype if "float" in str(value.dtype) or "complex" in str(value.dtype) else xp.float64
        return xp.stack([zeros(xp, tuple(value.shape[1:]), dtype, value) if g is None else asarray(xp, g, value, dtype)
                         for g in items])
    return tuple(items)


def kwarg_cotangent(dkw, name, value):
    """The cotangent of a keyword argument (`name=value`), or of a `**value` expansion when `name` is None. Generated
    code asks only for values that carry a gradient, so a cotangent the rule could not give raises here."""
    if dkw is None:
        return None
    if name is None:
        return {k: settled(dkw.get(k)) for k in value}
    return settled(dkw.get(name))


_SOLE = _sole_holder_count()


_ACC_SOLE = _acc_holder_count()

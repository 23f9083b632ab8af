"""Rules for the in-place operators (`a op= b`): a NumPy array, a list, a torch tensor, forward mode's dual array is
updated in place, as Python does (an alias sees the new values), and its back undoes the update; a number or an
immutable array (JAX) is rebound. They override the plain operators' in-place rules (adjoints/scalar.py), which is why
the mutation rules register last. Also the aliases of an object after `new = old op= v` (`same_or`, `same_as`), and
`|` / `|=`, whose dict merge routes its entries' cotangents.
"""
import collections
import operator

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...backends import namespace
from ...errors import ZygoteError
from ...forward.dual import strip
from ..registry import adjoint, find_rule, nondifferentiable
from ..structures.dicts import has_read_keys as read_keys
from ..structures.sets import combined, set_like, updated
from .methods import _list_extend, method_call


@adjoint(mt.same_or)
def same_or(alias, old, new):
    same = new is old
    return (new if same else alias), lambda dy: (None, None, dy) if same else (dy, None, None)


@adjoint(mt.same_as)
def same_as(var, old, new):
    same = var is old
    return (new if same else var), lambda dy: (None, None, dy) if same else (dy, None, None)


# --- augmented assignment on arrays: in place, as in Python ------------------------------------------------------------

_LISTS = (list, collections.deque)


def _list_repeat(a, n):
    entry = mt.journal_whole(a)
    k = len(a)
    a *= n

    def back(dy):
        entry.undo(lambda: list(a))
        if dy is None or not k:
            return (None, None)
        return ([_sum_of(dy[(i + len(dy)) % k::k]) for i in range(k)], None)  # (a bounded deque: the last)
    return a, back


def _sum_of(grads):
    total = None
    for g in grads:
        total = rt.acc(total, g)
    return total


def _in_place_rule(plain, inplace, rule=None):
    """`a op= b` for the in-place operator `inplace`: a NumPy array is updated in place, as Python does (an alias sees
    the new values), with a journal entry its back undoes, so a value saved earlier is read as it was. That holds for
    every operator, not only those with a scalar fast path: `y @= M`, `y **= 2`, `y %= m`, `y //= m` too."""
    rule = find_rule(plain) if rule is None else rule

    def in_place(a, b):
        if type(a) in _LISTS and plain is operator.add:  # `lst += items` extends the list (a deque) itself
            _, extend_back = _list_extend(a, b) if type(a) is list else method_call(a, "extend", (b,), {})
            return a, lambda dy: extend_back(None, dy)
        if type(a) in _LISTS and plain is operator.mul:  # `lst *= n` repeats the list itself
            return _list_repeat(a, b)
        if type(a) is not np.ndarray:
            if type(a) is set and plain is operator.sub and isinstance(b, (set, frozenset)):  # `s -= t`: in place
                return updated(inplace, a, b)
            if _dual_of_array(a):  # forward mode's number standing for an array (hessian): in place, as the array is
                return _elsewhere_in_place(rule, a, b, _dual_copy)
            if _mutable_foreign_array(a):  # a torch tensor (CuPy, array-API array): in place, as that library does
                return _elsewhere_in_place(rule, a, b, _library_copy)
            return rule(a, b)  # a number (immutable: `+=` rebinds) or an immutable array (JAX)
        old = a.copy()
        if a.dtype.kind in "fc":
            y, pb = rule(old, b)
            if np.shape(y) != a.shape:  # `a @= v` with a 1-d `v`: NumPy refuses to change the shape of `a`
                inplace(old, b)  # raises NumPy's own error
                raise ValueError(f"{plain.__name__} in place would change the shape of {a.shape} into {np.shape(y)}")
            np.copyto(a, y, casting="same_kind")
        else:  # an int or bool array holds data: updated as Python does, no cotangent
            inplace(a, b)
            pb = None
        entry = mt.Entry(lambda s: a.__setitem__(Ellipsis, s), old, a)

        def back(dy):
            entry.undo(lambda: a.copy())
            return pb(dy) if dy is not None and pb is not None else (None, None)
        return a, back
    in_place.__qualname__ = f"i{plain.__name__}_rule"
    return in_place


def _dual_of_array(a):
    if not getattr(type(a), "__zygote_number__", False):
        return False
    return isinstance(strip(a), np.ndarray)


_MUTABLE_ARRAY_PACKAGES = ("torch", "cupy", "array_api_strict")  # (JAX's arrays are immutable: `+=` rebinds)


def _mutable_foreign_array(a):
    return type(a).__module__.partition(".")[0] in _MUTABLE_ARRAY_PACKAGES and hasattr(a, "shape")


def immutable_array(a):
    """An array no update in place can change (JAX's)."""
    return type(a).__module__.partition(".")[0] in ("jax", "jaxlib") and hasattr(a, "shape")


def _dual_copy(a):
    return a.copy()


def _library_copy(a):
    return namespace(a).asarray(a, copy=True)


def _elsewhere_in_place(rule, a, b, copy):
    """`a op= b` on an array that is not NumPy's but is updated in place (forward mode's dual number of an array, which
    forward-over-reverse runs the reverse code on; a torch tensor) updates it in place, as its library does: a list or
    an alias holding it sees the change (a new value left `vs` unchanged after `for v in vs: v *= c`: a silently
    wrong gradient). Its values before go in the journal, as for a NumPy array."""
    old = copy(a)
    if "float" not in str(a.dtype) and "complex" not in str(a.dtype):  # data: updated as the library does
        a[...] = rule(old, b)[0]
        pb = None
    else:
        y, pb = rule(old, b)
        if tuple(y.shape) != tuple(a.shape):
            raise ValueError(f"an operator in place would change the shape of {tuple(a.shape)} into {tuple(y.shape)}")
        a[...] = y
    entry = mt.Entry(lambda s: a.__setitem__(Ellipsis, s), old, a)

    def back(dy):
        entry.undo(lambda: copy(a))
        return pb(dy) if dy is not None and pb is not None else (None, None)
    return a, back


def _floordiv(a, b):
    """`a // b` is piecewise constant: no cotangent reaches its operands."""
    return a // b, lambda dy: (None, None)


_IN_PLACE_OPERATORS = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
                      operator.itruediv: operator.truediv, operator.ipow: operator.pow, operator.imod: operator.mod,
                      operator.imatmul: operator.matmul, operator.ifloordiv: operator.floordiv}
for _op, _plain in _IN_PLACE_OPERATORS.items():
    adjoint(_op, updates="if_active")(_in_place_rule(_plain, _op, _floordiv if _plain is operator.floordiv else None))
nondifferentiable(operator.ifloordiv)  # its result carries no gradient; the rule above only keeps the update undoable


# --- `|` and `|=`: a dict merge routes cotangents; on anything else (ints, bools, sets, masks) the result is data ------

def _merge_cotangents(keys_a, b, dy):
    """The cotangents of `a` (whose keys were `keys_a`) and of the dict `b` from `dy`, that of `a | b`: an entry of
    `b` wins a key both have, so `a`'s entry there receives nothing."""
    if dy is None:
        return None, None
    da = {k: None if k in b else dy.get(k) for k in keys_a}
    db = {k: dy.get(k) for k in b}
    # (`{}` where no value has one but keys were read out: the dict's own back hands its key objects theirs)
    return (da if any(g is not None for g in da.values()) else {} if read_keys(keys_a) else None,
            db if any(g is not None for g in db.values()) else {} if read_keys(b) else None)


def _check_merge(a, b):
    if not isinstance(b, dict):
        raise ZygoteError(f"zygotepy cannot differentiate merging a {type(b).__name__} into a dict with `|`; merge "
                          f"a dict (d | dict(pairs))")


@adjoint(operator.or_)
def or_(a, b):
    if set_like(a, b):
        return combined(operator.or_, a, b)
    y = a | b
    if not isinstance(a, dict):
        return y, lambda dy: (None, None)
    _check_merge(a, b)
    keys = list(a)
    return y, lambda dy: _merge_cotangents(keys, b, dy)


@adjoint(operator.ior, updates="if_active")
def ior(a, b):
    """`a |= b`: a dict or a set is updated in place, as Python does (an alias sees it), and its back undoes that."""
    if type(a) is dict:
        _check_merge(a, b)
        entry = mt.journal_whole(a)
        keys = list(a)
        a |= b

        def back(dy):
            entry.undo(lambda: dict(a))
            return _merge_cotangents(keys, b, dy)
        return a, back
    if type(a) is set and isinstance(b, (set, frozenset)):
        return updated(operator.ior, a, b)
    return _data_in_place(operator.ior, a, b)


def _data_in_place(op, a, b):
    """`a op= b` on data (an int or bool array, an int): updated in place as Python does, no cotangent; an array's old
    values go in the journal, so the backward of an earlier operation reads them (`np.where(m, x, 0)`, then
    `m &= c`: the where's back read the narrowed mask)."""
    entry = mt.journal_whole(a) if isinstance(a, np.ndarray) else None
    y = op(a, b)

    def back(dy):
        if entry is not None:
            entry.undo(lambda: mt.snapshot(a))
        return (None, None)
    return y, back


def _bitwise_in_place(op):
    def rule(a, b):
        if type(a) is set and isinstance(b, (set, frozenset)):
            return updated(op, a, b)
        return _data_in_place(op, a, b)
    rule.__qualname__ = f"{op.__name__}_rule"
    return rule


for _op in (operator.iand, operator.ixor, operator.ilshift, operator.irshift):
    adjoint(_op, updates="if_active")(_bitwise_in_place(_op))

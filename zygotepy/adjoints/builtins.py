"""Builtins: sum, min, max, float, sorted and friends; the rest of the builtins a numeric code calls carry no gradient.
(`abs` lives with the operators; `enumerate`, `zip` and `range` with the structures.)"""
import bisect
import builtins
import itertools
import logging
import math
import numbers
import operator
import types

import numpy as np

from ..ast_adjoint import runtime as rt
from ..backends import is_array_type, is_foreign, namespace, to_numpy, unbroadcast
from .registry import adjoint, find_rule, find_scalar, keyword_cotangents, keyword_rule, nondifferentiable, scalar_rule
from .objects import as_fields
from .scalar import as_float, foreign_rule
from .structures.common import like
from .structures.indexing import scatter_array
from .structures.iteration import iterate, python_iter, refuse_endless
from ..ast_adjoint.call_checks import library
from ..ast_adjoint.dispatch import J

nondifferentiable(len, isinstance, issubclass, type, id, hash, print, repr, str, int, bool, callable, hasattr,
                  any, all, chr, ord, format, builtins.__build_class__,  # (a class statement inside a function)
                  rt.class_of)
nondifferentiable(bisect.bisect_left, bisect.bisect_right, float.is_integer)  # (positions, and a question of a value)
_LOG_LEVELS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log")
nondifferentiable(*(getattr(owner, name) for owner in (logging, logging.Logger, logging.LoggerAdapter)
                    for name in _LOG_LEVELS if hasattr(owner, name)))  # (a log line, as `print`: its code is not read)


@adjoint(builtins.pow)
def pow_(base, exp, *mod):
    """`pow(a, b)` is `a ** b`; the three-argument form is modular integer arithmetic, with no gradient."""
    if mod and mod[0] is not None:
        return builtins.pow(base, exp, *mod), lambda dy: (None, None, None)
    y, back = find_rule(operator.pow)(base, exp)
    return y, (back if not mod else lambda dy: (*back(dy), None))  # (`pow(a, b, None)` is `a ** b`)


scalar_rule(builtins.pow, find_scalar(operator.pow))


@adjoint(divmod)
def divmod_(a, b):
    """`divmod(a, b) == (a // b, a % b)`: the quotient is piecewise constant, the remainder is `a - b * (a // b)`."""
    q, r = divmod(a, b)

    def back(dy):
        dr = None if dy is None else dy[1]
        if dr is None:
            return (None, None)
        return unbroadcast(dr, a), unbroadcast(-dr * q, b)
    return (q, r), back


@adjoint(math.frexp)
def frexp(x):
    """`m, e = frexp(x)` with `x == m * 2**e`: the exponent is piecewise constant, so dm/dx = 2**-e."""
    m, e = math.frexp(x)
    return (m, e), lambda dy: (None if dy is None or dy[0] is None else math.ldexp(dy[0], -e),)


@adjoint(math.modf)
def modf(x):
    """`frac, whole = modf(x)`: the whole part is piecewise constant, the fraction's derivative is 1."""
    return math.modf(x), lambda dy: (None if dy is None else dy[0],)


@adjoint(math.fsum)
def fsum(iterable):
    items = list(iterable)
    return math.fsum(items), lambda dy: (None if dy is None else like(iterable, [dy] * len(items)),)


@keyword_rule
@adjoint(math.prod)
def prod(iterable, **kwargs):
    """`math.prod(xs, start=s)`: each item's cotangent is dy times the product of the others (prefix and suffix
    products, so a zero among the items divides nothing); `start`'s is dy times the items' product."""
    items = list(iterable)
    if not _numbers_only(items, tuple(kwargs.values())):
        return _fold_of_objects(prod_twin, iterable, items, kwargs.get("start", 1), kwargs)
    y = math.prod(items, **kwargs)

    def back(dy):
        if dy is None:
            return keyword_cotangents((None,), kwargs)
        before, after = [kwargs.get("start", 1)], [1]
        for v in items[:-1]:
            before.append(before[-1] * v)
        for v in items[:0:-1]:
            after.append(after[-1] * v)
        dstart = dy * math.prod(items) if "start" in kwargs else None
        return keyword_cotangents((like(iterable, [dy * b * a for b, a in zip(before, after[::-1], strict=True)]),),
                                  kwargs, start=dstart)
    return y, back


@adjoint(math.dist)
def dist(p, q):
    """The Euclidean distance of two points (sequences of coordinates); 0 where they meet."""
    y = math.dist(p, q)

    def back(dy):
        if dy is None:
            return (None, None)
        g = [dy * (a - b) / y if y else 0.0 for a, b in zip(p, q, strict=True)]
        return like(p, g), like(q, [-v for v in g])
    return y, back


def _per_item(items, dy):
    """The cotangent `dy` of a sum, handed to every summed item (reduced to the item's own shape)."""
    return [unbroadcast(dy, item) for item in items]


def _joined_back(iterable, items, start):
    """The back of `sum(items, start)` on lists or tuples, which joins them: `start` first, then each item."""
    parts = (*start, *items)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in start))
        grads, at = [], 0
        for part in parts:
            grads.append(like(part, list(dy[at:at + len(part)])))
            at += len(part)
        return (like(iterable, grads[len(start):]), *grads[:len(start)])
    return back


@keyword_rule
@adjoint(builtins.sum)
def sum_(iterable, *start, **kwargs):
    """`sum(items, start)`: dy reaches every item and the start, given positionally or as `start=`."""
    if kwargs:  # (before anything takes the items: a generator or `iter(...)` gives them once)
        y, positional = sum_(iterable, *(start + tuple(kwargs.values())))  # `start` is sum's only keyword

        def keyword_back(dy):
            *grads, dstart = positional(dy)
            return keyword_cotangents(grads, kwargs, start=dstart)
        return y, keyword_back
    if python_iter(iterable) is not None:  # a user class's `__iter__` (or `__getitem__`), differentiated
        walked, walked_back = iterate(iterable)
        y, inner = sum_(list(walked), *start)

        def iterated_back(dy):
            ditems, *dstarts = inner(dy)
            return (None if ditems is None else walked_back(list(ditems))[0], *dstarts)
        return y, iterated_back
    items = list(iterable) if not hasattr(iterable, "shape") else iterable
    if not hasattr(iterable, "shape") and not _numbers_only(items, start):
        if not start:
            y, back = _fold_of_objects(sum_twin, iterable, items, 0)
            return y, lambda dy: back(dy)[:1]
        return _fold_of_objects(sum_twin, iterable, items, start[0])
    y = builtins.sum(items, *start)

    if isinstance(y, (list, tuple)):  # lists or tuples joined (`sum(rows, [])`): each gets its part of dy
        return y, _joined_back(iterable, items, start)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in start))
        starts = tuple(unbroadcast(dy, s) for s in start)
        if hasattr(iterable, "shape"):
            xp = namespace(iterable)
            return (xp.broadcast_to(dy, iterable.shape) * 1.0, *starts)
        return (like(iterable, _per_item(items, dy)), *starts)
    return y, back


def _numbers_only(items, start):
    """Are the summed items and the start numbers, arrays (forward mode's dual numbers too), lists or tuples (whose sum
    this rule knows), not objects of a class whose `+` (`__add__`, `__radd__`) is the user's code?"""
    kinds = set(map(type, items)).union(map(type, start))
    return kinds <= _SUMMED or all(t in _SUMMED or is_array_type(t) or getattr(t, "__zygote_number__", False)
                                   or issubclass(t, (list, tuple, numbers.Number))
                                   and getattr(t, "__add__", None) in _PLAIN_ADDS for t in kinds)


_SUMMED = frozenset((int, float, complex, bool, np.float64, np.float32, np.int64, np.ndarray, list, tuple))
_PLAIN_ADDS = frozenset(getattr(t, "__add__") for t in (int, float, complex, bool, list, tuple, np.float64,
                                                           np.float32, np.float16, np.int64, np.int32, np.complex128))


def sum_twin(items, start):
    """`sum(items, start)` as Python runs it, for items whose `+` is a user class's: differentiated as any code."""
    total = start
    for item in items:
        total = total + item
    return total


def prod_twin(items, start):
    """`math.prod(items, start=start)` as Python runs it, for items whose `*` is a user class's."""
    total = start
    for item in items:
        total = total * item
    return total


def _fold_of_objects(twin, iterable, items, start, kwargs=None):
    """`sum`/`math.prod` of objects (`sum(beliefs, prior)` with a fusing `__add__`): each `+` or `*` differentiated
    through the class's own code; the rules' cotangents (dy to every summed item, products of the others) are right
    only for numbers and for classes whose operators act field by field. The start's cotangent goes to `kwargs`'
    `start=` where given so, else to the second positional argument (`sum(items, start)`)."""
    y, pb = J(twin, items, start)

    def back(dy):
        _, ditems, dstart = pb(dy)
        ditems = None if ditems is None else like(iterable, list(ditems))
        if kwargs is not None:
            return keyword_cotangents((ditems,), kwargs, start=dstart)
        return (ditems, dstart)
    return y, back


def _pick(fn):
    """min/max: the gradient goes to the item Python returned (the first of equal items), or to `default=` when the
    items were empty."""
    def rule(*args, **kwargs):
        items = list(args[0]) if len(args) == 1 else list(args)
        keyed = {**kwargs, "key": _key_of(kwargs)} if kwargs.get("key") is not None else kwargs
        y = fn(items, **keyed) if len(args) == 1 else fn(*args, **keyed)  # over `items`: y is one of them
        chosen = next((k for k, v in enumerate(items) if v is y), None)  # None: `default=` was returned

        def back(dy):
            if dy is None or chosen is None:
                ddefault = dy if chosen is None and "default" in kwargs else None
                return keyword_cotangents((None,) * len(args), kwargs, default=ddefault, key=None)
            grads = [dy if k == chosen else None for k in range(len(items))]  # no item store: see nesting/
            if len(args) == 1:
                grads = (like(args[0], grads) if not hasattr(args[0], "shape") else _scatter(args[0], chosen, dy),)
            return keyword_cotangents(grads, kwargs, default=None, key=None)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return keyword_rule(rule)


def _key_of(kwargs):
    """The `key=` of sorted, min or max (None if none), called through J where it is Python code of the user's: its
    value only orders the items, but an update in place it makes (`self.seen.append(v)`) is then checked as any
    call's is; called as written it would go unseen, a silently wrong gradient."""
    key = kwargs.get("key")
    code = key.__func__ if type(key) is types.MethodType else key if type(key) is types.FunctionType else \
        getattr(type(key), "__call__", None) if key is not None and not isinstance(key, type) else None
    if type(code) is types.FunctionType and not library(code):
        return lambda v: J(key, v)[0]
    return key


def _scatter(array, index, dy):
    if dy is None:
        return None
    return scatter_array(  # in array's library, on its device, of its float dtype
        array, (index, Ellipsis), dy)


adjoint(builtins.min)(_pick(builtins.min))
adjoint(builtins.max)(_pick(builtins.max))


@adjoint(float, optional=True)
def float_(x=0.0):
    own = getattr(type(x), "__float__", None)
    if isinstance(own, types.FunctionType) and not is_array_type(type(x)) \
            and not hasattr(type(x), "__zygote_rule__"):  # a user's class: its `__float__`
        y, pb = as_float(x)
        return y, lambda dy: (pb(dy)[1],)
    hook = foreign_rule((x,))
    if hook is not None:
        return hook(float, x)
    return float(x), lambda dy: (_number_back(dy, x) if not isinstance(x, str) else None,)


def _number_back(dy, x):
    """The cotangent of `float(x)` for `x`: a NumPy value's in NumPy (a tensor's arithmetic with the float made it
    a 0-d tensor, which NumPy's rules before it cannot take)."""
    if isinstance(x, (np.ndarray, np.generic)) and is_foreign(dy):
        dy = to_numpy(dy)
    return unbroadcast(dy, x)


@adjoint(complex)
def complex_(*args):
    """`complex(re, im)` is `re + 1j im`; one argument (a number, or a string: data) is the number itself."""
    def back(dy):
        if dy is None:
            return (None,) * len(args)
        dy = complex(dy)
        if args and hasattr(args[0], "__dict__"):  # (an object's `__complex__`: refused, as any such conversion)
            as_fields(args[0], dy.real)
        grads = [dy if isinstance(args[0], complex) else dy.real] if args and not isinstance(args[0], str) else [None]
        if len(args) == 2:  # d(1j im) gives a complex im the cotangent conj(1j) dy
            grads.append(-1j * dy if isinstance(args[1], complex) else dy.imag)
        return tuple(grads[:len(args)])
    return complex(*args), back


@adjoint(sorted)
def sorted_(iterable, **kwargs):
    items = list(iterable)
    key = _key_of(kwargs) or (lambda v: v)
    order = builtins.sorted(range(len(items)), key=lambda k: key(items[k]), reverse=kwargs.get("reverse", False))

    def back(dy):
        if dy is None:
            return (None,)
        position = {k: p for p, k in enumerate(order)}  # no item store: an outer level transforms this (nesting/)
        return (like(iterable, [dy[position[k]] for k in range(len(items))]),)
    return [items[k] for k in order], back


@adjoint(reversed)
def reversed_(seq):
    """`reversed(xs)` as a list (an iterator has no place for a cotangent to go back through). Its items are those
    Python's `reversed` gives: a torch tensor's are views of a reversed copy (`Tensor.__reversed__`), which no later
    update of `xs` reaches (`list(xs)[::-1]` gave views of `xs` itself)."""
    return list(reversed(seq)), lambda dy: (None if dy is None else like(seq, list(dy)[::-1]),)


@adjoint(list, optional=True)
def list_(iterable=()):
    if python_iter(iterable) is not None or type(iterable).__name__.endswith("iterator"):  # (see iterate)
        items, back = iterate(iterable)
        return list(items), lambda dy: back(None if dy is None else list(dy))
    return list(iterable), lambda dy: (None if dy is None else like(iterable, list(dy)),)


@adjoint(tuple, optional=True)
def tuple_(iterable=()):
    if python_iter(iterable) is not None or type(iterable).__name__.endswith("iterator"):
        items, back = iterate(iterable)
        return tuple(items), lambda dy: back(None if dy is None else list(dy))
    return tuple(iterable), lambda dy: (None if dy is None else like(iterable, list(dy)),)


# --- map and filter: differentiated as the comprehensions they mean -----------------------------------------------

def map_list(fn, *seqs):
    """`map(fn, *seqs)` as a list (an iterator has no place for a cotangent to go back through)."""
    return [fn(*items) for items in zip(*seqs)]


def filter_list(pred, seq):
    """`filter(pred, seq)` as a list; `filter(None, seq)` keeps the truthy items."""
    return [item for item in seq if (item if pred is None else pred(item))]


def filterfalse_list(pred, seq):
    """`itertools.filterfalse(pred, seq)` as a list: the items `pred` rejects (the falsy ones for None)."""
    return [item for item in seq if not (item if pred is None else pred(item))]


def _as_comprehension(twin):
    """A rule that differentiates `twin`, a Python function: gradients reach the items and what `fn` closes over
    through the ordinary transform of its comprehension."""
    def rule(*args):
        refuse_endless(twin.__name__[:-5], args[1:])
        y, pb = J(twin, *args)

        def back(dy):
            return pb(dy)[1:]  # the twin's own cotangent (it closes over nothing) is not one of the call's
        return y, back
    return rule


adjoint(map)(_as_comprehension(map_list))
adjoint(filter)(_as_comprehension(filter_list))
adjoint(itertools.filterfalse)(_as_comprehension(filterfalse_list))

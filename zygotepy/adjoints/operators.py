"""Python's operators on anything but Python numbers (whose derivatives are scalar.py's table): complex numbers, NumPy
scalars, arrays of any library with broadcasting (written against the array namespace, with the conjugate-cotangent
convention: for y = a * b, da = dy * conj(b)), and sequences (`+` concatenates, `*` repeats). Real NumPy arrays and
Python floats, the common operands, take a short way through `+ - * /` (no type dispatch, no conj).
"""
import collections
import cmath
import math
import operator

import numpy as np

from ..ast_adjoint import runtime as rt
from ..backends import _unbroadcast_ndarray, conj, namespace, on, power_slope, principal_log, sequence_cotangent, unbroadcast
from ..forward.dual import strip
from . import handover
from .registry import adjoint, namespace_generic
from .structures.common import like
from .structures.sets import combined, set_like


# --- operators on anything else: complex numbers, arrays (broadcasting), NumPy scalars -------------------------------
ALL = (True, True)  # the `need` mask when the caller did not say: every argument wants its cotangent


def _is_seq(x):
    return isinstance(x, (list, tuple, collections.deque))


def sequence_operand(op, rule, a, b):
    """`op(a, b)` (`rule` its rule) where a list or tuple meets a NumPy array or scalar that takes it as an array
    (`x * [a, 2.0]` multiplies item by item, where a Python int, or NumPy's, repeats the list): the rule on the
    arrays, the sequence's cotangent given back in its form. None where Python's own meaning holds (`[a] * 2`,
    `[a] * np.int64(2)`, `[a] + [b]`), as Python's own result says."""
    if not isinstance(b if _is_seq(a) else a, (np.ndarray, np.generic)) or \
            not isinstance(op(a, b), (np.ndarray, np.generic)):
        return None
    y, inner = rule(np.asarray(a) if _is_seq(a) else a, np.asarray(b) if _is_seq(b) else b)

    def back(dy, need=ALL, *into):
        da, db = inner(dy, need or ALL)
        return handover.added(into, (sequence_cotangent(da, a), sequence_cotangent(db, b)))
    return y, back


def _concat_back(parts):
    """The back of a list/tuple concatenation `parts[0] + parts[1]`: each part gets its slice of the cotangent."""
    def back(dy, need=ALL):
        out, start = (), 0  # no `append` or `+=`: an outer level transforms this code (adjoints/nesting/)
        if dy is not None and len(dy) < sum(len(p) for p in parts):  # a bounded deque kept the last items
            dy = [None] * (sum(len(p) for p in parts) - len(dy)) + list(dy)
        for p in parts:
            piece = None if dy is None else list(dy[start:start + len(p)])
            start = start + len(p)
            out = out + (None if piece is None or all(g is None for g in piece) else like(p, piece),)
        return out
    return back


def _sum_none(items):
    """The sum of `items`, None counting as zero (None if all are); structural gradients (a function's, an object's)
    add field by field."""
    g = None
    for d in items:
        g = rt.acc(g, d)
    return g


def _repeat_back(seq, seq_first):
    """The back of a repetition `seq * k`: each item's cotangent is the sum of its copies' (None-aware)."""
    n = len(seq)

    def back(dy, need=ALL, *into):
        if dy is None or n == 0 or len(dy) == 0:
            return into or (None, None)
        dseq = like(seq, [_sum_none(dy[(i + len(dy)) % n::n]) for i in range(n)])  # (a bounded deque: the last)
        return handover.added(into, (dseq, None) if seq_first else (None, dseq))
    return back


def _no_gradient(dy, need=ALL, *into):
    """Strings concatenated, repeated or formatted carry no gradient."""
    return into or (None, None)


_ND = np.ndarray  # (arrays and Python floats take the short way through sums, products and quotients)


def _unbroadcast_real(g, like):
    """`unbroadcast` of an array cotangent to an operand that is an array or a Python float: no type dispatch."""
    return _unbroadcast_ndarray(g, like) if type(like) is np.ndarray else unbroadcast(g, like)


def _arrays_back(a, b, sign):
    """The back of `a + b` (sign 1) or `a - b` (sign -1) for NumPy arrays and Python floats, at least one an array,
    the common case: each cotangent summed over the axes its operand was broadcast along, with no type dispatch. An
    operand of the cotangent's own shape and dtype takes it as it is, asked here rather than in a call (these backs are
    most of the plain form's operations)."""
    def back(dy, need=ALL):
        if type(dy) is not np.ndarray:
            if dy is None:
                return (None, None)
            db = unbroadcast(dy, b) if need[1] else None
            return unbroadcast(dy, a) if need[0] else None, db if sign > 0 or db is None else -db
        da = db = None
        if need[0]:
            da = dy if type(a) is _ND and dy.shape == a.shape and dy.dtype is a.dtype else _unbroadcast_real(dy, a)
        if need[1]:
            db = dy if type(b) is _ND and dy.shape == b.shape and dy.dtype is b.dtype else _unbroadcast_real(dy, b)
            if sign < 0:
                db = -db  # (negated after the sum: the smaller array)
        return da, db
    return back


_ARRAYS = frozenset(((_ND, _ND), (_ND, float), (float, _ND)))
"""The operand types of `_arrays_back`: NumPy arrays or Python floats, at least one an array (asked as
`(type(a), type(b)) in _ARRAYS`, one lookup with no call: these are most of the plain form's operations)."""


@adjoint(operator.add, need=True)
def add(a, b):
    if (type(a), type(b)) in _ARRAYS:
        return a + b, _arrays_back(a, b, 1)
    if _is_seq(a) and _is_seq(b):  # list/tuple concatenation
        return a + b, _concat_back((a, b))
    if _is_seq(a) or _is_seq(b):
        return sequence_operand(operator.add, add, a, b) or (a + b, None)  # (a sequence and a number: Python raises first)
    if isinstance(a, (str, bytes)):
        return a + b, _no_gradient

    def back(dy, need=ALL):
        if dy is None:
            return (None, None)
        return unbroadcast(dy, a) if need[0] else None, unbroadcast(dy, b) if need[1] else None
    return a + b, back


@adjoint(operator.sub, need=True)
def sub(a, b):
    if (type(a), type(b)) in _ARRAYS:
        return a - b, _arrays_back(a, b, -1)
    if set_like(a, b):
        y, back = combined(operator.sub, a, b)
        return y, lambda dy, need=ALL: back(dy)
    if _is_seq(a) or _is_seq(b):
        return sequence_operand(operator.sub, sub, a, b) or (a - b, None)

    def back(dy, need=ALL):
        if dy is None:
            return (None, None)
        db = unbroadcast(dy, b) if need[1] else None
        return unbroadcast(dy, a) if need[0] else None, None if db is None else -db  # (negated after the sum)
    return a - b, back


@adjoint(operator.mul, accumulates=True)
def mul(a, b):
    ta, tb = type(a), type(b)
    if (ta is _ND and a.dtype.kind == "f" or ta is float) and (tb is _ND and b.dtype.kind == "f" or tb is float):
        return a * b, _real_product_back(a, b)
    if _is_seq(a) or _is_seq(b):  # an array's items, or a sequence repeated: [x] * 3
        return sequence_operand(operator.mul, mul, a, b) or (a * b, _repeat_back(a, True) if _is_seq(a) else _repeat_back(b, False))
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return a * b, _no_gradient

    def back(dy, need=ALL, *into):
        if dy is None:
            return into or (None, None)
        need = need or ALL
        return handover.added(into, (unbroadcast(dy * conj(b), a) if need[0] else None,
                                     unbroadcast(dy * conj(a), b) if need[1] else None))
    return a * b, back


def _real_product_back(a, b):
    """The back of `a * b` for real operands: no conj; buffers reused (handover.py) where generated code hands over
    running cotangents; without them (the plain form's call), the two products, each summed over the axes its operand
    was broadcast along only where their shapes or dtypes differ."""
    def back(dy, need=ALL, *into):
        need = need or ALL
        if type(dy) is not np.ndarray:
            if dy is None:
                return into or (None, None)
            return handover.added(into, (unbroadcast(dy * b, a) if need[0] else None,
                                         unbroadcast(dy * a, b) if need[1] else None))
        if not into:
            da = db = None
            if need[0]:
                da = dy * b
                if type(a) is not _ND or da.shape != a.shape or da.dtype is not a.dtype:
                    da = _unbroadcast_real(da, a)
            if need[1]:
                db = dy * a
                if type(b) is not _ND or db.shape != b.shape or db.dtype is not b.dtype:
                    db = _unbroadcast_real(db, b)
            return da, db
        handed = rt.sole(dy)
        db = (_unbroadcast_real(dy * a, b) if need[0] else
              _unbroadcast_real(handover.times(dy, a, False, handed), b)) if need[1] else None
        da = _unbroadcast_real(handover.times(dy, b, False, handed), a) if need[0] else None
        return handover.added(into, (da, db))
    return back


@adjoint(operator.truediv, need=True)
def truediv(a, b):
    ta, tb = type(a), type(b)
    if (ta is _ND and a.dtype.kind == "f" or ta is float) and (tb is _ND and b.dtype.kind == "f" or tb is float):
        y = a / b
        return y, _real_quotient_back(a, b, y)
    if _is_seq(a) or _is_seq(b):
        return sequence_operand(operator.truediv, truediv, a, b) or (a / b, None)
    y = a / b

    def back(dy, need=ALL):
        if dy is None:
            return (None, None)
        da = dy / conj(b)
        db = None
        if need[1]:  # -da * conj(y), reusing da's buffer when a needs none (one array less on large inputs)
            cy = conj(y)
            db = np.multiply(da, cy, out=da) if not need[0] and _fresh_like(da, cy) else da * cy
            db = np.negative(db, out=db) if type(db) is np.ndarray else -db
        return unbroadcast(da, a) if need[0] else None, unbroadcast(db, b)
    return y, back


def _real_quotient_back(a, b, y):
    """The back of `y = a / b` for real operands: `da = dy / b`, `db = -da * y`."""
    def back(dy, need=ALL):
        if type(dy) is not np.ndarray:
            if dy is None:
                return (None, None)
            da = dy / b
            return unbroadcast(da, a) if need[0] else None, unbroadcast(-(da * y), b) if need[1] else None
        da = dy / b
        if not need[1]:
            return _unbroadcast_real(da, a), None
        db = np.multiply(da, y, out=da) if not need[0] and _fresh_like(da, y) else da * y
        db = _unbroadcast_real(db, b)  # (negated after the sum: the smaller array; both are new arrays, or numbers)
        return _unbroadcast_real(da, a) if need[0] else None, np.negative(db, out=db) if type(db) is np.ndarray \
            else -db
    return back


def _fresh_like(t, other):
    """May `t`, an array a back just computed, take the product `t * other` in place: same shape, same dtype?"""
    return type(t) is np.ndarray and type(other) is np.ndarray and t.shape == other.shape and t.dtype == other.dtype


@adjoint(operator.pow, need=True)
def pow_(a, b):
    if type(a) is not _ND and _is_seq(a) or type(b) is not int and _is_seq(b):
        return sequence_operand(operator.pow, pow_, a, b) or (a ** b, None)  # (a sequence and a number: Python raises first)
    y = a ** b

    def back(dy, need=ALL):
        if dy is None:
            return (None, None)
        xp = namespace(y)
        if not need[0]:
            da = None
        elif isinstance(b, int) and 0 <= b <= 2:  # the common constant exponents, without computing a ** (b - 1)
            da = dy * 0 if b == 0 else dy if b == 1 else dy * conj(a + a)
        elif type(b) in _REALS and b == 0.0:  # (as the scalar template: no `0.0 ** -1.0` at a = 0)
            da = dy * 0.0
        else:
            da = dy * conj(power_slope(a, b))
        # d/db a**b = a**b log(a); a Python int exponent that carries a gradient is a real number, as every int in
        # arithmetic is (and as the scalar template has it); an integer array is data. For real a <= 0 the log is
        # undefined and the gradient is taken as 0 there.
        if not need[1] or hasattr(b, "dtype") and not _is_floating(b):
            db = None
        elif _is_complexish(a) or _is_complexish(b):  # (a real negative base's log is complex: principal_log)
            db = dy * conj(y * (xp.log(a) if getattr(type(y), "__zygote_number__", False) else principal_log(a, y)))
        elif _is_complexish(y) and np.ndim(y) == 0 and a < 0:  # a negative number to a fractional power: its log is
            db = dy * conj(y * (cmath.log(a) if type(a) is float else np.log(a + 0j)))  # log|a| + i pi (hessian's duals)
        elif hasattr(a, "shape") or hasattr(y, "shape"):
            a_ = a if hasattr(a, "shape") else xp.asarray(a, dtype=y.dtype, **on(y))  # (a number: as y, where y lives)
            positive = a_ > 0
            if xp is np:
                db = dy * y * xp.log(xp.where(positive, a, 1.0)) * positive
            else:  # the array API multiplies no booleans
                db = xp.where(positive, dy * y * xp.log(xp.where(positive, a_, 1.0)), 0.0)
        else:
            db = dy * y * math.log(a) if a > 0 else dy * 0.0
        return unbroadcast(da, a), unbroadcast(db, b)

    if type(b) is int and type(a) is np.ndarray and a.dtype.kind == "f":  # x ** 2 on a real array: the common case
        def int_power_back(dy, need=ALL):
            if dy is None or not need[0] or need[1]:
                return back(dy, need)
            return dy * (a + a) if b == 2 else dy * (b * a ** (b - 1)) if b else dy * 0.0, None
        return y, int_power_back
    return y, back


_REALS = frozenset((float, np.float64, np.float32))


def _is_floating(x):
    kind = getattr(x.dtype, "kind", None)
    return kind in "fc" if kind is not None else "float" in str(x.dtype) or "complex" in str(x.dtype)


def _is_zero(b):
    return isinstance(b, (int, float)) and b == 0


def _is_complexish(x):
    return isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", "") == "c"


@adjoint(operator.mod)
def mod(a, b):
    if isinstance(a, (str, bytes)):  # "%.3f" % x is formatting
        return a % b, _no_gradient

    def back(dy):
        if dy is None:
            return (None, None)
        xp = namespace(a if hasattr(a, "shape") else b)
        # (the quotient's floor is piecewise constant: of the values alone, dual numbers' too)
        return unbroadcast(dy, a), unbroadcast(-dy * xp.floor(xp.asarray(strip(a), **(on(a) or on(b))) / strip(b)), b)
    return a % b, back


@adjoint(operator.neg)
def neg(a):
    return -a, lambda dy: (None if dy is None else -dy,)


@adjoint(operator.pos)
def pos(a):
    return +a, lambda dy: (dy,)


def _abs_rule(a):
    y = abs(a)

    def back(dy):
        if dy is None:
            return (None,)
        if _is_complexish(a):  # d|z| = Re(conj(z)/|z| dz): cotangent dy * z / |z|
            xp = namespace(a)
            return (dy * a / xp.where(y == 0, 1, y) if hasattr(a, "shape") else (dy * a / y if y else 0j),)
        xp = namespace(a)
        return (unbroadcast(dy * xp.sign(a), a),)
    return y, back


adjoint(operator.abs)(_abs_rule)
adjoint(abs)(_abs_rule)


# operators compute with the operands' own operators and `namespace(x)`: they serve every array library
namespace_generic(operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod, operator.neg,
                  operator.pos, operator.abs, abs, operator.matmul, operator.iadd, operator.isub, operator.imul,
                  operator.itruediv, operator.imod, operator.imatmul, operator.ipow)

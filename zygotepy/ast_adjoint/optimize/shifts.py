"""free_shifts(): a shift the result does not depend on carries no gradient.

Stable softmax, log-softmax and logsumexp subtract a reduction of their input before `exp`

    z = x - np.max(x, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))

and what they compute does not depend on what was subtracted: `exp(z)` and its sum along the same axis are scaled by
the same factor, which a division cancels; `log(sum(exp(z)))` is shifted by the same amount as `z`, which a
subtraction (or adding the shift back) cancels. In exact arithmetic the cotangent of the shift is zero, yet the plain
backward computes it: a sum along the axis and the reduction's own backward (for `max`: its ties, a mask); in floating
point it is a sum of rounding errors. (JAX's `log_softmax` wraps its max in `stop_gradient` for the same reason.)

The pass proves the invariance on the IR. Adding `d` (constant along the reduced axes) to the shift `m`, each value
computed from it is either shifted, `v + a*d` (`A(a)`), or scaled, `v * exp(a*d)` (`M(a)`), for a rational `a`:
`m` is `A(1)`, `x - m` is `A(-1)`, `0.5 * (x - m)` is `A(-1/2)`, `exp` turns `A(a)` into `M(a)`, `log` turns it back,
a sum along those axes keeps `M(a)`, `M(a) / M(a)` and `A(a) - A(a)` are independent of `d`. When every use of `m` ends in an independent value (a
use the algebra does not know ends the proof), the statements from `m` to those uses are rewritten as

    if <x is a real NumPy array, and np.max, np.exp, ... name the functions seen at transform time>:
        <the statements, with m a constant: its cotangent is not computed, its reduction not differentiated>
    else:
        <the statements as written>

The guard is needed because one transform serves every function of a code object (with other globals) and a global
can be rebound. The operands the algebra admits besides `m`'s descendants are `x` itself and literal numbers, so every
value keeps `x`'s shape and a NumPy operator means what it says. Switched by `OPTIONS.free_shifts`.
"""
import math
import operator
import re
from collections import Counter
from fractions import Fraction

import numpy as np

from .. import runtime as rt
from ..analysis import callee_object
from ..ir import Assign, Call, Const, Global, If, Loop, Phi, Var, atoms, out_vars, read_by, walk
from ..speculate import _read, _Renamer
from .loop_copies import clone

_FUNCTIONS = {np.exp: "exp", np.log: "log", np.sum: "sum", np.mean: "mean", np.max: "max", np.amax: "max",
              np.min: "min", np.amin: "min"}
_REDUCTIONS = {"sum", "mean", "max", "min"}  # as functions of NumPy or as methods of its arrays
_SHIFTS = {"mean", "max", "min"}            # the reductions whose result is taken as a shift
_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div",
              operator.neg: "neg", operator.pos: "pos"}
_TOP = "unknown"


class _Shift:
    """A candidate shift `out = reduce(operand)`: `axis` the literal axis it was reduced along with keepdims=True, or
    None for a whole-array reduction (a number: constant along every axis); `name` the reduction's ("max")."""

    def __init__(self, out, operand, axis, name):
        self.out, self.operand, self.axis, self.name = out, operand, axis, name
        self.guards = {}  # Global -> the object it named at transform time


def _reduction(call, globals_):
    """`(name, operand, extra positional arguments, Global or None)` of a NumPy reduction call, function or method."""
    fn = call.fn.value if isinstance(call.fn, Const) else None
    if fn is rt.callmethod and len(call.args) >= 2 and isinstance(call.args[1], Const) \
            and call.args[1].value in _REDUCTIONS:
        return call.args[1].value, call.args[0], call.args[2:], None
    if isinstance(call.fn, Global) and call.args:
        name = _lookup(_FUNCTIONS, callee_object(call.fn, globals_))
        if name in _REDUCTIONS:
            return name, call.args[0], call.args[1:], call.fn
    return None


def _lookup(table, obj):
    try:
        return table.get(obj)
    except TypeError:  # (an unhashable callee: a user's object with __eq__ and no __hash__)
        return None


def _literal_axes(extra, kwargs):
    """`(axis, keepdims)` of literal reduction arguments, or None for others (out=, dtype=, where=, initial=, ...)."""
    if extra:
        return None
    given = dict(kwargs)
    if set(given) - {"axis", "keepdims"} or any(not isinstance(v, Const) for v in given.values()):
        return None
    axis, keepdims = given.get("axis", Const(None)).value, given.get("keepdims", Const(False)).value
    if not (axis is None or type(axis) is int) or type(keepdims) is not bool:
        return None
    return axis, keepdims


def candidate(s, globals_):
    """The shift `s` makes (`m = np.max(x, axis=k, keepdims=True)`, `m = x.max()`, ...), or None."""
    if not (isinstance(s, Assign) and isinstance(s.out, Var) and isinstance(s.value, Call)) or s.value.star:
        return None
    found = _reduction(s.value, globals_)
    if found is None or found[0] not in _SHIFTS or not isinstance(found[1], Var):
        return None
    name, operand, extra, fn = found
    axes = _literal_axes(extra, s.value.kwargs)
    if axes is None or axes[0] is not None and not axes[1] or axes[0] is None and axes[1]:
        return None
    shift = _Shift(s.out, operand, axes[0], name)
    if fn is not None:
        shift.guards[fn] = callee_object(fn, globals_)
    return shift


def transfer(s, known, shift, globals_):
    """What statement `s` computes from values `known` maps to `(kind, a)`: `(kind, a)`, None (independent of the
    shift) or `_TOP` (the algebra does not know: the proof fails)."""
    call = s.value
    if not isinstance(call, Call):
        return known.get(call, _TOP) if isinstance(call, Var) else _TOP
    if call.star is not None or any(_of(v, known) for _, v in call.kwargs) or _of(call.fn, known):
        return _TOP
    args = call.args
    if any(not _of(a, known) and not (a == shift.operand or isinstance(a, Const) and type(a.value) in (int, float))
           for a in args if not (isinstance(a, Const) and isinstance(a.value, str))):
        return _TOP  # an operand other than x, a literal number or a value computed from the shift
    found = _reduction(call, globals_)
    if found is not None:
        name, operand, extra, fn = found
        axes = _literal_axes(extra, call.kwargs)
        value = known.get(operand) if type(operand) is Var else None
        if value is None or axes is None:
            return _TOP
        if shift.axis is not None and axes != (shift.axis, True):
            return _TOP  # the shift must stay constant along what is reduced, and the shape must stay x's
        if name == "sum" and value[0] == "A":
            return _TOP  # (a sum of n shifted values is shifted n times)
        return _guarded(shift, fn, globals_, value)
    op = _lookup(_OPERATORS, call.fn.value) if isinstance(call.fn, Const) else None
    if op is not None and not call.kwargs:
        return _combine(op, [known.get(a) if type(a) is Var else None for a in args], args)
    name = _lookup(_FUNCTIONS, callee_object(call.fn, globals_)) if isinstance(call.fn, Global) else None
    if name in ("exp", "log") and len(args) == 1 and not call.kwargs and _of(args[0], known):
        kind, a = known[args[0]]
        if (kind, name) in (("A", "exp"), ("M", "log")):
            return _guarded(shift, call.fn, globals_, ("M" if name == "exp" else "A", a))
    return _TOP


def _of(a, known):
    """Is the atom `a` a value computed from the shift?"""
    return type(a) is Var and a in known


def _guarded(shift, fn, globals_, value):
    if fn is not None:
        shift.guards[fn] = callee_object(fn, globals_)
    return value


def _combine(op, values, args):
    """An operator's result from its operands' kinds (None: independent of the shift). Coefficients are exact
    fractions, so that they cancel only where they cancel in exact arithmetic."""
    if op in ("neg", "pos"):
        kind, a = values[0]
        return (kind, -a if op == "neg" and kind == "A" else a)
    (k1, a1), (k2, a2) = (v if v is not None else (None, 0) for v in values)
    if op in ("add", "sub"):
        if "M" in (k1, k2):
            return _TOP
        a = a1 + a2 if op == "add" else a1 - a2
        return ("A", a) if a else None
    if "A" in (k1, k2):  # a shifted value times a literal number c is shifted c times as much (and divided, 1 / c)
        if k1 == "A" and k2 is None and _finite(args[1]):
            c = Fraction(args[1].value)
            return ("A", a1 * c if op == "mul" else a1 / c)
        if op == "mul" and k2 == "A" and k1 is None and _finite(args[0]):
            return ("A", a2 * Fraction(args[0].value))
        return _TOP
    a = a1 + a2 if op == "mul" else a1 - a2
    return ("M", a) if a else None


def _finite(a):
    """Is the atom `a` a literal nonzero finite number?"""
    return isinstance(a, Const) and type(a.value) in (int, float) and a.value != 0 and math.isfinite(a.value)


def _live_reads(fn, reads):
    """`reads` (every read of each Var) less those of a loop's carried value whose variable nothing reads: a name
    assigned in a loop body is carried out of the loop even where nothing reads it after."""
    live = Counter(reads)
    dead, carries = True, [c for s in walk(fn.body) if isinstance(s, Loop) for c in s.carries]
    while dead:
        dead = [c for c in carries if not live.get(c.var)]
        carries = [c for c in carries if live.get(c.var)]
        live.subtract(a for c in dead for a in atoms(c.next) if type(a) is Var)
    return live


def span(stmts, i, shift, reads, globals_):
    """The index one past the last statement of the proof that starts at `stmts[i]`, or None: the statements right
    after the shift each compute from it or its descendants, until every read of those is one of them."""
    known, pending = {shift.out: ("A", Fraction(1))}, {shift.out: reads.get(shift.out, 0)}
    j = i + 1
    while any(pending.values()):
        if j == len(stmts) or not isinstance(stmts[j], Assign) or not isinstance(stmts[j].out, Var):
            return None
        s = stmts[j]
        used = [a for a in read_by(s) if _of(a, known)]
        if not used:
            return None  # a statement in between that is not part of the proof
        value = transfer(s, known, shift, globals_)
        if value is _TOP:
            return None
        for a in used:
            pending[a] -= 1
        if value is not None:
            known[s.out], pending[s.out] = value, reads.get(s.out, 0)
        j += 1
    return j if j > i + 1 else None


def free_shifts(fn, globals_, namer):
    """Rewrite each proven shift of `fn` (see the module docstring) in place; its constants go to `fn.constants`."""
    every = _read(fn)
    reads = (_live_reads(fn, every), every)
    constants = set(fn.constants)
    fn.body = _region(fn.body, globals_, namer, reads, constants)
    fn.constants = frozenset(constants)
    return fn


def _region(stmts, globals_, namer, reads, constants):
    out, i = [], 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, If):
            s.then = _region(s.then, globals_, namer, reads, constants)
            s.orelse = _region(s.orelse, globals_, namer, reads, constants)
        elif isinstance(s, Loop):
            s.body = _region(s.body, globals_, namer, reads, constants)
        shift = candidate(s, globals_)
        end = span(stmts, i, shift, reads[0], globals_) if shift is not None else None
        if end is None:
            out.append(s)
            i += 1
            continue
        out += _rewrite(stmts[i:end], shift, namer, reads[1], constants)
        i = end
    return out


def _as_method(s, shift):
    """The shift's statement for the arm whose guard proved its operand a real NumPy array and the reduction NumPy's
    (`np.max`): the same reduction as that array's method (`x.max(axis=1, keepdims=True)`), which skips the Python
    wrapper of NumPy's function; the result is the same, bit for bit."""
    if isinstance(s.value.fn, Global):
        s.value = Call(Const(rt.callmethod), (shift.operand, Const(shift.name)), s.value.kwargs)
    return s


def _rewrite(proof, shift, namer, reads, constants):
    """`if <guard>: <proof, the shift a constant> else: <proof>`, joining the values read after it (a value only a
    loop's unread carried variable reads too: the join is not useful, so the shift stays a constant)."""
    defined = [v for s in proof for v in out_vars(s.out)]
    inside = {}
    for s in proof:
        for a in read_by(s):
            if type(a) is Var:
                inside[a] = inside.get(a, 0) + 1
    arms = []
    for _ in range(2):
        mapping = {v.name: Var(namer.fresh(re.sub(r"_\d+$", "", v.name))) for v in defined}
        arms.append((_Renamer(mapping).block(clone(proof)), mapping))
    constants.add(arms[0][1][shift.out.name])
    arms[0][0][0] = _as_method(arms[0][0][0], shift)
    line = proof[0].line
    flag = Var(namer.fresh(shift.out.name.lstrip("_") + "_shift_free"))
    tests = [Call(Const(rt.is_real_array), (shift.operand,))]
    tests += [Call(Const(rt.is_same), (fn, Const(target))) for fn, target in shift.guards.items()]
    guard = Assign(flag, Call(Const(rt.all_true), tuple(tests)), line)
    phis = [Phi(v, arms[0][1][v.name], arms[1][1][v.name]) for v in defined if reads.get(v, 0) > inside.get(v, 0)]
    return [guard, If(flag, arms[0][0], arms[1][0], phis, line)]

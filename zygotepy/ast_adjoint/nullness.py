"""simplify_backward(): drop the None tests and None-aware additions the backward does not need.

The adjoint pass writes every cotangent update as if nothing were known: `if dy is not None:` around each
operation's backward, `da = g if da is None else da + g` for each accumulation, `da = None` after each use inside
loops. Most of these outcomes are known before the code runs: a cotangent just reset to None is None; one computed by
arithmetic is a number. This pass tracks, per statement, which cotangent variables are certainly None or certainly
not None (a forward data-flow analysis over the structured regions; loops iterate to a fixed point), and then

- replaces `da = acc(da, g)` by `da = g` where `da` is certainly None, and `acc_scalar(da, g)` by `da + g` where it
  certainly is not,
- keeps only the arm of `if dy is not None:` that will run where `dy` is known,
- removes resets (`da = None`) and copies no later statement reads (a backward liveness pass, liveness.py).

The whole backward runs only for a cotangent that is not None (a None output cotangent means every gradient is
zero: None), so the analysis starts from "the output's cotangent is a value".

Accepts: the backward Function of `adjoint()`. Guarantees: the same results for every input, fewer operations.
"""
import operator

from . import runtime as rt
from ..options import OPTIONS
from .optimize.records import Derivative
from .ir import Assign, Call, Const, If, Loop, Var, atoms, out_vars, read_by, walk
from .liveness import _ARITHMETIC, _Live, _calls, _hashable_in, _prune, _reads, replace


NONE, SOME = "none", "some"


_ACC = (rt.acc_var, rt.acc, rt.acc_scalar)


def _nullness(value, state):
    kind = type(value)
    if kind is Var:
        return state.get(value.name)
    if kind is Const:
        return NONE if value.value is None else SOME
    if kind is Call and type(value.fn) is Const and (
            _hashable_in(value.fn.value, _ARITHMETIC) or isinstance(value.fn.value, Derivative)):
        return SOME  # arithmetic on None would raise: when it runs, its result is a value
    return None


def _set(state, var, nullness):
    state[var.name] = nullness  # None: unknown


def _meet(a, b):
    """What holds on both paths (states are keyed by variable name: hashing a str is cheaper than a Var)."""
    a, b = a.facts(), b.facts()
    if len(b) < len(a):
        a, b = b, a
    return _State({v: n for v, n in a.items() if b.get(v) == n})


class _State:
    """What is known at a point: variable name -> NONE or SOME (None or absent: unknown), kept as changes over the
    state of the enclosing code (`base`), so that the then arm of each `if` gets its own copy at the cost of what the
    arm changes, not of everything known: the pass stays linear in the length of the backward."""
    __slots__ = ("base", "local")

    def __init__(self, facts=None, base=None):
        self.local, self.base = facts if facts is not None else {}, base

    def get(self, name):
        state = self
        while state is not None:
            local = state.local
            if name in local:
                return local[name]
            state = state.base
        return None

    def __setitem__(self, name, nullness):
        self.local[name] = nullness

    def forget(self, name):
        if self.base is None:
            self.local.pop(name, None)
        else:
            self.local[name] = None

    def facts(self):
        """The known facts as a plain dict."""
        if self.base is None:
            return {v: n for v, n in self.local.items() if n is not None}
        out = self.base.facts()
        for v, n in self.local.items():
            if n is None:
                out.pop(v, None)
            else:
                out[v] = n
        return out

    def replace_with(self, other):
        """Become `other` (a state that does not build on this one)."""
        self.local, self.base = other.facts(), None


class _Known:
    """The forward pass: rewrites statements given what is known; `block` updates `state` as control passes. With
    `rewrite` off it only updates `state` (the rounds that find a loop's fixed point build no statements)."""

    def __init__(self, rewrite=True):
        self.rewrite = rewrite

    def block(self, stmts, state):
        out = []
        for s in stmts:
            out += self.stmt(s, state)
        return out

    def stmt(self, s, state):
        kind = type(s)
        if kind is Assign:
            return self.assign(s, state)
        if kind is If:
            return self.branch(s, state)
        if kind is Loop:
            return self.loop(s, state)
        state.replace_with(_State())  # a nested def (or anything else) may read or write cells: forget everything
        return [s]

    def assign(self, s, state):
        if type(s.out) is not Var:
            for o in out_vars(s.out):
                state.forget(o.name)
            return [s]
        value = s.value
        if _calls(value, _ACC) and value.args[0] == s.out:
            d, g = value.args
            known, incoming = state.get(d.name), _nullness(g, state)
            if known == NONE:
                s, nullness = replace(s, value=g) if self.rewrite else s, incoming
            elif incoming == NONE:
                return []  # adding zero
            elif known == SOME and value.fn.value is rt.acc_scalar:
                if self.rewrite:
                    s = replace(s, value=Call(Const(operator.add), (d, g)))
                nullness = SOME
            else:
                nullness = SOME if SOME in (known, incoming) else None
        else:
            nullness = _nullness(value, state)
        _set(state, s.out, nullness)
        return [s]

    def branch(self, s, state):
        tested = s.cond.args[0] if _calls(s.cond, (rt.is_not_none, rt.is_none)) and isinstance(
            s.cond.args[0], Var) else None
        if tested is not None:
            expect = SOME if s.cond.fn.value is rt.is_not_none else NONE
            known = state.get(tested.name)
            if known is not None and not s.phis:
                taken = self.block(s.then if known == expect else s.orelse, state)
                if self.rewrite and taken and isinstance(taken[0], Assign) and not taken[0].line:
                    taken[0] = replace(taken[0], line=s.line)  # keep the user's line comment
                return taken
        # each arm builds on `state`; they meet on what either changed (cheaper than comparing whole states)
        then_state, else_state = _State(base=state), _State(base=state)
        if tested is not None:
            then_state[tested.name] = expect
            else_state[tested.name] = NONE if expect == SOME else SOME
        then, orelse = self.block(s.then, then_state), self.block(s.orelse, else_state)
        merged = {p.out.name for p in s.phis}
        if then_state.base is not state or else_state.base is not state:  # an arm started over (a def, a loop)
            state.replace_with(_meet(then_state, else_state))
            for n in merged:
                state.forget(n)
        else:
            for n in then_state.local.keys() | else_state.local.keys() | merged:
                known = then_state.get(n)
                if known is None or known != else_state.get(n) or n in merged:
                    state.forget(n)
                else:
                    state[n] = known
        if not self.rewrite or tested is not None and not then and not orelse and not s.phis:
            return []
        return [replace(s, then=then, orelse=orelse)]

    def loop(self, s, state):
        rebound = [v.name for v in (*out_vars(s.target), *(c.var for c in s.carries))]
        analyse = _Known(rewrite=False)
        end = self.enter(state, rebound)
        analyse.block(s.test, end)
        analyse.block(s.body, end)
        head = _meet(state, end)  # one round from the entry; usually the fixed point, checked below
        while True:  # each round that does not end it removes facts: it ends
            h = self.enter(head, rebound)
            test = self.block(s.test, h)
            end = _State(h.facts())
            body = self.block(s.body, end)
            new = _meet(head, end)
            if new.local == head.local:
                break
            head = new
        state.replace_with(h)  # the loop leaves from its head
        return [replace(s, test=test, body=body)] if self.rewrite else []

    @staticmethod
    def enter(head, rebound):
        h = head.facts()
        for v in rebound:
            h.pop(v, None)
        return _State(h)


def simplify_backward(backward):
    """Rewrite the backward Function in place (see the module docstring) and return it."""
    if not OPTIONS.nullness:
        return backward
    dret = backward.params[1]
    body = backward.body
    start = 0
    while start < len(body) and isinstance(body[start], Assign) and (
            isinstance(body[start].out, tuple) or isinstance(body[start].value, Const)):
        start += 1  # the tape's unpacking and the cotangents' None initialisations
    rest = body[start:]
    if rest:
        rest = [If(Call(Const(rt.is_not_none), (dret,)), rest, [])]
    known = _Known().block(body[:start] + rest, _State())
    backward.body, _ = _prune(known, _Live(_reads(backward.ret, set())))
    backward.body = _started_sums(backward.body)
    return backward


def _started_sums(stmts):
    """A backward loop over a tape (`for r in reversed(_stack)`) that adds to a cotangent `dx` in every iteration,
    `dx = g if dx is None else dx + g` (a loop invariant's: nothing else in the loop reads or writes dx), starts the
    sum before the loop instead, `if dx is None and _stack: dx = 0`, and adds plainly, `dx = dx + g`: one None test
    per loop, not per iteration. The same sums, except that a zero is never negative."""
    out = []
    for s in stmts:
        if isinstance(s, If):
            s = replace(s, then=_started_sums(s.then), orelse=_started_sums(s.orelse))
        elif isinstance(s, Loop):
            s = replace(s, body=_started_sums(s.body))
            stack = s.iter.args[0] if isinstance(s.iter, Call) and isinstance(s.iter.fn, Const) and \
                s.iter.fn.value is reversed and len(s.iter.args) == 1 and isinstance(s.iter.args[0], Var) else None
            sums = [st for st in s.body if _is_scalar_sum(st)] if stack is not None else []
            started = [st.out for st in sums if _only_summed(st.out, s)]
            if started:
                out += [If(Call(Const(rt.all_true), (Call(Const(rt.is_none), (d,)), stack)), [Assign(d, Const(0))], [])
                        for d in started]
                s = replace(s, body=[replace(st, value=Call(Const(operator.add), st.value.args))
                                     if st.out in started and _is_scalar_sum(st) else st for st in s.body])
        out.append(s)
    return out


def _is_scalar_sum(s):
    return isinstance(s, Assign) and isinstance(s.out, Var) and isinstance(s.value, Call) \
        and isinstance(s.value.fn, Const) and s.value.fn.value is rt.acc_scalar and s.value.args[0] == s.out


def _only_summed(d, loop):
    """Is `d` written only by top-level sums of the loop's body, once, and read nowhere else in it?"""
    if loop.target is not None and d in out_vars(loop.target):
        return False
    writes = reads = 0
    for st in walk(loop.body):
        if isinstance(st, Assign) and d in out_vars(st.out):
            writes += 1
            if not (any(st is top for top in loop.body) and _is_scalar_sum(st)):
                return False
            reads += sum(1 for a in atoms(st.value.args[1]) if a == d)
        else:
            reads += sum(1 for a in read_by(st) if a == d)
    return writes == 1 and reads == 0

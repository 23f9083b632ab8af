"""tidy(): readability clean-ups of the generated forward, after the adjoint pass.

Only rewrites that cannot change behaviour: a `for` loop whose sequence needs no gradient walks its iterable directly
(`for i in range(n):`, not `_t = range(n); _seq = iterate(_t); for i in _seq:`). `iterate` exists so that a rule can see
the sequence of an active loop; an inactive loop does not need it (Python's `for` accepts any iterable).
"""
from collections import Counter

from . import runtime as rt

from .ir import Assign, Call, Const, Def, If, Loop, Var


def _atoms(x, out=None):
    """The Vars a value (an atom, a Call, a tuple of them) reads, in order, as a list."""
    out = [] if out is None else out
    kind = type(x)
    if kind is Var:
        out.append(x)
    elif kind is Call:
        _atoms(x.fn, out)
        for a in x.args:
            _atoms(a, out)
        for _, v in x.kwargs:
            _atoms(v, out)
        if x.star is not None:
            _atoms(x.star, out)
    elif kind is tuple:
        for a in x:
            _atoms(a, out)
    return out


def _def_defaults(s):
    """The Vars among a nested function's default values (`lambda t, i=i: ...`; the others are constants)."""
    return [d for d in s.defaults or () if isinstance(d, Var)]


def _uses(stmts, counts):
    for s in stmts:
        if isinstance(s, Assign):
            counts.update(_atoms(s.value))
        elif isinstance(s, Def):
            counts.update(s.cells)
            counts.update(s.values)
            counts.update(_def_defaults(s))
        elif isinstance(s, If):
            counts.update(_atoms(s.cond))
            _uses(s.then, counts)
            _uses(s.orelse, counts)
        elif isinstance(s, Loop):
            counts.update(_atoms(s.iter))
            counts.update(_atoms(s.cond))
            counts.update(_atoms(s.exit))
            _uses(s.test, counts)
            _uses(s.body, counts)
    return counts


def _is_call_of(s, fn):
    return isinstance(s, Assign) and isinstance(s.out, Var) and isinstance(s.value, Call) \
        and isinstance(s.value.fn, Const) and s.value.fn.value is fn


def _tidy_region(stmts, uses):
    out = []
    for s in stmts:
        if isinstance(s, If):
            s.then, s.orelse = _tidy_region(s.then, uses), _tidy_region(s.orelse, uses)
        elif isinstance(s, Loop):
            s.test, s.body = _tidy_region(s.test, uses), _tidy_region(s.body, uses)
            _inline_iterable(s, out, uses)
            _coalesce_carries(s, uses)
        out.append(s)
    return out


def _inline_iterable(loop, before, uses):
    """Fold `seq = iterate(t)` (and `t = f(...)` before it) into the loop header when nothing else reads them."""
    if not (before and _is_call_of(before[-1], rt.iterate) and before[-1].out == loop.iter and uses[loop.iter] == 1):
        return
    iterable = before.pop().value.args[0]
    loop.iter = iterable
    prev = before[-1] if before else None
    if isinstance(iterable, Var) and isinstance(prev, Assign) and prev.out == iterable and uses[iterable] == 1 \
            and isinstance(prev.value, Call) and iterable.name.startswith("_"):
        loop.iter = before.pop().value


_MEMO = {}


def _reads_writes(s):
    """(Vars read, Vars written) by one statement, nested regions included (memoised during one tidy())."""
    hit = _MEMO.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1]
    result = _compute_reads_writes(s)
    _MEMO[id(s)] = (s, result)
    return result


def _compute_reads_writes(s):
    if isinstance(s, Assign):
        outs = s.out if isinstance(s.out, tuple) else (s.out,)
        return set(_atoms(s.value)), set(outs)
    if isinstance(s, Def):
        return {*s.cells, *s.values, *_def_defaults(s)}, {s.out}
    reads, writes = set(), set()
    if isinstance(s, If):
        reads.update(_atoms(s.cond))
        parts = [*s.then, *s.orelse]
    else:
        reads.update(_atoms(s.iter))
        parts = [*s.test, *s.body]
    for p in parts:
        r, w = _reads_writes(p)
        reads |= r
        writes |= w
    return reads, writes


class _Order:
    """Where each variable is first written and last read among the top-level statements of a region: what
    `read_after_write` asks about every carried value of a loop, answered in O(1) instead of a walk of the body
    (which made the transform quadratic in the length of a loop)."""

    def __init__(self, stmts):
        self.stmts, self.first_write, self.last_read = stmts, {}, {}
        for k, st in enumerate(stmts):
            reads, writes = _reads_writes(st)
            for v in writes:
                self.first_write.setdefault(v, k)
            for v in reads:
                self.last_read[v] = k

    def read_after_write(self, carried, value):
        """Is `carried` read after `value` is written, in program order (each arm of an `if` in its own order)?"""
        k = self.first_write.get(value)
        if k is None:
            return False
        st = self.stmts[k]
        if isinstance(st, If) and (_order(st.then).read_after_write(carried, value)
                                   or _order(st.orelse).read_after_write(carried, value)):
            return True
        if isinstance(st, Loop) and carried in _reads_writes(st)[0]:
            return True
        return self.last_read.get(carried, -1) > k


def _order(stmts):
    hit = _MEMO.get(id(stmts))
    if hit is None or hit[0] is not stmts:
        hit = _MEMO[id(stmts)] = (stmts, _Order(stmts))
    return hit[1]


def rename(stmts, names):
    """Rename Vars by the mapping `names` in statements, in place, in one walk (forward code, and a backward whose
    names the mapping covers: the backward otherwise reads values through records)."""
    def atom(a):
        kind = type(a)
        if kind is Var:
            return names.get(a, a)
        if kind is Call:
            return Call(atom(a.fn), tuple([atom(x) for x in a.args]), tuple([(k, atom(v)) for k, v in a.kwargs]),
                        atom(a.star) if a.star is not None else None)
        if kind is tuple:
            return tuple([atom(x) for x in a])
        return a
    for s in stmts:
        if isinstance(s, Assign):
            s.out, s.value = atom(s.out), atom(s.value)
        elif isinstance(s, Def):
            s.out, s.cells, s.values = atom(s.out), tuple(atom(c) for c in s.cells), tuple(atom(v) for v in s.values)
            if s.defaults:
                s.defaults = tuple(atom(d) if isinstance(d, Var) else d for d in s.defaults)
        elif isinstance(s, If):
            s.cond = atom(s.cond)
            rename(s.then, names)
            rename(s.orelse, names)
        elif isinstance(s, Loop):
            s.iter, s.cond, s.exit = atom(s.iter), atom(s.cond), atom(s.exit)
            rename(s.test, names)
            rename(s.body, names)


def _coalesce_carries(loop, uses):
    """Write a loop-carried value's next value straight into it when the old value is dead by then:
    `r_2 = r * x; ...; r = r_2` becomes `r = r * x`, which reads like the user's code and saves a copy."""
    if not loop.body or not isinstance(loop.body[-1], Assign):
        return
    last = loop.body[-1]
    outs = last.out if isinstance(last.out, tuple) else (last.out,)
    nexts = last.value.args if isinstance(last.value, Call) else (last.value,)
    if len(outs) != len(nexts):
        return
    body, keep, renames = loop.body[:-1], [], {}
    order, counts, targets = _Order(body), Counter(n for n in nexts if isinstance(n, Var)), loop_targets(loop)
    for c, v in zip(outs, nexts, strict=True):
        ok = (isinstance(v, Var) and v != c and counts[v] == 1 and c not in counts
              and v in order.first_write and v not in targets and not order.read_after_write(c, v))
        if ok:  # the checks of this loop's other carries involve other, distinct values
            renames[v] = c
            loop.exit = c if loop.exit == v else loop.exit
        else:
            keep.append((c, v))
    if renames:  # only the statements that mention a renamed value are rebuilt
        rename([st for st in body if not renames.keys().isdisjoint(_reads_writes(st)[0])
                 or not renames.keys().isdisjoint(_reads_writes(st)[1])], renames)
    _MEMO.clear()
    if len(keep) == len(outs):
        return
    loop.body = body + ([] if not keep else [Assign(keep[0][0], keep[0][1], last.line)] if len(keep) == 1 else
                        [Assign(tuple(c for c, _ in keep), Call(last.value.fn, tuple(v for _, v in keep)), last.line)])


def loop_targets(loop):
    return {loop.target} if isinstance(loop.target, Var) else set(loop.target or ())


def tidy(forward, extra_uses=()):
    """Tidy the forward function's body in place; `extra_uses` are Vars the backward reads through the tape."""
    uses = _uses(forward.body, Counter(extra_uses))
    uses.update(_atoms(forward.ret))
    try:
        forward.body = _tidy_region(forward.body, uses)
    finally:
        _MEMO.clear()
    return forward

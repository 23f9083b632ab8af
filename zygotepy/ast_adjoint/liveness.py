"""The backward's dead resets and copies, removed by a liveness pass (`_prune`, run by nullness.simplify_backward): a
reset (`da = None`) or a copy no later statement reads goes, and so does, in a straight-line loop body, a copy whose
target dies in the iteration (`_forwarded_copies`). Also the IR helpers both passes use (`replace`, `_calls`).
"""
import operator

from . import inline
from . import runtime as rt
from .optimize.records import Derivative
from .ir import Assign, Call, Const, If, Loop, Var, atoms, out_vars
from .tidy import rename


_ARITHMETIC = frozenset((operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos,
                         operator.pow, rt.acc_scalar))


def replace(s, **changes):
    """A copy of IR statement `s` with `changes` (`dataclasses.replace` without its per-call introspection)."""
    new = object.__new__(type(s))
    new.__dict__.update(s.__dict__)
    new.__dict__.update(changes)
    return new


def _calls(value, fns):
    return type(value) is Call and type(value.fn) is Const and _hashable_in(value.fn.value, fns)


def _hashable_in(x, fns):
    try:
        return x in fns
    except TypeError:
        return False


# --- dead resets and copies -----------------------------------------------------------------------------------------

def _reads(x, out):
    """Add the names of the variables `x` (an atom, a Call, a tuple of them) reads to `out` (`ir.atoms`, unrolled:
    liveness asks this of every statement)."""
    kind = type(x)
    if kind is Var:
        out.add(x.name)
    elif kind is Call:
        _reads(x.fn, out)
        for a in x.args:
            _reads(a, out)
        for _, v in x.kwargs:
            _reads(v, out)
        if x.star is not None:
            _reads(x.star, out)
    elif kind is tuple:
        for a in x:
            _reads(a, out)
    return out


class _Live:
    """A set of variable names kept as changes over a base set (or another `_Live`), so that giving each arm of a
    branch its own copy costs the arm's size, not the number of live names: liveness stays linear in code size."""
    __slots__ = ("base", "added", "removed")

    def __init__(self, base):
        self.base, self.added, self.removed = base, set(), set()

    def __contains__(self, name):
        return name in self.added or name not in self.removed and name in self.base

    def add(self, name):
        self.added.add(name)
        self.removed.discard(name)

    def discard(self, name):
        self.added.discard(name)
        self.removed.add(name)

    def to_set(self):
        base = self.base.to_set() if isinstance(self.base, _Live) else self.base
        return {n for n in base if n not in self.removed} | self.added


def _union(live, a, b):
    """`live` becomes `a | b`, where `a` and `b` are overlays whose base is `live`."""
    if a.base is live and b.base is live:
        both_removed = a.removed & b.removed
        for n in a.added | b.added:
            live.add(n)
        for n in both_removed:
            live.discard(n)
        return live
    return _Live(a.to_set() | b.to_set())


def _prune(stmts, live, rewrite=True):
    """(statements without dead resets/copies, names live before them), given `live`, a `_Live` of the names live
    after them, which it updates; without `rewrite` only the live names (no statements built)."""
    out = []
    for k in range(len(stmts) - 1, -1, -1):
        s = stmts[k]
        kind = type(s)
        if kind is Assign:
            out_, value = s.out, s.value
            if type(out_) is Var:
                if out_.name not in live and (type(value) is Var or type(value) is Const and value.value is None
                                              and not _releases(stmts, k)):
                    continue
                live.discard(out_.name)
            else:
                for o in out_vars(out_):
                    live.discard(o.name)
            _reads(value, live)
        elif kind is If:
            arms = []
            for body, side in ((s.then, "then"), (s.orelse, "orelse")):
                arm = _Live(live)
                for p in s.phis:
                    arm.discard(p.out.name)
                _reads(tuple(getattr(p, side) for p in s.phis), arm)
                arms.append(_prune(body, arm, rewrite))
            if rewrite:
                s = replace(s, then=arms[0][0], orelse=arms[1][0])
            live = _union(live, arms[0][1], arms[1][1])
            _reads(s.cond, live)
        elif isinstance(s, Loop):
            s, before = _prune_loop(s, live.to_set(), rewrite)
            live = _Live(before)
        else:  # a nested def reads its cells, their values and its defaults
            live.discard(s.out.name)
            _reads((*s.cells, *s.values, *(s.defaults or ()), *(s.kwdefaults or {}).values()), live)
        if rewrite:
            out.append(s)
    return out[::-1], live


def _releases(stmts, k):
    """Is the reset `stmts[k]` (`d = None`) the release of a cotangent just handed to a back as its `dy` (`back(d)`,
    `back(d, need, *into)`, directly or as the last statement of an `if`)? The back may return d's buffer as another
    cotangent (`x[i] = v` returns it as the running cotangent of `x`, a link passes it through), which later backs
    update in place only while nothing else holds it (`runtime.sole`): a dead `d` still holding it would make each of
    them copy it, once per iteration of a loop that reads and writes a list item by item."""
    block, j = stmts, k - 1
    for _ in range(_RELEASE_SCAN):  # back over the statements that add up the back's results, to the back's call
        prev = block[j] if j >= 0 else None
        if type(prev) is If and prev.then and not prev.orelse:
            block, j = prev.then, len(prev.then) - 1
        elif type(prev) is Assign and type(prev.value) is Call and type(prev.value.fn) is Var:
            return prev.value.args[:1] == (stmts[k].out,)
        elif type(prev) is Assign:
            j -= 1
        else:
            return False
    return False


_RELEASE_SCAN = 16  # statements looked at: a back's call and the additions of its results (one per argument)


def _prune_loop(s, live_after, rewrite):
    """Liveness around a loop (sets of names): at its head, what the exit, the test, the body or the carried updates
    read."""
    carried = {c.var.name for c in s.carries}
    targets = {v.name for v in out_vars(s.target)}
    next_reads = _reads(tuple(c.next for c in s.carries), set())

    def after_body(head):
        return _Live((head - carried) | next_reads)
    leaving = live_after | _reads((s.cond, s.exit), set())
    head = live_after | _reads(s.cond, set())
    while True:  # the live set at the head only grows, within the function's variables: it ends
        body, body_in = _prune(s.body, after_body(head), rewrite)
        test, test_in = _prune(s.test, _Live(leaving | (body_in.to_set() - targets)), rewrite)
        test_in = test_in.to_set()
        if test_in <= head:
            break
        head |= test_in
    before = (head - carried) | _reads((s.iter, *(c.init for c in s.carries)), set())
    if rewrite:
        body = _forwarded_copies(body, after_body(head).to_set() | leaving)
    return (replace(s, body=body, test=test) if rewrite else s), before


def _forwarded_copies(stmts, live_end):
    """A straight-line loop body (a versioned loop's fast backward) without the copies whose target dies in the
    iteration: `dt_3 = dy_3; ...; da = da + dt_3 * a` reads `dy_3` itself, when `dt_3` is set once, read by arithmetic
    alone (no back that could update it in place), and `dy_3` is not rebound before the last read. `live_end`: the
    names read after an iteration."""
    if not all(type(s) is Assign for s in stmts):
        return stmts
    stmts, j = list(stmts), 0
    while j < len(stmts):
        x, y = stmts[j].out, _copied(stmts[j].value)
        if type(x) is Var and type(y) is Var and x != y and x.name not in live_end:
            later = stmts[j + 1:]
            rebound = next((k for k, t in enumerate(later) if y in out_vars(t.out)), len(later))
            reads = [k for k, t in enumerate(later) if x in atoms(t.value)]
            if all(x not in out_vars(t.out) for t in later) and all(x not in atoms(t.value) for t in stmts[:j]) \
                    and all(k <= rebound and _arithmetic(later[k].value) for k in reads):
                for k in reads:
                    later[k] = replace(later[k])
                    rename([later[k]], {x: y})
                stmts[j:] = later
                continue
        j += 1
    return stmts


def _copied(value):
    """What `value` copies: a Var, or the Var an inline derivative passes on as it is (`dy` for `+`'s operands)."""
    if type(value) is Call and type(value.fn) is Const and isinstance(value.fn.value, Derivative):
        d = value.fn.value
        return inline.passed(d.fn, d.index, value.args)
    return value


def _arithmetic(value):
    """Is `value` a copy, a constant, or arithmetic (inline derivatives included) on them: nothing that could update
    an operand in place?"""
    if type(value) is not Call:
        return True
    return (_calls(value, _ARITHMETIC) or type(value.fn) is Const and isinstance(value.fn.value, Derivative)) \
        and all(_arithmetic(a) for a in value.args)

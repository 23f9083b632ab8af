"""Loop copies (loop versioning, `OPTIONS.loop_copies`): a second copy of a loop, free of per-operation type guards, for loops that stay on Python floats.

The adjoint pass guards every operation that has an inline scalar derivative (`if type(r) in _SC and ...`) and the
backward tells the two paths apart per operation. When, in a loop, every guarded value is either checked once at
loop entry (a carried value, an invariant) or produced inside the loop by an operation that maps Python numbers to
Python numbers (`+ - * /`, `math.*`), then the guards hold in every iteration if they hold at entry. Such a loop is
emitted twice, the fast copy without guards, and the backward picks the matching copy from one recorded flag. This is
the loop versioning of docs/performance.md (pow: 2.7-2.9x instead of 4.4x the primal).
"""
import math
import operator
from dataclasses import dataclass, replace

from ...adjoints import registry
from .. import items
from .. import runtime as rt
from ..ir import Assign, Call, Const, Def, If, Loop, Var, atoms
from ..tidy import rename
from .records import Derivative

# operations that map Python ints/floats to Python ints/floats (operator.pow does not: (-8.0) ** (1/3) is complex)
CLOSED = {operator.add, operator.sub, operator.mul, operator.truediv, operator.mod, operator.neg, operator.pos,
          operator.abs, abs, operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.imod,
          math.sin, math.cos, math.tan, math.exp, math.log, math.sqrt, math.tanh, math.sinh, math.cosh, math.atan,
          math.atan2, math.hypot, math.log1p, math.expm1, math.erf, math.erfc, math.pow, math.asin, math.acos}

_NUMBER_TESTS = (rt.is_scalar, items.is_int)  # (what the scalar paths and an item read's index test)


@dataclass
class Candidate:
    """One guarded operation: its forward `If(guard, fast, generic)`, its backward `If(is_fast, fast, generic)` (None
    for an operation with no backward),
    its output, its callee, and for each guarded atom the test (a Var computed before the loop, or a Call).
    `number_out`: its output is a Python or NumPy number wherever its tests hold (an item read of a float64 array,
    items.py), as the output of an operation in CLOSED is."""
    forward: If
    backward: If
    out: Var
    target: object
    tests: list
    number_out: bool = False
    fast: list = None       # the statements that replace `forward` in the fast copy (None: `forward.then`)
    fast_back: list = None  # and `backward` (None: `backward.then`)


def clone(stmts, swap=None):
    """Copy statements (atoms are immutable and shared); `swap` maps id(If) -> the statements that replace it."""
    out = []
    for s in stmts:
        if swap and id(s) in swap:
            out += clone(swap[id(s)], swap)
        elif isinstance(s, If):
            out.append(replace(s, then=clone(s.then, swap), orelse=clone(s.orelse, swap), phis=list(s.phis)))
        elif isinstance(s, Loop):
            out.append(replace(s, body=clone(s.body, swap), test=clone(s.test, swap), carries=list(s.carries)))
        elif isinstance(s, (Assign, Def)):
            out.append(replace(s))
        else:
            raise TypeError(f"cannot copy {s!r}")
    return out


def entry_tests(loop, carries, candidates):
    """(tests to run once at loop entry that make every guard of the top-level candidates true in every iteration,
    those candidates), or None when the loop does not qualify."""
    by_statement = {id(c.forward): c for c in candidates}
    carried = {c.var: c for c in carries}
    implied, tests, checked, top = set(), [], [], []
    if isinstance(loop.target, Var):  # `for i in range(...)`: i is an int in every iteration
        implied.add(loop.target)
        tests.append(Call(Const(rt.is_range), (loop.iter,)))
    for s in loop.body:
        cand = by_statement.get(id(s))
        if cand is None:
            if _closed_inactive(s, implied):
                implied.add(s.out)
            continue
        top.append(cand)
        for atom, test in cand.tests:
            if isinstance(test, Var):  # computed before the loop: an invariant or a callee identity
                tests.append(test)
            elif not _tests_number(test):
                return None  # (`implied` proves Python numbers only: not an array, as `v = v + v[0]` carries)
            elif atom in implied:
                continue
            elif atom in carried:
                tests.append(test)
                checked.append(atom)
                implied.add(atom)
            else:
                return None
        if _in_closed(cand.target) or cand.number_out:
            implied.add(cand.out)
    if not top:
        return None
    for var in checked:
        nxt = carried[var].next
        if nxt != var and nxt not in implied and not (isinstance(nxt, Const) and type(nxt.value) in rt.SCALARS):
            return None
    unique = []
    for t in tests:
        if t not in unique:
            unique.append(t)
    return unique, top


def _tests_number(test):
    """Is the guard `test` (a Call on one atom) passed by Python numbers alone (`is_scalar`, an item index's
    `is_int`)? The reasoning of `entry_tests` follows numbers through CLOSED operations; a carried array's guard (an
    item read's `is_vector(v)`) checked at entry would say nothing of the next iteration's `v`, and the operations
    taking it (`v + v[0]`) would lose their own guards, pasting a scalar derivative in for an array."""
    return isinstance(test, Call) and isinstance(test.fn, Const) and test.fn.value in _NUMBER_TESTS


def _closed_inactive(s, implied):
    """An operation the pass left alone (`i + 1` on a loop counter) whose result is a Python number too, or a copy
    of such a number (an inlined callee's result)."""
    if isinstance(s, Assign) and isinstance(s.out, Var) and isinstance(s.value, Var):
        return s.value in implied
    return (isinstance(s, Assign) and isinstance(s.out, Var) and isinstance(s.value, Call)
            and isinstance(s.value.fn, Const) and _in_closed(s.value.fn.value)
            and all(a in implied or isinstance(a, Const) and type(a.value) in rt.SCALARS for a in s.value.args))


def _in_closed(fn):
    try:
        return fn in CLOSED
    except TypeError:
        return False


def _lean_record(body, push, target):
    """The fast body's tape record without the entries it does not need: a slot the fast arms set to None (`y_back =
    None`), and a second copy of a value already recorded (`_t_2_back = y; ...; _t_4_back = y`). Returns the body,
    the backward loop's target, the statements that set the None slots at the top of each backward iteration, the
    renames that stand for the second copies there (`_t_4_back` -> `_t_2_back`), and the body's push."""
    if not all(isinstance(s, Assign) for s in body):
        return body, target, [], {}, push
    k = next((j for j, s in enumerate(body) if s.value is push.value), None)  # (copies share their values)
    if k is None or not isinstance(target, tuple) \
            or len(push.value.args) != 1 or not isinstance(push.value.args[0], Call) \
            or push.value.args[0].fn != Const(rt.tuple_of) or len(push.value.args[0].args) != len(target):
        return body, target, [], {}, push
    records = push.value.args[0].args
    saves = {}  # record -> index of the one statement that sets it
    for j, s in enumerate(body):
        for v in (s.out if isinstance(s.out, tuple) else (s.out,)):
            if v in records:
                saves[v] = None if v in saves else j
    kept, prologue, renames, copied = [], [], {}, {}  # copied: (source Var, its last assignment before) -> record kept
    for r, name in zip(records, target, strict=True):
        j = saves.get(r)
        # (a record set after the push, such as a loop-carried value's `a_2 = a_3`, is pushed with its value from
        # before that statement: what the statement assigns says nothing about it)
        value = body[j].value if j is not None and j < k else None
        if isinstance(value, Const) and value.value is None:
            prologue.append(Assign(name, Const(None)))
            continue
        if isinstance(value, Var):
            version = max((i for i in range(j) if value in (body[i].out if isinstance(body[i].out, tuple)
                                                             else (body[i].out,))), default=-1)
            first = copied.setdefault((value, version), name)
            if first is not name:
                renames[name] = first
                continue
        kept.append((r, name))
    if len(kept) == len(records) or not kept:
        return body, target, [], {}, push
    entry = kept[0][0] if len(kept) == 1 else Call(Const(rt.tuple_of), tuple(r for r, _ in kept))
    new_push = replace(body[k], value=Call(push.value.fn, (entry,)))
    dropped = {saves[r] for r in records if saves.get(r) is not None and r not in {r for r, _ in kept}
               and sum(1 for st in body for a in atoms(st.value) if a == r) == 1}  # (the push alone read them)
    body = [new_push if j == k else s for j, s in enumerate(body) if j not in dropped]
    new_target = kept[0][1] if len(kept) == 1 else tuple(name for _, name in kept)
    return body, new_target, prologue, renames, new_push


def _pushed_early(body, push):
    """A straight-line fast body whose tape record is a copy, `r_back = r; r *= x; ...; push(r_back)`, pushes the
    value itself where it copied it, `push(r); r *= x; ...`: one name less per iteration. (Nothing between can leave
    the iteration early, and nothing else reads the copy.)"""
    if not body or not all(isinstance(s, Assign) for s in body):
        return body
    k = next((j for j, s in enumerate(body) if s.value is push.value), None)  # (copies share their values)
    if k is None or len(push.value.args) != 1:
        return body
    record = push.value.args[0]
    if isinstance(record, Call):
        return _pushed_sources(body, k)
    saves = [j for j, s in enumerate(body) if s.out == record]
    if len(saves) != 1 or not isinstance(body[saves[0]].value, Var):
        return body
    if sum(1 for s in body for a in atoms(s.value) if a == record) != 1:  # the push alone reads the copy
        return body
    early = replace(body[k], value=Call(push.value.fn, (body[saves[0]].value,)), line=body[saves[0]].line)
    return [early if j == saves[0] else s for j, s in enumerate(body) if j != k]


def _shared_derivatives(top, forward_swap, backward_swap):
    """In the fast copy, `s = sin(x)` whose iteration also computes `c = cos(x)` records `c` for its backward, which
    then multiplies by it instead of calling `cos` again (a scalar rule's `shares`, registry.scalar_rule; `cos`
    likewise records `s`). Hand-written code shares these values; without this, the chain workload's backward made two
    math calls per iteration. Updates the swaps in place."""
    ops = {}  # id(candidate) -> its fast statement computing the operation
    for c in top:
        fast = forward_swap.get(id(c.forward), ())
        op = [s for s in fast if s.out == c.out]
        if len(fast) == 2 and len(op) == 1 and isinstance(op[0].value, Call) \
                and all(isinstance(a, (Var, Const)) for a in op[0].value.args):
            ops[id(c)] = op[0]
    for i, c in enumerate(top):
        shared = registry.find_shared(c.target) if _in_closed(c.target) else None
        back = backward_swap.get(id(c.backward))
        if shared is None or id(c) not in ops or not back or len(back) != 1 or not isinstance(back[0], Assign):
            continue
        add = back[0].value
        term = add.args[1] if isinstance(add, Call) and len(add.args) == 2 else None
        if not isinstance(term, Call) or not isinstance(term.fn, Const) or not isinstance(term.fn.value, Derivative) \
                or term.fn.value.fn is not registry.find_scalar(c.target) or len(term.args) != 3:
            continue
        args = ops[id(c)].value.args
        partner = next((j for j, p in enumerate(top) if p.target is shared[0] and id(p) in ops
                        and ops[id(p)].value.args == args), None)
        if partner is None:
            continue
        save = next(s for s in forward_swap[id(c.forward)] if s is not ops[id(c)])
        forward_swap[id(c.forward)] = [s for s in forward_swap[id(c.forward)] if s is not save]
        later = top[max(i, partner)].forward
        forward_swap[id(later)] = forward_swap[id(later)] + [
            Assign(save.out, ops[id(top[partner])].out, ops[id(c)].line)]
        dy, y, _ = term.args
        backward_swap[id(c.backward)] = [replace(back[0], value=Call(add.fn, (add.args[0], Call(
            Const(Derivative(shared[1], 0)), (dy, y, save.out)))))]


def _pushed_sources(body, k):
    """A tuple record (`body[k]` pushes `(r_back, s_back)`) holds a copied value itself where nothing between the copy
    and the push rebinds it: `push((r, s_back))`, one copy less per iteration."""
    record = body[k].value.args[0]
    entries, dropped = list(record.args), set()
    for n, r in enumerate(entries):
        saves = [j for j, s in enumerate(body) if s.out == r]
        if len(saves) != 1 or not isinstance(body[saves[0]].value, Var) \
                or sum(1 for s in body for a in atoms(s.value) if a == r) != 1:  # the push alone reads the copy
            continue
        source = body[saves[0]].value
        if any(source in (s.out if isinstance(s.out, tuple) else (s.out,)) for s in body[saves[0] + 1:k]):
            continue
        entries[n] = source
        dropped.add(saves[0])
    if not dropped:
        return body
    pushed = replace(body[k], value=Call(body[k].value.fn, (Call(record.fn, tuple(entries)),)))
    return [pushed if j == k else s for j, s in enumerate(body) if j not in dropped]


def version(loop, back_loop, carries, candidates, flag, push):
    """Forward and backward statements running a guard-free copy of the loop when `flag` (computed at entry) holds;
    `push` is the loop body's statement that records the iteration on the tape. Returns None when the loop does not
    qualify."""
    found = entry_tests(loop, carries, candidates)
    if found is None:
        return None
    tests, top = found
    forward_swap = {id(c.forward): c.forward.then if c.fast is None else c.fast for c in top}
    backward_swap = {id(c.backward): c.backward.then if c.fast_back is None else c.fast_back
                     for c in top if c.backward is not None}
    _shared_derivatives(top, forward_swap, backward_swap)
    body, target, prologue, renames, push = _lean_record(clone(loop.body, forward_swap), push, back_loop.target)
    fast = replace(loop, body=_pushed_early(body, push), test=clone(loop.test), carries=[])
    back_body = prologue + clone(back_loop.body, backward_swap)
    rename(back_body, renames)
    fast_back = replace(back_loop, body=back_body, target=target, carries=[])
    condition = tests[0] if len(tests) == 1 else Call(Const(rt.all_true), tuple(tests))
    return ([Assign(flag, condition), If(flag, [fast], [loop])],
            [If(flag, [fast_back], [back_loop])])

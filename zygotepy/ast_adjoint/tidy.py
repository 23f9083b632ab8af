"""tidy(): readability clean-ups of the generated forward, after the adjoint pass.

Only rewrites that cannot change behaviour: a `for` loop whose sequence needs no gradient walks its iterable directly
(`for i in range(n):`, not `_t = range(n); _seq = iterate(_t); for i in _seq:`). `iterate` exists so that a rule can see
the sequence of an active loop; an inactive loop does not need it (Python's `for` accepts any iterable).
"""
from collections import Counter

from . import runtime as rt
from .ir import Assign, Call, Const, Def, If, Loop, Var


def _atoms(x):
    if isinstance(x, Var):
        yield x
    elif isinstance(x, Call):
        for a in (x.fn, *x.args, *(v for _, v in x.kwargs), *([x.star] if x.star is not None else [])):
            yield from _atoms(a)
    elif isinstance(x, tuple):
        for a in x:
            yield from _atoms(a)


def _uses(stmts, counts):
    for s in stmts:
        if isinstance(s, Assign):
            counts.update(_atoms(s.value))
        elif isinstance(s, Def):
            counts.update(s.cells)
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


def tidy(forward, extra_uses=()):
    """Tidy the forward function's body in place; `extra_uses` are Vars the backward reads (through the tape)."""
    uses = _uses(forward.body, Counter(extra_uses))
    uses.update(_atoms(forward.ret))
    forward.body = _tidy_region(forward.body, uses)
    return forward

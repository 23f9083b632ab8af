"""Comparisons whose result is used as a value (`(a < b) * x`, `return a == b`, not only `if a < b:`) and one of
whose operands may carry a gradient: each is rewritten to `guards_runtime.compared(op, a, b, where)`, which makes the
comparison and refuses a result that can carry a gradient where an operand is a user's object (a `__lt__` returning
a "soft" comparison, `sigmoid(other.v - self.v)`). The compiler takes comparisons as data (their derivative is zero
on numbers and arrays, so a mask such as `x * (x > 0)` costs nothing in the backward); such a method's result carried
no gradient at all, and the gradient through it was silently lost. A comparison used only as a branch's test is
left as it is: Python takes its truth value, which is data."""
import operator

from .analysis import varied_values
from .guards_runtime import compared
from .ir import Assign, Call, Const, If, Loop, Var, atoms, walk

COMPARISONS = frozenset((operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne))
_TRUTH_TESTS = frozenset((operator.not_, operator.truth, bool))


def check_comparisons(fn, code, globals_, need=None):
    """Rewrite the comparisons of IR function `fn` that need the check (in place)."""
    found = [s for s in walk(fn.body) if isinstance(s, Assign) and isinstance(s.value, Call)
             and type(s.value.fn) is Const and _among(s.value.fn.value, COMPARISONS) and len(s.value.args) == 2]
    if not found:
        return
    values = _used_as_values(fn)
    found = [s for s in found if isinstance(s.out, Var) and s.out in values]
    if not found:
        return
    varied = varied_values(fn, code, globals_, need)
    for s in found:
        a, b = s.value.args
        if a in varied or b in varied:
            s.value = Call(Const(compared), (s.value.fn, a, b, Const((code.co_filename, s.line))))


def _among(fn, group):
    try:
        return fn in group
    except TypeError:  # (an unhashable callee)
        return False


def _used_as_values(fn):
    """The Vars read other than as a branch's or a loop's test (or by `not`/`bool`, which make a truth value)."""
    used = []
    for s in walk(fn.body):
        if isinstance(s, Assign):
            target = s.value.fn if isinstance(s.value, Call) else None
            if not (type(target) is Const and _among(target.value, _TRUTH_TESTS)):
                used += atoms(s.value)
        elif isinstance(s, If):
            used += (v for p in s.phis for v in (p.then, p.orelse))
        elif isinstance(s, Loop):
            used += (v for c in s.carries for v in (c.init, c.next))
            used += atoms(s.iter)
        else:  # (a nested function's cells and defaults)
            used += (*getattr(s, "values", ()), *(getattr(s, "defaults", None) or ()))
    used += atoms(fn.ret)
    return {v for v in used if isinstance(v, Var)}


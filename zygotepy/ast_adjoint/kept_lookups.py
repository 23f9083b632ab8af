"""Lookups in a dict kept outside the differentiated function (a closure's `memo[t]`, a module global's `CACHE[t]`, an
attribute of an object it was given, `self.cache[t]`, and `.get(t)`, `.setdefault(t, v)`, `.pop(t)` of each) by a key that
may carry a gradient (the number itself, or a tuple holding it: `memo[(n, t)]`): each
gets a check before it (`guards_runtime.kept_lookup`), which refuses the read where the key is a real number and the
dict was not updated in this differentiated call. Such a dict is a memo: its entry was computed by an earlier call,
so the value carries no gradient, where the function it caches depends on the key (a memoised `exp(t)` gave a
gradient of None once its cache was warm). A memo filled and read in the same call is followed."""
import operator

from . import mutate as mt
from . import runtime as rt
from .analysis import varied_values
from .guards_runtime import kept_lookup
from .ir import Assign, Call, Const, If, Loop, Var, out_vars


def check_kept_lookups(fn, code, globals_, need=None):
    """Insert the checks into IR function `fn` (in place)."""
    kept = {Var(n) for n in fn.freevars} | set(fn.params)  # (a parameter's object comes from the caller)
    reads = []
    _scan(fn.body, kept, reads)
    if not reads:
        return
    varied = varied_values(fn, code, globals_, need)
    checked = {id(s) for s, container, key in reads if key in varied and container in kept}
    if checked:
        _insert(fn.body, checked, code.co_filename)


_READS = (Const("get"), Const("setdefault"), Const("pop"))  # (methods that may answer an entry made before)


def _scan(stmts, kept, reads):
    for s in stmts:
        if isinstance(s, Assign) and isinstance(s.value, Call):
            call, fn = s.value, s.value.fn
            if fn == Const(mt.global_read):
                kept.update(out_vars(s.out))
            elif fn == Const(getattr) and call.args and call.args[0] in kept:
                kept.update(out_vars(s.out))  # (`self.cache`: an object the caller holds, which may outlive the call)
            elif isinstance(fn, Const) and getattr(fn.value, "__module__", None) == mt.__name__ and call.args \
                    and call.args[0] in kept:  # (a new version of the same object: `memo[t] = v`, `self.cache = c`)
                kept.update(out_vars(s.out))
            elif fn == Const(operator.getitem) and len(call.args) == 2 and isinstance(call.args[1], Var):
                reads.append((s, call.args[0], call.args[1]))
            elif fn == Const(rt.callmethod) and len(call.args) >= 3 and call.args[1] in _READS \
                    and isinstance(call.args[2], Var):
                reads.append((s, call.args[0], call.args[2]))
        elif isinstance(s, Assign) and s.value in kept:
            kept.update(out_vars(s.out))
        elif isinstance(s, If):
            _scan(s.then, kept, reads)
            _scan(s.orelse, kept, reads)
            kept.update(p.out for p in s.phis if p.then in kept or p.orelse in kept)
        elif isinstance(s, Loop):
            kept.update(c.var for c in s.carries if c.init in kept)
            _scan(s.test, kept, reads)
            _scan(s.body, kept, reads)


def _insert(stmts, checked, filename):
    out = []
    for s in stmts:
        if id(s) in checked:
            container, key = (s.value.args[0], s.value.args[1]) if s.value.fn == Const(operator.getitem) else \
                (s.value.args[0], s.value.args[2])
            out.append(Assign(Var("_"), Call(Const(kept_lookup), (container, key, Const((filename, s.line)))),
                              s.line))
        elif isinstance(s, If):
            _insert(s.then, checked, filename)
            _insert(s.orelse, checked, filename)
        elif isinstance(s, Loop):
            _insert(s.test, checked, filename)
            _insert(s.body, checked, filename)
        out.append(s)
    stmts[:] = out

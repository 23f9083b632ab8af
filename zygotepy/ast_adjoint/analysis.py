"""Activity analysis: which IR values need a cotangent.

A value is *varied* if it depends on an argument (or a captured variable) through operations that may carry a gradient,
and *useful* if it reaches the returned value through such operations. Only values that are both (active) get adjoint
code; everything else is emitted unchanged. Comparisons, `not`, flags and callables the registry declares
non-differentiable (len, isinstance, range, ...) carry no gradient, which is why `n` in the seed's `pow` gets None.
"""
import builtins

from ..adjoints.registry import is_nondifferentiable
from .ir import Assign, Call, Const, Def, Global, If, Loop, Var


def resolve_global(path, globals_):
    """The object a Global path names now (used only to decide activity and speculation), or None."""
    head, *rest = path.split(".")
    obj = globals_.get(head, getattr(builtins, head, None)) if head in globals_ or hasattr(builtins, head) else None
    for attr in rest:
        obj = getattr(obj, attr, None)
    return obj


def callee_object(fn, globals_):
    if isinstance(fn, Const):
        return fn.value
    if isinstance(fn, Global):
        return resolve_global(fn.path, globals_)
    return None


def _vars(atoms):
    return [a for a in atoms if isinstance(a, Var)]


def call_inputs(call):
    """The atoms of a call that may carry a gradient into it (the callee itself included: closures, objects)."""
    return _vars([call.fn, *call.args, *(v for _, v in call.kwargs), *([call.star] if call.star is not None else [])])


def _edges(stmts, globals_, cell_values, edges):
    """Collect data-flow edges `source -> target` along which a gradient can flow."""
    for s in stmts:
        if isinstance(s, Assign):
            outs = s.out if isinstance(s.out, tuple) else (s.out,)
            if isinstance(s.value, Call):
                if is_nondifferentiable(callee_object(s.value.fn, globals_)):
                    continue
                srcs = call_inputs(s.value)
            else:
                srcs = _vars([s.value])
            edges += [(a, o) for a in srcs for o in outs]
        elif isinstance(s, Def):
            edges += [(cell_values.get(c.name, c), s.out) for c in s.cells]
        elif isinstance(s, If):
            _edges(s.then, globals_, cell_values, edges)
            _edges(s.orelse, globals_, cell_values, edges)
            edges += [(a, p.out) for p in s.phis for a in _vars([p.then, p.orelse])]
        elif isinstance(s, Loop):
            _edges(s.body, globals_, cell_values, edges)
            edges += [(a, c.var) for c in s.carries for a in _vars([c.init, c.next])]
            if s.target is not None and isinstance(s.iter, Var):
                edges.append((s.iter, s.target))


def _reach(starts, adjacency):
    seen, work = set(starts), list(starts)
    while work:
        for nxt in adjacency.get(work.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                work.append(nxt)
    return seen


def cell_values(fn, code):
    """Cell Var -> the SSA value it holds: a captured name is assigned once, under its own name (lower() checks)."""
    from .lower import captured_names
    return {f"{n}_cell": Var(n) for n in (*captured_names(code), *code.co_freevars)}


def activity(fn, code, globals_, need=None):
    """The set of active Vars of IR function `fn` (varied and useful). `need` flags the positional parameters whose
    gradients are wanted (None: all parameters)."""
    cells = cell_values(fn, code)
    edges = []
    _edges(fn.body, globals_, cells, edges)
    forward, backward = {}, {}
    for a, b in edges:
        forward.setdefault(a, []).append(b)
        backward.setdefault(b, []).append(a)
    sources = [p for k, p in enumerate(fn.params) if need is None or k >= len(need) or need[k]]
    varied = _reach([*sources, *(Var(n) for n in fn.freevars)], forward)
    useful = _reach(_vars([fn.ret]), backward)
    return varied & useful

"""Activity analysis: which IR values need a cotangent.

A value is *varied* if it depends on an argument (or a captured variable) through operations that may carry a gradient,
and *useful* if it reaches the returned value through such operations. Only values that are both (active) get adjoint
code; everything else is emitted unchanged. Comparisons, `not`, flags and callables the registry declares
non-differentiable (len, isinstance, range, ...) carry no gradient, which is why `n` in the seed's `pow` gets None.
`saved_objects` finds the values whose objects a backward may read, which an update in place must leave as they were.
"""
import operator

from ..adjoints.registry import is_mutating, is_nondifferentiable
from . import mutate as mt
from . import runtime as rt
from .assumed_globals import resolve_global
from .ir import Assign, Call, Const, Def, Global, If, Loop, Var, atoms, out_vars, walk
from .lower import captured_names


def callee_object(fn, globals_):
    """The object a call's callee names now (a constant, a global path), or None: unknown, or unhashable (a ctypes C
    function pointer: the checks that ask about callees look them up in sets; J finds its rule at run time)."""
    if isinstance(fn, Const):
        target = fn.value
    elif isinstance(fn, Global):
        target = resolve_global(fn.path, globals_)
    else:
        return None
    try:
        hash(target)
    except TypeError:
        return None
    return target


def _vars(atoms):
    return [a for a in atoms if isinstance(a, Var)]


# attributes and methods that mark a value as an array (`x.T`, `y.sum()`): see `uses_arrays`
ARRAY_ATTRIBUTES = frozenset(("T", "sum", "mean", "dot", "reshape", "transpose", "ravel", "flatten", "std", "var",
                              "prod", "cumsum", "astype", "ndim", "shape", "max", "min", "clip", "squeeze"))


def uses_arrays(fn, globals_):
    """Does the function compute with NumPy arrays, as far as its text shows: does it call a NumPy function, use `@`,
    or read an array attribute (`x.T`, `y.sum()`)? Only such functions get the array fast path
    (optimize/array_paths.py): a third arm per operation would only lengthen scalar code, and its transform."""
    for s in walk(fn.body):
        if not isinstance(s, Assign) or not isinstance(s.value, Call):
            continue
        call = s.value
        target = callee_object(call.fn, globals_)
        module = getattr(target, "__module__", None)
        if target is operator.matmul or type(target).__module__ == "numpy" or \
                isinstance(module, str) and module.split(".")[0] == "numpy":
            return True
        if (target is getattr or target is rt.callmethod) and len(call.args) > 1 and \
                isinstance(call.args[1], Const) and call.args[1].value in ARRAY_ATTRIBUTES:
            return True
    return False


def _namespace_query(call, globals_):
    """`x.__array_namespace__()`: the array API's protocol method, whose result is a module, never a value carrying a
    gradient. Seen as one, it made `xp.inf` in `vector_norm(x, ord=xp.inf)` a keyword a gradient flows into."""
    return callee_object(call.fn, globals_) is rt.callmethod and len(call.args) > 1 and \
        isinstance(call.args[1], Const) and call.args[1].value == "__array_namespace__"


def call_inputs(call):
    """The atoms of a call that may carry a gradient into it (the callee itself included: closures, objects)."""
    return _vars([call.fn, *call.args, *(v for _, v in call.kwargs), *([call.star] if call.star is not None else [])])


def _edges(stmts, globals_, cell_values, edges, constants=frozenset(), missing_made=frozenset()):
    """Collect data-flow edges `source -> target` along which a gradient can flow (none into `constants`);
    `missing_made`: the Vars `inserting_dicts` gives."""
    for s in stmts:
        if isinstance(s, Assign):
            outs = s.out if isinstance(s.out, tuple) else (s.out,)
            if isinstance(s.value, Call):
                if is_nondifferentiable(callee_object(s.value.fn, globals_)) or _namespace_query(s.value, globals_):
                    continue
                srcs = call_inputs(s.value)
                if s.value.fn == _GETITEM and isinstance(s.value.args[0], Var) and s.value.args[0] in missing_made \
                        and isinstance(s.value.args[1], Var):
                    edges.append((s.value.args[1], s.value.args[0]))  # a lookup may put its key in: `d` varies with it
            else:
                srcs = _vars([s.value])
            edges += [(a, o) for a in srcs for o in outs if o not in constants]
        elif isinstance(s, Def):  # from the values its cells hold where it is defined (a name assigned twice: the later)
            edges += [(v, s.out) for v in _vars((*s.values, *(s.defaults or ())))]  # and from its default values
        elif isinstance(s, If):
            _edges(s.then, globals_, cell_values, edges, constants, missing_made)
            _edges(s.orelse, globals_, cell_values, edges, constants, missing_made)
            edges += [(a, p.out) for p in s.phis for a in _vars([p.then, p.orelse])]
        elif isinstance(s, Loop):
            _edges(s.body, globals_, cell_values, edges, constants, missing_made)
            edges += [(a, c.var) for c in s.carries for a in _vars([c.init, c.next])]
            if s.target is not None and isinstance(s.iter, Var):
                edges.append((s.iter, s.target))


_GETITEM = Const(operator.getitem)


def _reach(starts, adjacency):
    seen, work = set(starts), list(starts)
    while work:
        for nxt in adjacency.get(work.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                work.append(nxt)
    return seen


def cell_values(fn, code):
    """Cell Var -> the SSA value it first holds (its name's first version); a nested function reads the version
    current where it is defined, which its `Def.values` name."""
    return {f"{n}_cell": Var(n) for n in (*captured_names(code), *code.co_freevars)}


def activity(fn, code, globals_, need=None):
    """The set of active Vars of IR function `fn` (varied and useful). `need` flags the positional parameters whose
    gradients are wanted (None: all parameters)."""
    made = inserting_dicts(fn, globals_)
    varied, backward = _varied(fn, code, globals_, need, made)
    # an update of an object no name reaches (`mutate.unseen_update`) is reached by no result, yet its rule must see
    # whether a gradient takes part (it refuses then)
    unseen = [o for s in walk(fn.body) if isinstance(s, Assign) and isinstance(s.value, Call)
              and s.value.fn == Const(mt.unseen_update) for o in out_vars(s.out)]
    # a lookup with a varied key in a defaultdict is useful where the dict is: its back hands the key what reads of
    # it filed
    for s in walk(fn.body) if made else ():
        if isinstance(s, Assign) and isinstance(s.value, Call) and s.value.fn == _GETITEM \
                and all(isinstance(a, Var) for a in s.value.args) and s.value.args[0] in made \
                and s.value.args[1] in varied:
            backward.setdefault(s.value.args[0], []).extend(out_vars(s.out))
    return varied & _reach([*_vars([fn.ret]), *unseen], backward)


def varied_values(fn, code, globals_, need=None):
    """The Vars of IR function `fn` that depend on a parameter flagged by `need` (or a captured variable) through
    operations that may carry a gradient, whether or not they reach the result."""
    return _varied(fn, code, globals_, need, inserting_dicts(fn, globals_))[0]


def inserting_dicts(fn, globals_):
    """The Vars of IR function `fn` made by calling a dict class with `__missing__` (`collections.defaultdict(list)`),
    whose lookups `d[k]` may put `k` in: `d` varies with a key that does (structures/dicts.py `inserted_by_lookup`)."""
    made = set()
    for s in walk(fn.body):  # (and the versions its updates in place give: `d_2` of `d[k] = v`)
        if isinstance(s, Assign) and isinstance(s.value, Call):
            target = callee_object(s.value.fn, globals_)
            if isinstance(target, type) and issubclass(target, dict) and hasattr(target, "__missing__") \
                    and isinstance(s.out, Var) or s.value.args and isinstance(s.value.args[0], Var) \
                    and s.value.args[0] in made and is_mutating(target, True):
                made.update(list(out_vars(s.out))[:1])
    return made


def _varied(fn, code, globals_, need, made):
    edges = []
    _edges(fn.body, globals_, cell_values(fn, code), edges, fn.constants, made)
    forward, backward = {}, {}
    for a, b in edges:
        forward.setdefault(a, []).append(b)
        backward.setdefault(b, []).append(a)
    sources = [p for k, p in enumerate(fn.params) if need is None or k >= len(need) or need[k]]
    return _reach([*sources, *(Var(n) for n in fn.freevars)], forward), backward


# calls whose result is (or shares memory with, or holds) their first argument, or, for the links lower/mutation.py
# places, each of their arguments
_SAME_OBJECT = (mt.same_or, mt.same_as, mt.put_iter, mt.refresh_iter, rt.iterate, operator.getitem, getattr)


def _links_objects(target):
    try:
        return target in _SAME_OBJECT or is_mutating(target, True)
    except TypeError:
        return False


def saved_objects(fn, active, globals_):
    """The Vars whose objects a backward may read: every argument and result of an operation the adjoint pass
    differentiates, closed over the names of one object (copies, joins, loop carries, in-place results, the links
    lower/mutation.py places) and over the objects read out of another (`v = c[:2]` shares `c`'s data). An update in
    place of such an object (`c += 1`, `c @= M` with no gradient through them) must undo itself in the backward like
    an active one, or the backward of an earlier operation would read the new values; running it out of place instead
    would leave an alias (`b = c`) without the update. A superset of what the pass saves, found before it runs."""
    reads, links, updates = set(), {}, []

    def link(a, b):
        links.setdefault(a, []).append(b)
        links.setdefault(b, []).append(a)

    def visit(stmts):
        for s in stmts:
            if isinstance(s, Assign):
                outs = list(out_vars(s.out))
                if isinstance(s.value, Var):
                    for o in outs:
                        link(o, s.value)
                if not isinstance(s.value, Call):
                    continue
                call, target = s.value, callee_object(s.value.fn, globals_)
                used = _vars(atoms(call))
                first = call.args[0] if call.args and isinstance(call.args[0], Var) else None
                out_active = any(o in active for o in outs)
                if out_active or is_mutating(target, out_active or first in active):  # as the pass decides
                    reads.update(used, outs)
                elif first is not None and is_mutating(target, True):
                    updates.append((first, used))
                if first is not None and _links_objects(target):
                    for o in outs:
                        for a in (used if is_mutating(target) else [first]):
                            link(o, a)
            elif isinstance(s, Def):  # a closure's backward may read what its cells and defaults hold
                for a in _vars((*s.values, *(s.defaults or ()))):
                    link(s.out, a)
            elif isinstance(s, If):
                for p in s.phis:
                    for a in _vars([p.then, p.orelse]):
                        link(p.out, a)
                visit(s.then)
                visit(s.orelse)
            elif isinstance(s, Loop):
                for c in s.carries:
                    for a in _vars([c.init, c.next]):
                        link(c.var, a)
                if isinstance(s.target, Var) and isinstance(s.iter, Var):
                    link(s.target, s.iter)
                visit(s.test)
                visit(s.body)

    visit(fn.body)
    while True:
        saved = _reach(reads, links)
        more = [used for first, used in updates if first in saved and not reads.issuperset(used)]
        if not more:
            return saved
        for used in more:
            reads.update(used)

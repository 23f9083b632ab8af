"""derive(): user function -> bound (forward, backward) pair, compiled once per code object (and namespace) and cached.

The generated source is compiled under a filename like `<zygotepy: pow at quickstart.py:3>` registered in `linecache`,
so tracebacks, pdb and `show_adjoint` show it. The factory is bound to the user's own globals (globals stay live: a helper
redefined later is picked up) and to the user's closure cells. The bound pair is cached on the function object as
`fn.__zygote__ = (code, generation, {need: (forward, backward)}, defaults, keyword defaults, assumed)`, valid while
`fn.__code__` is that code (a notebook redefinition or autoreload swaps it), no rule was registered since (`generation`),
the function's defaults are the ones it had (the forward takes them as they were) and each global it called as a
constant still names the same object (`assumed`: assumptions.py). `need` marks the parameters the caller wants
gradients for (None: all), so a call `loss(W, X)` that only needs `dW` never computes `dX`.
"""
import linecache
import os
import sys
import types
from dataclasses import dataclass

from ..adjoints import registry
from ..errors import UnsupportedSyntax, ZygoteError
from ..options import OPTIONS
from . import dispatch
from .adjoint import adjoint
from .analysis import activity
from .assumed_globals import still_hold
from .assumptions import assumed_callees
from .emit import emit
from .ir import Assign, Call, Const, Def, If, Loop, Var, drop_dead_phis
from .lower import lower
from .lower.scan import reads_alias_after_update, updates_state
from .nullness import simplify_backward
from .optimize.shifts import free_shifts
from .source import get_source, kwdefaults_for
from .speculate import speculate
from .compare_checks import check_comparisons
from .kept_lookups import check_kept_lookups
from .text_checks import check_text_round_trips

_ARTEFACTS = {}     # (id of the code object, need, functional) -> [Artefact, ...], one per namespace (newest first),
                    # which hold the code object alive (ids stay unique)
_VARIANTS = 4       # namespaces kept per code object (each artefact holds its namespace alive)
LINE_MAPS = {}      # generated filename -> (user filename, {generated line: user line})
_RULES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "adjoints") + os.sep


@dataclass
class Artefact:
    code: types.CodeType       # the user's code object
    factory: types.CodeType    # code of `_make(_globals, *helpers, *cells) -> (forward, backward)`
    helpers: dict
    source: str
    filename: str
    mutated: tuple             # the parameters it updates in place (the lowered IR itself is not kept: nested levels
                               # transform millions of lines)
    generation: int
    maybe_mutated: tuple = ()  # those of `mutated` it updates only if linked at run time to an updated object
    globals: dict = None       # the namespace it was made in: its decisions read it (one code object, two `exec`s)
    assumed: tuple = ()        # ((global path, object), ...): the constant callees it took (assumptions.py)


def _register(text, code):
    base = f"<zygotepy: {code.co_name} at {os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    filename, k = base + ">", 2
    while filename in linecache.cache and linecache.cache[filename][2] != text.splitlines(True):
        filename, k = f"{base} #{k}>", k + 1
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    return filename


def bind_statics(fn, statics):
    """Read generated code's helper constants (free variables bound once by the factory) as the constants they are:
    a helper call is then a call of a known function (a rule, a non-differentiable primitive), not of a value that
    might carry a gradient, so the transform of an inner level's code emits what it would for the constant."""
    consts = {}
    for name, value in statics.items():
        try:
            hash(value)
        except TypeError:
            continue
        consts[name] = Const(value)
    if not consts:
        return
    fn.freevars = [n for n in fn.freevars if n not in consts]

    def atom(a):
        return consts.get(a.name, a) if type(a) is Var else a

    def value(v):
        if type(v) is Call:
            return Call(atom(v.fn), tuple(atom(x) for x in v.args), tuple((k, atom(x)) for k, x in v.kwargs),
                        atom(v.star) if v.star is not None else None)
        if type(v) is tuple:
            return tuple(value(x) for x in v)
        return atom(v)

    def region(stmts):
        for s in stmts:
            if isinstance(s, Assign):
                s.value = value(s.value)
            elif isinstance(s, Def):
                s.values = tuple(atom(x) for x in s.values)
                s.defaults = None if s.defaults is None else tuple(atom(x) for x in s.defaults)
                if s.kwdefaults:
                    s.kwdefaults = {k: atom(x) for k, x in s.kwdefaults.items()}
            elif isinstance(s, If):
                s.cond = atom(s.cond)
                for p in s.phis:
                    p.then, p.orelse = atom(p.then), atom(p.orelse)
                region(s.then)
                region(s.orelse)
            elif isinstance(s, Loop):
                s.iter, s.cond, s.exit = (None if x is None else value(x) for x in (s.iter, s.cond, s.exit))
                for c in s.carries:
                    c.init, c.next = atom(c.init), atom(c.next)
                region(s.test)
                region(s.body)
    region(fn.body)
    fn.ret = value(fn.ret)


def transform(fn, need=None, functional=False):
    """Source -> IR -> adjoint -> Python source -> code object, for the user function `fn`; `need` (one bool per
    positional parameter, None for all) says which parameters the caller wants gradients for."""
    try:
        return _transform(fn, need, functional)
    except RecursionError:
        depth, frame = 0, sys._getframe()
        while frame is not None:
            depth, frame = depth + 1, frame.f_back
        if depth > sys.getrecursionlimit() // 2:  # the user's recursion had used the stack when a callee was reached
            raise
        code = fn.__code__
        raise ZygoteError(
            f"{code.co_filename}:{code.co_firstlineno}: {code.co_name} is too large for zygotepy's analysis under "
            f"Python's recursion limit ({sys.getrecursionlimit()}): the objects its updates in place may reach are "
            f"followed one link at a time; raise the limit with sys.setrecursionlimit, or split the function "
            f"into smaller ones") from None


def _transform(fn, need, functional):
    code = fn.__code__
    generation = registry.generation[0]
    src = get_source(fn)
    try:
        ir, namer = lower(src, code, fn.__globals__)
    except UnsupportedSyntax as e:
        if not code.co_filename.startswith(_RULES_DIR):
            raise
        raise ZygoteError(  # a rule's own code, transformed by an outer level: the user's line is in the notes
            f"nested differentiation (a gradient of a gradient) cannot go through the rule "
            f"{code.co_qualname if hasattr(code, 'co_qualname') else code.co_name} yet: its own code is not in the "
            f"subset an outer level can transform ({e}); for updates in place (x[i] = v, lst.append), take second "
            f"derivatives with hessian(f, x) (forward-over-reverse), making arrays that are filled in place with "
            f"np.zeros_like(x)") from None
    check_text_round_trips(ir, code, fn.__globals__, need)
    check_kept_lookups(ir, code, fn.__globals__, need)
    check_comparisons(ir, code, fn.__globals__, need)
    nested = (functional or code.co_filename.startswith("<zygotepy:")) and OPTIONS.nested_size
    if not nested:  # (inlining makes a guarded copy of each callee: code an outer level transforms stays one copy)
        speculate(ir, code, fn.__globals__, namer)
    drop_dead_phis(ir)
    if not nested and OPTIONS.free_shifts:  # (a guarded copy too)
        free_shifts(ir, fn.__globals__, namer)
    globals_name = namer.fresh("_globals")  # (`_globals_2` beside a user's local `_globals`)
    statics = {}
    if code.co_filename.startswith("<zygotepy:") and fn.__closure__:
        # generated code (an outer level differentiating an inner one): its free variables are the emitter's helper
        # constants, the same for every function of this code, except the user's cells (`<name>_cell`, holding cells)
        statics = {name: cell.cell_contents for name, cell in zip(code.co_freevars, fn.__closure__, strict=True)
                   if not isinstance(cell.cell_contents, types.CellType)}
        if OPTIONS.nested_size:
            bind_statics(ir, statics)
    assumed = assumed_callees(ir, code, fn.__globals__, need)
    active = activity(ir, code, fn.__globals__, need)
    adj = adjoint(ir, code, active, fn.__globals__, namer, statics, functional)
    simplify_backward(adj.backward)
    text, helpers, line_map = emit(adj, namer, src.lines, src.filename, [f"{n}_cell" for n in code.co_freevars],
                                   globals_name)
    filename = _register(text, code)
    LINE_MAPS[filename] = (src.filename, line_map)
    module = compile(text, filename, "exec")
    factory = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    return Artefact(code, factory, helpers, text, filename, ir.mutated, generation, ir.maybe_mutated,
                    fn.__globals__, assumed)


def user_line(filename, lineno):
    """`(user file, line, function name)` of a line of generated code, through every level of nesting (generated code
    of generated code of the user's), or None for a file that is not generated code. The line is that of the user's
    statement the generated line came from, else (a one-line function's code marks no lines) that of its def."""
    if filename not in LINE_MAPS:
        return None
    line, name = lineno, filename
    while name in LINE_MAPS:
        user_file, line_map = LINE_MAPS[name]
        function, _, first = name[len("<zygotepy: "):].rpartition(" at ")  # `<zygotepy: rec at file.py:2 #2>`
        line = line_map.get(line)
        line = line[0] if isinstance(line, tuple) else line
        if not line:
            line = int(first.rstrip(">").split(" #")[0].rpartition(":")[2] or 0)
        name = user_file
    return user_file, line, function


def artefact(fn, need=None, functional=False):
    if fn.__code__.co_filename.startswith("<zygotepy:"):
        functional = False  # generated code is transformed as nested code either way (adjoint.py): one artefact
    # Keyed by identity, not by equality: equal code objects (same bytecode, constants and names; filename and
    # enclosing state not compared) can come from different sources or generated levels, and a transform made for
    # one of them is not the other's. One code object may run in several namespaces (`exec` of one compiled text
    # per setting, `types.FunctionType(f.__code__, other)`), whose globals its transform read: a few are kept each.
    code, generation, globals_ = fn.__code__, registry.generation[0], fn.__globals__
    key = (id(code), need, functional)
    kept = _ARTEFACTS.get(key)
    for art in kept or ():
        if art.code is code and art.generation == generation and art.globals is globals_ and \
                (not art.assumed or still_hold(art.assumed, globals_)):
            return art
    art = transform(fn, need, functional)
    _ARTEFACTS[key] = [art, *(a for a in kept or () if a.code is code and a.generation == generation)][:_VARIANTS]
    return art


def plain_artefact(fn):
    """The transform of `fn` with every optimisation off (the plain form `show_adjoint` prints), neither cached nor
    run: the switches are off only while it is made."""
    old = OPTIONS.set(**dict.fromkeys(OPTIONS.names(), False))
    try:
        return transform(fn)
    finally:
        OPTIONS.set(**old)


def derive(fn, need=None, functional=False):
    """The compiled adjoint of `fn`, bound to its globals and cells: `(forward, backward)`. A `functional` adjoint
    (for nested differentiation, see adjoints/nesting/) updates nothing in place."""
    art = artefact(fn, need, functional)
    factory = types.FunctionType(art.factory, fn.__globals__, "_make")
    fwd, back = factory(fn.__globals__, *art.helpers.values(), *(fn.__closure__ or ()))
    fwd.__defaults__, fwd.__kwdefaults__ = fn.__defaults__, kwdefaults_for(fn.__kwdefaults__, fwd.__code__)
    fwd.__zygote_mutates__ = art.mutated  # parameters updated in place: the forward returns (y, *their finals)
    fwd.__zygote_maybe__ = art.maybe_mutated  # (those of them maybe updated: derived.py checks the log for those)
    fwd.__zygote_assumed__ = art.assumed  # (constant callees: derived.py derives it again when one is rebound)
    return fwd, back


dispatch.COMPILER.derive, dispatch.COMPILER.user_line = derive, user_line  # (J derives callees with these)
dispatch.COMPILER.reads_after, dispatch.COMPILER.updates_state = reads_alias_after_update, updates_state

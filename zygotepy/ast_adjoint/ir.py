"""The intermediate representation: structured, region-based SSA.

Every operation is a call (`Assign(out, Call(fn, args))`): `a * b` is a call of `operator.mul`, `x.W` a call of
`getattr`, `x[i]` a call of `operator.getitem`. So the adjoint pass has one case for operations, and all their meaning
lives in the rule registry; the emitter prints the well-known callees back as Python syntax.

Control flow keeps Python's structure: `If` and `Loop` hold nested regions (lists of statements). Each `Var` is assigned
once per execution of its region; values that meet at a join are `Phi`s of an `If`, values that flow around a loop are its
`Carry`s (block arguments, as in MLIR's `scf`). There are no jumps: `break`, `continue` and `return` were lowered to
flags, so a loop only leaves through its condition or its `exit` flag, checked at the end of an iteration.
"""
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..options import OPTIONS
from .naming import const_name


@dataclass(frozen=True)
class Var:
    """A local SSA value; `name` is the Python name it is emitted under (the user's name where there is one)."""
    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Const:
    """A constant: a literal, or a callable the compiler itself refers to (operator.mul, getattr, ...)."""
    value: Any

    def __str__(self):
        return const_name(self.value)


@dataclass(frozen=True)
class Global:
    """A name read at run time from the user's globals, builtins or closure cells, with an optional attribute path:
    `Global("np.sin")`. Read when used, so a helper redefined later is picked up."""
    path: str

    def __str__(self):
        return self.path


Atom = Union[Var, Const, Global]


@dataclass
class Call:
    """`fn(*args, *star, **dict(kwargs))`; `star` is a tuple-valued atom for `f(*xs)` calls."""
    fn: Atom
    args: tuple
    kwargs: tuple = ()
    star: Optional[Atom] = None


@dataclass
class Assign:
    """`out = value`. `out` is a Var (or a tuple of Vars for calls that return several values in generated code);
    `value` is a Call or an Atom (a copy). `line` is the user's source line."""
    out: Any
    value: Any
    line: int = 0
    on_scalars: bool = False  # set on the statements of scalar fast paths (their values are Python numbers)
    on_argument: bool = False  # `x += y` where x may be an argument's object: an update the caller must hear of


@dataclass
class Phi:
    """At the end of an If: `out` is `then` if the then-region ran, else `orelse`."""
    out: Var
    then: Atom
    orelse: Atom


@dataclass
class If:
    cond: Atom
    then: list
    orelse: list
    phis: list = field(default_factory=list)
    line: int = 0
    inlined: bool = False  # the then-arm is a callee's body, inlined at this call (speculate.py)


@dataclass
class Carry:
    """A loop-carried value: `var` is `init` on entry and `next` (computed by the body) at the start of each later
    iteration; after the loop, `var` holds its last value."""
    var: Var
    init: Atom
    next: Atom


@dataclass
class Loop:
    """`while` (test region `test` computing `cond`) or `for target in iter`. `exit` is a flag checked after each
    iteration (the lowered `break`/`return`)."""
    carries: list
    body: list
    test: list = field(default_factory=list)
    cond: Optional[Atom] = None
    target: Optional[Var] = None
    iter: Optional[Atom] = None
    exit: Optional[Atom] = None
    line: int = 0


@dataclass
class Def:
    """A nested `def` or `lambda`: `out` is bound to a function made from the user's own code object (so it keeps its
    source), closing over the cells `cells` (Vars holding cell objects, one per free variable of `code`). `values` are
    the Vars the cells hold at this point, passed along so that an outer level differentiating this code (nesting) sees
    the data flow that the cells hide. `defaults` may hold Global atoms (`need=ALL`), read when the def runs."""
    out: Var
    code: Any
    cells: tuple = ()
    defaults: Optional[tuple] = None
    kwdefaults: Optional[dict] = None
    line: int = 0
    values: tuple = ()


@dataclass
class Function:
    name: str
    params: list          # Vars, in signature order (positional, *args, keyword-only, **kwargs)
    freevars: list        # names of closure cells the function reads
    body: list
    ret: Atom
    signature: Any = None  # the gast `arguments` node, re-emitted verbatim (defaults are bound at run time)
    filename: str = "<unknown>"
    line: int = 0
    mutated: tuple = ()    # indices of the parameters updated in place: `ret` is then (result, *their final versions)
    constants: frozenset = frozenset()  # Vars no gradient flows into, whatever they are computed from (optimize/shifts)
    maybe_mutated: tuple = ()  # those of `mutated` updated only if linked at run time to an updated object (a holder)


# --- printer ---------------------------------------------------------------------------------------------------------

def _call_text(c):
    args = [str(a) for a in c.args] + ([f"*{c.star}"] if c.star is not None else [])
    args += [f"{k}={v}" for k, v in c.kwargs]
    return f"{c.fn}({', '.join(args)})"


def _value_text(v):
    return _call_text(v) if isinstance(v, Call) else str(v)


def _out_text(out):
    return ", ".join(map(str, out)) if isinstance(out, tuple) else str(out)


def format_region(stmts, indent=1):
    pad = "  " * indent
    lines = []
    for s in stmts:
        if isinstance(s, Assign):
            lines.append(f"{pad}{_out_text(s.out)} = {_value_text(s.value)}")
        elif isinstance(s, Def):
            lines.append(f"{pad}{s.out} = def <line {s.line}>")
        elif isinstance(s, If):
            lines.append(f"{pad}if {s.cond}:")
            lines += format_region(s.then, indent + 1) or [pad + "    pass"]
            lines.append(f"{pad}else:")
            lines += format_region(s.orelse, indent + 1) or [pad + "    pass"]
            lines += [f"{pad}{p.out} = phi({p.then}, {p.orelse})" for p in s.phis]
        elif isinstance(s, Loop):
            carried = ", ".join(f"{c.var} = {c.init}" for c in s.carries)
            if s.target is not None:
                lines.append(f"{pad}for {s.target} in {s.iter} carry [{carried}]:")
            else:
                lines.append(f"{pad}while carry [{carried}]:")
                lines += format_region(s.test, indent + 2)
                lines.append(f"{pad}    test {s.cond}")
            lines += format_region(s.body, indent + 1)
            lines.append(f"{pad}  next [{', '.join(str(c.next) for c in s.carries)}]"
                         + (f" exit if {s.exit}" if s.exit is not None else ""))
        else:
            raise TypeError(f"not an IR statement: {s!r}")
    return lines


def walk(stmts):
    """Every statement of a region, those of nested regions included (pre-order)."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk(s.then)
            yield from walk(s.orelse)
        elif isinstance(s, Loop):
            yield from walk(s.test)
            yield from walk(s.body)


def out_vars(out):
    """The Vars an assignment target binds (`out` may be a Var or a nested tuple of them)."""
    if isinstance(out, tuple):
        for o in out:
            yield from out_vars(o)
    elif isinstance(out, Var):
        yield out


def atoms(x):
    """Every atom in a value (a Var, Const, Global, a Call's callee and arguments, a tuple of them), flattened."""
    if isinstance(x, Call):
        for a in (x.fn, *x.args, *(v for _, v in x.kwargs), *([x.star] if x.star is not None else [])):
            yield from atoms(a)
    elif isinstance(x, tuple):
        for a in x:
            yield from atoms(a)
    elif x is not None:
        yield x


def read_by(s):
    """The atoms statement `s` itself reads (not its nested regions): values, conditions, phis, carries, a def's
    cells, values and defaults."""
    if isinstance(s, Assign):
        return atoms(s.value)
    if isinstance(s, Def):
        return atoms((*s.cells, *s.values, *(s.defaults or ()), *(s.kwdefaults or {}).values()))
    if isinstance(s, If):
        return atoms((s.cond, *(x for p in s.phis for x in (p.then, p.orelse))))
    if isinstance(s, Loop):
        return atoms((s.iter, s.cond, s.exit, *(x for c in s.carries for x in (c.init, c.next))))
    return iter(())


def binds(s):
    """The Vars statement `s` itself binds at its level (an assignment's outputs, a def, an if's joins, a loop's
    carried values; not a loop's target, which is bound inside it)."""
    if isinstance(s, Assign):
        return s.out if isinstance(s.out, tuple) else (s.out,)
    if isinstance(s, Def):
        return (s.out,)
    if isinstance(s, If):
        return tuple(p.out for p in s.phis)
    if isinstance(s, Loop):
        return tuple(c.var for c in s.carries)
    return ()


def defines(s):
    """The names of the Vars statement `s` itself binds (not those its nested regions bind)."""
    if isinstance(s, Assign):
        return {v.name for v in out_vars(s.out)}
    if isinstance(s, Def):
        return {s.out.name}
    if isinstance(s, If):
        return {p.out.name for p in s.phis}
    if isinstance(s, Loop):
        return {c.var.name for c in s.carries} | {v.name for v in out_vars(s.target)}
    return set()


def format_function(fn):
    """Readable text of an IR function (what `print(ir)` shows)."""
    params = ", ".join(map(str, fn.params))
    free = f" closing over {', '.join(fn.freevars)}" if fn.freevars else ""
    return "\n".join([f"func {fn.name}({params}){free}:", *format_region(fn.body), f"  return {fn.ret}"])


Function.__str__ = format_function




def drop_dead_phis(fn):
    """Remove the phis of `If`s whose value nothing reads (a name an arm assigned and no later code uses: most of
    the joins the lowering makes for early returns, `_Unbound` on the path that returned), and then those only they
    read. Nothing else changes: the arms still compute what they did, so values and gradients are the same;
    generated code, and an outer level's transform of it, get shorter."""
    if not OPTIONS.dead_joins:
        return fn
    reads, phis = {}, {}
    for s in walk(fn.body):
        for a in read_by(s):
            if type(a) is Var:
                reads[a] = reads.get(a, 0) + 1
        if isinstance(s, If):
            for p in s.phis:
                phis[p.out] = p
    for a in atoms(fn.ret):
        if type(a) is Var:
            reads[a] = reads.get(a, 0) + 1
    dead = set()
    work = [out for out in phis if not reads.get(out)]
    while work:
        out = work.pop()
        if out in dead:
            continue
        dead.add(out)
        p = phis[out]
        for a in (p.then, p.orelse):
            if type(a) is Var:
                reads[a] -= 1
                if not reads[a] and a in phis:
                    work.append(a)
    if dead:
        for s in walk(fn.body):
            if isinstance(s, If) and s.phis:
                s.phis = [p for p in s.phis if p.out not in dead]
    return fn

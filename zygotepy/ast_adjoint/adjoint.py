"""adjoint(): IR function -> `Adjoint(forward, backward)`, both IR, closure-free.

The forward runs the user's code and records, per region, the values the backward needs: the function body returns
them as its tape tuple, a loop pushes one record per iteration onto a list (the backward walks `reversed(list)`, so it
can run again), an `if` arm assigns its record to a variable the enclosing region records. SSA makes a value's name
enough to find it in the backward.

An active operation `y = f(a, b)` becomes `y, y_back = J(f, a, b)` and, in the backward, `g_a, g_b = y_back(dy)`
accumulated into `da`, `db`; `J` and the registry decide at run time what a call means. That plain pair is all this
pass emits: the optimisation passes (`optimize/`, switched by `OPTIONS`) rewrite it through the `Optimizations` hooks.
"""
from dataclasses import dataclass, replace

from ..adjoints import registry
from ..adjoints.registry import find_rule
from ..options import OPTIONS
from . import dispatch
from . import runtime as rt
from .analysis import callee_object, cell_values, saved_objects
from .ir import Assign, Call, Const, Function, If, Loop, Var, binds
from .lower import captured_names
from .inactive import InactiveCalls
from .optimize import Optimizations
from .optimize.guards import _call
from .tidy import tidy


@dataclass
class Adjoint:
    forward: Function   # returns (y, tape)
    backward: Function  # (tape, dy) -> (dself, *dparams)
    tape: list          # the Vars the forward records for the backward


class AdjointPass(Optimizations, InactiveCalls):
    def __init__(self, fn, code, active, globals_, namer, statics, nested):
        self.fn, self.active, self.globals, self.namer = fn, active, globals_, namer
        self.cells = cell_values(fn, code)
        self.d = {}            # primal Var -> cotangent Var
        self.needs = [{}]      # per open region: Vars its backward reads (ordered)
        self.defined = [set()]  # per open region: Vars it defines
        self.loop_depth = 0
        self.statics = statics  # free variable -> its value, where it is the same for every closure of this code
        self.saved = saved_objects(fn, active, globals_)  # Vars whose objects a backward may read
        self.nested = nested   # code an outer level will transform too: its loop tapes grow by rebinding
        self.small = nested and OPTIONS.nested_size  # and it is written small (optimize/guards.py)
        self.start_optimizing(fn, globals_)

    def dvar(self, v):
        if v not in self.d:
            self.d[v] = Var(self.namer.fresh("d" + v.name.lstrip("_")))
        return self.d[v]

    def need(self, atom):
        if isinstance(atom, Var):
            self.needs[-1][atom] = None
        return atom

    def define(self, *vs):
        self.defined[-1].update(vs)

    def is_active(self, a):
        return isinstance(a, Var) and a in self.active

    def acc(self, target, grad):
        """`d[target] += grad` (None-aware) if target is active."""
        if not self.is_active(target):
            return []
        dt = self.dvar(self.cells.get(target.name, target))
        return [Assign(dt, _call(rt.acc_var, dt, grad))]

    def reset(self, v):
        """Inside loops a value is redefined every iteration, so its cotangent restarts from zero after its definition."""
        return [Assign(self.dvar(v), Const(None))] if self.loop_depth and v in self.d else []

    def open_region(self, defined=()):
        self.needs.append({})
        self.defined.append(set(defined))

    def close_region(self):
        """Pop a region: return the Vars it must record; pass needs defined further out to the enclosing region."""
        needs, defined = self.needs.pop(), self.defined.pop()
        mine = [v for v in needs if v in defined]
        for v in needs:
            if v not in defined:
                self.needs[-1][v] = None
        return mine

    def region(self, stmts):
        fwd, backs = [], []
        for s in stmts:
            f, b = getattr(self, "stmt_" + type(s).__name__)(s)
            fwd += f
            backs.append(b)
        return fwd, [st for b in reversed(backs) for st in b]  # (prepending each block would be quadratic)

    def stmt_Assign(self, s):
        outs = s.out if isinstance(s.out, tuple) else (s.out,)
        self.define(*outs)
        self.note(s)
        active = any(self.is_active(o) for o in outs)
        # `x += y` updates in place even where the result needs no gradient: on an active x, or an object a backward
        # may read (`saved`), it must undo itself, so it runs as its rule
        first = s.value.args[0] if isinstance(s.value, Call) and s.value.args else None
        undone = self.is_active(first) or isinstance(first, Var) and first in self.saved
        mutates = isinstance(s.value, Call) and registry.is_mutating(callee_object(s.value.fn, self.globals),
                                                                     active or undone)
        if not active and not mutates:
            if s.on_argument:  # may update a caller's object in place: tell dispatch (it checks the arguments)
                return self.inactive_update(s), []
            return self.inactive(s), []
        y = s.out
        dy = self.dvar(y)
        if not isinstance(s.value, Call):
            return [s], self.acc(s.value, dy) + self.reset(y)
        call, pb = s.value, Var(self.namer.fresh(y.name + "_back"))
        self.define(self.need(pb))
        if isinstance(call.fn, Var) or call.kwargs or call.star is not None:
            # the callee may carry a gradient itself (a closure, a model object), or keywords: J in full
            j = Call(Const(dispatch.J_kw if call.kwargs else dispatch.J), (call.fn, *call.args), call.kwargs, call.star)
            back = self.generic_back(call, pb, dy, s.line)
            forward, back = self.keyword_call(s, pb, dy, [Assign((y, pb), j, s.line)], back)
            return forward, self.guarded(back, dy, mutates, s.line) + self.reset(y)
        need = tuple(self.is_active(a) for a in call.args)
        target = callee_object(call.fn, self.globals)
        rule = find_rule(target)
        forward = [Assign((y, pb), Call(Const(dispatch.J_args), (Const(need), call.fn, *call.args)), s.line)]
        grads = tuple(Var(self.namer.fresh("g")) if k else Var("_") for k in need)
        mask = (Const(need),) if not all(need) and (rule is None or registry.takes_need(rule)) else ()
        back = [Assign(grads, Call(pb, (dy, *mask)), s.line)]
        back += [a for arg, g in zip(call.args, grads, strict=True) for a in self.acc(arg, g)]
        optimized = self.optimized_call(s, target, rule, pb, dy, need, forward, back, mutates)
        if optimized is not None:
            return optimized
        return forward, self.guarded(back, dy, mutates, s.line) + self.reset(y)

    @staticmethod
    def guarded(back, dy, mutates, line):
        """A backward runs where its cotangent is not None, but an update in place always runs its back, which
        undoes it (adjoints/mutation/)."""
        return back if mutates else [If(_call(rt.is_not_none, dy), back, [], line=line)]

    def generic_back(self, call, pb, dy, line):
        """`_, da_, db_ = y_back(dy)`, then accumulate each cotangent into its argument's."""
        grads = [Var(self.namer.fresh("g")) if self.is_active(a) else Var("_") for a in (call.fn, *call.args)]
        if call.star is not None:
            grads.append(Var("*" + self.namer.fresh("gstar")))
        if call.kwargs:
            grads.append(Var(self.namer.fresh("gkw")))
        body = [Assign(tuple(grads), Call(pb, (dy,)), line)]
        for a, g in zip((call.fn, *call.args), grads, strict=False):
            body += self.acc(a, g)
        if call.star is not None:
            items = Var(grads[len(call.args) + 1].name[1:])
            body += self.acc(call.star, _call(rt.star_cotangent, self.need(call.star), items))
        for name, a in call.kwargs:
            pick = _call(rt.kwarg_cotangent, grads[-1], Const(name), self.need(a) if name is None else Const(None))
            body += self.acc(a, pick)
        return body

    @staticmethod
    def parallel(carries, which):
        """`a, b = b, a * b` moves all carried values at once (CPython swaps small tuples without building them)."""
        if len(carries) == 1:
            return [Assign(carries[0].var, getattr(carries[0], which))]
        return [Assign(tuple(c.var for c in carries), _call(rt.tuple_of, *(getattr(c, which) for c in carries)))]            if carries else []

    def carry_back(self, carries, body):
        """Route each carried value's cotangent to the value the body yielded for it. A yield defined in the body (the
        common case) has no cotangent yet at this point, so it is a move; anything else goes through temporaries."""
        carries = [c for c in carries if c.next != c.var]  # a value the loop leaves alone keeps its cotangent
        in_body = {v for st in body for v in binds(st)}
        nexts = [c.next for c in carries]
        if all(n in in_body and nexts.count(n) == 1 for n in nexts):
            return [a for c in carries for a in (Assign(self.dvar(c.next), self.dvar(c.var)),
                                                 Assign(self.dvar(c.var), Const(None)))]
        saved = [Var(self.namer.fresh("_" + c.var.name)) for c in carries]
        out = [Assign(t, self.dvar(c.var)) for t, c in zip(saved, carries, strict=True)]
        out += [Assign(self.dvar(c.var), Const(None)) for c in carries]
        return out + [a for t, c in zip(saved, carries, strict=True) for a in self.acc(c.next, t)]

    def stmt_Def(self, s):
        self.define(s.out)
        if not self.is_active(s.out):
            return [s], []
        dg = self.dvar(s.out)
        params = s.code.co_varnames[s.code.co_argcount - len(s.defaults or ()):s.code.co_argcount]
        back = [a for value, name in (*zip(s.values, s.code.co_freevars, strict=True),  # (derived.py's "b=" entries)
                                      *((d, p + "=") for d, p in zip(s.defaults or (), params) if self.is_active(d)))
                for a in self.acc(value, _call(rt.field, dg, Const(name)))]
        return [s], [If(_call(rt.is_not_none, dg), back, [])] + self.reset(s.out)

    def stmt_If(self, s):
        self.define(*(p.out for p in s.phis))
        arms = []
        for body, side in ((s.then, "then"), (s.orelse, "orelse")):
            self.open_region()
            pushed = self.arm_opened(s, side)  # (the then arm runs only where the condition holds)
            fwd, bwd = self.region(body)
            self.arm_closed(pushed)
            phi_back = []
            for p in s.phis:
                fwd.append(Assign(p.out, getattr(p, side)))
                if self.is_active(p.out):
                    phi_back += self.acc(getattr(p, side), self.dvar(p.out)) + self.reset(p.out)
            arms.append((fwd, phi_back + bwd, self.close_region()))
        if not any(b for _, b, _ in arms):
            self.note_joined_facts(s)
            return [replace(s, then=arms[0][0], orelse=arms[1][0], phis=[])], []
        record = Var(self.namer.fresh("_if"))
        self.define(record)
        if any(r for _, _, r in arms):
            self.need(record)
            for fwd, bwd, rec in arms:
                fwd.append(Assign(record, _call(rt.tuple_of, *rec)))
                bwd.insert(0, Assign(tuple(rec), record)) if rec else None
        self.note_joined_facts(s)
        self.need(s.cond)
        return ([replace(s, then=arms[0][0], orelse=arms[1][0], phis=[])],
                [replace(s, then=arms[0][1], orelse=arms[1][1], phis=[])])

    def stmt_Loop(self, s):
        carries = [c for c in s.carries if self.is_active(c.var)]
        target = [s.target] if s.target is not None else []
        self.define(*(c.var for c in s.carries))
        self.open_region([*(c.var for c in s.carries), *target])
        self.loop_depth += 1
        self.loop_opened(s)
        test_fwd, test_bwd = self.region(s.test)
        assert not test_bwd, "a loop condition carries no gradient"
        body_fwd, body_bwd = self.region(s.body)
        self.loop_depth -= 1
        record = self.close_region()
        before, after, back_before, back_after, candidates = self.loop_closed(s)
        # (a value the loop leaves alone needs no `x_2 = x_2` per iteration)
        moved = [c for c in s.carries if c.next != c.var]
        inits, nexts = self.parallel(s.carries, "init"), self.parallel(moved, "next")
        if not body_bwd and not carries:
            return [*before, *inits, Loop([], body_fwd + nexts, test_fwd, s.cond, s.target, s.iter, s.exit, s.line),
                    *after], []
        stack = Var(self.namer.fresh("_stack"))
        self.define(stack)
        self.need(stack)
        # one record per iteration: a bare value when there is one, a tuple when there are several
        entry = record[0] if len(record) == 1 else _call(rt.tuple_of, *record) if record else Const(None)
        push_var = Var(self.namer.fresh(stack.name + "_push"))
        if self.nested:  # an outer level differentiates this code: no in-place update it cannot see
            push, setup = Assign(stack, _call(rt.append, stack, entry)), []
        else:
            push, setup = Assign(Var("_"), Call(push_var, (entry,))), [
                Assign(push_var, _call(getattr, stack, Const("append")))]
        loop = Loop([], body_fwd + [push] + nexts, test_fwd, s.cond, s.target, s.iter, s.exit, s.line)
        fwd = [Assign(stack, _call(rt.list_of)), *setup, *before, *inits, loop]
        carry_back = self.carry_back(carries, s.body)
        back_body = carry_back + body_bwd
        collect = []
        if target and self.is_active(s.target):
            dts = Var(self.namer.fresh("d" + s.target.name + "_all"))
            back_body.append(Assign(dts, _call(rt.append, dts, self.dvar(s.target))) if self.nested else
                             Assign(Var("_"), _call(list.append, dts, self.dvar(s.target))))
            back_body.append(Assign(self.dvar(s.target), Const(None)))
            collect = [Assign(dts, _call(rt.list_of))]
            tail = self.acc(s.iter, _call(rt.iter_cotangent, self.need(s.iter), dts))
        else:
            tail = []
        unpacked = record[0] if len(record) == 1 else tuple(record) if record else Var("_")
        back_loop = Loop([], back_body, target=unpacked, iter=_call(reversed, stack), line=s.line)
        copied = self.loop_copy(loop, back_loop, s.carries, candidates, stack, push)
        fwd, bwd = (fwd[:-1] + copied[0], collect + copied[1]) if copied else (fwd, collect + [back_loop])
        fwd, bwd = fwd + after, back_before + bwd + back_after
        for c in carries:  # (the cotangent restarts only where an enclosing loop's backward runs this again)
            bwd += self.acc(c.init, self.dvar(c.var)) + ([Assign(self.dvar(c.var), Const(None))] if self.loop_depth else [])
        return fwd, bwd + tail


def adjoint(fn, code, active, globals_, namer, statics=None, functional=False):
    """Build the forward and backward IR functions of `fn` (see the module docstring). `statics` maps free variables
    whose value is the same for every function of this code (generated code's helpers) to that value. Nested code,
    `functional` (a twin's transform for nested differentiation, adjoints/nesting/) or generated code itself, is
    code an outer level may transform again: its loop tapes grow by rebinding (`append`), not in place."""
    p = AdjointPass(fn, code, active, globals_, namer, statics or {},
                    functional or code.co_filename.startswith("<zygotepy:"))
    p.define(*fn.params, *(Var(n) for n in fn.freevars), *(Var(f"{n}_cell") for n in captured_names(code)))
    fwd, bwd = p.region(fn.body)
    tape = [v for v in p.needs[0] if v in p.defined[0]]
    assert not (missing := [v for v in p.needs[0] if v not in p.defined[0]]), f"backward reads undefined {missing}"
    tape_var = Var(namer.fresh("_tape"))
    dret = p.dvar(fn.ret) if p.is_active(fn.ret) else Var(namer.fresh("dy"))
    inits = [Assign(d, Const(None)) for v, d in p.d.items() if d is not dret]
    unpack = [Assign(tuple(tape), tape_var)] if tape else []
    dself = Const(None)
    if any(p.is_active(Var(n)) for n in fn.freevars):
        dself = _call(rt.closure_cotangent, *(x for n in fn.freevars for x in (Const(n), p.d.get(Var(n), Const(None)))))
    grads = [p.d.get(v, Const(None)) if p.is_active(v) else Const(None) for v in fn.params]
    ret = _call(rt.tuple_of, dself, *grads)
    forward = Function(fn.name, fn.params, fn.freevars, fwd, _call(rt.tuple_of, fn.ret, _call(rt.tuple_of, *tape)),
                       fn.signature, fn.filename, fn.line, fn.mutated)
    backward = Function(fn.name, [tape_var, dret], [], unpack + inits + bwd, ret, None, fn.filename, fn.line)
    return Adjoint(tidy(forward, tape), backward, tape)

"""adjoint(): IR function -> `Adjoint(forward, backward)`, both IR, closure-free.

The forward runs the user's code and records, per region, the values the backward needs: the function body returns
them as its tape tuple, a loop pushes one record per iteration onto a list (the backward walks `reversed(list)`, so it
can run again), an `if` arm assigns its record to a variable the enclosing region records. SSA makes a value's name
enough to find it in the backward.

An active operation `y = f(a, b)` becomes `y, y_back = J(f, a, b)` and, in the backward, `g_a, g_b = y_back(dy)`
accumulated into `da`, `db` (a callee held in a variable, such as a closure, also gets its own cotangent first). Two
shortcuts, both guarded at run time: a built-in rule is called directly (`y, y_back = _tanh_rule(a)`), and when the
registry has an inlinable scalar derivative the forward tries `if type(a) in _SC and ...: y = f(a, b)` with no
pullback object, and the backward pastes the derivative in. Everything else a call means (user functions, methods,
containers, user-class operators) is decided by `J` and the registry.
"""
import types
from dataclasses import dataclass, replace

from ..adjoints import registry
from ..adjoints.registry import find_rule, find_scalar
from . import dispatch, inline, specialize
from . import mutate as mt
from . import runtime as rt
from .analysis import callee_object, cell_values, saved_objects, uses_arrays
from .fastpath import FastPaths, ItemLoop, RuleRef, _call
from .ir import Assign, Call, Const, Def, Function, If, Loop, Var
from ..errors import UnsupportedSyntax
from .lower import captured_names
from .tidy import tidy

ACCUMULATE_IN_BACK = [True]  # rules add to the running cotangents they are handed; tests switch it off
KNOWN_CONTAINERS = [True]  # no `is_native` guard on a tuple/list/dict the lowering built; tests switch it off
NESTED_SIZE = [True]  # nested code is written for an outer level to transform (`adjoint` below); tests switch it off


@dataclass
class Adjoint:
    forward: Function   # returns (y, tape)
    backward: Function  # (tape, dy) -> (dself, *dparams)
    tape: list          # the Vars the forward records for the backward


_NATIVE_MAKERS = frozenset((rt.unpack, rt.unpack_starred, rt.tuple_of, rt.list_of, rt.dict_of, rt.splat,
                            rt.splat_list))


def _makes_native(fn):
    """Does `fn` always return a plain tuple, list or dict (the primitives the lowering uses for `a, b = v` and for
    displays)?"""
    try:
        return fn in _NATIVE_MAKERS
    except TypeError:  # an unhashable constant callee
        return False


class AdjointPass(FastPaths):
    def __init__(self, fn, code, active, globals_, namer):
        self.fn, self.active, self.globals, self.namer = fn, active, globals_, namer
        self.cells = cell_values(fn, code)
        self.d = {}            # primal Var -> cotangent Var
        self.needs = [{}]      # per open region: Vars its backward reads (ordered)
        self.defined = [set()]  # per open region: Vars it defines
        self.loop_depth = 0
        self.hoisted = []      # per open loop: (index of its body in self.defined, {atom: guard Var computed before it})
        self.candidates = []   # per open loop: its guarded operations (specialize.Candidate), for loop versioning
        self.statics = {}      # free variable -> its value, where it is the same for every closure of this code
        self.functional = False  # loop tapes grow by `_stack = append(_stack, r)`: an outer level can follow that
        self.saved = saved_objects(fn, active, globals_)  # Vars whose objects a backward may read
        self.nested = False    # code an outer level will transform too: functional, or generated code itself
        self.small = False     # nested, and written small for that (NESTED_SIZE)
        self.arrays = uses_arrays(fn, globals_)  # it computes with NumPy arrays: operations get the array fast path
        self.natives = set()   # Vars that always hold a tuple, list or dict (the lowering's unpacking and displays)
        self.type_of = {}      # Var -> the atom whose `type(...)` it holds
        self.facts = {}        # Var -> atoms that are Python numbers (`type(a) in _SC`) whenever the Var is true
        self.known = [frozenset()]  # per open region: atoms a guard enclosing it proved to be Python numbers
        self.item_loops = [ItemLoop()]  # per open loop: what its item paths need (fastpath.ItemLoop)
        self.item_roots = {}   # an item store's output -> the array it stores into, first version in the loop
        self.array_outputs = {}  # output of an elementwise operation with an array path -> its pullback slot

    # --- bookkeeping --------------------------------------------------------------------------------------------------
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

    def running(self, call, rule):
        """The running cotangents to hand a rule that adds to them (`registry.accumulates`), one per argument (None for
        an inactive one), or () to accumulate its results here. Only for a constant or global callee (when a global no
        longer names the rule's function, `J_handing` wraps whatever it names) and distinct active variables (each is
        rebound to the back's result)."""
        if rule is None or isinstance(call.fn, Var) or not registry.accumulates(rule):
            return ()
        active = [a for a in call.args if self.is_active(a)]
        if len(set(active)) != len(active) or not ACCUMULATE_IN_BACK[0]:
            return ()
        return tuple(self.dvar(self.cells.get(a.name, a)) if self.is_active(a) else Const(None) for a in call.args)

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

    # --- regions ------------------------------------------------------------------------------------------------------
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
        if isinstance(s.out, Var) and isinstance(s.value, Call) and isinstance(s.value.fn, Const) \
                and _makes_native(s.value.fn.value) and KNOWN_CONTAINERS[0]:
            self.natives.add(s.out)  # an operator on it means what its rule says: no `is_native` guard
        if self.small and isinstance(s.out, Var):
            self.note_facts(s)
        active = any(self.is_active(o) for o in outs)
        # `x += y` updates in place even where the result needs no gradient: on an active x, or an object a backward
        # may read (`saved`), it must undo itself, so it runs as its rule
        first = s.value.args[0] if isinstance(s.value, Call) and s.value.args else None
        undone = self.is_active(first) or isinstance(first, Var) and first in self.saved
        mutates = isinstance(s.value, Call) and registry.is_mutating(callee_object(s.value.fn, self.globals),
                                                                     active or undone)
        if not active and not mutates:
            if s.on_argument:  # may update a caller's object in place: tell dispatch (it checks the arguments)
                x = s.value.args[0]
                test = self.hoist(_call(rt.is_scalar, x), x)
                guarded = If(test, [s], [Assign(s.out, _call(mt.logged, s.value.fn, *s.value.args), s.line)],
                             line=s.line)
                if self.candidates:  # a loop on Python numbers drops the check (specialize.version)
                    target = callee_object(s.value.fn, self.globals)
                    self.candidates[-1].append(specialize.Candidate(guarded, None, s.out, target, [(x, test)]))
                return [guarded], []
            return self.inactive(s), []
        y = s.out
        dy = self.dvar(y)
        if not isinstance(s.value, Call):
            return [s], self.acc(s.value, dy) + self.reset(y)
        call, pb = s.value, Var(self.namer.fresh(y.name + "_back"))
        self.define(pb)
        self.need(pb)
        if isinstance(call.fn, Var) or call.kwargs or call.star is not None:
            # the callee may carry a gradient itself (a closure, a model object), or keywords: J in full
            j = Call(Const(dispatch.J_kw if call.kwargs else dispatch.J), (call.fn, *call.args), call.kwargs, call.star)
            back = self.generic_back(call, pb, dy, s.line)
            return ([Assign((y, pb), j, s.line)],
                    (back if mutates else [If(_call(rt.is_not_none, dy), back, [], line=s.line)]) + self.reset(y))
        need = tuple(self.is_active(a) for a in call.args)
        target = callee_object(call.fn, self.globals)
        rule = find_rule(target)
        into = self.running(call, rule)
        # a global may name another function by the time the call runs: its back must still take the handed cotangents
        j = dispatch.J_handing if into and not isinstance(call.fn, Const) else dispatch.J_args
        forward = [Assign((y, pb), Call(Const(j), (Const(need), call.fn, *call.args)), s.line)]
        derivative = find_scalar(target)
        if derivative is not None and not inline.usable(derivative, len(call.args)):
            derivative = None  # another arity (math.log(x, base)), or its source is unreadable: the rule handles it
        if any(isinstance(a, Const) and type(a.value) not in rt.SCALARS for a in call.args):
            # the guards test variables only: a constant operand must be a real Python number too (the inlined
            # derivatives are real, no conjugate; `(0.5,) * n` repeats a tuple, whose rule gives the int n None)
            derivative = None
        if derivative is None and rule is not None and registry.callable_directly(rule):
            # call the rule directly, skipping J (operators with a scalar fast path keep two arms, not three: the
            # transform stays quick and the generated code short)
            direct = [Assign((y, pb), Call(Const(RuleRef(rule, target)), call.args), s.line)]
            guard = self.rule_guard(call, target)
            forward = [If(_call(rt.all_true, *guard), direct, forward, line=s.line)] if guard else direct
        grads = tuple(Var(self.namer.fresh("g")) if k else Var("_") for k in need)
        mask = (Const(need),) if not all(need) and (rule is None or registry.takes_need(rule)) else ()
        if into:  # the back adds to the running cotangents itself (in place when it owns them)
            back = [Assign(tuple(d if isinstance(d, Var) else Var("_") for d in into),
                           Call(pb, (dy, *(mask or (Const(None),)), *into)), s.line)]
        else:
            back = [Assign(grads, Call(pb, (dy, *mask)), s.line)]
            back += [a for arg, g in zip(call.args, grads, strict=True) for a in self.acc(arg, g)]
        if derivative is None:
            item = self.item_path(s, target, pb, dy, forward, back)
            if item is not None:
                return item
        array = None if mutates else self.array_path(s, target, pb, dy)
        if derivative is None:  # an update in place always runs its back, which undoes it (adjoints/mutation.py)
            forward, back = self.with_array_path(array, forward, back)
            return forward, (back if mutates else [If(_call(rt.is_not_none, dy), back, [], line=s.line)]) + self.reset(y)
        return self.fast_path(s, derivative, target, pb, dy, forward, back, mutates, array)

    def inactive(self, s):
        """An operation no gradient flows through runs as written, except a call of a function with a user's rule:
        the rule's forward runs (Zygote calls a rule even then; a rule such as `nestlevel` may compute something else),
        and so do the nesting rules of `adjoints/nesting.py`, which give an inner level's calls the outer level's meaning."""
        call = s.value
        if not isinstance(call, Call) or call.star is not None or isinstance(s.out, tuple):
            return [s]
        target = self.statics.get(call.fn.name) if isinstance(call.fn, Var) else callee_object(call.fn, self.globals)
        j = Call(Const(dispatch.J_kw if call.kwargs else dispatch.J), (call.fn, *call.args), call.kwargs)
        if target is None and isinstance(call.fn, Var):
            # a callee known only at run time (a closure cell, a local name) may have such a rule too: tested there,
            # one set lookup (`id(f) in _RULED`), hoisted out of loops where the callee does not change
            test = self.hoist(_call(rt.has_rule, call.fn), call.fn)
            return [If(test, [Assign((s.out, Var("_")), j, s.line)], [s], line=s.line)]
        rule = find_rule(target)
        if rule is None or registry.is_builtin(rule) and not getattr(rule, "__zygote_always__", False):
            if type(target) is types.BuiltinFunctionType and getattr(target, "__module__", None) == "math" \
                    and not call.kwargs and any(isinstance(a, Var) for a in call.args):
                # `if math.sin(x) > 0`: a dual number (hessian) may flow in, which math's C code refuses
                return [Assign(s.out, Call(Const(rt.number_value), (call.fn, *call.args)), s.line)]
            return [s]
        return [Assign((s.out, Var("_")), j, s.line)]

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
            body += self.acc(call.star, _call(tuple, Var(grads[len(call.args) + 1].name[1:])))
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
        in_body = set()
        for st in body:
            if isinstance(st, Assign):
                in_body.update(st.out if isinstance(st.out, tuple) else (st.out,))
            elif isinstance(st, Def):
                in_body.add(st.out)
            elif isinstance(st, If):
                in_body.update(p.out for p in st.phis)
            elif isinstance(st, Loop):
                in_body.update(c.var for c in st.carries)
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
        if any(self.is_active(d) for d in s.defaults or ()):  # its cotangent would have nowhere to go
            raise UnsupportedSyntax("a default value of a nested function that carries a gradient", self.fn.filename,
                                    s.line, "read the name inside the function instead, or pass it as an argument")
        dg = self.dvar(s.out)
        back = [a for value, name in zip(s.values, s.code.co_freevars, strict=True)
                for a in self.acc(value, _call(rt.field, dg, Const(name)))]
        return [s], [If(_call(rt.is_not_none, dg), back, [])] + self.reset(s.out)

    def note_facts(self, s):
        """What `s` tells of the types of values where a condition holds: `t = type(a)`, `c = t in _SC` (the guards
        of the scalar fast paths, as an inner level's generated code writes them), `is_scalar(a)`, `all_true(...)`
        and copies. SSA: a value's type never changes, so a fact holds wherever its condition is true."""
        v = s.value
        if isinstance(v, Var):
            if v in self.facts:
                self.facts[s.out] = self.facts[v]
            return
        if not (isinstance(v, Call) and not v.kwargs and v.star is None):
            return
        fn = callee_object(v.fn, self.globals)
        if fn is type and len(v.args) == 1:
            self.type_of[s.out] = v.args[0]
        elif fn is rt.contained_in and len(v.args) == 2 and v.args[0] in self.type_of \
                and isinstance(v.args[1], Const) and v.args[1].value is rt.SCALARS:
            self.facts[s.out] = frozenset((self.type_of[v.args[0]],))
        elif fn is rt.is_scalar and len(v.args) == 1:
            self.facts[s.out] = frozenset(v.args)
        elif fn is rt.all_true:
            known = frozenset().union(*(self.facts.get(a, ()) for a in v.args))
            if known:
                self.facts[s.out] = known

    def stmt_If(self, s):
        self.define(*(p.out for p in s.phis))
        arms = []
        for body, side in ((s.then, "then"), (s.orelse, "orelse")):
            self.open_region()
            proven = self.facts.get(s.cond) if side == "then" else None
            if proven:  # the then arm runs only where the condition proved these to be Python numbers
                self.known.append(self.known[-1] | proven)
            fwd, bwd = self.region(body)
            if proven:
                self.known.pop()
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

    def note_joined_facts(self, s):
        """`a and b` joins as `p = b if a else a`: where p is true, a was true and so was b."""
        if not self.small:
            return
        for p in s.phis:
            if p.orelse == s.cond:
                known = self.facts.get(s.cond, frozenset()) | self.facts.get(p.then, frozenset())
                if known:
                    self.facts[p.out] = known

    def stmt_Loop(self, s):
        carries = [c for c in s.carries if self.is_active(c.var)]
        target = [s.target] if s.target is not None else []
        self.define(*(c.var for c in s.carries))
        self.open_region([*(c.var for c in s.carries), *target])
        self.loop_depth += 1
        self.hoisted.append((len(self.defined) - 1, {}))
        self.candidates.append([])
        self.item_loops.append(ItemLoop.of(s))
        test_fwd, test_bwd = self.region(s.test)
        assert not test_bwd, "a loop condition carries no gradient"
        body_fwd, body_bwd = self.region(s.body)
        guards = [Assign(v, test) for v, test in self.hoisted.pop()[1].values()]
        candidates = self.candidates.pop()
        item_loop = self.item_loops.pop()
        self.loop_depth -= 1
        record = self.close_region()
        self.define(*item_loop.defines())
        guards[:0] = item_loop.runs_made()
        closes = item_loop.runs_closed(s.line)
        # (a value the loop leaves alone needs no `x_2 = x_2` per iteration)
        moved = [c for c in s.carries if c.next != c.var]
        inits, nexts = self.parallel(s.carries, "init"), self.parallel(moved, "next")
        if not body_bwd and not carries:
            return [*guards, *inits, Loop([], body_fwd + nexts, test_fwd, s.cond, s.target, s.iter, s.exit, s.line),
                    *closes], []
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
        fwd = [Assign(stack, _call(rt.list_of)), *setup, *guards, *inits, loop]
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
        bwd = collect + [back_loop]
        flag = Var(self.namer.fresh(stack.name.lstrip("_") + "_fast"))
        # (code an outer level transforms gets one copy: the versioned loop's second copy would be transformed too)
        versioned = None if self.small else specialize.version(loop, back_loop, s.carries, candidates, flag, push)
        if versioned is not None:
            self.define(flag)
            self.need(flag)
            fwd, bwd = fwd[:-1] + versioned[0], collect + versioned[1]
        fwd += closes
        bwd = item_loop.buffers_made() + bwd + item_loop.buffers_added(self.dvar)
        for c in carries:
            bwd += self.acc(c.init, self.dvar(c.var)) + [Assign(self.dvar(c.var), Const(None))]
        return fwd, bwd + tail


def adjoint(fn, code, active, globals_, namer, statics=None, functional=False):
    """Build the forward and backward IR functions of `fn` (see the module docstring). `statics` maps free variables
    whose value is the same for every function of this code (generated code's helpers) to that value.

    Nested code, `functional` (a twin's transform of a function for nested differentiation, adjoints/nesting.py) or
    generated code itself (an outer level transforming an inner one), is code an outer level may transform again: its
    loop tapes grow by rebinding (`append`), not in place. And its size, not its speed, is what counts (`NESTED_SIZE`;
    compile.py also reads generated code's helpers as constants and inlines no callees there): its loops get no
    versioned second copy, its scalar accumulations are `acc` calls, not two-armed conditional expressions, and an
    operation inside an arm whose condition proved its operands Python numbers (the inner code's `type(x) in _SC`)
    takes the fast path without a guard of its own. The same arithmetic as the general code (a loop's or a callee's
    contributions may be summed in another order: last-bit differences)."""
    p = AdjointPass(fn, code, active, globals_, namer)
    p.statics, p.functional = statics or {}, functional
    p.nested = functional or code.co_filename.startswith("<zygotepy:")
    p.small = p.nested and NESTED_SIZE[0]
    p.define(*fn.params, *(Var(n) for n in fn.freevars), *(Var(f"{n}_cell") for n in captured_names(code)))
    fwd, bwd = p.region(fn.body)
    tape = [v for v in p.needs[0] if v in p.defined[0]]
    missing = [v for v in p.needs[0] if v not in p.defined[0]]
    assert not missing, f"backward reads values the forward never defines: {missing}"
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

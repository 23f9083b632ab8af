"""The optimisation passes of the adjoint pass: each rewrites the plain pair the adjoint pass emits for an operation
(`y, y_back = J(f, a, b)` in the forward, `ga, gb = y_back(dy)` in the backward) into a faster equivalent, behind run-time
guards where the equivalence needs them, and each is switched by a flag of `zygotepy.options.OPTIONS`. With every flag
off the plain pairs run, and every test passes; `show_adjoint(f)` shows them, `show_adjoint(f, optimized=True)` what
runs.

- `guards.py`: guards on a rule's identity and on plain operands, hoisted out of loops, and what an enclosing guard
  proved (`Facts`, for nested code)
- `rebinding.py`: what a guard on a global callee must also test (an inlined callee's code, another module's
  globals), and the loops whose body cannot rebind a global (a guard on one is hoisted out of those only)
- `direct_rules.py`: a built-in rule called directly, not through J (`direct_rules`), and rules adding to the running
  cotangents they are handed (`accumulate`)
- `scalar_paths.py`, `array_paths.py`, `item_paths.py`: derivatives pasted in for Python numbers, real NumPy arrays,
  and items of arrays in loops
- `loop_copies.py`: a guard-free second copy of a loop on Python numbers
- `records.py`: the constants these passes put into generated code

Whole-function passes run before and after the adjoint pass: inlining of small callees (`ast_adjoint/speculate.py`),
dropped joins (`ir.drop_dead_phis`), shifts the result does not depend on made constants (`shifts.py`), None tests
removed from the backward (`ast_adjoint/nullness.py`), and tidying (`ast_adjoint/tidy.py`).
"""
from ...options import OPTIONS
from .. import mutate as mt
from .. import runtime as rt
from ..analysis import callee_object, uses_arrays
from ..ir import Assign, If, Var
from .array_paths import ArrayPaths
from .direct_rules import DirectRules
from .guards import Facts, Guards, _call
from .item_paths import ItemLoop, ItemPaths
from .loop_copies import Candidate, version
from .rebinding import steady
from .scalar_paths import ScalarPaths


class Optimizations(Guards, Facts, DirectRules, ScalarPaths, ArrayPaths, ItemPaths):
    """The optimisation passes, as the hooks the adjoint pass calls (`adjoint.AdjointPass` derives from this)."""

    def start_optimizing(self, fn, globals_):
        self.arrays = uses_arrays(fn, globals_)  # it computes with NumPy arrays: operations get the array paths
        self.hoisted = []      # per open loop: (index of its body in self.defined, {atom: guard Var computed before it},
        #                        whether nothing it runs can rebind a global: rebinding.steady)
        self.candidates = []   # per open loop: its guarded operations (loop_copies.Candidate), for loop copies
        self.item_loops = [ItemLoop()]  # per open loop: what its item paths need (item_paths.ItemLoop)
        self.item_roots = {}   # an item store's output -> the array it stores into, first version in the loop
        self.array_outputs = {}  # output of an elementwise operation with an array path -> its pullback slot
        self.start_facts()

    def optimized_call(self, s, target, rule, pb, dy, need, plain_forward, plain_back, mutates):
        """The forward and backward of the active call `s` (`y = f(*args)`) with its optimisations, or None for the
        plain pair; the globals its pasted derivatives read are bound first (`Guards.frozen`)."""
        self.binds = []
        out = self._optimized_call(s, target, rule, pb, dy, need, plain_forward, plain_back, mutates)
        return out if out is None or not self.binds else (self.binds + out[0], out[1])

    def _optimized_call(self, s, target, rule, pb, dy, need, plain_forward, plain_back, mutates):
        call, y = s.value, s.out
        if self.unbound_here(call.args):  # (it raises UnboundLocalError where it runs: the plain pair does that)
            return None
        into = self.running(call, rule)
        forward, back = self.direct_call(s, target, rule, pb, dy, need, into, plain_forward, plain_back)
        derivative = self.scalar_derivative(call, target)
        if derivative is None:
            item = self.item_path(s, target, pb, dy, forward, back)
            if item is not None:
                return item
        array = [] if mutates else self.array_path(s, target, pb, dy)
        if derivative is None:
            if not array and forward is plain_forward and back is plain_back:
                return None
            forward, back = self.with_array_path(array, forward, back)
            return forward, self.guarded(back, dy, mutates, s.line) + self.reset(y)
        return self.fast_path(s, derivative, target, pb, dy, forward, back, mutates, array)

    def keyword_call(self, s, pb, dy, forward, back):
        """A call with keywords, or one through a variable or with `*args`: the array path where its callee's array
        derivative takes its keywords as literals (`np.sum(x, axis=1, keepdims=True)`), else the plain pair."""
        call = s.value
        if not call.kwargs or call.star is not None or isinstance(call.fn, Var) \
                or self.unbound_here([*call.args, *(a for _, a in call.kwargs)]):
            return forward, back
        self.binds = []
        forward, back = self.with_array_path(self.array_path(s, callee_object(call.fn, self.globals), pb, dy), forward,
                                             back)
        return self.binds + forward, back

    def inactive_update(self, s):
        """`x += 1` with no gradient, on what may be a caller's object: dispatch checks the arguments it updated in
        place (`mutate.logged`); on Python numbers (`scalar_paths`) that check is skipped, behind a guard."""
        x = s.value.args[0]
        logged = Assign(s.out, _call(mt.logged, s.value.fn, *s.value.args), s.line)
        if not OPTIONS.scalar_paths or self.unbound_here([x]):
            return [logged]
        test = self.hoist(_call(rt.is_scalar, x), x)
        guarded = If(test, [s], [logged], line=s.line)
        if self.candidates:  # a loop on Python numbers drops the check (loop_copies.version)
            self.candidates[-1].append(Candidate(guarded, None, s.out, callee_object(s.value.fn, self.globals),
                                                     [(x, test)]))
        return [guarded]

    def loop_opened(self, s):
        self.hoisted.append((len(self.defined) - 1, {}, steady(s, self.globals)))
        self.candidates.append([])
        self.item_loops.append(ItemLoop.of(s))

    def loop_closed(self, s):
        """What the loop `s`'s optimisations add: statements before it (hoisted guards, item runs) and after it (the
        runs closed), before and after its backward (item reads' buffers), and its candidates for a copy."""
        guards = [Assign(v, test) for v, test in self.hoisted.pop()[1].values()]
        candidates = self.candidates.pop()
        item_loop = self.item_loops.pop()
        self.define(*item_loop.defines())
        return (item_loop.runs_made() + guards, item_loop.runs_closed(s.line), item_loop.buffers_made(),
                item_loop.buffers_added(self.dvar), candidates)

    def loop_copy(self, loop, back_loop, carries, candidates, stack, push):
        """A guard-free second copy of the loop (`loop_copies.version`), as (forward, backward), or None. (Code an
        outer level transforms stays one copy: the second copy would be transformed too.)"""
        if self.small or not OPTIONS.loop_copies:
            return None
        flag = Var(self.namer.fresh(stack.name.lstrip("_") + "_fast"))
        copied = version(loop, back_loop, carries, candidates, flag, push)
        if copied is not None:
            self.define(flag)
            self.need(flag)
        return copied

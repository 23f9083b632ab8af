"""The guarded shortcuts of the adjoint pass (a mixin of `adjoint.AdjointPass`): a built-in rule called directly,
and the inline scalar derivative, each behind run-time guards, with guards on loop-invariant values hoisted out of the
innermost loop. They only make generated code faster: tests/ast_adjoint/test_specialize.py checks that the fast and
the general paths give the same gradients. So do the item paths (items.py) for `x[i]` and `out[i] = v` in loops
(tests/test_item_paths.py).
"""
import operator
import re
from dataclasses import dataclass, field, replace

from ..adjoints import array_inline, registry
from . import dispatch, inline, items, specialize
from .analysis import resolve_global
from . import mutate as mt
from . import runtime as rt
from .ir import Assign, Call, Const, Global, If, Var

ITEM_PATHS = [True]  # items of 1-d float64 arrays read and stored in loops skip the rules; tests switch it off
ARRAY_PATHS = [True]  # operations on real NumPy arrays inline their derivative (adjoints/array_inline.py); ditto


class ArrayArm:
    """The value a pullback slot holds when the operation took the array fast path (printed `_ARRAY`)."""

    def __repr__(self):
        return "_ARRAY"


ARRAY_ARM = ArrayArm()


@dataclass(frozen=True)
class RuleRef:
    """A registered rule called directly from generated code (`y, y_back = _tanh_rule(x)`)."""
    rule: object
    target: object


@dataclass(frozen=True)
class Derivative:
    """Element `index` of the inlinable scalar derivative `fn` (dy, y, *args) -> tuple; the emitter inlines it."""
    fn: object
    index: int


@dataclass(frozen=True)
class ArrayPath:
    """The array arm of one operation (FastPaths.array_path): its guard, forward, backward, and the backward's test
    that it ran."""
    guard: object
    forward: list
    backward: list
    taken: object
    line: int


@dataclass
class ItemLoop:
    """What the item paths of one loop need: the values it carries unchanged (`steady`) and as the same object
    (`same`, items stored into it), each mapped to its value at entry; its target and what it walks; and what the
    paths made: array -> (its ItemRun's Var, (the array at entry,) or (), the Var of the run's `note` or None), and
    array the loop leaves alone -> the Var of its reads' cotangent buffer."""
    steady: dict = field(default_factory=dict)
    same: dict = field(default_factory=dict)
    target: object = None
    walked: object = None
    runs: dict = field(default_factory=dict)
    buffers: dict = field(default_factory=dict)

    @classmethod
    def of(cls, loop):
        stored = {}  # an item store's output -> the array it stores into (`out_3 = setitem(out_2, i, v)` is out_2)
        for st in loop.body:
            if isinstance(st, Assign) and isinstance(st.out, Var) and isinstance(st.value, Call) \
                    and isinstance(st.value.fn, Const) and st.value.fn.value is mt.setitem:
                first = st.value.args[0]
                stored[st.out] = stored.get(first, first)
        inits = [c for c in loop.carries if isinstance(c.init, Var)]
        return cls({c.var: c.init for c in inits if c.next == c.var},
                   {c.var: c.init for c in inits if stored.get(c.next, c.next) == c.var}, loop.target, loop.iter)

    def defines(self):
        return [run for run, _, _ in self.runs.values()]

    def runs_made(self):
        """Before the loop: its runs, one per array stored into (the journal of its item stores, items.ItemRun)."""
        made = []
        for run, array, note in self.runs.values():
            made.append(Assign(run, _call(items.ItemRun, *array)))
            if note is not None:  # the loop stores into one object throughout: it stores itself and notes each index
                made.append(Assign(note, _call(getattr, run, Const("note"))))
        return made

    def runs_closed(self, line):
        return [Assign(Var("_"), _call(rt.callmethod, run, Const("close")), line) for run, _, _ in self.runs.values()]

    def buffers_made(self):
        return [Assign(b, Const(None)) for b in self.buffers.values()]

    def buffers_added(self, dvar):
        """After the backward loop: the reads' cotangents gathered in each buffer, added to their array's."""
        return [Assign(dvar(x), _call(items.buffer_grads, dvar(x), b)) for x, b in self.buffers.items()]


def _call(fn, *args):
    return Call(Const(fn), tuple(args))


def _vars(atoms):
    """The atoms whose value is only known at run time (variables and globals), each once."""
    return list(dict.fromkeys(a for a in atoms if not isinstance(a, Const)))


def _is_none(v):
    return _call(rt.is_none, v)


class FastPaths:
    """Methods of AdjointPass that build the guarded shortcuts (they use its regions, names and needs)."""

    def rule_guard(self, call, target):
        """When calling a rule directly is right: the global still names the function the rule is for, and an
        operator's operands are NumPy/Python values (a user class's `__mul__` goes through J, to be transformed)."""
        tests = []
        if isinstance(call.fn, Global):
            tests.append(self.hoist(Call(Const(rt.is_same), (call.fn, Const(target))), call.fn))
        if dispatch.is_operator(target):
            tests += [self.hoist(_call(rt.is_native, a), a) for a in _vars(call.args)
                      if a not in self.natives and a not in self.known[-1]]
        return tests


    def hoist(self, test, atom, steady=False):
        """A guard on a value the innermost loop does not change is computed once, before the loop. `steady`: a
        value the loop carries unchanged counts as unchanged (the guard tests its value at entry; only for guards of
        what an update in place cannot change, such as an array's type, dtype and rank)."""
        if not self.hoisted:
            return test
        if isinstance(atom, Global) and resolve_global(atom.path, self.globals) is None:
            return test  # a name the loop may never reach (`np.r_` on a namespace without it): read where it stands
        start, tests = self.hoisted[-1]
        if isinstance(atom, Var) and any(atom in d for d in self.defined[start:]):  # (SSA: a Var is defined once)
            atom = self.item_loops[-1].same.get(atom) if steady else None
            if atom is None:
                return test
            test = Call(test.fn, (atom,))
        key = (atom, test.fn)
        if key not in tests:
            name = atom.name if isinstance(atom, Var) else atom.path.replace(".", "_")
            kinds = {rt.is_scalar: "scalar", rt.is_native: "native", items.is_vector: "vector", rt.is_range: "range",
                     rt.is_real_array: "array", rt.is_real_data: "real", rt.is_real_matrix: "matrix",
                     rt.is_real_value: "real"}
            kind = kinds.get(test.fn.value, "known")
            tests[key] = (Var(self.namer.fresh(f"{name}_is_{kind}")), test)
        return tests[key][0]

    def fast_path(self, s, derivative, target, pb, dy, generic_fwd, generic_bwd, mutates=False, array=None):
        """Guarded inline scalar derivative. The pullback slot `pb` is None on the fast path, or, inside a loop when
        the derivative reads exactly one value defined in this iteration, that value itself (so one list entry per
        operation, no tuple): the backward tells the paths apart by the slot's type."""
        call, y = s.value, s.out
        tests = [(a, self.hoist(_call(rt.is_scalar, a), a)) for a in _vars(call.args) if a not in self.known[-1]]
        if isinstance(call.fn, Global):
            tests.insert(0, (call.fn, self.hoist(Call(Const(rt.is_same), (call.fn, Const(target))), call.fn)))
        guard = [t for _, t in tests]
        atoms = (dy, y, *call.args)
        active = [k for k, a in enumerate(call.args) if self.is_active(a)]
        read = list(dict.fromkeys(a for k in active for name, a in zip(inline.params(derivative), atoms, strict=True)
                                  if a is not dy and name in inline.names_used(derivative, k)))  # ordered: determinism
        local = [a for a in read if isinstance(a, Var) and (a in self.defined[-1] or a == y)]
        slot = local[0] if self.loop_depth and len(local) == 1 else None
        if slot is not None:
            atoms = tuple(pb if a == slot else a for a in atoms)
        for a in read:
            if a != slot:
                self.need(a)
        fast_bwd = []
        for k in active:
            a = call.args[k]
            da = self.dvar(self.cells.get(a.name, a))
            # code an outer level transforms adds with `acc` (one call with a rule there, not `g if d is None else d + g`,
            # two arms to differentiate)
            add = rt.acc if self.small else rt.acc_scalar
            fast_bwd.append(Assign(da, _call(add, da, Call(Const(Derivative(derivative, k)), atoms))))
        # (the guard checked that a global names `target`: called directly)
        s = Assign(s.out, Call(Const(target), call.args) if isinstance(call.fn, Global) else call, s.line,
                   on_argument=s.on_argument)
        save = Assign(pb, slot if slot is not None else Const(None), s.line)
        # under the guard, Python numbers only: an in-place operator there just rebinds, and is emitted as arithmetic
        # (a loop's fast copy runs `fast_fwd`, where an item path's vector may take an elementwise `x *= v` in place)
        on_numbers = replace(s, on_scalars=True)
        fast_fwd = [s, save] if slot == y or slot is None else [save, s]  # inputs are saved before the operation
        guarded = [on_numbers if t is s else t for t in fast_fwd]
        is_fast = _call(rt.is_scalar, pb) if slot is not None else _is_none(pb)
        if not guard:  # an enclosing guard proved every operand a Python number: the fast path alone
            return guarded, [If(_call(rt.is_not_none, dy), fast_bwd, [], line=s.line)] + self.reset(y)
        if mutates:  # the generic path updated in place: its back undoes that, cotangent or not
            back = If(is_fast, [If(_call(rt.is_not_none, dy), fast_bwd, [], line=s.line)], generic_bwd)
        else:
            back = If(is_fast, fast_bwd, generic_bwd)
        forward = If(_call(rt.all_true, *guard), guarded, generic_fwd, line=s.line)
        fast_back = back.then
        (forward,), (back,) = self.with_array_path(array, [forward], [back])
        if self.candidates:  # (a loop's fast copy runs the scalar arm alone)
            self.candidates[-1].append(specialize.Candidate(forward, back, y, target, tests, fast=fast_fwd,
                                                            fast_back=fast_back))
        if mutates:
            return [forward], [back] + self.reset(y)
        return [forward], [If(_call(rt.is_not_none, dy), [back], [], line=s.line)] + self.reset(y)

    def array_path(self, s, target, pb, dy):
        """The array arm of `s` (an `ArrayPath`), or None when it has none: the operation as written, guarded; on
        real NumPy arrays (and real numbers mixed in) it records nothing but `_ARRAY` in the pullback slot `pb`, and
        its backward is the derivative of adjoints/array_inline.py pasted in. It comes first (`with_array_path`): a
        Python number fails its first test, an array would fail all of the scalar arm's."""
        call = s.value
        derivative = registry.find_array(target)
        if derivative is None or not ARRAY_PATHS[0] or not self.arrays or self.nested or call.kwargs \
                or call.star is not None:
            return None
        formula = derivative.formula(call.args)
        if formula is None or not inline.usable(formula, len(call.args)):
            return None
        active = [k for k, a in enumerate(call.args) if self.is_active(a)]
        if derivative.active is not None and not set(active) <= set(derivative.active):
            return None
        if any(isinstance(a, Const) and type(a.value) not in rt.SCALARS for a in call.args):
            return None
        tests = self.rule_guard(call, target)[:1] if isinstance(call.fn, Global) else []
        operands = _vars(call.args)
        if len(operands) > 1 and not derivative.matrices:  # real arrays or numbers, one of them an array (`dt * x`)
            tests.append(_call(rt.any_array, *operands))
        for a in operands:
            test = rt.is_real_matrix if derivative.matrices else rt.is_real_data if len(operands) > 1 else \
                rt.is_real_value if derivative.numbers else rt.is_real_array
            tests.append(self.hoist(_call(test, a), a))
        if derivative.forward is not None:  # (its formula reads no cotangent and no output)
            s = Assign(s.out, Call(Const(Derivative(derivative.forward, 0)), (Const(None), Const(None), *call.args)),
                       s.line)
        elif isinstance(call.fn, Global):
            s = Assign(s.out, Call(Const(target), call.args), s.line)  # the guard checked the global: call directly
        atoms = (dy, s.out, *call.args)
        read = list(dict.fromkeys(a for k in active for name, a in zip(inline.params(formula), atoms, strict=True)
                                  if a is not dy and name in inline.names_used(formula, k)))
        for a in read:
            self.need(a)
        backward = []
        for k in active:
            da = self.dvar(self.cells.get(call.args[k].name, call.args[k]))
            g = Call(Const(Derivative(formula, k)), atoms)
            made = self.array_outputs.get(call.args[k]) if derivative.uniform is not None else None
            if made is not None:  # made by an elementwise array path: it takes the cotangent as one number
                self.need(made)
                g = Call(Const(rt.pick), (Call(Const(rt.is_same), (made, Const(ARRAY_ARM))),
                                          Call(Const(Derivative(derivative.uniform, k)), atoms), g))
            backward.append(Assign(da, _call(rt.acc_scalar, da, g), s.line))
        if not derivative.matrices and derivative.forward is None and len(set(_vars(call.args))) == 1 \
                and formula not in array_inline.SHAPELESS:
            self.array_outputs[s.out] = pb  # (one array operand, no broadcasting: a number's cotangent fills it)
        return ArrayPath(_call(rt.all_true, *tests), [s, Assign(pb, Const(ARRAY_ARM), s.line)], backward,
                         Call(Const(rt.is_same), (pb, Const(ARRAY_ARM))), s.line)

    @staticmethod
    def with_array_path(array, forward, back):
        """`forward` and `back` (statement lists) behind the array arm `array` (None: as they are)."""
        if array is None:
            return forward, back
        return ([If(array.guard, array.forward, forward, line=array.line)],
                [If(array.taken, array.backward, back, line=array.line)])

    # --- items of arrays in loops (items.py) ------------------------------------------------------------------------
    def item_path(self, s, target, pb, dy, generic_fwd, generic_bwd):
        """`y = x[i]` or `x_new = setitem(x, i, v)` in a loop, guarded: on 1-d float64 arrays and int indices the read
        records its index alone (in the pullback slot `pb`, an int there) and the store records into its loop's
        ItemRun (`pb` is None); anything else takes the general path. None when the statement has no item path."""
        call = s.value
        if not ITEM_PATHS[0] or self.nested or not self.loop_depth or call.kwargs or call.star is not None \
                or not isinstance(call.fn, Const) or not isinstance(call.args[0], Var) \
                or call.args[0] in self.natives:  # (a tuple, list or dict the lowering built, never an array)
            return None
        index = call.args[1] if len(call.args) > 1 else None
        if not (isinstance(index, Var) or isinstance(index, Const) and type(index.value) is int):
            return None
        if target is operator.getitem and len(call.args) == 2 and self.is_active(call.args[0]):
            return self.item_read(s, pb, dy, generic_fwd, generic_bwd)
        if target is mt.setitem and len(call.args) == 3 and call.args[2] != call.args[0]:
            return self.item_store(s, pb, dy, generic_fwd, generic_bwd)
        return None

    def item_read(self, s, pb, dy, generic_fwd, generic_bwd):
        x, i = s.value.args
        root = self.item_roots.get(x, x)  # (an item store's result is its array: the same object as the root)
        tests = [(root, self.hoist(_call(items.is_vector, root), root, steady=True)), *self.index_guard(i)]
        guard = [t for _, t in tests]
        fast = [Assign(pb, i, s.line), Assign(s.out, s.value, s.line)]
        forward = If(_call(rt.all_true, *guard), fast, generic_fwd, line=s.line)
        dx = self.dvar(self.cells.get(x.name, x))
        init = self.item_loops[-1].steady.get(x)
        shape = self.need(init if init is not None else x)  # (x's value at loop entry, if the loop leaves x alone)
        if init is None:  # into dx, in place when the backward alone holds it
            fast_bwd = [Assign(dx, _call(items.add_item, dx, shape, pb, dy), s.line)]
        else:  # into the loop's own buffer, added to dx after the loop (stmt_Loop)
            buffers = self.item_loops[-1].buffers
            if x not in buffers:
                buffers[x] = Var(self.namer.fresh("d" + init.name.lstrip("_") + "_items"))
            buf = buffers[x]
            ready = _call(rt.all_true, _call(rt.is_not_none, buf), _call(rt.is_scalar, dy))
            add = [Assign(Var("_"), _call(items.add_at, buf, pb, dy), s.line)]
            first = [Assign((buf, dx), _call(items.item_grads, buf, dx, shape, pb, dy), s.line)]
            fast_bwd = [If(ready, add, first, line=s.line)]
        back = If(_call(items.is_int, pb), fast_bwd, generic_bwd, line=s.line)
        if self.candidates:  # a loop whose guards all hold at entry gets a copy without them (specialize.version)
            self.candidates[-1].append(specialize.Candidate(forward, back, s.out, operator.getitem, tests, True))
        return [forward], [If(_call(rt.is_not_none, dy), [back], [], line=s.line)] + self.reset(s.out)

    def index_guard(self, i):
        """The guards that index `i` is a Python int, as (atom, test): none for a constant, one test before the loop
        for the variable of a loop over a range, else a test per use."""
        loop = self.item_loops[-1]
        if i == loop.target and isinstance(loop.walked, Var):
            return [(loop.walked, self.hoist(_call(rt.is_range, loop.walked), loop.walked))]
        return [(i, _call(items.is_int, i))] if isinstance(i, Var) else []

    def item_store(self, s, pb, dy, generic_fwd, generic_bwd):
        """The slot `pb` gets the value overwritten (a NumPy float), or a pullback on the general path. When the loop
        carries the array as one object, the guard is tested before the loop and the generated code stores itself
        (`out[i] = v`, noting `i` in the run); else the run's `put` tests and stores."""
        x, i, v = s.value.args
        if isinstance(v, Const) and type(v.value) not in items.REALS:
            return None
        root = self.item_roots.get(x, x)  # (stores into the same array, one after the other, share one run)
        self.item_roots[s.out] = root
        init = self.item_loops[-1].same.get(root)
        runs = self.item_loops[-1].runs
        if root not in runs:
            name = self.namer.fresh(re.sub(r"_\d+$", "", root.name).lstrip("_") + "_items")
            note = Var(self.namer.fresh(name + "_note")) if init is not None else None
            runs[root] = (Var(name), (init,) if init is not None else (), note)
        run, _, note = runs[root]
        self.need(run)
        self.need(i)
        if init is not None:
            guard = [self.hoist(_call(items.is_vector, root), root, steady=True), *(t for _, t in self.index_guard(i))]
            if isinstance(v, Var):
                guard.append(_call(items.is_real, v))
            fast = [Assign(pb, Call(Const(operator.getitem), (x, i)), s.line),
                    Assign(Var("_"), _call(items.store, x, i, v), s.line),
                    Assign(Var("_"), Call(note, (i,)), s.line),
                    Assign(s.out, x, s.line)]
            forward = [If(_call(rt.all_true, *guard), fast, generic_fwd, line=s.line)]
        else:
            put = Assign(pb, Call(Const(rt.callmethod), (run, Const("put"), x, i, v)), s.line)
            forward = [put, If(_is_none(pb), generic_fwd, [Assign(s.out, x, s.line)], line=s.line)]
        into = [self.dvar(self.cells.get(a.name, a)) if self.is_active(a) else None for a in (x, v)]
        outs = tuple(d if d is not None else Var("_") for d in into)
        args = (dy, run, i, pb, *(d if d is not None else Const(None) for d in into))
        fast_bwd = [Assign(outs, _call(items.item_back, *args), s.line)]
        return forward, [If(_call(rt.is_scalar, pb), fast_bwd, generic_bwd, line=s.line)] + self.reset(s.out)

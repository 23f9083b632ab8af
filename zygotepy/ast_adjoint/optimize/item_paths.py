"""Item paths: `x[i]` read and `out[i] = v` stored in loops, on 1-d float64 arrays and int indices, skip the rules: a
read records its index alone, a store records into its loop's journal run (items.ItemRun). Switched by
`OPTIONS.item_paths`; runtime helpers in ast_adjoint/items.py."""
import operator
import re
from dataclasses import dataclass, field

from ...options import OPTIONS
from .. import items
from .. import mutate as mt
from .. import runtime as rt
from ..ir import Assign, Call, Const, If, Var
from .guards import _call, _is_none
from .loop_copies import Candidate


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


class ItemPaths:
    def item_path(self, s, target, pb, dy, generic_fwd, generic_bwd):
        """`y = x[i]` or `x_new = setitem(x, i, v)` in a loop, guarded: on 1-d float64 arrays and int indices the read
        records its index alone (in the pullback slot `pb`, an int there) and the store records into its loop's
        ItemRun (`pb` is None); anything else takes the general path. None when the statement has no item path."""
        call = s.value
        if not OPTIONS.item_paths or self.nested or not self.loop_depth or call.kwargs or call.star is not None \
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
        if self.candidates:  # a loop whose guards all hold at entry gets a copy without them (optimize/loop_copies.py)
            self.candidates[-1].append(Candidate(forward, back, s.out, operator.getitem, tests, True))
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

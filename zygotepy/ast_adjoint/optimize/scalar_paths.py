"""Scalar paths: an operation with an inlinable scalar derivative (`registry.find_scalar`) runs as written behind a
guard that its operands are Python numbers, records no pullback object, and its backward pastes the derivative in
(`dr = dr_2 * x`). Anything else takes the plain pair. Switched by `OPTIONS.scalar_paths`."""
import operator
from dataclasses import replace

from ...adjoints import registry
from ...options import OPTIONS
from .. import inline
from .. import runtime as rt
from ..ir import Assign, Call, Const, Global, If, Var
from .guards import _call, _is_none, _vars
from .loop_copies import Candidate
from .records import Derivative


class ScalarPaths:

    def scalar_derivative(self, call, target):
        """The inlinable scalar derivative of the call, or None (another arity, as `math.log(x, base)`; unreadable
        source; a constant operand that is not a real Python number: the guards test variables only, the pasted
        derivatives are real, and `(0.5,) * n` repeats a tuple)."""
        derivative = registry.find_scalar(target) if OPTIONS.scalar_paths else None
        if derivative is None or not inline.usable(derivative, len(call.args)):
            return None
        if any(isinstance(a, Const) and type(a.value) not in rt.SCALARS for a in call.args):
            return None
        return derivative
    def fast_path(self, s, derivative, target, pb, dy, generic_fwd, generic_bwd, mutates=False, array=()):
        """Guarded inline scalar derivative. The pullback slot `pb` is None on the fast path, or, inside a loop when
        the derivative reads exactly one value defined in this iteration, that value itself (so one list entry per
        operation, no tuple): the backward tells the paths apart by the slot's type."""
        call, y = s.value, s.out
        tests = [(a, self.hoist(_call(rt.is_scalar, a), a)) for a in _vars(call.args) if a not in self.known[-1]]
        if isinstance(call.fn, Global):
            tests.insert(0, (call.fn, self.hoist(Call(Const(rt.is_same), (call.fn, Const(target))), call.fn)))
        guard = [t for _, t in tests]
        atoms = (dy, y, *call.args)
        active = [k for k, a in enumerate(call.args) if self.is_active(a) and not inline.gives_none(derivative, k)]
        read = list(dict.fromkeys(a for k in active for name, a in zip(inline.params(derivative), atoms, strict=True)
                                  if a is not dy and name in inline.names_used(derivative, k)))  # ordered: determinism
        swap = self.frozen(read, s.line)
        atoms, read = tuple(swap.get(a, a) for a in atoms), [swap.get(a, a) for a in read]
        local = [a for a in read if isinstance(a, Var) and (a in self.defined[-1] or a == y)]
        # (the backward tells the paths apart by the slot's type: a power's result, complex for a negative base, is
        # no slot, `(-2.0) ** 0.5`)
        slot = local[0] if self.loop_depth and len(local) == 1 and not (local[0] == y and target is operator.pow) \
            else None
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
            self.candidates[-1].append(Candidate(forward, back, y, target, tests, fast=fast_fwd,
                                                            fast_back=fast_back))
        if mutates:
            return [forward], [back] + self.reset(y)
        return [forward], [If(_call(rt.is_not_none, dy), [back], [], line=s.line)] + self.reset(y)

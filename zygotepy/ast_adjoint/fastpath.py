"""The guarded shortcuts of the adjoint pass (a mixin of `adjoint.AdjointPass`): a built-in rule called directly,
and the inline scalar derivative, each behind run-time guards, with guards on loop-invariant values hoisted out of the
innermost loop. They only make generated code faster: tests/ast_adjoint/test_specialize.py checks that the fast and
the general paths give the same gradients.
"""
from dataclasses import dataclass

from . import dispatch, inline, specialize
from . import runtime as rt
from .ir import Assign, Call, Const, Global, If, Var


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


    def hoist(self, test, atom):
        """A guard on a value the innermost loop does not change is computed once, before the loop."""
        if not self.hoisted:
            return test
        start, tests = self.hoisted[-1]
        if isinstance(atom, Var) and any(atom in d for d in self.defined[start:]):
            return test
        key = (atom, test.fn)
        if key not in tests:
            name = atom.name if isinstance(atom, Var) else atom.path.replace(".", "_")
            kind = {rt.is_scalar: "scalar", rt.is_native: "native"}.get(test.fn.value, "known")
            tests[key] = (Var(self.namer.fresh(f"{name}_is_{kind}")), test)
        return tests[key][0]

    def fast_path(self, s, derivative, target, pb, dy, generic_fwd, generic_bwd, mutates=False):
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
        s.on_scalars = True  # runs on Python numbers only: an in-place operator there just rebinds
        save = Assign(pb, slot if slot is not None else Const(None), s.line)
        if isinstance(call.fn, Global):  # the guard checked that the global names `target`: call it directly
            s = Assign(s.out, Call(Const(target), call.args), s.line, on_scalars=True)
        fast_fwd = [s, save] if slot == y or slot is None else [save, s]  # inputs are saved before the operation
        is_fast = _call(rt.is_scalar, pb) if slot is not None else _is_none(pb)
        if not guard:  # an enclosing guard proved every operand a Python number: the fast path alone
            return fast_fwd, [If(_call(rt.is_not_none, dy), fast_bwd, [], line=s.line)] + self.reset(y)
        if mutates:  # the generic path updated in place: its back undoes that, cotangent or not
            back = If(is_fast, [If(_call(rt.is_not_none, dy), fast_bwd, [], line=s.line)], generic_bwd)
        else:
            back = If(is_fast, fast_bwd, generic_bwd)
        forward = If(_call(rt.all_true, *guard), fast_fwd, generic_fwd, line=s.line)
        if self.candidates:
            self.candidates[-1].append(specialize.Candidate(forward, back, y, target, tests))
        if mutates:
            return [forward], [back] + self.reset(y)
        return [forward], [If(_call(rt.is_not_none, dy), [back], [], line=s.line)] + self.reset(y)

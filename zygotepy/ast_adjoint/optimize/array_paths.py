"""Array paths: an operation on real NumPy arrays with an inlinable array derivative (adjoints/numpy/array_inline.py,
read through `registry.find_array`) runs as written behind a guard, records `_ARRAY` in its pullback slot, and its backward
pastes the derivative in. Switched by `OPTIONS.array_paths`."""
from dataclasses import dataclass

from ...adjoints import registry
from ...options import OPTIONS
from .. import inline
from .. import runtime as rt
from ..ir import Assign, Call, Const, Global, If
from .guards import _call, _vars
from .records import ARRAY_ARM, FURTHER_ARMS, Derivative


@dataclass(frozen=True)
class ArrayPath:
    """The array arm of one operation (ArrayPaths.array_path): its guard, forward, backward, and the backward's test
    that it ran."""
    guard: object
    forward: list
    backward: list
    taken: object
    line: int


class ArrayPaths:
    def array_path(self, s, target, pb, dy):
        """The array arms of `s` (`ArrayPath`s, the first tried first; none when it has none): the operation as
        written, guarded; on real NumPy arrays (and real numbers mixed in) it records nothing but `_ARRAY` in the
        pullback slot `pb`, and its backward is the derivative of adjoints/numpy/array_inline.py pasted in. They come
        first (`with_array_path`): a Python number fails their first test, an array would fail all of the scalar
        arm's. An operation with a second form (`ArrayDerivative.otherwise`) gets a second arm, marked `_ARRAY_2`."""
        s, target = _as_function(s, target)
        derivative = registry.find_array(target)
        if derivative is not None and s.value.kwargs:
            derivative = derivative.keyworded
        if derivative is None or not OPTIONS.array_paths or not self.arrays or self.nested or s.value.star is not None:
            return []
        arms = [self._array_arm(s, target, pb, dy, derivative, ARRAY_ARM)]
        for mark in FURTHER_ARMS:
            derivative = derivative.otherwise
            if derivative is None or arms[0] is None:
                break
            arms.append(self._array_arm(s, target, pb, dy, derivative, mark))
        return [arm for arm in arms if arm is not None]

    def _array_arm(self, s, target, pb, dy, derivative, mark):
        call = s.value
        options = _literal_keywords(call.kwargs, derivative.keywords)
        if options is None:
            return None
        formula = derivative.formula(call.args)
        if formula is None or not inline.usable(formula, len(call.args) + len(options)):
            return None
        active = [k for k, a in enumerate(call.args) if self.is_active(a)]
        if derivative.active is not None and not set(active) <= set(derivative.active):
            return None
        if any(isinstance(a, Const) and type(a.value) not in rt.SCALARS for a in call.args):
            return None
        tests = self.rule_guard(call, target)[:1] if isinstance(call.fn, Global) else []
        operands = _vars(call.args)
        if len(operands) > 1 and not (derivative.matrices or derivative.arrays or derivative.ranks):
            tests.append(_call(rt.any_array, *operands))  # real arrays or numbers, one of them an array (`dt * x`)
        if derivative.ranks is not None and len(operands) != len(call.args):
            return None  # (each operand tested for its own rank: `v @ v` is no vector times a matrix)
        for k, a in enumerate(operands):
            test = rt.is_real_matrix if derivative.matrices else rt.is_real_array if derivative.arrays else \
                rt.is_real_data if len(operands) > 1 else rt.is_real_value if derivative.numbers else rt.is_real_array
            if derivative.ranks is not None:
                test = (rt.is_real_vector, rt.is_real_matrix)[derivative.ranks[k] - 1]
            tests.append(self.hoist(_call(test, a), a))
        if derivative.forward is not None:  # (its formula reads no cotangent and no output)
            s = Assign(s.out, Call(Const(Derivative(derivative.forward, 0)),
                                   (Const(None), Const(None), *call.args, *options)), s.line)
        elif isinstance(call.fn, Global):  # the guard checked the global: call directly
            s = Assign(s.out, Call(Const(target), call.args, call.kwargs), s.line)
        atoms = (dy, s.out, *call.args, *options)
        read = list(dict.fromkeys(a for k in active for name, a in zip(inline.params(formula), atoms, strict=True)
                                  if a is not dy and name in inline.names_used(formula, k)))
        swap = self.frozen(read, s.line)
        atoms, read = tuple(swap.get(a, a) for a in atoms), [swap.get(a, a) for a in read]
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
            # (in a loop an array cotangent is summed in place where the variable alone holds it: `acc_var`)
            backward.append(Assign(da, _call(rt.acc_var if self.loop_depth else rt.acc_scalar, da, g), s.line))
        if not derivative.matrices and derivative.forward is None and len(set(_vars(call.args))) == 1 \
                and formula not in derivative.shapeless and mark is ARRAY_ARM:
            self.array_outputs[s.out] = pb  # (one array operand, no broadcasting: a number's cotangent fills it)
        return ArrayPath(_call(rt.all_true, *tests), [s, Assign(pb, Const(mark), s.line)], backward,
                         Call(Const(rt.is_same), (pb, Const(mark))), s.line)

    @staticmethod
    def with_array_path(arms, forward, back):
        """`forward` and `back` (statement lists) behind the array arms `arms`, the first tested first."""
        for array in reversed(arms):
            forward = [If(array.guard, array.forward, forward, line=array.line)]
            back = [If(array.taken, array.backward, back, line=array.line)]
        return forward, back


def _as_function(s, target):
    """A NumPy array's method call that computes a function with an array derivative (`x.sum(axis=1)`, `x.max()`:
    registry.array_method) as that function's call (`np.sum(x, axis=1)`), with `(s, target)` of the call it takes the
    array path of; other calls as they are. The path's operand test checks that `x` is a NumPy array, whose methods
    these are; an argument after `x` is the functions' and the methods' `axis` alike."""
    call = s.value
    if target is not rt.callmethod or len(call.args) < 2 or not isinstance(call.args[1], Const) \
            or call.star is not None:
        return s, target
    function = registry.find_array_method(call.args[1].value)
    extra, kwargs = call.args[2:], call.kwargs
    if function is None or len(extra) > 1 or extra and any(name == "axis" for name, _ in kwargs):
        return s, target
    kwargs = (("axis", extra[0]), *kwargs) if extra else kwargs
    return Assign(s.out, Call(Const(function), (call.args[0],), kwargs), s.line), function


def _literal_keywords(kwargs, taken):
    """The values of a call's keywords in the order of `taken` (`((name, default), ...)`, the keywords an array
    derivative takes after the arguments), defaults filled in, as Consts; None when the call passes a keyword not in
    `taken` or one whose value is not a literal (an int, a tuple of ints, a bool or None: `axis=1, keepdims=True`)."""
    given = dict(kwargs)
    if not set(given) <= {name for name, _ in taken}:
        return None
    if not all(isinstance(v, Const) and _is_option(v.value) for v in given.values()):
        return None
    return tuple(given.get(name, Const(default)) for name, default in taken)


def _is_option(value):
    if isinstance(value, tuple):
        return all(type(v) is int for v in value)
    return value is None or type(value) in (int, bool)

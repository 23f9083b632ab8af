"""Guards shared by the optimisation passes: a built-in rule's identity (the global still names the function the rule
is for), operands that are plain values, and the hoisting of a guard on a value the innermost loop does not change
to before the loop; what an enclosing guard already proved (nested code's `type(x) in _SC` arms: `Facts`)."""
from ...options import OPTIONS
from .. import dispatch, items
from .. import runtime as rt
from ..analysis import callee_object
from ..assumed_globals import resolve_global
from ..ir import Assign, Call, Const, Global, Var


def _call(fn, *args):
    return Call(Const(fn), tuple(args))


def _vars(atoms):
    """The atoms whose value is only known at run time (variables and globals), each once."""
    return list(dict.fromkeys(a for a in atoms if not isinstance(a, Const)))


def _is_none(v):
    return _call(rt.is_none, v)


_NATIVE_MAKERS = frozenset((rt.unpack, rt.unpack_starred, rt.tuple_of, rt.list_of, rt.dict_of, rt.splat,
                            rt.splat_list))


def _makes_native(fn):
    """Does `fn` always return a plain tuple, list or dict (the primitives the lowering uses for `a, b = v` and for
    displays)?"""
    try:
        return fn in _NATIVE_MAKERS
    except TypeError:  # an unhashable constant callee
        return False


class Facts:
    """What the types of values are known to be: the tuples, lists and dicts the lowering built (`natives`, no
    `is_native` guard on them: `OPTIONS.known_containers`), and in nested code (written small for an outer level) the
    atoms an enclosing guard proved Python numbers (`known`, per open region), so that their operations need no guard
    of their own."""

    def start_facts(self):
        self.natives = set()   # Vars that always hold a tuple, list or dict (the lowering's unpacking and displays)
        self.type_of = {}      # Var -> the atom whose `type(...)` it holds
        self.facts = {}        # Var -> atoms that are Python numbers (`type(a) in _SC`) whenever the Var is true
        self.known = [frozenset()]  # per open region: atoms a guard enclosing it proved to be Python numbers
        self.joining = []      # per open arm of an `if`: the outputs of its joins, bound only as the arm ends

    def note(self, s):
        """What the assignment `s` tells of its output's type."""
        if isinstance(s.out, Var) and isinstance(s.value, Call) and isinstance(s.value.fn, Const) \
                and _makes_native(s.value.fn.value) and OPTIONS.known_containers:
            self.natives.add(s.out)  # an operator on it means what its rule says: no `is_native` guard
        if self.small and isinstance(s.out, Var):
            self.note_facts(s)

    def arm_opened(self, s, side):
        """An arm of `if s.cond`: in the then arm, what the condition proved holds. Returns whether it pushed."""
        self.joining.append(frozenset(p.out for p in s.phis))
        proven = self.facts.get(s.cond) if side == "then" else None
        if proven:
            self.known.append(self.known[-1] | proven)
        return bool(proven)

    def arm_closed(self, pushed):
        self.joining.pop()
        if pushed:
            self.known.pop()

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

    def note_joined_facts(self, s):
        """`a and b` joins as `p = b if a else a`: where p is true, a was true and so was b."""
        if not self.small:
            return
        for p in s.phis:
            if p.orelse == s.cond:
                known = self.facts.get(s.cond, frozenset()) | self.facts.get(p.then, frozenset())
                if known:
                    self.facts[p.out] = known


class Guards:
    """Methods of AdjointPass that build guards (they use its regions, names and needs)."""

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

    def unbound_here(self, atoms):
        """The variables among `atoms` that no definition on the path to here binds: a name only the other arm of an
        `if` assigns, or one assigned further on (`else: out = s * x`, in an arm that does not run). Python raises
        UnboundLocalError where such a read runs, and the plain pair does the same; the optimised forms would read it
        where Python does not (a guard hoisted before a loop) or record it for the backward, where it is undefined.
        (SSA: a variable is defined once, and the open regions hold the definitions that reach here; the outputs of an
        `if`'s joins count as defined before it, but inside its arms they are not bound yet: a name an arm reads
        unbound is its first version, which may be a join's output, `h` of `then: h = abs`.)"""
        return [a for a in atoms if isinstance(a, Var) and (not any(a in d for d in self.defined)
                                                            or any(a in outs for outs in self.joining))]

    def frozen(self, read, line):
        """The backward of a pasted derivative reads the operands the forward used: a module global or a class
        attribute among them (`x * G`, `x * Cfg.scale`) would be read again when `back` runs, after the caller may
        have rebound it. Each is bound to a variable before the operation's forward (`self.binds`, which every arm
        of it passes) and read from there: `read` with those variables."""
        swap = {a: Var(self.namer.fresh("_" + a.path.replace(".", "_"))) for a in read if isinstance(a, Global)}
        self.define(*swap.values())
        self.binds += [Assign(v, a, line) for a, v in swap.items()]
        return swap

    def hoist(self, test, atom, steady=False):
        """A guard on a value the innermost loop does not change is computed once, before the loop: a variable defined
        before it, or a global where nothing the loop runs can rebind one (`rebinding.steady`). `steady`: a value the
        loop carries unchanged counts as unchanged (the guard tests its value at entry; only for guards of what an
        update in place cannot change, such as an array's type, dtype and rank)."""
        if not self.hoisted or self.unbound_here([atom]):
            return test  # (a name unbound here, read before the loop, would raise where Python does not)
        if isinstance(atom, Global) and resolve_global(atom.path, self.globals) is None:
            return test  # a name the loop may never reach (`np.r_` on a namespace without it): read where it stands
        start, tests, rebinds_none = self.hoisted[-1]
        if isinstance(atom, Global) and not rebinds_none:
            return test  # the loop may rebind it (`set_act(i)` storing `Cfg.act = cube`): tested where it stands
        if isinstance(atom, Var) and any(atom in d for d in self.defined[start:]):  # (SSA: a Var is defined once)
            atom = self.item_loops[-1].same.get(atom) if steady else None
            if atom is None:
                return test
            test = Call(test.fn, (atom,))
        key = (atom, test.fn)
        if key not in tests:
            name = atom.name if isinstance(atom, Var) else atom.path.replace(".", "_")
            kinds = {rt.is_scalar: "scalar", rt.is_native: "native", items.is_vector: "vector", rt.is_range: "range",
                     rt.is_real_array: "array", rt.is_real_data: "real", rt.is_real_matrix: "matrix", rt.is_real_vector: "1d",
                     rt.is_real_value: "real"}
            kind = kinds.get(test.fn.value, "known")
            tests[key] = (Var(self.namer.fresh(f"{name}_is_{kind}")), test)
        return tests[key][0]

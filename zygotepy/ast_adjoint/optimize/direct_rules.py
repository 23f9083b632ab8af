"""Direct rules (`OPTIONS.direct_rules`): a built-in rule is called directly from generated code, not through J
(`y, y_back = _tanh_rule(x)`), behind a guard that the global still names its function. Accumulation
(`OPTIONS.accumulate`): a rule that adds to the running cotangents it is handed (`registry.accumulates`) gets them, and
adds in place where it owns them."""
from ...adjoints import registry
from ...options import OPTIONS
from .. import dispatch
from .. import runtime as rt
from ..ir import Assign, Call, Const, If, Var
from .guards import _call
from .records import RuleRef


class DirectRules:

    def running(self, call, rule):
        """The running cotangents to hand a rule that adds to them (`registry.accumulates`), one per argument (None for
        an inactive one), or () to accumulate its results here. Only for a constant or global callee (when a global no
        longer names the rule's function, `J_handing` wraps whatever it names) and distinct active variables (each is
        rebound to the back's result)."""
        if rule is None or isinstance(call.fn, Var) or not registry.accumulates(rule) or not OPTIONS.accumulate:
            return ()
        active = [a for a in call.args if self.is_active(a)]
        if len(set(active)) != len(active):
            return ()
        return tuple(self.dvar(self.cells.get(a.name, a)) if self.is_active(a) else Const(None) for a in call.args)

    def direct_call(self, s, target, rule, pb, dy, need, into, forward, back):
        """The call's forward and backward with the rule called directly and the running cotangents handed over."""
        call = s.value
        if into:  # the back adds to the running cotangents itself (in place when it owns them)
            # a global may name another function by the time the call runs: its back must still take them
            j = dispatch.J_handing if not isinstance(call.fn, Const) else dispatch.J_args
            forward = [Assign((s.out, pb), Call(Const(j), (Const(need), call.fn, *call.args)), s.line)]
            mask = back[0].value.args[1:]
            back = [Assign(tuple(d if isinstance(d, Var) else Var("_") for d in into),
                           Call(pb, (dy, *(mask or (Const(None),)), *into)), s.line)]
        if self.scalar_derivative(call, target) is None and rule is not None and registry.callable_directly(rule) \
                and OPTIONS.direct_rules and not (self.nested and registry.is_mutating(target, True)):
            # (an update in place in code an outer level transforms goes through J, whose twin refuses it: called
            # directly, an inactive store looked constant to the outer level, and its back's undo changed the array
            # the outer level's tape held)
            # (operators with a scalar path keep two arms, not three: the transform stays quick, the code short)
            direct = [Assign((s.out, pb), Call(Const(RuleRef(rule, target)), call.args), s.line)]
            guard = self.rule_guard(call, target)
            forward = [If(_call(rt.all_true, *guard), direct, forward, line=s.line)] if guard else direct
        return forward, back

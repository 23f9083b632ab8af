"""The constants optimisation passes put into generated code, which the emitter prints specially: a pasted-in
derivative (`Derivative`), a rule called directly (`RuleRef`), and the pullback slot's mark of an array path
(`ARRAY_ARM`, printed `_ARRAY`, and `FURTHER_ARMS`)."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Derivative:
    """Element `index` of the inlinable derivative `fn` (dy, y, *args) -> tuple; the emitter inlines it."""
    fn: object
    index: int


@dataclass(frozen=True)
class RuleRef:
    """A registered rule called directly from generated code (`y, y_back = _tanh_rule(x)`)."""
    rule: object
    target: object


class ArrayArm:
    """The value a pullback slot holds when the operation took an array fast path: `_ARRAY`, or `_ARRAY_2`,
    `_ARRAY_3`, ... for the further forms of an operation that has them (`ArrayDerivative.otherwise`: `W @ v` on a
    vector)."""

    def __init__(self, name="_ARRAY"):
        self.name = name

    def __repr__(self):
        return self.name


ARRAY_ARM = ArrayArm()
FURTHER_ARMS = (ArrayArm("_ARRAY_2"), ArrayArm("_ARRAY_3"), ArrayArm("_ARRAY_4"))  # the marks of the second, third, ... forms

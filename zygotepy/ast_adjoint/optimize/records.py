"""The constants optimisation passes put into generated code, which the emitter prints specially: a pasted-in
derivative (`Derivative`), a rule called directly (`RuleRef`), and the pullback slot's mark of an array path
(`ARRAY_ARM`, printed `_ARRAY`)."""
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
    """The value a pullback slot holds when the operation took the array fast path (printed `_ARRAY`)."""

    def __repr__(self):
        return "_ARRAY"


ARRAY_ARM = ArrayArm()

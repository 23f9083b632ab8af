"""The building blocks of the rule table: random argument kinds, rows, and the shape lists shared by its parts."""
import builtins
import math
import operator
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Kind:
    """Random real values, uniform in [lo, hi], or with a random sign and magnitude in [lo, hi] (`signed`)."""
    name: str
    lo: float
    hi: float
    signed: bool = False
    complex: bool = False

    def draw(self, rng, shape, dtype=np.float64):
        size = () if shape is None else shape
        x = rng.uniform(self.lo, self.hi, size)
        if self.signed:
            x = x * rng.choice([-1.0, 1.0], size)
        if self.complex:
            x = x + 1j * rng.uniform(self.lo, self.hi, size)
            return complex(x) if shape is None else np.asarray(x, np.complex128)
        return float(x) if shape is None else np.asarray(x, dtype)


@dataclass(frozen=True)
class Seq:
    """A list (or tuple) of random values of one kind; its shape entry has one shape per element."""
    kind: Kind
    container: type = list

    def draw(self, rng, shapes, dtype=np.float64):
        return self.container(self.kind.draw(rng, s, dtype) for s in shapes)


ANY = Kind("any", -2.0, 2.0)
POS = Kind("pos", 0.5, 2.0)
UNIT = Kind("unit", -0.9, 0.9)        # inside (-1, 1): asin, atanh, ...
GT1 = Kind("gt1", 1.2, 3.0)           # acosh, a logarithm's base
NZ = Kind("nonzero", 0.3, 2.0, signed=True)  # away from the kinks of abs, sign, copysign
LOW, HIGH = Kind("low", -1.5, -0.5), Kind("high", 0.5, 1.5)  # np.clip's bounds
CPLX = Kind("complex", -2.0, 2.0, complex=True)


@dataclass(frozen=True)
class Shaped:
    """A random keyword argument (`row(..., kw={"weights": Shaped(POS, (3,))})`): an array of `kind` of this shape. A
    `Kind` itself given as a keyword's value is a random Python float. Random keywords are differentiated: the rule
    must be keyword-aware (`registry.keyword_rule`) and give their cotangents."""
    kind: Kind
    shape: tuple

    def draw(self, rng, shape=None, dtype=np.float64):
        return self.kind.draw(rng, self.shape, dtype)


@dataclass(frozen=True)
class Row:
    op: object
    args: tuple
    shapes: tuple
    kwargs: dict = field(default_factory=dict)
    label: str = ""
    none: tuple = ()        # argument positions whose cotangent must be None
    f: object = None        # the function finite differences evaluate, when not `op` itself (reversed -> list)
    rtol: float = 1e-5

    @property
    def name(self):
        return self.label or label(self.op)


def row(op, *args, shapes, kw=None, label="", none=(), f=None, rtol=1e-5):
    return Row(op, args, tuple(shapes), kw or {}, label, tuple(none), f, rtol)


def label(op):
    module = {operator: "operator", math: "math", builtins: "builtins"}
    for mod, prefix in module.items():
        if getattr(mod, getattr(op, "__name__", ""), None) is op:
            return f"{prefix}.{op.__name__}"
    if isinstance(op, np.ufunc) or getattr(np, getattr(op, "__name__", ""), None) is op:
        return f"np.{op.__name__}"
    if getattr(np.linalg, getattr(op, "__name__", ""), None) is op:
        return f"np.linalg.{op.__name__}"
    return getattr(op, "__qualname__", repr(op))


S1 = [(None,), ((),)]                                       # Python float, 0-d array
U = [(None,), ((),), ((3,),), ((2, 3),)]                    # unary elementwise
B = [(None, None), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (3,)), (None, (2, 2)), ((3,), None)]
S2 = [(None, None), ((), ())]
MATMUL = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
          ((5, 2, 3), (1, 3, 4)), ((5, 2, 3), (3,))]
IN_PLACE = [(None, None), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), None)]
COND = np.array([True, False, True])


@dataclass(frozen=True)
class Matrix(Kind):
    """Random square matrices (batched over leading axes) of a structure: "well" (diagonally dominant, invertible),
    "spd" (symmetric positive definite) or "sym" (symmetric)."""
    structure: str = "well"

    def draw(self, rng, shape, dtype=np.float64):
        x = rng.uniform(self.lo, self.hi, shape)
        eye = np.eye(shape[-1])
        if self.structure == "well":
            x = x + 3 * eye
        elif self.structure == "spd":
            x = x @ np.swapaxes(x, -1, -2) + shape[-1] * eye
        elif self.structure == "sym":
            x = x + np.swapaxes(x, -1, -2)
        return np.asarray(x, dtype)


WELL = Matrix("well", -1.0, 1.0)
SPD = Matrix("spd", -1.0, 1.0, structure="spd")
SYM = Matrix("sym", -1.0, 1.0, structure="sym")

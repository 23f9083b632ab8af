"""The derivatives of the elementwise functions of one argument, one row each, and every form bound from that row.

A row names a function (in NumPy, `math`, `cmath`) and states its derivative once, as Python text in the argument `x`,
the result `y`, the functions of FUNCTIONS and the numbers of CONSTANTS (`"cos(x)"`, `"1 - y * y"`). Each form is that
text with the functions of one namespace put in, compiled to a lambda whose source `linecache` holds (the compiler
pastes the source of the inlinable forms into generated code, and an outer level of nesting transforms the others):

- `scalar`: `lambda dy, y, x: (dy * math.cos(x),)`, the `math` function's rule and its inlinable scalar template
  (`dy / E` where the derivative is `1 / E`: one rounding fewer, the same text in both); `shared`: where the derivative
  is (minus) another `math` function of x, the template from that function's value (`dy * cos_x`) for a loop that
  computes both (registry.scalar_rule's `shares`);
- `cmath`: `lambda x, y: cmath.cos(x)`, the holomorphic derivative of the `cmath` function, for the rows it holds for;
- `numpy`: `lambda x, y: namespace(x).cos(x)`, the NumPy rule's derivative, computed by the namespace of the argument
  (CuPy, JAX, torch and array-API arrays too; numpy/common.py `_elementwise_rule` conjugates it for complex ones);
- `divisor`: `lambda x, y: x` for `log` (`1 / x`): where the derivative is `1 / E`, `E`, computed by the namespace of
  the argument; the NumPy rule's back divides a real cotangent by it (`dy / E`: one operation and one rounding fewer);
- `array`: `lambda dy, y, x: (dy * _cos(x),)`, the array path's formula (numpy/array_inline.py): the operations of the
  NumPy rule's back for a real array, in the same order (`dy * derivative`, `dy / E` where the row has a divisor), so
  both give the same bits. Rows whose derivative is a number (np.negative, the angle conversions) have none: the rule
  is as fast;
- `tangent`: `lambda x, y: np.cos(x)`, forward mode's (forward/rules.py), for the NumPy and `math` functions and the
  row's `twins`.

Numbers are Python floats (`LN2`), so float32 arrays stay float32. Written out where they are, because their
derivatives branch or take more than one argument: abs/absolute and sign (complex inputs), sinc (0 at 0), math.fabs
and math.cbrt's reverse forms (a branch at 0: their tangents come from the rows), math.log's rule (an optional base:
its one-argument template comes from the row), the two-argument functions (atan2, hypot, pow and power, copysign,
fmod, ldexp, logaddexp, maximum/minimum: operators and numpy/elementwise.py's BINARY), math.gamma/lgamma
(math_gamma.py) and scipy.special (its own table).
"""
import ast
import cmath
import linecache
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..backends import namespace

FUNCTIONS = ("cos", "sin", "cosh", "sinh", "sqrt", "exp", "sign")  # what a derivative may call
CONSTANTS = {"LN2": math.log(2), "LN10": math.log(10), "PI": math.pi, "SQRT_PI": math.sqrt(math.pi), "INF": math.inf}


@dataclass(eq=False)
class Row:
    """One elementwise function: its names, its derivative, and (once bound) its forms.

    `numpy`: its NumPy names, space-separated. `math`: its name in `math` ("" for none). `cmath`: `cmath` has it under
    that name and the derivative holds for complex arguments (on the principal branches cmath takes). `twins`: dotted
    names of functions whose tangent rule this row gives, their reverse rule being written out. `forms`: form name ->
    {target: function}, filled by `bind`."""
    numpy: str
    derivative: str
    math: str = ""
    cmath: bool = False
    twins: str = ""
    forms: dict = field(default_factory=dict)

    def form(self, name):
        """The one function of form `name` (every target of a form shares it)."""
        found = {id(f): f for f in self.forms.get(name, {}).values()}
        if len(found) != 1:
            raise KeyError(f"{self.numpy or self.math} has {len(found)} {name} forms")
        return next(iter(found.values()))


ROWS = (
    Row("exp", "y", math="exp", cmath=True),
    Row("expm1", "y + 1", math="expm1"),
    Row("exp2", "y * LN2", math="exp2"),
    Row("log", "1 / x", math="log", cmath=True),
    Row("log1p", "1 / (1 + x)", math="log1p"),
    Row("log2", "1 / (x * LN2)", math="log2"),
    Row("log10", "1 / (x * LN10)", math="log10", cmath=True),
    Row("sqrt", "0.5 / y", math="sqrt", cmath=True),
    Row("cbrt", "1 / (3 * y * y)", twins="math.cbrt"),
    Row("square", "2 * x"),
    Row("reciprocal", "-y * y"),
    Row("negative", "-1"),
    Row("positive", "1"),
    Row("sin", "cos(x)", math="sin", cmath=True),
    Row("cos", "-sin(x)", math="cos", cmath=True),
    Row("tan", "1 + y * y", math="tan", cmath=True),
    # (of y, not `sqrt(1 - x * x)`: on the branch cuts, z = x + 0j with |x| > 1, `1 - z * z` loses the sign of z's
    # zero imaginary part that chose the branch, and the derivative got the other side's sign)
    Row("arcsin", "1 / cos(y)", math="asin", cmath=True),
    Row("arccos", "-1 / sin(y)", math="acos", cmath=True),
    Row("arctan", "1 / (1 + x * x)", math="atan", cmath=True),
    Row("sinh", "cosh(x)", math="sinh", cmath=True),
    Row("cosh", "sinh(x)", math="cosh", cmath=True),
    Row("tanh", "1 - y * y", math="tanh", cmath=True),
    Row("arcsinh", "1 / sqrt(x * x + 1)", math="asinh", cmath=True),
    Row("arccosh", "1 / (sqrt(x - 1) * sqrt(x + 1))", math="acosh", cmath=True),  # sqrt(x * x - 1): -f' for Re z < 0
    Row("arctanh", "1 / (1 - x * x)", math="atanh", cmath=True),
    Row("deg2rad radians", "PI / 180", math="radians"),
    Row("rad2deg degrees", "180 / PI", math="degrees"),
    Row("fabs", "sign(x)", twins="math.fabs"),
    Row("", "2 / SQRT_PI * exp(-x * x)", math="erf"),
    Row("", "-2 / SQRT_PI * exp(-x * x)", math="erfc"),
)


# --- the forms: the derivative's text with one namespace's functions put in ---------------------------------------------
def _with(expr, call):
    """`expr` (an ast expression) with each called function `f` replaced by the expression text `call(f)`."""
    class Calls(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if node.func.id not in FUNCTIONS:
                raise ValueError(f"a derivative calls {node.func.id}, not one of {FUNCTIONS}")
            node.func = ast.parse(call(node.func.id), mode="eval").body
            return node
    return Calls().visit(ast.parse(ast.unparse(expr), mode="eval").body)  # (a fresh copy)


def _name(text):
    return ast.parse(text, mode="eval").body


def _times_dy(d):
    """`dy * d` (the NumPy rule's back: handover.times), as text."""
    return ast.unparse(ast.BinOp(_name("dy"), ast.Mult(), d))


def _reciprocal(d):
    """`(E, negated)` where the derivative is `1 / E` or `-1 / E`, else None."""
    if isinstance(d, ast.BinOp) and isinstance(d.op, ast.Div):
        top = d.left
        negated = isinstance(top, ast.UnaryOp) and isinstance(top.op, ast.USub)
        one = top.operand if negated else top
        if isinstance(one, ast.Constant) and one.value == 1:
            return d.right, negated
    return None


def _scalar_cotangent(d, numbers=False):
    """The `math` forms' cotangent: `dy / E` for a derivative `1 / E` (`-dy / E` for `-1 / E`), else `dy * d`; for
    Python numbers (`numbers`), where the derivative is a positive number over x or y (`0.5 / y`, sqrt's), `dy * INF`
    where that is 0, as NumPy's float division gives: Python's raised ZeroDivisionError, where an input 0.0 that
    carries no gradient (`sqrt(max(q - d, 0.0))`, an if's constant) would drop it."""
    reciprocal = _reciprocal(d)
    if reciprocal is None:
        text = _times_dy(d)
    else:
        divisor, negated = reciprocal
        text = ast.unparse(ast.BinOp(_name("-dy" if negated else "dy"), ast.Div(), divisor))
    over = d.right.id if isinstance(d, ast.BinOp) and isinstance(d.op, ast.Div) and isinstance(d.right, ast.Name) \
        and isinstance(d.left, ast.Constant) and d.left.value > 0 and numbers else None
    return text if over is None else f"{text} if {over} else dy * INF"


def _divisor(d):
    """`E` where the derivative is `1 / E` (the array forms then divide by it: one operation and one rounding fewer
    than `dy * (1 / E)`; `-1 / E` keeps the product, which needs no negated copy of dy), else None."""
    reciprocal = _reciprocal(d)
    return reciprocal[0] if reciprocal is not None and not reciprocal[1] else None


def _partner(d):
    """(function name, negated) where the derivative is `f(x)` or `-f(x)`, else None."""
    negated = isinstance(d, ast.UnaryOp) and isinstance(d.op, ast.USub)
    call = d.operand if negated else d
    if isinstance(call, ast.Call) and [ast.unparse(a) for a in call.args] == ["x"] and not call.keywords:
        return call.func.id, negated
    return None


def _texts(row):
    """form name -> lambda text, the forms `row` has."""
    d = ast.parse(row.derivative, mode="eval").body
    uses_argument = any(isinstance(n, ast.Name) and n.id in ("x", "y") for n in ast.walk(d))
    out = {}
    if row.math:
        out["scalar"] = f"lambda dy, y, x: ({_scalar_cotangent(_with(d, lambda f: f'math.{f}'), True)},)"
        partner = _partner(d)
        if partner is not None and hasattr(math, partner[0]):
            value = f"{partner[0]}_x"
            out["shared"] = f"lambda dy, y, {value}: ({_times_dy(_name(('-' if partner[1] else '') + value))},)"
    if row.cmath:
        out["cmath"] = f"lambda x, y: {ast.unparse(_with(d, lambda f: f'cmath.{f}'))}"
    if row.numpy:
        out["numpy"] = f"lambda x, y: {ast.unparse(_with(d, lambda f: f'namespace(x).{f}'))}"
        divisor = _divisor(d)
        if divisor is not None:
            out["divisor"] = f"lambda x, y: {ast.unparse(_with(divisor, lambda f: f'namespace(x).{f}'))}"
        if uses_argument:
            array = _with(d, lambda f: f'_{f}')
            out["array"] = f"lambda dy, y, x: ({_scalar_cotangent(array) if divisor else _times_dy(array)},)"
    out["tangent"] = f"lambda x, y: {ast.unparse(_with(d, lambda f: f'np.{f}'))}"
    return out


def _targets(row, form):
    """The functions the form `form` of `row` serves (those this Python and NumPy have)."""
    numpy = [getattr(np, n) for n in row.numpy.split()]
    in_math = [getattr(math, row.math)] if row.math and hasattr(math, row.math) else []
    if form in ("scalar", "shared"):
        return in_math
    if form == "cmath":
        return [getattr(cmath, row.math)]
    if form in ("numpy", "divisor", "array"):
        return numpy
    twins = [getattr(math, n.partition(".")[2], None) for n in row.twins.split()]
    return [*numpy, *in_math, *(t for t in twins if t is not None)]


# --- compiled under a file name of the package, its text held by linecache ----------------------------------------------
FILENAME = os.path.join(os.path.dirname(__file__), "derivatives (generated forms)")


class _Loader:
    """Gives linecache the generated text again should its cache be cleared (linecache.lazycache)."""
    text = ""

    @classmethod
    def get_source(cls, name):
        return cls.text


GLOBALS = {"__name__": __name__, "__loader__": _Loader, "math": math, "cmath": cmath, "np": np,
           "namespace": namespace, **{f"_{f}": getattr(np, f) for f in FUNCTIONS}, **CONSTANTS}


def bind(rows):
    """Compile every form of `rows` into GLOBALS (one line each) and fill each row's `forms`."""
    lines, where = [], []
    for row in rows:
        for form, text in _texts(row).items():
            name = f"_{form}_{len(lines)}"
            lines.append(f"{name} = {text}\n")
            where.append((row, form, name))
    _Loader.text = "".join(lines)
    linecache.cache[FILENAME] = (len(_Loader.text), None, lines, FILENAME)
    exec(compile(_Loader.text, FILENAME, "exec"), GLOBALS)
    for row, form, name in where:
        fn = GLOBALS[name]
        fn.row = row
        row.forms[form] = dict.fromkeys(_targets(row, form), fn)


def forms(name):
    """{target: function} of the form `name` over every row."""
    return {target: fn for row in ROWS for target, fn in row.forms.get(name, {}).items()}


def shared():
    """{math function: (partner, template from the partner's value)}: registry.scalar_rule's `shares`."""
    out = {}
    for row in ROWS:
        for target, fn in row.forms.get("shared", {}).items():
            out[target] = (getattr(math, _partner(ast.parse(row.derivative, mode="eval").body)[0]), fn)
    return out


bind(ROWS)

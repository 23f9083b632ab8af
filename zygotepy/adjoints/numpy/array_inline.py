"""Inlinable derivatives for real NumPy arrays: the array fast path.

Each entry is `target: ArrayDerivative(lambda dy, y, *args: (one cotangent per argument), ...)`, like the scalar
table of adjoints/scalar.py, but valid when the call's operands are real (floating) NumPy arrays, mixed with real numbers. The
compiler pastes these bodies into generated code behind a type guard (ast_adjoint/optimize/array_paths.py), so the
backward of `h = np.tanh(x @ W + b)` reads `dt = dh * (1 - h * h)`, `dW = x.T @ dt`, as a careful person writes NumPy
backprop by hand: no closure, no rule call, no tuple per operation. Anything else (complex numbers, lists, other array
libraries, user classes, 1-d `@`) takes the operation's rule.

Each formula computes exactly what its rule's back computes for real arrays (same operations, same order: the
equivalence tests compare bits), with the cotangents of broadcast operands summed back by `_unb`.
"""
import math
import operator
from dataclasses import dataclass, replace

import numpy as np

from ...backends import _add_reduce, _unbroadcast_ndarray, unbroadcast
from .. import derivatives
from ..registry import array_method, array_rule, find_rule
from ..matmul import vector_product_cotangent
from .common import kept_shape, spread as _spread
from .reductions import _LARGE, extremum_share


@dataclass(frozen=True)
class ArrayDerivative:
    """`fn(dy, y, *args)` -> cotangents. `matrices`: every operand must be a 2-d real array (the formula transposes
    them). `active`: the argument positions the formula gives a cotangent (others must need none). `int_last`: the
    last argument must be an int literal (the exponent of `x ** 2`); maps literals to their own formulas. `forward`:
    the value, computed without the function's Python wrapper (`x.sum()` for `np.sum(x)`), as its rule does.
    `numbers`: the formula is right for a NumPy float64 number too, and gives what the rule gives. `uniform` (the
    reductions): the same cotangent before it is spread over the reduced entries (one number for a full reduction,
    the reduced axes kept as length 1 along axes), which the compiler hands to the array path of the elementwise
    operation that made the reduced array (`np.sum(h * h)`: `dh = dt * h`, no array of `dt`s); every elementwise
    formula here but those in `shapeless` broadcasts it to its operand's shape (their cotangent would keep the
    reduced shape: the operation cannot take a reduction's cotangent unspread).
    `otherwise`: the derivative tried where this one's guard fails (`W @ v`: `matrices` takes 2-d operands only);
    `arrays`: its operands must be real arrays of any rank; `ranks`: real arrays of these ranks (1 or 2), one per
    operand (`W @ v`: `(2, 1)`). `keyworded`: the derivative for a call with keywords
    (`np.sum(x, axis=1, keepdims=True)`), whose `keywords` (`((name, default), ...)`) are the literal keywords it
    takes, passed to its formulas after the arguments."""
    fn: object
    matrices: bool = False
    active: tuple = None
    int_last: dict = None
    forward: object = None  # `lambda dy, y, *args: (value,)`: what the forward computes instead of the call
    numbers: bool = False   # a NumPy float64 number (`np.log(x.sum())`) takes the path too
    keyworded: object = None
    keywords: tuple = ()
    otherwise: object = None  # a second form, for the operands this one's guard refuses (matmul's vectors)
    arrays: bool = False      # every operand must be a real array, of any rank
    ranks: tuple = None       # every operand must be a real array of its rank here
    uniform: object = None  # a reduction's cotangent unspread, for an elementwise formula to broadcast
    shapeless: frozenset = frozenset()  # its formulas that do not broadcast a number's cotangent to the operand

    def formula(self, args):
        """The formula for a call with the atoms `args` (the transform's Var/Const), or None when it has none."""
        if self.int_last is None:
            return self.fn
        last = getattr(args[-1], "value", None)  # (only a literal, a Const, has a value)
        if type(last) is not int:
            return None
        return self.int_last.get(last, self.fn)


def _unb(g, like):
    """The cotangent `g` of a broadcast result, summed to the shape of the operand `like` (a no-op when the shapes
    agree, the common case; a sum over the first axis for a bias added to a batch). Those two cases are
    `_unbroadcast_ndarray`'s, inlined: it runs once per operand of every array operation, and calling through it
    cost the MLP benchmark about 3 % (1.24-1.26x -> 1.28-1.30x hand-written, measured)."""
    if type(g) is _ND and type(like) is _ND:
        shape, gshape = like.shape, g.shape
        if gshape == shape:
            if g.dtype.kind != "c":
                return g
        elif len(gshape) == len(shape) + 1 and gshape[1:] == shape and g.dtype.kind != "c":
            return _add_reduce(g, 0)  # (what `g.sum(axis=0)` computes, without its Python wrapper)
        return _unbroadcast_ndarray(g, like)
    if type(like) is _F64:  # a NumPy number's (`x - np.max(x)`): a number, or the total of a real array
        if type(g) is _F64 or type(g) is float:
            return g
        if type(g) is _ND and g.dtype.kind == "f":
            return _add_reduce(g, None)  # (what `g.sum()` computes, without its Python wrapper)
    return unbroadcast(g, like)


_ND, _F64 = np.ndarray, np.float64


def _full(x, g):
    """The cotangent of every entry of `x` after a full reduction: `g` everywhere (a read-only broadcast view of
    one number for large arrays, as the reductions' rule gives: reductions.py `_total_back`)."""
    if type(g) is float or type(g) is np.float64:
        if x.size >= _LARGE:
            return np.broadcast_to(np.asarray(g, x.dtype), x.shape)
        out = np.empty(x.shape, x.dtype)  # what np.full does, without its Python wrapper
        out.fill(g)
        return out
    if getattr(type(g), "__zygote_number__", False):  # (hessian's dual number, which np.full cannot copy in)
        return g * np.ones(x.shape, x.dtype)
    return np.full(x.shape, g, x.dtype)


_mean = np.mean  # (named for generated code, where `np` is the user's)

BINARY = {
    operator.add: ArrayDerivative(lambda dy, y, a, b: (_unb(dy, a), _unb(dy, b))),
    operator.sub: ArrayDerivative(lambda dy, y, a, b: (_unb(dy, a), -_unb(dy, b))),
    operator.mul: ArrayDerivative(lambda dy, y, a, b: (_unb(dy * b, a), _unb(dy * a, b))),
    operator.truediv: ArrayDerivative(lambda dy, y, a, b: (_unb(dy / b, a), _unb(-(dy / b * y), b))),
    operator.matmul: ArrayDerivative(lambda dy, y, a, b: (dy @ b.T, a.T @ dy), matrices=True, otherwise=ArrayDerivative(
        lambda dy, y, a, b: (dy[:, None] * b, (a.T @ dy[:, None])[:, 0]), ranks=(2, 1), otherwise=ArrayDerivative(
            lambda dy, y, a, b: ((dy[None, :] @ b.T)[0, :], a[:, None] * dy), ranks=(1, 2), otherwise=ArrayDerivative(
                lambda dy, y, a, b: (_matmul_cotangent(dy, a, b, 0), _matmul_cotangent(dy, a, b, 1)), arrays=True)))),
    operator.pow: ArrayDerivative(lambda dy, y, a, b: (dy * (b * a ** (b - 1)), None), active=(0,), int_last={
        2: lambda dy, y, a, b: (dy * 2.0 * a, None), 0: lambda dy, y, a, b: (dy * 0.0, None)}),
}

# the elementwise functions of one argument: their formulas are the `array` forms of derivatives.py's rows
UNARY = {operator.neg: lambda dy, y, x: (-dy,), **derivatives.forms("array")}


def _matmul_cotangent(dy, a, b, k):
    """The cotangent of operand `k` of `a @ b` for real arrays that are not both matrices: a matrix and a vector as
    the matmul rule computes them (matmul.py `vector_product_cotangent`), the other ranks by the rule's back itself."""
    g = vector_product_cotangent(dy, a, b, k)
    return g if g is not None else find_rule(operator.matmul)(a, b)[1](dy)[k]


def _kept(g, x, axis, keepdims):
    """A reduction's cotangent `g` with the reduced axes of `x` kept (as length 1): it broadcasts against `x`, so an
    elementwise back that multiplies it by an array of `x`'s shape needs no copy spread over them (`uniform`); one that
    does not (`0.5 * x`, `x - 1.0`) hands it to `_unb`, which spreads it over its operand."""
    if keepdims or axis is None:
        return g
    if type(g) is _ND:
        return g.reshape(kept_shape(x.shape, axis))
    # (an outer level's dual array, `hessian` over a reduction of an array its first iteration made: the same axes)
    return np.reshape(g, kept_shape(x.shape, axis)) if getattr(g, "shape", ()) else g


def _count(x, y):
    """How many entries of `x` each entry of the mean `y` averages (as the rule counts them); 1 for an empty `x`,
    whose cotangent is empty whatever it is divided by (a number's would raise ZeroDivisionError)."""
    return max(math.prod(x.shape) // max(math.prod(getattr(y, "shape", ())), 1), 1)


_AXIS = (("axis", None), ("keepdims", False))  # the literal keywords the reductions' array paths take

REDUCTIONS = {  # the whole array (the rules' fast case, reductions.py) and, `keyworded`, along literal axes
    np.sum: ArrayDerivative(lambda dy, y, x: (_full(x, dy),), forward=lambda dy, y, x: (x.sum(),),
                            uniform=lambda dy, y, x: (dy,), keyworded=ArrayDerivative(
                                lambda dy, y, x, axis, keepdims: (_spread(dy, x, axis, keepdims),), keywords=_AXIS,
                                forward=lambda dy, y, x, axis, keepdims: (x.sum(axis=axis, keepdims=keepdims),),
                                uniform=lambda dy, y, x, axis, keepdims: (_kept(dy, x, axis, keepdims),))),
    np.mean: ArrayDerivative(lambda dy, y, x: (_full(x, dy * (1 / x.size) if x.size else dy),),
                             forward=lambda dy, y, x: (x.sum() / x.size if x.size and x.itemsize > 2 else _mean(x),),
                             uniform=lambda dy, y, x: (dy * (1 / x.size) if x.size else dy,), keyworded=ArrayDerivative(
                                 lambda dy, y, x, axis, keepdims: (
                                     _spread(dy / _count(x, y), x, axis, keepdims),), keywords=_AXIS,
                                 uniform=lambda dy, y, x, axis, keepdims: (
                                     _kept(dy / _count(x, y), x, axis, keepdims),))),
}
# max and min: the whole array, or along literal axes; their backs share the rule's (extremum_share)
_EXTREMUM_ALL = lambda dy, y, x: (extremum_share(dy, y, x, None, False),)  # noqa: E731
_EXTREMUM_AXES = lambda dy, y, x, axis, keepdims: (extremum_share(dy, y, x, axis, keepdims),)  # noqa: E731
_MAX = ArrayDerivative(_EXTREMUM_ALL, forward=lambda dy, y, x: (x.max(),), keyworded=ArrayDerivative(
    _EXTREMUM_AXES, keywords=_AXIS, forward=lambda dy, y, x, axis, keepdims: (x.max(axis=axis, keepdims=keepdims),)))
_MIN = ArrayDerivative(_EXTREMUM_ALL, forward=lambda dy, y, x: (x.min(),), keyworded=ArrayDerivative(
    _EXTREMUM_AXES, keywords=_AXIS, forward=lambda dy, y, x, axis, keepdims: (x.min(axis=axis, keepdims=keepdims),)))
REDUCTIONS.update({np.max: _MAX, np.amax: _MAX, np.min: _MIN, np.amin: _MIN})

# formulas whose cotangent would stay a number when the cotangent is one (it never meets the operand): the operation
# they belong to cannot take a reduction's cotangent as a number (optimize/array_paths.py)
BINARY[operator.pow] = replace(BINARY[operator.pow], shapeless=frozenset((BINARY[operator.pow].int_last[0],)))

for _target, _derivative in {**BINARY, **REDUCTIONS}.items():
    array_rule(_target, _derivative)
for _name, _target in {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}.items():
    array_method(_name, _target)  # (`x.sum(axis=1)` takes np.sum's array path: the same arguments after the array)
for _target, _fn in UNARY.items():
    array_rule(_target, ArrayDerivative(_fn, numbers=True, shapeless=frozenset((_fn,)) if _target is operator.neg
                                        else frozenset()))

"""Buffers a rule's `back` may reuse: the arithmetic of the elementwise and product rules done in place where that is
provably invisible, so the gradient of an elementwise chain on large arrays makes as few arrays as hand-written code.

Generated code calls these backs as `back(dy, need, *into)` (`registry.accumulates`): `into` are the running
cotangents of the arguments, which the caller rebinds to the back's result, and `dy` is the cotangent of the value the
call defined, dead after the call. Three buffers may take a result in place:

- a derivative the back has just computed (`cos(x)` for `sin`): nothing else has seen it;
- `dy`, when generated code handed it over and nothing but its one variable holds it (`runtime.sole`, asked in the
  back's own frame, which is why the backs pass the answer in as `handed`);
- a running cotangent `into[k]` that nothing but generated code's one variable holds (`runtime.sole`).

Only real NumPy arrays of the result's exact shape and dtype qualify, so every value is bit for bit what the
out-of-place arithmetic gives (IEEE products and sums are commutative), and none smaller than `runtime.REUSE_BYTES`
(below it a new array costs less than the checks). Everything else (other libraries' arrays, complex numbers,
broadcasting, numbers) takes the out-of-place path. `OPTIONS.reuse_buffers` switches reuse off for the
equivalence tests.
"""
import numpy as np

from ..ast_adjoint import runtime as rt
from ..backends import conj, unbroadcast
from ..options import OPTIONS
from .registry import adjoint


def _fits(buffer, other):
    """Can `buffer` hold `buffer * other` (or `other * buffer`, or their sum): an owning real NumPy array whose shape and
    dtype the result keeps?"""
    return (type(buffer) is np.ndarray and buffer.nbytes >= rt.REUSE_BYTES and OPTIONS.reuse_buffers
            and (type(other) is np.ndarray and other.shape == buffer.shape and other.dtype == buffer.dtype
                 or type(other) is float)
            and buffer.base is None and buffer.dtype.kind == "f")


def times(dy, d, fresh, handed):
    """`dy * d`, into `d`'s buffer when the back has just computed it (`fresh`: a new array, not an input, the output or
    anything saved), else into `dy`'s when generated code handed `dy` over (`handed`)."""
    if fresh and _fits(d, dy):
        d *= dy
        return d
    if handed and _fits(dy, d):
        dy *= d
        return dy
    return dy * d


def divided(dy, e, fresh, handed):
    """`dy / e`, into `e`'s buffer when the back has just computed it (`fresh`), else into `dy`'s when generated code
    handed `dy` over (`handed`): `times` for a derivative `1 / e`."""
    if fresh and _fits(e, dy):
        return np.divide(dy, e, out=e)
    if handed and _fits(dy, e):
        return np.divide(dy, e, out=dy)
    return dy / e


def added(into, grads):
    """The back's cotangents `grads` added to the running ones generated code handed over, if any: in place into a
    running cotangent only generated code's variable holds, else as a new sum."""
    if not into:
        return grads
    if len(grads) == 1:  # the elementwise rules
        return grads if into[0] is None else (_sum(into, 0, grads[0]),)
    return tuple(g if into[k] is None else _sum(into, k, g) for k, g in enumerate(grads))


def _sum(into, k, g):
    """`into[k] + g`, in place when only generated code's variable holds `into[k]` (`runtime.sole`, asked of the
    tuple's item: a local name for it would count as one more holder)."""
    if g is not None and _fits(into[k], g) and rt.sole(into[k]):
        running = into[k]  # named only after the check
        running += g
        return running
    return rt.acc(into[k], g)


# An outer level of nested differentiation transforms the backs that call these (adjoints/nesting/): there they
# mean their out-of-place arithmetic, with its gradients.

@adjoint(times)
def _times_rule(dy, d, fresh, handed):
    def back(g):
        if g is None:
            return None, None, None, None
        return unbroadcast(g * conj(d), dy), unbroadcast(g * conj(dy), d), None, None
    return dy * d, back


@adjoint(divided)
def _divided_rule(dy, e, fresh, handed):
    y = dy / e

    def back(g):
        if g is None:
            return None, None, None, None
        q = g / conj(e)
        return unbroadcast(q, dy), unbroadcast(-q * conj(y), e), None, None
    return y, back


@adjoint(added)
def _added_rule(into, grads):
    if not into:
        return grads, lambda g: (None, g)

    def back(g):
        if g is None:
            return None, None
        return tuple(None if a is None else dg for a, dg in zip(into, g)), g
    return tuple(rt.acc(a, g) for a, g in zip(into, grads)), back

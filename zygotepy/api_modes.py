"""Forward mode and its combinations with reverse mode: pushforward, derivative, jacobian, hessian, forwarddiff.

Forward mode runs the user's function on dual numbers (`zygotepy.forward`): no tape, one pass per input direction.
`jacobian` picks per call: reverse mode (one pullback per output entry, sharing one forward pass) unless the inputs
have fewer entries than the output. `hessian` is forward-over-reverse: dual numbers go through `pullback`, i.e.
through the generated reverse code and the reverse rules, one pass per input entry. `forwarddiff(f, x)` is `f(x)`
whose reverse rule builds the pullback from a forward-mode Jacobian (mixed mode).
"""
import contextlib
import os
import sysconfig
import types
from typing import Any, Callable

import numpy as np

from .adjoints.registry import adjoint
from .api import gradient, inner_pullback
from .ast_adjoint.call_checks import call_site
from .ast_adjoint.dispatch import J, differentiable
from .ast_adjoint.guards_runtime import reads_gradients
from .errors import STORE_INTO_PLAIN_ARRAY, ForwardModeError, ZygoteError
from .forward import linalg_rules, numpy_rules, rules, scipy_rules  # noqa: F401  (register the tangent rules)
from .forward.dual import Dual, new_tag, strip
from .forward.levels import _zero, make_dual, pass_through, tangent_of
from .forward.passes import Passes
from .forward.transform import call
from .runtime.context import current
from .structgrad import StructGrad

__all__ = ["pushforward", "derivative", "jacobian", "hessian", "forwarddiff"]


def pushforward(f: Callable[..., Any], /, *args: Any) -> Any:
    """Forward mode: a function mapping tangents of `args` to the tangent of `f(*args)`; no tape.

    Args:
        f: the function; its Python source is transformed so that `math` calls see dual numbers.
        *args: the point: numbers, arrays, or lists/tuples/dicts of them.
    Returns:
        `push(*tangents)`: one tangent per argument (None for a constant), returning the output's tangent (the
        structure of the output; zeros where it does not depend on the inputs).

    >>> import math
    >>> pushforward(lambda x, y: x * math.sin(y), 2.0, 0.0)(1.0, 1.0)
    2.0
    """
    passes = Passes(args, f)

    def push(*tangents):
        if len(tangents) != len(args):
            raise ZygoteError(f"pushforward: {len(tangents)} tangents for {len(args)} arguments")
        tag = new_tag()
        duals = [make_dual(a, t, tag) for a, t in zip(passes.next(), tangents, strict=True)]
        y = _forward_call(f, *duals)
        passes.settle(duals)
        passes.done()  # (each push is one call of f)
        return tangent_of(y, tag)
    return push


def _forward_call(f, *duals):
    """`f` on dual numbers. NumPy refuses to store a dual into a plain array (`out = np.zeros(n); out[i] = v`) with
    its own ValueError, raised inside the user's code: said here in zygotepy's words (the user's line is in the
    traceback)."""
    try:
        return call(f, *duals)
    except ZygoteError as e:  # (raised in the user's code, transformed: its file and line, where the message has none)
        where = _user_frame(e)[len("; at "):]
        if where and where not in str(e) and not any(where in n for n in getattr(e, "__notes__", ())):
            e.add_note(f"zygotepy: raised in forward mode at {where}")
        raise
    except ValueError as e:
        if "read-only" in str(e):
            raise ForwardModeError(f"{_user_frame(e)[len('; at '):] or 'forward mode'}: this update in place writes "
                                   f"into a read-only array ({e}). In forward mode, dropgrad(x) of an array that "
                                   f"carries a tangent is a read-only view of x: an update through it would change "
                                   f"x's value but not its tangent. Update x itself, or cut the gradient from a copy "
                                   f"(dropgrad(x.copy()))") from e
        if "setting an array element with a sequence" not in str(e):
            raise
        where = _user_frame(e)[len("; at "):]
        raise ForwardModeError(f"{where}: {STORE_INTO_PLAIN_ARRAY}" if where else STORE_INTO_PLAIN_ARRAY) from e


def derivative(f: Callable[..., Any], x: Any, /) -> Any:
    """`df/dx` of a function of one scalar, by forward mode (a vector-valued `f` gives its vector of derivatives).

    Nested calls never confuse their perturbations:

    >>> derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0)
    1.0
    """
    if np.ndim(strip(x)) != 0 or isinstance(strip(x), (bool, str)):
        raise ZygoteError(f"derivative needs a scalar argument; got {type(strip(x)).__name__} of shape "
                          f"{np.shape(strip(x))}. For arrays use pushforward(f, x)(v) or jacobian(f, x).")
    return pushforward(f, x)(1.0)


# --- Jacobians -----------------------------------------------------------------------------------------------------------
def _is_data(a):
    return a is None or isinstance(a, (bool, int, str)) or getattr(getattr(a, "dtype", None), "kind", "f") in "biu"


def _check_input(a, i):
    a = strip(a)  # (an outer level's dual number: `derivative` of a function that calls `jacobian` or `hessian`)
    if _is_data(a):
        return
    if not (isinstance(a, float) or isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind == "f"):
        raise ZygoteError(f"jacobian/hessian take real numbers and real arrays; argument {i} is a "
                          f"{type(a).__name__}{' of dtype ' + str(a.dtype) if hasattr(a, 'dtype') else ''}")


def _check_output(y):
    y = strip(y)
    if not (isinstance(y, (int, float)) and not isinstance(y, bool) or isinstance(y, (np.ndarray, np.generic))
            and y.dtype.kind in "fiu"):
        raise ZygoteError(f"jacobian needs f to return real numbers or real arrays (in reverse mode, tuples, lists "
                          f"and dicts of them too); it returned {type(y).__name__}. For other outputs use pullback or "
                          f"pushforward.")


def _forward_jacobian(f, args, passes=None):
    """(y, one Jacobian per argument) by forward mode: one pass per entry of each non-data argument."""
    y, jacs = None, []
    passes = Passes(args, f) if passes is None else passes
    for i, a in enumerate(args):
        if _is_data(a):
            jacs.append(None)
            continue
        shape = np.shape(a)
        columns = []
        for k in range(int(np.prod(shape))):
            e = np.zeros(shape)
            e.flat[k] = 1.0
            tag = new_tag()
            # (the other real arguments perturbed by zero, not left plain: an array made of one of them can then
            # take a value computed from this one in place, `z = A * 1.0; z += b`, as in `jvp`)
            duals = [make_dual(b, (e if shape else 1.0) if j == i else None if _is_data(b) else _zero(b), tag)
                     for j, b in enumerate(passes.next())]
            out = _forward_call(f, *duals)
            passes.settle(duals)
            _check_output(out)
            y = strip(out) if y is None else y
            columns.append(_column(tangent_of(out, tag)))
        if not columns and y is None:  # (a zero-size argument: no pass ran, but the Jacobian has the output's shape)
            y = call(f, *passes.next())
        jac = np.stack(columns, axis=-1) if columns else np.zeros(np.shape(y) + (0,))
        jacs.append(jac.reshape(np.shape(jac)[:-1] + shape))
    if y is None:
        y = call(f, *passes.next())
    passes.done()
    return y, jacs


def _column(g):
    """A column (or row) of a Jacobian or Hessian as a float array; one of an outer level's dual numbers (`derivative`
    of a function that calls `jacobian` or `hessian`) keeps them."""
    return g if isinstance(g, Dual) else np.asarray(g, dtype=float)


def _precision(*values):
    """The dtype of a derivative of arrays of these dtypes: float32 inputs and output give float32 (as gradients
    keep their argument's dtype); Python numbers and ints count as float64."""
    kinds = [np.asarray(v).dtype for v in values if v is not None]
    floats = [d for d in kinds if d.kind in "fc"]
    return np.result_type(*floats) if floats else np.dtype(np.float64)


def _typed(jacs, args, y):
    """Each Jacobian at the precision of its argument and the result: a Python float where both are Python numbers."""
    a_s, y = [strip(a) for a in args], strip(y)
    numbers = not isinstance(y, np.ndarray) and np.ndim(y) == 0
    return tuple(None if j is None else j if isinstance(j, Dual) else float(j) if numbers and type(a) in (float, int)
                 else j.astype(_precision(a, y), copy=False) for j, a in zip(jacs, a_s, strict=True))


def _reverse_jacobian(y, back, args):
    ys = np.shape(y)
    rows = [[] for _ in args]
    for k in range(int(np.prod(ys))):
        e = np.zeros(ys)
        e.flat[k] = 1.0
        grads = back(e if ys else 1.0)
        for i, (a, g) in enumerate(zip(args, grads, strict=True)):
            rows[i].append(np.zeros(np.shape(a)) if g is None else _column(g))
    return [None if _is_data(a) else np.stack(r).reshape(ys + np.shape(a)) if r else np.zeros(ys + np.shape(a))
            for a, r in zip(args, rows, strict=True)]


def jacobian(f: Callable[..., Any], /, *args: Any, mode: str | None = None) -> Any:
    """One Jacobian per positional argument, each of shape `y.shape + x.shape` (None for data arguments: ints, bools).

    Args:
        f: a function of real numbers/arrays returning a real number or array.
        *args: the point.
        mode: "reverse" (one pullback per output entry), "forward" (one pushforward per input entry), or None to pick
            forward mode exactly when the inputs have fewer entries than the output.
    Returns:
        a tuple of arrays.

    >>> jacobian(lambda x: x ** 2, np.array([1.0, 2.0]))[0]
    array([[2., 0.],
           [0., 4.]])
    """
    for i, a in enumerate(args):
        _check_input(a, i)
    if mode not in (None, "forward", "reverse"):
        raise ZygoteError(f"jacobian: mode must be 'forward', 'reverse' or None, not {mode!r}")
    if mode == "forward":
        y, jacs = _forward_jacobian(f, args)
        return _typed(jacs, args, y)
    passes = Passes(args, f)
    y, back = inner_pullback(f, *passes.next())
    return jacobian_at(f, args, y, back, mode, passes)


def jacobian_at(f, args, y, back, mode, passes):
    """`jacobian` once its pullback ran (`y, back`) on the first of `passes`: reverse mode with it, or forward mode
    where that is cheaper (its passes on the arguments as they were before the pullback's)."""
    _check_output(y)
    n_in = sum(int(np.size(a)) for a in args if not _is_data(a))
    if mode is None and n_in < np.size(y):
        try:
            return _typed(_forward_jacobian(f, args, passes)[1], args, y)
        except ForwardModeError:  # (a plain array filled in place): reverse mode, which has no such limit
            pass
    return _typed(_reverse_jacobian(y, back, args), args, y)


def hessian(f: Callable[..., Any], x: Any, /) -> Any:
    """The Hessian of the real scalar `f(x)`, shape `x.shape + x.shape`, by forward-over-reverse: one reverse pass
    on dual numbers per entry of `x`. Where dual numbers cannot pass (a NumPy function with no tangent rule, such as
    `np.linalg.det` or `np.cumprod` in `f` or in a reverse rule), by reverse-over-reverse: the reverse-mode Jacobian of
    the gradient.

    >>> hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """
    if type(x) is int:  # (an int in arithmetic is differentiated as a real number, as gradient does: docs/api.md)
        x = float(x)
    _check_input(x, 0)
    if _is_data(x):
        raise ZygoteError("hessian needs a real number or a real float array")
    shape = np.shape(x)
    columns = []
    passes = Passes((x,), f)
    for k in range(int(np.prod(shape))):
        tag = new_tag()
        if shape:
            e = np.zeros(shape, dtype=x.dtype)
            e.flat[k] = 1.0
            xd = Dual(tag, passes.next()[0], e)
        else:
            xd = Dual(tag, x, 1.0)
        try:
            y, back = inner_pullback(f, xd)
            if np.ndim(strip(y)) != 0:
                raise ZygoteError(f"hessian needs f to return a real scalar; it returned shape {np.shape(strip(y))}")
            g = back(1.0)[0]
        except ForwardModeError as e:
            err = ForwardModeError(f"hessian (forward-over-reverse): {_rule_frame(e)} cannot take dual numbers: "
                                   f"{e}{_user_frame(e)}")
            for note in getattr(e, "__notes__", ()):  # the user's lines of the generated code it was raised in
                err.add_note(note)
            try:
                return _reverse_over_reverse(f, passes.again()[0])
            except ZygoteError as second:
                err.add_note(f"reverse-over-reverse, tried next, failed too: {type(second).__name__}: "
                             f"{str(second).splitlines()[0]}")
            raise err from e
        columns.append(np.zeros(shape) if g is None else _column(tangent_of(g, tag)))
    if not columns:  # (a zero-size argument: f still runs once, as for every derivative)
        call(f, *passes.next())
        return np.zeros(shape + shape, dtype=_precision(strip(x)))
    passes.done()
    return np.stack(columns, axis=-1).reshape(shape + shape).astype(_precision(strip(x)), copy=False)
    return g if isinstance(g, Dual) else np.asarray(g, dtype=float)


def _reverse_over_reverse(f, x):
    """`hessian` as the reverse-mode Jacobian of the gradient (nested reverse mode transforms the rules' backs too)."""
    def slope(v):
        g = gradient(f, v)[0]
        return np.zeros(np.shape(v)) if g is None else g
    with transform_route_only():
        h = jacobian(slope, x, mode="reverse")
    return np.asarray(h, dtype=float).reshape(np.shape(x) + np.shape(x)).astype(_precision(x), copy=False)


@contextlib.contextmanager
def transform_route_only():
    """Inside: a nested gradient the transform cannot take raises rather than fall back on forward-over-reverse,
    which hessian's retry by reverse-over-reverse follows because it has just failed (`context.transform_only`)."""
    ctx = current()
    ctx.transform_only += 1
    try:
        yield
    finally:
        ctx.transform_only -= 1


def _user_frame(exc):
    """`; at FILE:LINE` of the innermost frame of a traceback in the user's own code (not zygotepy's, not a library's,
    not generated code): where plain code (a call no gradient flows through) met the dual number."""
    skip = (os.path.dirname(os.path.abspath(__file__)) + os.sep, os.path.dirname(np.__file__) + os.sep,
            sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], "<zygotepy")
    found, tb = "", exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith(skip):
            found = f"; at {name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _rule_frame(exc):
    """The innermost reverse-rule frame (zygotepy/adjoints/) of a traceback, as `file:line in function`."""
    rules_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adjoints") + os.sep
    found, tb = "a reverse rule", exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(rules_dir):
            found = f"the reverse rule {code.co_qualname if hasattr(code, 'co_qualname') else code.co_name} " \
                    f"({os.path.relpath(code.co_filename, os.path.dirname(os.path.dirname(rules_dir)))}:{tb.tb_lineno})"
        tb = tb.tb_next
    return found


# --- mixed mode ----------------------------------------------------------------------------------------------------------
def forwarddiff(f: Callable[..., Any], x: Any, /) -> Any:
    """`f(x)`; under reverse mode its pullback comes from a forward-mode Jacobian of `f` at `x` (mixed mode: cheap
    when `x` has few entries and `f` has a long tape).

    >>> from zygotepy import gradient
    >>> gradient(lambda x: forwarddiff(lambda t: t ** 3, x), 2.0)
    (12.0,)
    """
    return f(x)


pass_through(forwarddiff)


def _captured(f):
    code = getattr(f, "__code__", None)
    cells = getattr(f, "__closure__", None) or ()
    names = code.co_freevars if code is not None else ()
    out = []
    for name, cell in zip(names, cells, strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if differentiable(value):
            out.append(name)
    return out


def _captures_differentiable(f):
    return bool(_captured(f))


def refused_inside_reverse_mode(entry):
    """Give the entry point `entry` the rule reverse mode finds for it: inside a function that reverse mode
    differentiates (`gradient`, and the reverse passes of `jacobian`, `hessian`, `hvp`), a call where a gradient may
    reach it is refused, naming the call (the entry point's own code, transformed, failed deep inside zygotepy's
    files); one that carries no gradient runs as a constant. Nested `gradient`, `value_and_gradient` and `pullback`
    have rules of their own (adjoints/nesting/entries.py)."""
    @adjoint(entry)
    def rule(*args, **kwargs):
        given = (*args, *kwargs.values())
        if any(differentiable(a) or callable(a) and _captures_differentiable(a) for a in given):
            raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate {entry.__name__} called "
                              f"inside a function that reverse mode differentiates; call gradient, "
                              f"value_and_gradient or pullback there, or differentiate the outer function in forward "
                              f"mode (derivative, jvp)")
        y = entry(*args, **kwargs)
        return y, lambda dy: (*(None for _ in args), *([dict.fromkeys(kwargs)] if kwargs else []))
    rule.__qualname__ = f"{entry.__name__}_inside_reverse_mode"
    rule.__zygote_keywords__ = True
    return entry


for _entry in (pushforward, derivative, jacobian, hessian):
    refused_inside_reverse_mode(_entry)


@adjoint(forwarddiff, need=True)
def _forwarddiff(f, x):
    if type(x) is int:  # (an int in arithmetic is differentiated as a real number: docs/api.md)
        x = float(x)
    if getattr(type(x), "__zygote_number__", False):  # forward mode's numbers (a second order): f differentiated as
        y, pb = J(f, x)  # any call is, which gives the same derivatives (forwarddiff is a choice of how, not what)
        return y, lambda dy, need=(True, True): (None, None) if dy is None else pb(dy)
    _check_input(x, 1)
    y, (jac,) = _forward_jacobian(f, (x,))

    def back(dy, need=(True, True)):
        if dy is None or jac is None:
            return None, None
        if need[0] and type(f) is not types.FunctionType and reads_gradients(f):  # (a bound method, a partial, ...)
            raise ZygoteError(f"forwarddiff(f, x): f ({type(f).__name__}) holds values whose gradient is needed, and "
                              f"forwarddiff differentiates with respect to x only: pass them inside x")
        df = _captured_cotangent(f, x, dy) if need[0] and _captures_differentiable(f) else None
        ny = np.ndim(y)
        dx = np.tensordot(np.asarray(dy, dtype=float), jac, axes=ny) if ny else dy * jac
        return df, float(dx) if isinstance(x, float) else np.asarray(dx, dtype=np.result_type(x))
    return y, back


def _captured_cotangent(f, x, dy):
    """The cotangent of `f`'s closure (`StructGrad` by name, as reverse mode gives it) for the numbers and float
    arrays it captures (`lambda t: np.sum(t ** 2) * scale`): one more forward-mode pass per captured entry, on a copy
    of `f` whose cells hold them perturbed."""
    names = _captured(f)
    cells = dict(zip(f.__code__.co_freevars, f.__closure__, strict=True))
    values = [cells[n].cell_contents for n in names]
    if not all(type(v) is float or type(v) is np.ndarray and v.dtype.kind == "f" for v in values):
        raise ZygoteError(f"forwarddiff({getattr(f, '__qualname__', f)}, x): f captures values ({', '.join(names)}) "
                          f"whose gradient is needed and that are not floats or float arrays, which forwarddiff "
                          f"differentiates with respect to x only: pass them inside x, or call f without forwarddiff")

    def with_cells(*given):
        held = dict(zip(names, given, strict=True))
        closure = tuple(types.CellType(held[n]) if n in held else c for n, c in cells.items())
        return call(types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, closure), x)
    y, jacs = _forward_jacobian(with_cells, values)
    ny, dy = np.ndim(y), np.asarray(dy, dtype=float)
    grads = {n: np.tensordot(dy, jac, axes=ny) if ny else dy * jac for n, jac in zip(names, jacs, strict=True)}
    return StructGrad({n: float(g) if type(v) is float else g for (n, g), v in zip(grads.items(), values)})

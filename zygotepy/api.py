"""The public entry points: gradient, value_and_gradient, pullback, show_adjoint.

Thin wrappers over `J`: they drop the function's own cotangent (`dself`), project each gradient onto its argument
(real arguments get real gradients, None stays None), and point error messages at the user's source line.
"""
import functools
import gc
from typing import Any, Callable

import numpy as np

from .adjoints.objects import as_fields, fields_of
from .adjoints.structures.dicts import untaken_lookup_keys
from .ast_adjoint.derived import places_of, refuse_tied_updates, warm_adjoint
from .ast_adjoint.dispatch import J_entry
from .ast_adjoint.mutate import end_forward, finish_backward, redo
from .ast_adjoint.runtime import unwind
from .backends import asarray, is_foreign, namespace, to_numpy
from .errors import ZygoteError
from .runtime.context import current, entered
from .runtime.snapshots import refuse_unsealed, sealed
from .structgrad import NoDerivative, StructGrad
from .trees import distinct_arrays, like_container
from .tracebacks import simplify as simplify_traceback, too_deep, with_user_lines

__all__ = ["gradient", "value_and_gradient", "pullback"]


def _project(arg, g):
    """A gradient in the form of its argument: real for real numbers and arrays, None for data (bools, strings,
    integer and boolean arrays),
    the argument's own container (same keys, same order) for tuples, lists and dicts."""
    if g is None or isinstance(arg, (bool, str)) or arg is None:
        return None
    if isinstance(g, dict) and not isinstance(arg, dict):  # an object's structural gradient: project each field
        fields = fields_of(arg) if hasattr(arg, "__dict__") or hasattr(type(arg), "_fields") else {}
        items = {k: _project(fields[k], v) if k in fields else v for k, v in g.items()}
        items = {k: v for k, v in items.items() if v is not None}
        return StructGrad(items) if items else None
    if hasattr(type(arg), "_fields") and isinstance(arg, tuple) and isinstance(g, (tuple, list)):
        return _project(arg, StructGrad(zip(arg._fields, g, strict=True)))
    if isinstance(arg, (tuple, list)) and type(g) is np.ndarray and g.ndim and len(g) == len(arg):
        g = list(g)  # (a list of numbers NumPy took as an array, `np.sort(xs)`: its gradient is a list again)
    if isinstance(arg, (tuple, list)) and isinstance(g, (tuple, list)):
        items = [_project(a, d) for a, d in zip(arg, g, strict=True)]
        if all(i is None for i in items):
            return None
        return like_container(arg, items)
    if isinstance(arg, dict) and isinstance(g, dict):
        items = {k: _project(v, g.get(k)) for k, v in arg.items()}
        return None if all(v is None for v in items.values()) else like_container(arg, items.items())
    if type(arg) not in _NUMBERS_AND_ARRAYS and not isinstance(g, dict) and hasattr(arg, "__dict__") \
            and not hasattr(arg, "shape") and not callable(arg):  # (an object's gradient as a number or an array:
        return _project(arg, as_fields(arg, g))  # converted by NumPy through __array__, refused)
    if isinstance(arg, (int, float)) and isinstance(g, complex):
        return g.real
    if type(arg) is np.ndarray and is_foreign(g):  # (given to `jnp.asarray`/`torch.as_tensor` in f: NumPy's again)
        g = to_numpy(g)
    elif type(g) is np.ndarray and type(arg) is not np.ndarray and is_foreign(arg):
        g = asarray(namespace(arg), g, arg)  # (`np.asarray(x)` of a JAX array or tensor in `f`: its library's again)
    dtype = getattr(arg, "dtype", None)
    gdtype = getattr(g, "dtype", None)
    if getattr(dtype, "kind", "f") in "biu" or dtype is not None and not hasattr(dtype, "kind") and (
            "int" in str(dtype) or "bool" in str(dtype)):  # (torch's dtypes have no kind)
        return None  # integer and boolean arrays are data (indices, counts, masks): no gradient
    if dtype is not None and gdtype is not None:
        if getattr(dtype, "kind", "") not in "fc":
            return g
        if getattr(gdtype, "kind", "") == "c" and dtype.kind != "c":
            g = g.real
        if gdtype != dtype:  # (float32 stays float32; torch's tensors and array-API arrays have no `.astype`)
            g = g.astype(dtype) if hasattr(g, "astype") else namespace(g).astype(g, dtype)
    if type(g) is np.ndarray:
        if g.ndim == 0 and type(arg) is not np.ndarray and isinstance(arg, (float, int, np.generic)):
            g = g[()] if np.iscomplexobj(arg) else g.real[()]  # (a float's through `np.ravel(a)`: a float)
            return g if isinstance(arg, np.generic) else float(g)
        if not g.flags.writeable:  # a rule's broadcast view (numpy/reductions.py _total_back)
            g = g.copy()
    elif type(arg) is np.ndarray and isinstance(g, (float, complex, np.generic)):  # a 0-d array's: a 0-d array too
        g = np.array(g, dtype=arg.dtype)
    elif type(arg) in (float, int) and type(g) is not float and getattr(g, "shape", None) == ():
        # a float's is a float (it was a NumPy scalar, or a 0-d array of another library, from a product with one)
        try:
            g = float(g)
        except Exception:  # noqa: BLE001 - a JAX tracer under jit, or a complex value: left as it is
            pass
    return g


def _own(g):
    copy = getattr(g, "copy", None)
    return copy() if callable(copy) and type(g) is not tuple else g


def _projected(args, grads):
    """`_project` for each argument, skipping the calls when every gradient already has its argument's type (for an
    array, one that owns its memory: a view, such as a rule's read-only broadcast cotangent, goes through `_project`)."""
    for a, g in zip(args, grads):
        t = type(g)
        if t is _ND:
            if type(a) is _ND and g.base is None and g.dtype is a.dtype:
                continue
        elif g is None or t is float and (type(a) is float or type(a) is int):  # (what _project returns for them)
            continue
        elif (t is _F64 or t is float) and type(a) is _F64:
            continue
        return tuple(_project(a, g) for a, g in zip(args, grads))
    return grads  # the common case: nothing to project


_ND, _F64 = np.ndarray, np.float64
_NUMBERS_AND_ARRAYS = frozenset((np.ndarray, float, int, complex, np.float64, np.float32))
_CONTAINERS = frozenset((list, tuple, dict, StructGrad))  # (a gradient of one of these: `distinct_arrays`)


def _structured(y, dy):
    """A cotangent given for the output `y` in the internal form: objects' and namedtuples' cotangents (given as an
    object of the same type, a tuple or a dict) become field dicts, containers are converted entry by entry."""
    if dy is None:
        return dy
    if type(dy) is float or hasattr(dy, "shape") or isinstance(y, dict) and isinstance(dy, dict) and not \
            dy.keys() <= y.keys():
        if isinstance(y, (tuple, list, dict)):  # (a wrong shape crashed, an unknown key was dropped)
            raise ZygoteError(f"the cotangent given to the pullback does not match the output, a {type(y).__name__}: "
                              f"give one of the same structure (a cotangent per entry, under the output's keys)")
        if type(y) is np.ndarray and y.shape and np.shape(dy) != y.shape:  # (`back(1.0)` of an array output)
            raise ZygoteError(f"the cotangent given to the pullback has shape {np.shape(dy)}, the output {y.shape}: "
                              f"give one of the output's shape")
        return dy
    if isinstance(dy, (tuple, list)) and not isinstance(y, (tuple, list)) or isinstance(dy, dict) and not (
            isinstance(y, dict) or hasattr(type(y), "_fields") or hasattr(y, "__dict__")):
        raise ZygoteError(f"the cotangent given to the pullback, a {type(dy).__name__}, does not match the output, a "
                          f"{type(y).__name__}: give one of the same structure")
    if isinstance(y, dict) and isinstance(dy, dict):
        return type(dy)({k: _structured(y.get(k), v) for k, v in dy.items()})
    if hasattr(type(y), "_fields") and isinstance(y, tuple) or hasattr(y, "__dict__") and not hasattr(y, "shape"):
        fields, dy = fields_of(y), as_fields(y, dy)
        return StructGrad({k: _structured(fields.get(k), v) for k, v in dy.items()}) if isinstance(dy, dict) else dy
    if isinstance(y, (tuple, list)) and isinstance(dy, (tuple, list)):
        if len(dy) != len(y):
            raise ZygoteError(f"the cotangent given to the pullback has {len(dy)} entries, the output {len(y)}")
        return type(dy)(_structured(a, b) for a, b in zip(y, dy, strict=True))
    return dy


def _pause_gc():
    """Switch Python's cyclic garbage collector off for one differentiation; True if it was on (switch it back on).

    Why: the tape of a loop is a long list of short-lived closures and tuples, and the collector rescans all of them
    each time enough new objects pile up, so a 10 000-iteration loop spent more than half of its gradient's time in
    collections. Nothing on the tape can be garbage before the backward ends; cycles the user's code drops meanwhile
    are collected as usual afterwards. Only the outermost call switches (nested calls see it off). The caller drops
    the tape before switching it back on: the first allocation after that would otherwise collect the young
    generation with the whole tape still in it, once per call (`chain`, 200 iterations, in a process holding JAX and
    torch: median 3.7-4.0x its primal before, 3.1-3.2x after; the minimum, 3.2-3.3x, did not move)."""
    if gc.isenabled():
        gc.disable()
        return True
    return False


def _run(outermost, fn, /, *args, **kwargs):
    mark = len(current().contexts)
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        with_user_lines(e)
        _leave_contexts(mark, e)
        deep = too_deep(e)
        if deep is not None:
            raise deep from None
        if outermost:
            simplify_traceback(e)
        raise


def _leave_contexts(mark, exc):
    """Leave the with blocks that `exc` escapes (runtime.unwind) and raise what Python would then see."""
    if len(current().contexts) > mark:
        raised = unwind(mark, exc)
        if raised is not exc:
            raise raised from exc


def pullback(f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """Run `f(*args, **kwargs)` once and return `(y, back)`; `back(dy)` gives one cotangent per positional argument.

    `back` may be called more than once. Keyword arguments are constants.

    Complex values: a complex z = x + iy is two real coordinates, and a cotangent of z is the complex number
    `dL/dx + 1j * dL/dy` (Zygote's and PyTorch's convention). `back(dy)` takes the output's cotangent in that form and
    returns the arguments' in that form, so a holomorphic `w = f(z)` pulls `dw` back to `conj(f'(z)) * dw`; for a real
    output and `dy = 1` this is the gradient `df/dx + 1j*df/dy`.

    >>> y, back = pullback(lambda x, y: x * y, 3.0, 4.0)
    >>> y, back(1.0)
    (12.0, (4.0, 3.0))
    >>> _, back = pullback(lambda z: z * z, 1 + 1j)
    >>> back(1.0)  # conj(2 z)
    ((2-2j),)
    """
    return _pullback(f, args, kwargs, True)


def inner_pullback(f, /, *args):
    """`pullback` for the entry points built on it (jacobian's rows, hessian's columns, hvp), which call `back` at once
    on arguments nobody else holds: no fingerprints of the arrays (one hash of every array per `back`)."""
    return _pullback(f, args, None, False)


def _pullback(f, args, kwargs, seal):
    ctx = entered()
    ctx.depth += 1
    start, collecting = len(ctx.entries), _pause_gc()
    try:
        y, pb = _run(ctx.depth == 1, J_entry, (True,) * len(args), f, args, kwargs or None)
    finally:
        updates = end_forward(start)
        if collecting:
            gc.enable()
    users = seal  # (the user's own `back`, not jacobian's rows or hessian's columns, which stack what it gives)
    n, seal = len(args), sealed((*args, y)) if seal and not ctx.depth else ()  # (`back` may come after an update)

    def back(dy):  # undoes f's updates in place as it goes; they are redone once the arguments' gradients are read
        refuse_unsealed(seal, n)
        if type(y) is _ND and dy is not None:
            dy = _cotangent_for(y, dy)
        ctx = entered()  # (this thread's: `back` may be called in another thread than the forward's)
        mark, collecting = len(ctx.entries), _pause_gc()
        try:
            grads = _run(not ctx.depth, pb, _structured(y, dy))
            if ctx.lookup_keys and not ctx.depth:
                untaken_lookup_keys(ctx)
            grads = _asked(_projected(args, grads[1:n + 1]))
            # (the caller's own dy, passed through (`x + 1.0`), is theirs: a gradient updated in place must not change it;
            # nor may the arrays in it, or one gradient's array another's: `lambda x, z: (x, z)` given `(dy, dy)`)
            grads = grads if not any(g is dy for g in grads) else tuple(_own(g) if g is dy else g for g in grads)
            return distinct_arrays(grads, dy) if users and type(dy) is not float else grads
        finally:
            if updates:
                redo(updates)
            finish_backward(mark)
            if not ctx.depth:
                ctx.read_keys.clear()
            if collecting:
                gc.enable()
    return y, back


def _cotangent_for(y, dy):
    """`dy` as the cotangent of the NumPy array `y`: a list as an array, of `y`'s shape (a number passes as it is)."""
    if isinstance(dy, (list, tuple)):
        dy = np.asarray(dy)
    if np.ndim(dy) and np.shape(dy) != y.shape:
        raise ZygoteError(f"back: a cotangent of shape {np.shape(dy)} for an output of shape {y.shape}")
    return dy


def _seed(y):
    if type(y) is float or type(y) is np.float64 or isinstance(y, (float, int)) and not isinstance(y, bool):
        return 1.0
    shape = getattr(y, "shape", None)
    dtype = getattr(y, "dtype", None)
    if shape == () and getattr(type(y), "__zygote_number__", False):  # a dual number (forward mode over gradient)
        return 1.0
    if shape == () and dtype is not None and not hasattr(dtype, "kind") and "float" in str(dtype):
        return namespace(y).ones_like(y)  # torch's dtypes have no kind: ones of y's dtype (1.0 would be float32)
    if shape == () and dtype is not None and getattr(dtype, "kind", "") in "fiu":
        return (y * 0 + 1).astype(dtype) if getattr(dtype, "kind", "") == "f" else 1.0
    raise ZygoteError(
        f"gradient needs f to return a real scalar (a float, an int or a 0-d real array); it returned "
        f"{type(y).__name__}{f' of shape {shape}' if shape is not None else ''}. "
        f"For other outputs use zygotepy.pullback(f, *args) and call back(dy) with a cotangent of the output's "
        f"shape, or zygotepy.jacobian(f, *args).")


def value_and_gradient(f: Callable[..., Any], /, *args: Any, argnums: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """`(f(*args), gradient(f, *args))` from one forward pass (`argnums`: as for `gradient`).

    >>> value_and_gradient(lambda x: x ** 2, 3.0)
    (9.0, (6.0,))
    """
    __tracebackhide__ = True
    if not args and not kwargs:  # the function alone: the function of the point (see `gradient`)
        return _of_the_point(value_and_gradient, f, argnums)
    y, grads = _value_and_gradient(f, args, kwargs)
    if argnums is not None:
        grads = select(grads, argnums, len(args))
    return y, _asked(grads) if NoDerivative in (map(type, grads) if type(grads) is tuple else (type(grads),)) else grads


def select(values, argnums, n):
    """The entries `argnums` picks of a per-argument tuple: None all, an int one entry, a tuple a tuple."""
    if argnums is None:
        return values
    if type(argnums) is tuple and _CHECKED.get((argnums, len(values))):  # (the common case: checked before)
        return tuple(values[k] for k in argnums)
    single = isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool)
    picked = (argnums,) if single else tuple(argnums) if isinstance(argnums, (tuple, list, range)) else None
    # (no try: an outer level of nesting differentiates this code, `grad(f, has_aux=True)` inside `gradient`)
    if picked is None or not all(isinstance(k, (int, np.integer)) and -len(values) <= k < len(values) for k in picked):
        raise ZygoteError(f"argnums={argnums!r} does not name positional arguments of a call with {n} of them")
    if type(argnums) is tuple and len(_CHECKED) < 256:
        _CHECKED[argnums, len(values)] = True
    return values[argnums] if single else tuple(values[k] for k in picked)


_CHECKED = {}  # (argnums tuple, number of values) -> True: selections checked before


def value_and_gradient_with_callee(f, args, kwargs):
    """`(y, (df, *grads))`: value_and_gradient with the cotangent of `f` itself first (a closure's captured variables,
    an object's fields), for the nesting rules (adjoints/nesting/deep.py)."""
    return _value_and_gradient(f, args, kwargs, True)


def _value_and_gradient(f, args, kwargs, callee=False):
    """pullback's steps, inline, on the argument tuple as passed: this is the hot entry point."""
    __tracebackhide__ = True
    n = len(args)
    ctx = entered()
    ctx.depth += 1
    start, forward_done, collecting, mark = len(ctx.entries), False, _pause_gc(), len(ctx.contexts)
    need, kwargs = _ALL_NEEDED[n] if n < 8 else (True,) * n, kwargs or None
    try:
        warm = warm_adjoint(need, f, args, kwargs)
        if warm is not None:  # derived before: its forward and backward, directly
            y, tape = warm[0](*args, **kwargs) if kwargs is not None else warm[0](*args)
            if ctx.log:  # (an update in place: of an array two places of the arguments reach? as J_entry asks)
                refuse_tied_updates(f, places_of((*args, *(kwargs or {}).values())), set(ctx.log))
            ctx.depth -= 1
            forward_done = True
            grads = warm[1](tape, 1.0 if type(y) is float or type(y) is _F64 else _seed(y))
            tape = None  # freed before the collector is back on (below): see _pause_gc
        else:
            y, pb = J_entry(need, f, args, kwargs)
            ctx.depth -= 1
            forward_done = True
            grads = pb(_seed(y))
            pb = None
        if ctx.lookup_keys and not ctx.depth:
            untaken_lookup_keys(ctx)
        grads = _projected(args, grads[1:n + 1]) if not callee else (grads[0], *_projected(args, grads[1:n + 1]))
        if n > 1 or type(grads[-1]) in _CONTAINERS:
            grads = distinct_arrays(grads)
    except Exception as e:
        if not forward_done:
            ctx.depth -= 1
        with_user_lines(e)
        _leave_contexts(mark, e)
        deep = too_deep(e)
        if deep is not None:
            raise deep from None
        if not ctx.depth:
            simplify_traceback(e)
        raise
    except BaseException as e:  # KeyboardInterrupt, an alarm's exception: the call is over all the same (a count
        if not forward_done:  # left raised would keep every later call's per-call records from being cleared)
            ctx.depth -= 1
        _leave_contexts(mark, e)
        raise
    finally:
        if len(ctx.entries) != start:  # f updated something in place: the backward undid it, redo it
            finish_backward(start)
        if (ctx.log or ctx.item_arrays or ctx.read_keys or ctx.global_updates or ctx.eager_items or ctx.cuts) \
                and not ctx.depth:
            ctx.clear_notes()
        if collecting:
            gc.enable()
    return y, grads


_ALL_NEEDED = [(True,) * n for n in range(8)]


def gradient(f: Callable[..., Any], /, *args: Any, argnums: Any = None, **kwargs: Any) -> Any:
    """The gradient of the real scalar `f(*args, **kwargs)` with respect to each positional argument.

    Arguments that do not influence the result (or are ints/bools used only as data) get None. `argnums` (zygotepy's
    own keyword, not passed to `f`) picks arguments: an int gives that gradient alone, a tuple a tuple.

    >>> def pow(x, n):
    ...     r = 1
    ...     while n > 0:
    ...         n -= 1
    ...         r *= x
    ...     return r
    >>> gradient(pow, 5, 3)  # n is a loop count: None; x, an int in arithmetic, is differentiated as a real
    (75.0, None)

    Called with `f` alone, it returns the function of the point, as JAX's and torch.func's transforms do (a function
    of no arguments has no gradient to take): `gradient(pow)(5, 3)`.
    """
    __tracebackhide__ = True  # (IPython and pytest leave the entry point out of tracebacks)
    if not args and not kwargs:
        return _of_the_point(gradient, f, argnums)
    grads = _value_and_gradient(f, args, kwargs)[1]
    if argnums is not None:
        grads = select(grads, argnums, len(args))
    return _asked(grads) if NoDerivative in (map(type, grads) if type(grads) is tuple else (type(grads),)) else grads


def _asked(grads):
    """The gradients the caller asked for, refusing one that a rule has no derivative for (`NoDerivative`: a
    Bessel function's order), which is not raised where it is not asked (`argnums` leaving it out). The entry points
    call it where one is among them (asked in C: `NoDerivative in map(type, grads)`)."""
    for g in grads if type(grads) is tuple else (grads,):
        if type(g) is NoDerivative:
            raise g.error()
    return grads


def _of_the_point(entry, f, argnums):
    """`entry(f)`: the function of the point, which refuses a call with no point (it would curry again, and hand
    back another function where a gradient was asked for)."""
    @functools.wraps(f)
    def of_the_point(*args, **kwargs):
        if not args and not kwargs:
            raise ZygoteError(f"{entry.__name__}(f)() was called with no arguments: the gradient is taken at the "
                              f"arguments given")
        return entry(f, *args, argnums=argnums, **kwargs)
    return of_the_point

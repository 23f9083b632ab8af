"""Cross-language AD: call a PyTorch or JAX function inside a zygotepy-differentiated function (the seed slides'
`pycall` adjoint, in the other direction).

`torch_function(fn)` and `jax_function(fn)` wrap `fn` as an ordinary Python function of NumPy arrays and numbers whose
zygotepy rule is built from the other library's own reverse mode: `torch.autograd.grad` and `jax.vjp`. `foreign(fn)`
picks between them by the module that defined `fn`.

Invariants:
- Arguments are converted in (floats and float arrays to float64 tensors / JAX arrays, keeping the shape) and
  the results out (to NumPy arrays; a 0-d result to a Python float), so zygotepy only ever sees NumPy values.
- Outputs may be one array or a tuple/list of arrays; the cotangent of an output that received no gradient (None) is
  zeros. An argument that is not a float or a float array (an int, a flag, a string) is passed through as a constant and
  gets None (foreign code usually takes ints as exponents, counts or axes).
- torch and jax are imported inside the functions: zygotepy does not depend on either.
"""
import functools
import sys

import numpy as np

from ...errors import ForwardModeError, ZygoteError
from ...ast_adjoint.call_checks import call_site
from ...ast_adjoint.dispatch import J, differentiable
from ...forward.dual import has_dual
from ..registry import adjoint, nondifferentiable

__all__ = ["foreign", "jax_function", "torch_function"]


def _is_array_like(a):
    """A differentiable argument: a float or a float array. Ints (exponents, counts, axes) are data."""
    return isinstance(a, (float, np.floating)) or isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _to_numpy(y):
    if isinstance(y, (tuple, list)):
        return type(y)(_to_numpy(t) for t in y)
    arr = np.asarray(y.detach().cpu().numpy() if hasattr(y, "detach") else y)
    return float(arr) if arr.ndim == 0 else arr


def _like(arg, g):
    """A gradient in the form of its argument: a float for a number, an array of the argument's shape otherwise."""
    g = np.asarray(g, dtype=np.float64)
    if isinstance(arg, np.ndarray):
        return g.astype(arg.dtype) if arg.dtype.kind == "f" else g
    return float(g)


def _outputs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _cotangents(y, dy):
    """One cotangent per output of `y` (zeros where dy says None)."""
    ys = _outputs(y)
    dys = list(dy) if isinstance(y, (tuple, list)) else [dy]
    if dy is None:
        dys = [None] * len(ys)
    return [np.zeros(np.shape(t)) if d is None else np.asarray(d, dtype=np.float64) for t, d in zip(ys, dys,
                                                                                                   strict=True)]


def _twin(wrapped, pulled):
    """The rule an outer level transforms in place of a wrapped function's rule (adjoints/nesting/plan.py), whose
    own code (torch's graph, JAX's tracing) it could not: the value through the wrapped function (whose rule gives its
    derivative) and the back through `_pull_apply`."""
    def twin(*args):
        y = wrapped(*args)
        return y, lambda dy: _pull_apply(pulled, None, args, y, dy)
    return twin


def _pull_apply(pulled, first_order, args, out, dy):
    """A wrapped function's back: `first_order(dy)`, the forward's own pullback (torch's graph, JAX's vjp), as fast as
    the library's. Its rule, which an outer level uses where it differentiates the back (a gradient of a gradient),
    runs `pulled` instead (the pullback as a wrapped function of the arguments and the cotangents), whose own rule
    gives that level its derivative from the library again. (No `first_order`: the twin's back, `_twin`.)"""
    if first_order is None:
        return _positions(args, pulled()(len(args), *args, *_cotangents(out, dy)))
    return first_order(dy)


@adjoint(_pull_apply)
def _pull_apply_rule(pulled, first_order, args, out, dy):
    floats = _floats(args)
    found, back = J(pulled(), len(args), *args, *_cotangents(out, dy))
    grads = _positions(args, found)

    def apply_back(dgrads):
        if dgrads is None or all(dgrads[i] is None for i in floats):
            return (None, None, None, None, None)
        pulled_back = back(tuple(dgrads[i] for i in floats))  # (d_pulled, d_n, *d_args, *d_cotangents)
        d_cts = pulled_back[2 + len(args):]
        return (None, None, tuple(pulled_back[2:2 + len(args)]), None,
                tuple(d_cts) if isinstance(out, (tuple, list)) else d_cts[0])
    return grads, apply_back


def _refuse_duals(args, name):
    """Forward mode's dual numbers cannot enter torch or JAX: said as forward mode's error, so that `hessian` takes
    reverse-over-reverse, whose second level differentiates the back (`_pull_apply`)."""
    if has_dual(args):
        raise ForwardModeError(f"{name}: forward mode cannot pass dual numbers into the wrapped function")


def _refuse_containers(args, name):
    """A list, tuple or dict argument holding floats or float arrays: the wrapped function would take it for a
    constant (its gradients silently None); refused, naming the position."""
    for k, a in enumerate(args):
        if isinstance(a, (list, tuple, dict)) and differentiable(a):
            raise ZygoteError(f"{call_site() or name}: {name}'s argument {k} is a {type(a).__name__} holding values that carry gradients, "
                              f"which the wrapped function's gradient does not reach; pass the arrays as arguments "
                              f"of their own (f(d['a'], d['b']))")


def _floats(args):
    """The positions of the arguments the wrapped pullback gives gradients for: floats, float arrays and tensors."""
    return [i for i, a in enumerate(args) if _is_array_like(a) or _is_float_tensor(a)]


def _positions(args, found):
    """The gradients of the wrapped pullback (one per float argument, in order) at their arguments' positions."""
    grads = [None] * len(args)
    for i, g in zip(_floats(args), found if isinstance(found, (tuple, list)) else [found], strict=True):
        grads[i] = g
    return tuple(grads)


# --- PyTorch -------------------------------------------------------------------------------------------------------------
def torch_function(fn, /):
    """Wrap a PyTorch function so that zygotepy can differentiate through it.

    Args:
        fn: a function of torch tensors returning a tensor or a tuple of tensors.
    Returns:
        a function of NumPy arrays and numbers returning NumPy arrays (a 0-d result as a float); under zygotepy its
        pullback is `torch.autograd.grad` of `fn`.

    >>> import numpy as np, torch
    >>> from zygotepy import gradient
    >>> tsin = torch_function(torch.sin)
    >>> gradient(lambda x: float(np.sum(tsin(x))), np.zeros(2))
    (array([1., 1.]),)
    """
    @functools.wraps(fn)
    def wrapped(*args):
        import torch
        with torch.no_grad():
            return _to_numpy(fn(*(_torch_in(a) for a in args)))
    adjoint(wrapped)(_torch_rule(fn, wrapped))
    return wrapped


def _torch_rule(fn, wrapped):
    """The rule of `torch_function(fn)`: `torch.autograd.grad` of the graph its forward built; where an outer level
    differentiates its back, the pullback as a wrapped torch function (with `create_graph`: `_pull_apply`)."""
    pulled = functools.cache(lambda: torch_function(functools.partial(_torch_pullback, fn)))  # (made at first use)

    def rule(*args):
        import torch
        _refuse_duals(args, "torch_function")
        _refuse_containers(args, "torch_function")
        inputs = [a.detach().requires_grad_(True) if _is_float_tensor(a) else
                  _torch_in(a, requires_grad=_is_array_like(a)) for a in args]
        with torch.enable_grad():
            out = fn(*inputs)
        y = _to_numpy(out)

        def first_order(dy):
            outs = [t for t in _outputs(out)]
            cts = [torch.as_tensor(c, dtype=t.dtype) for t, c in zip(outs, _cotangents(out, dy), strict=True)]
            wrt = [(i, t) for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.requires_grad]
            live = [(o, c) for o, c in zip(outs, cts, strict=True) if o.requires_grad]
            grads = [None] * len(args)
            if not wrt or not live:
                return tuple(grads)
            found = torch.autograd.grad([o for o, _ in live], [t for _, t in wrt], [c for _, c in live],
                                        retain_graph=True, allow_unused=True)
            for (i, _), g in zip(wrt, found, strict=True):
                if g is not None and _is_float_tensor(args[i]):  # a tensor argument: a tensor cotangent
                    grads[i] = g.to(args[i].dtype)
                else:
                    grads[i] = None if g is None else _like(args[i], g.detach().cpu().numpy())
            return tuple(grads)
        return y, lambda dy: _pull_apply(pulled, first_order, args, out, dy)
    rule.__zygote_nested__ = _twin(wrapped, pulled)
    return rule


def _torch_pullback(fn, n, *rest):
    """The gradients of `fn`'s float arguments among `rest[:n]` for the cotangents `rest[n:]` of its outputs (zeros
    for an argument it does not use), in a graph of their own (`create_graph`): what `_torch_rule`'s back computes,
    as a torch function of its inputs."""
    import torch
    args, cts = rest[:n], rest[n:]
    # (inputs that carry the caller's graph keep it: the gradients found are then functions of them, `create_graph`)
    inputs = [a.detach().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point()
              and not a.requires_grad else a for a in args]
    with torch.enable_grad():
        outs = _outputs(fn(*inputs))
    wrt = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    live = [(o, torch.as_tensor(c, dtype=o.dtype)) for o, c in zip(outs, cts, strict=True) if o.requires_grad]
    if not wrt or not live:
        return tuple(torch.zeros_like(t) for t in wrt)
    with torch.enable_grad():
        found = torch.autograd.grad([o for o, _ in live], wrt, [c for _, c in live], create_graph=True,
                                    allow_unused=True)
    return tuple(torch.zeros_like(t) if g is None else g for t, g in zip(wrt, found, strict=True))


def _is_float_tensor(a):
    """A torch tensor of floats: differentiable too (passed through as a constant, it got a silent None gradient)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor) and a.is_floating_point()


def _torch_in(a, requires_grad=False):
    import torch
    if isinstance(a, torch.Tensor):
        return a
    if _is_array_like(a):
        t = torch.tensor(np.asarray(a, dtype=np.float64))
        return t.requires_grad_(True) if requires_grad else t
    return a


# --- JAX -----------------------------------------------------------------------------------------------------------------
def jax_function(fn, /):
    """Wrap a JAX function so that zygotepy can differentiate through it.

    Args:
        fn: a function of JAX arrays returning an array or a tuple of arrays.
    Returns:
        a function of NumPy arrays and numbers returning NumPy arrays (a 0-d result as a float); under zygotepy its
        pullback is `jax.vjp` of `fn`. Inputs are float64 when JAX's `jax_enable_x64` is on, float32 otherwise.

    >>> import numpy as np, jax.numpy as jnp
    >>> from zygotepy import gradient
    >>> jsin = jax_function(jnp.sin)
    >>> gradient(lambda x: float(np.sum(jsin(x))), np.zeros(2))
    (array([1., 1.]),)
    """
    @functools.wraps(fn)
    def wrapped(*args):
        return _to_numpy(fn(*(_jax_in(a) for a in args)))
    adjoint(wrapped)(_jax_rule(fn, wrapped))
    return wrapped


def _jax_rule(fn, wrapped):
    """The rule of `jax_function(fn)`: `jax.vjp` of `fn`; where an outer level differentiates its back, the pullback
    as a wrapped JAX function (`_pull_apply`)."""
    pulled = functools.cache(lambda: jax_function(functools.partial(_jax_pullback, fn)))  # (made at first use)

    def rule(*args):
        import jax
        _refuse_duals(args, "jax_function")
        _refuse_containers(args, "jax_function")
        active = [i for i, a in enumerate(args) if _is_array_like(a)]
        given = list(map(_jax_in, args))
        out, vjp = jax.vjp(_of_active(fn, given, active), *(given[i] for i in active))
        y = _to_numpy(out)

        def first_order(dy):
            cts = [c.astype(o.dtype) for o, c in zip(_outputs(out), _cotangents(out, dy), strict=True)]
            found = vjp(type(out)(cts) if isinstance(out, (tuple, list)) else cts[0])
            grads = [None] * len(args)
            for i, g in zip(active, found, strict=True):
                grads[i] = _like(args[i], np.asarray(g))
            return tuple(grads)
        return y, lambda dy: _pull_apply(pulled, first_order, args, out, dy)
    rule.__zygote_nested__ = _twin(wrapped, pulled)
    return rule


def _jax_pullback(fn, n, *rest):
    """The gradients of `fn`'s float arguments among `rest[:n]` (JAX arrays; ints are data) for the cotangents
    `rest[n:]` of its outputs: what `_jax_rule`'s back computes, as a JAX function of its inputs."""
    import jax
    import jax.numpy as jnp
    args, cts = rest[:n], rest[n:]
    active = [i for i, a in enumerate(args) if isinstance(a, jax.Array) and jnp.issubdtype(a.dtype, jnp.floating)]
    out, vjp = jax.vjp(_of_active(fn, args, active), *(args[i] for i in active))
    cts = [jnp.asarray(c, dtype=o.dtype) for o, c in zip(_outputs(out), cts, strict=True)]
    return tuple(vjp(type(out)(cts) if isinstance(out, (tuple, list)) else cts[0]))


def _of_active(fn, args, active):
    """`fn` as a function of the arguments at the positions `active` alone, the others as given (what jax.vjp takes)."""
    def of_active(*xs):
        full = list(args)
        for i, x in zip(active, xs, strict=True):
            full[i] = x
        return fn(*full)
    return of_active


def _jax_in(a):
    import jax.numpy as jnp
    return jnp.asarray(a) if _is_array_like(a) else a


# --- choosing ------------------------------------------------------------------------------------------------------------
def foreign(fn, /):
    """`torch_function(fn)` or `jax_function(fn)`, by the top-level package of the module that defined `fn` (`torch`
    or `jax`/`jaxlib`/`flax`/`equinox`); raises `ZygoteError` when it is neither.

    >>> import jax.numpy as jnp
    >>> foreign(jnp.tanh).__wrapped__ is jnp.tanh
    True
    """
    module = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "") or ""
    top = module.split(".")[0]
    if top == "torch":
        return torch_function(fn)
    if top in ("jax", "jaxlib", "flax", "equinox"):
        return jax_function(fn)
    raise ZygoteError(f"foreign({getattr(fn, '__qualname__', fn)!r}): cannot tell whether it is a PyTorch or a JAX "
                      f"function (it comes from module {module!r}); use zygotepy.torch_function or "
                      f"zygotepy.jax_function")


nondifferentiable(torch_function, jax_function, foreign)  # they make functions: constants to differentiation

try:  # the array-API idiom `xp = array_api_compat.array_namespace(x)` inside a differentiated function: a module
    import array_api_compat as _compat
    nondifferentiable(*(getattr(_compat, n) for n in ("array_namespace", "get_namespace") if hasattr(_compat, n)))
except ImportError:
    pass

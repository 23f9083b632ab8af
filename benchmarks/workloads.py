"""The benchmark workloads: the math of each written once, plus a hand-written gradient.

This module holds the `Workload` type, the helpers (fresh copies, finite differences, `check_hand_grads`) and the
first four workloads; workloads_loops.py and workloads_arrays.py hold the rest.

Each workload's function is plain Python/NumPy, differentiated as is by zygotepy. Other frameworks get the *same code
object* with its module globals rebound to their own op namespace (`np` -> `autograd.numpy`, `torch`, `jax.numpy`;
`math` -> the same), which is how their users write such code. The differentiated arguments always come first; the
rest are constants (data, loop counts).

The hand-written gradients are what a careful person writes: forward-mode fused loops for the scalar workloads (two or
three flops per primal op, no tape) and textbook backprop for the MLP. `check_hand_grads` verifies them against
central finite differences before anything is timed.
"""
import inspect
import itertools
import linecache
import math
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["PHYSICS_ARGS", "WORKLOADS", "Workload", "check_hand_grads", "finite_difference", "fresh_copy",
           "physics_step"]


@dataclass(frozen=True)
class Workload:
    """One benchmark problem.

    Attributes:
        name: short key (table heading, `--only`, JSON).
        title: one-line description.
        fn: the math, written against the module globals named in `namespaces`; zygotepy differentiates it as is.
        hand_grad: `(*args) -> tuple` of gradients with respect to the first `n_wrt` arguments.
        args: the arguments, differentiated ones first.
        n_wrt: how many leading arguments are differentiated; the rest are constants.
        namespaces: global names in `fn` that other frameworks rebind to their op namespace.
        helpers: global names of user functions `fn` calls; other frameworks get copies of them that see the rebound
            namespaces too.
        skip: contender name -> reason it is not run on this workload.
        quick_skip: contender name -> reason it is not run under `--quick` (a compile of minutes, say).
        cannot: contender name -> what the workload does that the contender cannot (e.g. mutate arrays); it is still
            run, and if it fails the table shows this reason and its error as "cannot run" rather than "ERROR".
        fd_step: relative step of the finite differences that check `hand_grad` (larger for big sums, whose
            rounding error would otherwise swamp the difference).
    """

    name: str
    title: str
    fn: Callable
    hand_grad: Callable
    args: tuple
    n_wrt: int
    namespaces: tuple = ()
    helpers: tuple = ()
    skip: dict = field(default_factory=dict)
    quick_skip: dict = field(default_factory=dict)
    cannot: dict = field(default_factory=dict)
    fd_step: float = 1e-6

    @property
    def argnums(self):
        return tuple(range(self.n_wrt))

    @property
    def static_argnums(self):
        """Integer arguments (loop counts): static under `jax.jit`."""
        return tuple(i for i, a in enumerate(self.args) if isinstance(a, int))

    @property
    def const_kwargs(self):
        """The constant arguments by parameter name (zygotepy treats keyword arguments as constants)."""
        names = list(inspect.signature(self.fn).parameters)
        return dict(zip(names[self.n_wrt:], self.args[self.n_wrt:]))

    def implementation(self, namespace):
        """The same code as `fn`, with each name in `namespaces` bound to `namespace` (e.g. `torch`)."""
        def rebound(fn):
            return types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
        env = {**self.fn.__globals__, **dict.fromkeys(self.namespaces, namespace)}
        env.update({name: rebound(env[name]) for name in self.helpers})
        return rebound(self.fn)


# ---------------------------------------------------------------------------------------------------------------
# 1. pow loop on floats


def pow(x, n):
    r = 1.0
    while n > 0:
        n -= 1
        r *= x
    return r


def pow_grad(x, n):
    """Forward mode through the same loop: d(r * x) = dr * x + r."""
    r, dr = 1.0, 0.0
    while n > 0:
        n -= 1
        dr = dr * x + r
        r *= x
    return (dr,)


# ---------------------------------------------------------------------------------------------------------------
# 2. scalar chain: 5 math-module operations per iteration


def chain(a, b, y, n):
    for i in range(n):
        y = math.sin(y) * a + math.cos(y) * b
    return y


def chain_grad(a, b, y, n):
    """Forward mode with two tangents: y' = (a cos y - b sin y) dy + sin y da + cos y db."""
    da, db = 0.0, 0.0
    for i in range(n):
        s, c = math.sin(y), math.cos(y)
        d = a * c - b * s
        da, db = d * da + s, d * db + c
        y = s * a + c * b
    return da, db


# ---------------------------------------------------------------------------------------------------------------
# 3. logsumexp


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_grad(x):
    e = np.exp(x - np.max(x))
    return (e / np.sum(e),)


# ---------------------------------------------------------------------------------------------------------------
# 4. two-layer MLP, mean squared error


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - Y) ** 2)


def mlp_grad(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    r = h @ W2 + b2 - Y
    dout = r * (2.0 / r.size)
    dz = (dout @ W2.T) * (1.0 - h * h)
    return X.T @ dz, dz.sum(axis=0), h.T @ dout, dout.sum(axis=0)


# ---------------------------------------------------------------------------------------------------------------
# The ~20-line function whose first call (transform time) is measured: a damped, bouncing ball.


def physics_step(x, v, k, dt, g):
    """Three semi-implicit Euler steps of a damped spring-ball over a floor; returns the final energy."""
    e = 0.0
    for i in range(3):
        f = -k * x - g
        if v > 0:
            f -= 0.1 * v * v
        else:
            f += 0.1 * v * v
        v = v + dt * f
        x = x + dt * v
        if x < 0.0:
            x = -x
            v = -0.9 * v
        elif x > 10.0:
            x = 20.0 - x
            v = -v
        e = 0.5 * v * v + 0.5 * k * x * x + g * x
    return e


PHYSICS_ARGS = (1.5, -0.3, 2.0, 0.05, 9.81)


def _make_workloads():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((32, 64))
    Y = rng.standard_normal((32, 10))
    W1 = rng.standard_normal((64, 128)) * 0.1
    b1 = rng.standard_normal(128) * 0.1
    W2 = rng.standard_normal((128, 10)) * 0.1
    b2 = rng.standard_normal(10) * 0.1
    # jax.jit unrolls the Python loop: n = 1 000 compiles in ~3 s, n = 10 000 did not finish in 10 minutes.
    unrolled = "jit unrolls the 10 000-step loop (compile > 10 min)"
    return [
        Workload("pow", "pow(x, n): float loop, n = 10 000, x = 1.0001; d/dx", pow, pow_grad,
                 (1.0001, 10_000), 1, skip={"jax.jit": unrolled, "zygotepy[jax.jit]": unrolled},
                 quick_skip={"jax": "one call takes ~8 s", "zygotepy[jax]": "one call takes ~1.2 s"}),
        Workload("chain", "y = sin(y)*a + cos(y)*b, 200 iterations (1 000 scalar ops); d/da, d/db", chain, chain_grad,
                 (0.9, 1.0, 0.5, 200), 2, namespaces=("math",),
                 quick_skip={"zygotepy[jax.jit]": "compiling the unrolled 200 steps takes ~3 s"}),
        Workload("logsumexp", "logsumexp of 100 float64 elements; d/dx", logsumexp, logsumexp_grad,
                 (rng.standard_normal(100),), 1, namespaces=("np",)),
        Workload("mlp", "MLP loss, batch 32, 64 -> tanh 128 -> 10, mean squared error; d/d(W1, b1, W2, b2)", mlp,
                 mlp_grad, (W1, b1, W2, b2, X, Y), 4, namespaces=("np",)),
    ]


WORKLOADS = _make_workloads()


# ---------------------------------------------------------------------------------------------------------------
# Fresh copies (cold zygotepy caches) and finite differences

_FRESH = itertools.count(1)


def fresh_copy(fn):
    """A new function with `fn`'s source, exec'd into a new module-like namespace under a new `linecache` filename.

    The function is renamed, so its code object differs from every earlier copy's (code objects compare by value,
    and a transform cache keyed on them would otherwise hit); the copy's first differentiation is therefore cold.
    """
    k = next(_FRESH)
    src = textwrap.dedent(inspect.getsource(fn))
    if not src.startswith(f"def {fn.__name__}("):  # getsource reads the file now, by the line numbers of import time
        raise RuntimeError(f"the source of {fn.__name__} moved in its file since it was imported; run again")
    name = f"{fn.__name__}_fresh{k}"
    src = src.replace(f"def {fn.__name__}(", f"def {name}(", 1)
    filename = f"<benchmark fresh copy {k}: {fn.__name__}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    module = types.ModuleType(f"benchmark_fresh_{k}")
    module.__dict__.update({k: v for k, v in fn.__globals__.items() if not k.startswith("__")})
    exec(compile(src, filename, "exec"), module.__dict__)  # noqa: S102 - the point: a fresh function
    return module.__dict__[name]


def finite_difference(f, args, i, index=None, h=1e-6):
    """Central difference of the scalar `f(*args)` in argument `i` (element `index` if it is an array)."""
    def shifted(delta):
        a = list(args)
        if index is None:
            a[i] = args[i] + delta
        else:
            a[i] = args[i].copy()
            a[i][index] += delta
        return f(*a)
    x = args[i] if index is None else args[i][index]
    step = h * max(1.0, abs(x))
    return (shifted(step) - shifted(-step)) / (2 * step)


def check_hand_grads(workloads, samples=24, rtol=1e-4):
    """Assert each hand-written gradient matches central differences (a random sample of entries for arrays)."""
    rng = np.random.default_rng(1)
    for w in workloads:
        grads = w.hand_grad(*w.args)
        assert len(grads) == w.n_wrt, f"{w.name}: hand_grad returned {len(grads)} gradients, expected {w.n_wrt}"
        for i, g in enumerate(grads):
            arg = w.args[i]
            if isinstance(arg, np.ndarray):
                assert np.shape(g) == arg.shape, f"{w.name}: gradient {i} has shape {np.shape(g)}, not {arg.shape}"
                picks = rng.choice(arg.size, size=min(samples, arg.size), replace=False)
                indices = [np.unravel_index(p, arg.shape) for p in picks]
            else:
                indices = [None]
            scale = max(1.0, float(np.max(np.abs(g))))
            for index in indices:
                fd = finite_difference(w.fn, w.args, i, index, h=w.fd_step)
                exact = g if index is None else g[index]
                if not math.isclose(fd, exact, rel_tol=rtol, abs_tol=1e-7 * scale):
                    raise AssertionError(f"{w.name}: hand-written gradient of argument {i} at {index} is {exact}, "
                                         f"finite differences give {fd}")

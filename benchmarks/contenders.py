"""The contenders: ways to compute a workload's primal or gradient, each built fresh per workload.

Optional frameworks are imported here, inside their builder; one that is missing becomes a "not installed" contender.
"""
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from importlib import metadata

import numpy as np
from workloads import PHYSICS_ARGS, fresh_copy, physics_step

__all__ = ["Contender", "all_contenders", "as_list"]


@dataclass
class Contender:
    """A way to compute a workload's primal or gradient.

    `build(w)` returns a thunk running one call on prepared inputs; each build is a fresh instance (cold transform or
    compile caches), so the thunk's first call is the "first call". `to_numpy` turns a gradient result into a list of
    float64 arrays, one per differentiated argument.
    """

    name: str
    version: str | None                      # None: not installed
    build: Callable | None = None
    to_numpy: Callable = None
    is_gradient: bool = True
    numpy_memory: bool = False               # tracemalloc sees its allocations
    transforms: bool = False                 # its first call transforms or compiles: always time a steady call too
    missing: str = ""                        # why it is not installed


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def as_list(result):
    return [np.asarray(g, dtype=np.float64) for g in (result if isinstance(result, (tuple, list)) else (result,))]


def _not_installed(name, err):
    return Contender(name, None, missing=f"not installed ({type(err).__name__}: {err})")


def baselines():
    return [
        Contender("primal", "", lambda w: partial(w.fn, *w.args), is_gradient=False, numpy_memory=True),
        Contender("hand-written", "", lambda w: partial(w.hand_grad, *w.args), as_list, numpy_memory=True),
    ]


def zygotepy_contender():
    try:
        import zygotepy
    except ImportError as e:
        return _not_installed("zygotepy", e)

    try:  # one-time costs (lazy imports, rule tables) belong to no workload's first call
        zygotepy.gradient(fresh_copy(physics_step), *PHYSICS_ARGS)
    except Exception:  # noqa: BLE001, S110 - a failure is reported per workload
        pass

    def build(w):
        return partial(zygotepy.gradient, fresh_copy(w.fn), *w.args[:w.n_wrt], **w.const_kwargs)
    return Contender("zygotepy", _version("zygotepy"), build, as_list, numpy_memory=True, transforms=True)


def autograd_contender():
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError as e:
        return _not_installed("autograd", e)

    def build(w):
        return partial(autograd.grad(w.implementation(anp), argnum=w.argnums), *w.args)
    return Contender("autograd", _version("autograd"), build, as_list, numpy_memory=True)


def torch_contender():
    try:
        import torch
    except ImportError as e:
        return _not_installed("torch", e)

    def convert(a, grad):
        if isinstance(a, int):
            return a
        return torch.tensor(a, dtype=torch.float64, requires_grad=grad)

    def build(w):
        f = w.implementation(torch)
        leaves = [convert(a, True) for a in w.args[:w.n_wrt]]
        consts = [convert(a, False) for a in w.args[w.n_wrt:]]

        def grad():
            return torch.autograd.grad(f(*leaves, *consts), leaves)
        return grad

    def to_numpy(result):
        return [g.detach().numpy() for g in result]
    return Contender("torch", torch.__version__, build, to_numpy)


def jax_contenders():
    try:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        return [_not_installed("jax", e), _not_installed("jax.jit", e)]
    jax.config.update("jax_enable_x64", True)

    def inputs(w):
        return [a if isinstance(a, int) else jnp.asarray(a, dtype=jnp.float64) for a in w.args]

    def build(w, jit):
        g = jax.grad(w.implementation(jnp), argnums=w.argnums)
        if jit:
            g = jax.jit(g, static_argnums=w.static_argnums)
        args = inputs(w)
        return lambda: jax.block_until_ready(g(*args))
    version = _version("jax")
    return [Contender("jax", version, partial(build, jit=False), as_list),
            Contender("jax.jit", version, partial(build, jit=True), as_list, transforms=True)]


def zygotepy_jax_contenders():
    """zygotepy on JAX arrays: `zygotepy.gradient` of the workload's code with `np` rebound to `jax.numpy`, on float64
    `jnp` arrays, eagerly (`zygotepy[jax]`) and inside `jax.jit` (`zygotepy[jax.jit]`, README's pattern
    `jax.jit(lambda *a: zygotepy.gradient(f, *a))`).

    Each build differentiates a fresh copy of the function (cold transform cache) and, under jit, makes a new jitted
    function, so the first call includes zygotepy's transform and, under jit, JAX's trace and compile. Constants go in
    as keyword arguments, as for zygotepy on NumPy; under jit the integer ones (loop counts) are closed over (static)
    and the array ones are traced arguments.
    """
    try:
        import zygotepy
    except ImportError as e:
        return [_not_installed("zygotepy[jax]", e), _not_installed("zygotepy[jax.jit]", e)]
    try:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        return [_not_installed("zygotepy[jax]", e), _not_installed("zygotepy[jax.jit]", e)]
    jax.config.update("jax_enable_x64", True)

    def convert(a):
        return a if isinstance(a, int) else jnp.asarray(a, dtype=jnp.float64)

    def build(w, jit):
        f = replace(w, fn=fresh_copy(w.fn)).implementation(jnp)
        wrt = [convert(a) for a in w.args[:w.n_wrt]]
        static = {k: v for k, v in w.const_kwargs.items() if isinstance(v, int)}
        traced = {k: convert(v) for k, v in w.const_kwargs.items() if not isinstance(v, int)}
        if not jit:
            return lambda: jax.block_until_ready(zygotepy.gradient(f, *wrt, **traced, **static))
        g = jax.jit(lambda *a, **consts: zygotepy.gradient(f, *a, **consts, **static))
        return lambda: jax.block_until_ready(g(*wrt, **traced))
    version = f"{_version('zygotepy')} + jax {_version('jax')}"
    return [Contender("zygotepy[jax]", version, partial(build, jit=False), as_list, transforms=True),
            Contender("zygotepy[jax.jit]", version, partial(build, jit=True), as_list, transforms=True)]


def tangent_contender():
    """`tangent-ad` (a maintained fork of Google's Tangent): source-to-source like zygotepy, NumPy only.

    It differentiates the plain NumPy/math code as is; constants are passed positionally (it has no keyword form).
    Each build transforms a fresh copy of the function, so the first call includes the transform (the disk cache is
    off).
    """
    # Its persistent on-disk cache of generated code would make the first call warm on every run after the first
    # (fresh copies get the same names each run); its in-memory cache misses on fresh copies, like zygotepy's.
    os.environ["TANGENT_DISK_CACHE"] = "0"
    try:
        import tangent
    except ImportError as e:
        return _not_installed("tangent", e)

    def build(w):
        g = tangent.grad(fresh_copy(w.fn), wrt=w.argnums, verbose=0)
        return partial(g, *w.args)

    def build_lazily(w):
        # the transform happens in tangent.grad, so it must run inside the timed first call
        thunk = None

        def call():
            nonlocal thunk
            if thunk is None:
                thunk = build(w)
            return thunk()
        return call
    return Contender("tangent", _version("tangent-ad"), build_lazily, as_list, numpy_memory=True, transforms=True)


def all_contenders():
    return [*baselines(), zygotepy_contender(), tangent_contender(), autograd_contender(), torch_contender(),
            *jax_contenders(), *zygotepy_jax_contenders()]



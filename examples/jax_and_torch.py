"""One model, three array libraries: zygotepy on NumPy arrays, JAX arrays (eager and under jax.jit) and torch tensors.

The loss of a one-hidden-layer network with a logistic output is written once against an array namespace `xp`
(numpy, jax.numpy or torch), passed as a keyword argument (keyword arguments are constants to zygotepy). zygotepy
differentiates the same source for each library, and the gradients come back as arrays of the input's library. The
script prints how far apart the three gradients are, and compares them with jax.grad and torch autograd. JAX runs in
float64 here (jax_enable_x64), so that all libraries can agree to rounding error.

`jax.jit(lambda params, X, y: gradient(loss, params, X, y, xp=jnp)[0])` traces zygotepy's forward and pullback into
one XLA computation; control flow inside `loss` must then not depend on traced values.

    python examples/jax_and_torch.py            # 1 000 samples, 10 features, 32 hidden units
    python examples/jax_and_torch.py --quick    # 100 samples, 3 features, 8 hidden units

A library that is not installed is skipped with a note.
"""
import argparse
import time

import numpy as np

from zygotepy import gradient


def loss(params, X, y, xp=np):
    """Mean logistic loss log(1 + exp(-y f(X))) of a tanh network f, for labels y in {-1, +1}."""
    h = xp.tanh(X @ params["W1"] + params["b1"])
    z = -y * (h @ params["w2"] + params["b2"])
    # softplus(z) = log(1 + exp(z)), written so that exp never overflows; (z + |z|) / 2 is max(z, 0) in any library
    return xp.mean(xp.log1p(xp.exp(-xp.abs(z))) + (z + xp.abs(z)) / 2)


def make_data(n_samples, n_features, n_hidden, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    y = np.where(np.sin(X[:, 0]) + X[:, -1] ** 2 > 0.5, 1.0, -1.0)
    params = {
        "W1": rng.standard_normal((n_features, n_hidden)) / np.sqrt(n_features),
        "b1": 0.1 * rng.standard_normal(n_hidden),
        "w2": rng.standard_normal(n_hidden) / np.sqrt(n_hidden),
        "b2": 0.0,
    }
    return params, X, y


def max_abs_difference(grads_a, grads_b):
    return max(float(np.max(np.abs(np.asarray(grads_a[k]) - np.asarray(grads_b[k])))) for k in grads_a)


def describe(array):
    kind = type(array)
    return f"{kind.__module__}.{kind.__name__} of dtype {array.dtype}"


def best_time(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller model and data set")
    args = parser.parse_args()
    sizes = (100, 3, 8) if args.quick else (1000, 10, 32)
    params, X, y = make_data(*sizes)
    print("samples, features, hidden units:", sizes)

    g_numpy = gradient(loss, params, X, y)[0]
    print(f"NumPy: loss {loss(params, X, y):.6f}, zygotepy gradient of W1 has shape {g_numpy['W1'].shape}")
    print(f"  zygotepy on NumPy: {best_time(lambda: gradient(loss, params, X, y)) * 1e3:.2f} ms per gradient")

    # --- JAX -----------------------------------------------------------------------------------------------------------
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("JAX is not installed: skipping the JAX part (pip install jax)")
    else:
        jax.config.update("jax_enable_x64", True)
        jparams = {k: jnp.asarray(v) for k, v in params.items()}
        jX, jy = jnp.asarray(X), jnp.asarray(y)

        g_jax = gradient(loss, jparams, jX, jy, xp=jnp)[0]
        print(f"JAX: zygotepy's gradient of W1 is a {describe(g_jax['W1'])}")
        print(f"  max |zygotepy on JAX - zygotepy on NumPy|      = {max_abs_difference(g_jax, g_numpy):.1e}")

        reference = jax.grad(lambda p: loss(p, jX, jy, xp=jnp))(jparams)
        print(f"  max |zygotepy on JAX - jax.grad|               = {max_abs_difference(g_jax, reference):.1e}")

        grad_jit = jax.jit(lambda p, X, y: gradient(loss, p, X, y, xp=jnp)[0])
        start = time.perf_counter()
        g_jit = jax.block_until_ready(grad_jit(jparams, jX, jy))
        compile_s = time.perf_counter() - start
        print(f"  max |jax.jit(zygotepy gradient) - jax.grad|    = {max_abs_difference(g_jit, reference):.1e}")
        jax_grad_jit = jax.jit(jax.grad(lambda p, X, y: loss(p, X, y, xp=jnp)))
        jax.block_until_ready(jax_grad_jit(jparams, jX, jy))
        t_zygote = best_time(lambda: jax.block_until_ready(grad_jit(jparams, jX, jy)))
        t_jax = best_time(lambda: jax.block_until_ready(jax_grad_jit(jparams, jX, jy)))
        t_eager = best_time(lambda: gradient(loss, jparams, jX, jy, xp=jnp))
        print(f"  zygotepy on JAX, eager: {t_eager * 1e3:.2f} ms; under jax.jit: {t_zygote * 1e3:.3f} ms "
              f"(first call, tracing and compiling: {compile_s:.2f} s); jax.jit(jax.grad): {t_jax * 1e3:.3f} ms")
        assert max_abs_difference(g_jax, g_numpy) < 1e-12 and max_abs_difference(g_jit, reference) < 1e-12

    # --- torch ---------------------------------------------------------------------------------------------------------
    try:
        import torch
    except ImportError:
        print("torch is not installed: skipping the torch part (pip install torch)")
    else:
        tparams = {k: torch.tensor(v, dtype=torch.float64) for k, v in params.items()}
        tX, ty = torch.from_numpy(X), torch.from_numpy(y)

        g_torch = gradient(loss, tparams, tX, ty, xp=torch)[0]
        print(f"torch: zygotepy's gradient of W1 is a {describe(g_torch['W1'])}")
        print(f"  max |zygotepy on torch - zygotepy on NumPy|    = {max_abs_difference(g_torch, g_numpy):.1e}")

        leaves = {k: v.clone().requires_grad_(True) for k, v in tparams.items()}
        loss(leaves, tX, ty, xp=torch).backward()
        autograd = {k: v.grad for k, v in leaves.items()}
        print(f"  max |zygotepy on torch - torch autograd|       = {max_abs_difference(g_torch, autograd):.1e}")

        def torch_backward():
            leaves = {k: v.clone().requires_grad_(True) for k, v in tparams.items()}
            loss(leaves, tX, ty, xp=torch).backward()

        t_zygote = best_time(lambda: gradient(loss, tparams, tX, ty, xp=torch))
        print(f"  zygotepy on torch: {t_zygote * 1e3:.2f} ms; torch autograd: {best_time(torch_backward) * 1e3:.2f} ms")
        assert max_abs_difference(g_torch, g_numpy) < 1e-12 and max_abs_difference(g_torch, autograd) < 1e-12


if __name__ == "__main__":
    main()

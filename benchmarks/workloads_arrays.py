"""Array workloads: a large elementwise sigmoid, an array filled item by item, and a state array updated in place.

Same conventions as workloads.py. The two mutating workloads are written the way NumPy users write them (`out[i] = ...`,
`x += ...`); frameworks whose arrays are immutable cannot run the first one and say so in the table.
"""
import math

import numpy as np
from workloads import Workload

__all__ = ["ARRAY_WORKLOADS"]

# ---------------------------------------------------------------------------------------------------------------
# 8. elementwise sigmoid on 10^6 elements


def sigmoid_sum(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def sigmoid_sum_grad(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return (s * (1.0 - s),)


# ---------------------------------------------------------------------------------------------------------------
# 9. an array filled in place, item by item


def fill(x, n):
    out = np.zeros_like(x)
    for i in range(n):
        out[i] = math.sin(x[i]) * x[i]
    return out.sum()


def fill_grad(x, n):
    return (np.cos(x) * x + np.sin(x),)


# ---------------------------------------------------------------------------------------------------------------
# 10. a state array updated in place: 100 explicit Euler steps of dx/dt = tanh(W x) - x


def euler_inplace(x0, W, dt, n):
    x = x0 * 1.0  # a new array: the updates below must not touch the caller's x0
    for i in range(n):
        x += dt * (np.tanh(W @ x) - x)
    return np.sum(x * x)


def euler_inplace_grad(x0, W, dt, n):
    """Backpropagation through the steps: x' = x + dt (tanh(W x) - x), so dx = (1 - dt) dx' + W^T (dt (1 - t^2) dx')."""
    xs, ts = [x0], []
    for i in range(n):
        t = np.tanh(W @ xs[-1])
        ts.append(t)
        xs.append(xs[-1] + dt * (t - xs[-1]))
    dx, dW = 2.0 * xs[-1], np.zeros_like(W)
    for i in range(n - 1, -1, -1):
        dz = dt * (1.0 - ts[i] * ts[i]) * dx
        dW += np.outer(dz, xs[i])
        dx = (1.0 - dt) * dx + W.T @ dz
    return dx, dW


# ---------------------------------------------------------------------------------------------------------------

IMMUTABLE = {"autograd": "cannot mutate arrays: autograd has no item assignment",
             "jax": "cannot mutate arrays: JAX arrays are immutable",
             "jax.jit": "cannot mutate arrays: JAX arrays are immutable",
             "zygotepy[jax]": "cannot mutate arrays: JAX arrays are immutable",
             "zygotepy[jax.jit]": "cannot mutate arrays: JAX arrays are immutable"}


def _make_workloads():
    rng = np.random.default_rng(3)
    size = 32
    return [
        Workload("sigmoid", "sum(sigmoid(x)), 10^6 float64 elements; d/dx", sigmoid_sum, sigmoid_sum_grad,
                 (rng.standard_normal(1_000_000),), 1, namespaces=("np",), fd_step=1e-3),
        Workload("fill", "out = zeros; out[i] = sin(x[i])*x[i] for n = 10 000; out.sum(); d/dx", fill, fill_grad,
                 (rng.standard_normal(10_000), 10_000), 1, namespaces=("np", "math"), cannot=IMMUTABLE),
        Workload("inplace", "x += dt*(tanh(W@x) - x), 100 steps, 32-element state, loss sum(x**2); d/d(x0, W)",
                 euler_inplace, euler_inplace_grad,
                 (rng.standard_normal(size), rng.standard_normal((size, size)) / math.sqrt(size), 0.1, 100), 2,
                 namespaces=("np",), quick_skip={"jax.jit": "compiling the unrolled loop takes ~25 s",
                                                  "zygotepy[jax.jit]": "compiling the unrolled loop takes ~4-5 s"},
                 cannot={"torch": "cannot update in place a tensor that autograd saved for the backward pass"}),
    ]


ARRAY_WORKLOADS = _make_workloads()

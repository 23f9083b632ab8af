"""The programs tests/gpu/test_gpu.py differentiates on each device backend: one row per rule family of the rule table
(tests/adjoints/rule_table.py, tests/adjoints/numpy/rows_*.py) plus the in-place updates and loops that only whole
programs have, and the cores of two examples (examples/digits_mlp.py's loss, examples/hessian_vector_product.py's
products).

Each row's `build(xp, kw, put)` returns the function to differentiate, written once against an array-API namespace
`xp`; `kw` places an array made from nothing on the backend's device (`xp.zeros(shape, **kw)`), `put` places a NumPy
constant there (an index array). The reference builds the same function with NumPy (`build(np, {}, np.asarray)`), so
finite differences run on the host in float64, independently of the device and of zygotepy.
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

RNG = np.random.default_rng(20)
X = RNG.standard_normal((3, 4))
V = RNG.standard_normal(4)
SQ = RNG.standard_normal((3, 3))
SPD = SQ @ SQ.T + 3 * np.eye(3)
XS = RNG.standard_normal((5, 3))


@dataclass(frozen=True)
class Row:
    name: str
    family: str                       # the rule family (rows_*.py) or program feature the row stands for
    build: Callable                   # build(xp, kw, put) -> f(*args)
    args: tuple                       # the differentiated arguments, NumPy float64 arrays
    mutates: bool = False             # `x[i] = v`: not on JAX's immutable arrays
    float32: bool = False             # also checked in float32 (the dtype the benchmarks run in)
    known: dict = field(default_factory=dict)  # backend name -> reason of a strict xfail (a zygotepy bug)


def _elementwise(xp, kw, put):
    return lambda x: xp.sum(xp.exp(x) * xp.sin(x) / (1.0 + x * x) - xp.sqrt(xp.abs(x) + 1.0)
                            + xp.tanh(x) * xp.log1p(x * x) + xp.maximum(x, 0.1) * 0.5)


def _broadcast(xp, kw, put):
    return lambda x, v: xp.sum((x * v + v) ** 2 / (1.0 + v * v)) + xp.sum(xp.pow(xp.abs(x) + 0.5, v))


def _reductions(xp, kw, put):
    def f(x):
        m = xp.max(x, axis=1, keepdims=True)
        lse = m + xp.log(xp.sum(xp.exp(x - m), axis=1, keepdims=True))
        return (xp.sum(xp.mean(x - lse, axis=0) ** 2) + xp.sum(xp.min(x, axis=0, keepdims=True) * 2.0)
                + xp.prod(x[0, :]) + xp.sum(xp.std(x, axis=0)) + xp.sum(xp.cumulative_sum(x, axis=1) ** 2) * 0.1)
    return f


def _shapes(xp, kw, put):
    def f(x):
        y = xp.reshape(xp.permute_dims(x, (1, 0)), (2, 6))
        z = xp.concat([y, xp.flip(y, axis=1) * 2.0], axis=0)
        w = xp.stack([z[0, :], z[-1, :]], axis=1)
        return (xp.sum(w ** 2) + xp.sum(xp.expand_dims(x, axis=0)[:, 1:, ::2] ** 3)
                + xp.sum(xp.squeeze(x[:1, :]) * w[:4, 0]))
    return f


def _indexing(xp, kw, put):
    idx = put(np.array([2, 0, 2]))
    along = put(np.array([[0], [1], [3]]))

    def f(x):
        return (xp.sum(x[1:, :2] ** 2) + x[1, 2] * x[0, 1] + xp.sum(x[..., None, 1] ** 3)
                + xp.sum(xp.take(x, idx, axis=1) ** 2) + xp.sum(xp.take_along_axis(x, along, axis=1))
                + xp.sum(x[x > 0] ** 2))
    return f


def _matmul(xp, kw, put):
    return lambda x, v: (xp.sum((x.T @ x) ** 2) + xp.sum(xp.matmul(x, v) ** 2) + xp.sum(xp.vecdot(x, x))
                         + xp.sum(xp.linalg.matrix_transpose(x) @ x))


def _solve(xp, kw, put):
    return lambda a, b: xp.sum(xp.linalg.solve(a, b) ** 2) + xp.sum(xp.linalg.inv(a))


def _select(xp, kw, put):
    return lambda x: (xp.sum(xp.where(x > 0, x, x * x)) + xp.sum(xp.where(x > 0.3, x, 0.0) ** 2)
                      + xp.sum(xp.clip(x, -0.5, 0.5) * x) + xp.sum(xp.minimum(x, 0.2)))


def _fills_made_on_device(xp, kw, put):
    """Arrays made from nothing on the device, combined with the input: their cotangents need none."""
    return lambda x: (xp.sum((xp.zeros((3, 4), dtype=x.dtype, **kw) + x) ** 2)
                      + xp.sum(xp.eye(3, 4, dtype=x.dtype, **kw) * x)
                      + xp.sum(xp.ones_like(x) * x * x) + xp.sum(xp.zeros_like(x) - x))


def _fills_of_constants(xp, kw, put):
    """Fills whose arguments are Python numbers (a gradient may flow to them): `xp.full`, `xp.full_like`,
    `xp.linspace`."""
    return lambda x: (xp.sum(xp.full((3, 4), 0.5, dtype=x.dtype, **kw) * x) + xp.sum(xp.full_like(x, -1.5) * x * x)
                      + xp.sum(xp.linspace(0.0, 1.0, 4, dtype=x.dtype, **kw) * x))


def _item_stores(xp, kw, put):
    def f(x):
        y = x * 1.0
        y[0, :] = x[1, :] ** 2
        y[1:, 2] = xp.sin(x[1:, 0])
        y[2, 3] = 0.0
        y[1:, :] += 0.5 * y[0, :]
        return xp.sum(y * y)
    return f


def _stores_into_zeros(xp, kw, put):
    def f(x):
        y = xp.zeros((3, 4), dtype=x.dtype, **kw)
        for i in range(3):
            y[i, :] = x[i, :] * (i + 1.0)
        y *= 0.9
        return xp.sum(y ** 3)
    return f


def _rnn(xp, kw, put):
    def f(xs):
        h = xp.zeros((3,), dtype=xs.dtype, **kw)
        total = 0.0
        for t in range(xs.shape[0]):
            h = xp.tanh(0.5 * h + xs[t, :])
            total = total + xp.sum(h * h)
        return total
    return f


def _while_branch(xp, kw, put):
    """A while loop whose branch depends on the device's values (a host round trip per step)."""
    def f(xs):
        h = xs[0, :] * 0.0
        total, t = 0.0, 0
        while t < xs.shape[0]:
            h = xp.tanh(0.5 * h + xs[t, :])
            if float(xp.sum(h)) > 0.0:
                total = total + xp.sum(h * h)
            else:
                total = total - xp.sum(xp.sin(h))
            t += 1
        return total
    return f


ROWS = [
    Row("elementwise", "numpy/rows_elementwise", _elementwise, (X,), float32=True),
    Row("broadcast", "operators (rule_table)", _broadcast, (X, V)),
    Row("reductions_axis_keepdims", "numpy/rows_reductions", _reductions, (X,), float32=True),
    Row("shapes", "numpy/rows_shapes", _shapes, (X,)),
    Row("indexing", "getitem (rule_table)", _indexing, (X,)),
    Row("matmul", "numpy/rows_linalg", _matmul, (X, V), float32=True),
    Row("solve_inv", "numpy/rows_linalg", _solve, (SPD, SQ)),
    Row("where_clip", "numpy/rows_select", _select, (X,)),
    Row("fills_on_device", "numpy/rows_fills", _fills_made_on_device, (X,)),
    Row("fills_of_constants", "numpy/rows_fills", _fills_of_constants, (X,)),
    Row("item_stores", "in place: x[i] = v", _item_stores, (X,), mutates=True),
    Row("stores_into_zeros", "in place: x[i] = v in a loop", _stores_into_zeros, (X,), mutates=True, float32=True),
    Row("rnn_for_loop", "control flow: for", _rnn, (XS,), float32=True),
    Row("while_data_branch", "control flow: while + if", _while_branch, (XS,)),
]


# --- examples/digits_mlp.py: the two-layer network's softmax cross-entropy -------------------------------------------
def digits_data(n=16, n_in=64, n_hidden=32, n_out=10, seed=3):
    """Random stand-ins for the digits (pixels in [0, 1]) and the example's initialisation (random biases here, so
    that their gradients are not trivially alike)."""
    rng = np.random.default_rng(seed)
    params = {"W1": rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in), "b1": 0.1 * rng.standard_normal(n_hidden),
              "W2": rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden), "b2": 0.1 * rng.standard_normal(n_out)}
    return params, rng.uniform(0.0, 1.0, (n, n_in)), rng.integers(0, n_out, n)


def digits_loss_numpy(params, X, y):
    """The example's `loss` as it is written there (NumPy, integer-array indexing of the labels' logits)."""
    h = np.tanh(X @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    m = np.max(logits, axis=1, keepdims=True)
    logsumexp = m[:, 0] + np.log(np.sum(np.exp(logits - m), axis=1))
    return np.mean(logsumexp - logits[np.arange(len(y)), y])


def digits_loss(xp):
    """The same loss against an array-API namespace: the labels' logits by take_along_axis (zygotepy refuses an index
    array into torch and array-API arrays: repeated indices would need a scatter the standard lacks)."""
    def loss(params, X, y):
        h = xp.tanh(X @ params["W1"] + params["b1"])
        logits = h @ params["W2"] + params["b2"]
        m = xp.max(logits, axis=1, keepdims=True)
        logsumexp = m[:, 0] + xp.log(xp.sum(xp.exp(logits - m), axis=1))
        return xp.mean(logsumexp - xp.take_along_axis(logits, y[:, None], axis=1)[:, 0])
    return loss


# --- examples/hessian_vector_product.py: the two functions and reverse-over-reverse ----------------------------------
def rosenbrock(xp):
    return lambda x: xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def chain_energy(xp):
    def energy_of(x):
        energy = 0.0
        for i in range(x.shape[0] - 1):
            stretch = x[i + 1] - x[i]
            energy = energy + xp.cosh(stretch) + 0.1 * x[i] ** 4
        return energy
    return energy_of


HVP_FUNCTIONS = {"rosenbrock": rosenbrock, "chain_energy": chain_energy}


def hvp_point(n=10, seed=4):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.5, n), rng.standard_normal(n)

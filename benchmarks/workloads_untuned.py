"""Workloads nobody tuned to (issue 20, part 6), and the chain of ~100 small-array operations for the per-op overhead.

Same conventions as workloads.py: the math written once against `np`, differentiated arguments first, a hand-written
NumPy gradient checked against central finite differences before anything is timed. They differ in style from the
older `mlp` and `rnn` on purpose:

- `mlp_xent`: the MLP of `mlp`, but a softmax cross-entropy loss with `max` and sums along `axis=1, keepdims=True`.
- `rnn_vec`: the RNN of `rnn`, unbatched: matrix-vector products `W @ h`, the inputs iterated with `for x in xs`.
- `attention`: layer norm (`mean(axis=-1, keepdims=True)`) and one head of softmax attention on a (16, 8) input with a
  residual connection; every argument differentiated, the input too.
- `soft_kmeans`: soft k-means assignments on 3-d broadcasts, its reductions written as array methods (`d.sum(axis=2)`,
  `d.min(axis=1, keepdims=True)`), not NumPy functions.

The existing `logsumexp` (workloads.py) is the issue's 100-element logsumexp. `OPCHAIN` is not a run.py workload:
benchmarks/targets.py times it for the per-operation overhead on 8-element arrays.
"""
import math

import numpy as np
from workloads import Workload

__all__ = ["OPCHAIN", "OPCHAIN_OPS", "UNTUNED_WORKLOADS"]

# ---------------------------------------------------------------------------------------------------------------
# 11. two-layer MLP, softmax cross-entropy


def mlp_xent(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def mlp_xent_grad(W1, b1, W2, b2, X, Y):
    """Textbook backprop; the rows of Y are one-hot (or sum to 1), so d loss / d logits = (softmax - Y) / batch."""
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    e = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    dlogits = (e / np.sum(e, axis=1, keepdims=True) - Y) / X.shape[0]
    dz = (dlogits @ W2.T) * (1.0 - h * h)
    return X.T @ dz, dz.sum(axis=0), h.T @ dlogits, dlogits.sum(axis=0)


# ---------------------------------------------------------------------------------------------------------------
# 12. tanh RNN, unbatched: matrix-vector products


def rnn_vec(Wx, Wh, b, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(Wx @ x + Wh @ h + b)
    return 0.5 * np.dot(h, h)


def rnn_vec_grad(Wx, Wh, b, xs, h0):
    """Backpropagation through time, step by step with outer products (the algorithm reverse mode runs; the existing
    `rnn`'s hand-written gradient is per step too). Stacking the steps' dz so that each weight gradient is one matrix
    product, and projecting all inputs at once, made it ~3x faster on the 2-core machine (~220 µs against ~650 µs)."""
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(Wx @ x + Wh @ hs[-1] + b))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = hs[-1]
    for t in range(len(xs) - 1, -1, -1):
        dz = dh * (1.0 - hs[t + 1] * hs[t + 1])
        dWx += np.outer(dz, xs[t])
        dWh += np.outer(dz, hs[t])
        db += dz
        dh = dz @ Wh
    return dWx, dWh, db


# ---------------------------------------------------------------------------------------------------------------
# 13. layer norm + single-head softmax attention with a residual, on a (16, 8) input


def attention(X, Wq, Wk, Wv, gamma, beta):
    mu = np.mean(X, axis=-1, keepdims=True)
    var = np.mean((X - mu) ** 2, axis=-1, keepdims=True)
    xn = (X - mu) / np.sqrt(var + 1e-5) * gamma + beta
    q, k, v = xn @ Wq, xn @ Wk, xn @ Wv
    scores = q @ k.T / q.shape[-1] ** 0.5
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    a = np.exp(scores)
    a = a / np.sum(a, axis=-1, keepdims=True)
    out = a @ v + X
    return np.mean(out ** 2)


def attention_grad(X, Wq, Wk, Wv, gamma, beta):
    """Backprop through the residual, the softmax, the three projections and the layer norm, the latter in closed
    form: dx = r (g - mean(g) - x̂ mean(g x̂)) with g = dx̂ and r = 1 / sqrt(var + eps)."""
    xc = X - X.mean(axis=-1, keepdims=True)
    r = 1.0 / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + 1e-5)
    xhat = xc * r
    xn = xhat * gamma + beta
    q, k, v = xn @ Wq, xn @ Wk, xn @ Wv
    c = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ k.T * c
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    a = e / e.sum(axis=-1, keepdims=True)
    out = a @ v + X
    dout = out * (2.0 / out.size)
    da, dv = dout @ v.T, a.T @ dout
    ds = a * (da - (da * a).sum(axis=-1, keepdims=True)) * c
    dq, dk = ds @ k, ds.T @ q
    dxn = dq @ Wq.T + dk @ Wk.T + dv @ Wv.T
    g = dxn * gamma
    dX = dout + r * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
    return dX, xn.T @ dq, xn.T @ dk, xn.T @ dv, (dxn * xhat).sum(axis=0), dxn.sum(axis=0)


# ---------------------------------------------------------------------------------------------------------------
# 14. soft k-means on (64, 2) points and 5 centres, written with array methods (`.sum(axis=2)`, `.min(axis=1, ...)`)


def soft_kmeans(C, X):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    w = np.exp(-(d - d.min(axis=1, keepdims=True)))
    w = w / w.sum(axis=1, keepdims=True)
    return (w * d).sum() / X.shape[0]


def soft_kmeans_grad(C, X):
    """w is a softmax of -d along each row, so d loss / d d_ik = w_ik (1 - d_ik + sum_j w_ij d_ij) / n, and
    d d_ik / d C_k = -2 (X_i - C_k)."""
    diff = X[:, None, :] - C[None, :, :]
    d = (diff * diff).sum(axis=2)
    w = np.exp(d.min(axis=1, keepdims=True) - d)
    w /= w.sum(axis=1, keepdims=True)
    g = w * (1.0 - d + (w * d).sum(axis=1, keepdims=True)) / X.shape[0]
    return (-2.0 * (g[:, :, None] * diff).sum(axis=0),)


# ---------------------------------------------------------------------------------------------------------------
# The per-operation overhead chain: 4 rounds of 27 operations on (2, 4) float64 arrays, written out straight-line,
# plus the 2 of the loss: 110 operations (each NumPy call and each arithmetic operator counts one; unary minus too).


def opchain(x, y):
    a = np.sin(x) * y
    b = np.tanh(a + x)
    c = np.exp(-b * b)
    d = c / np.sum(c, axis=1, keepdims=True)
    e = np.cos(y) + d * x
    f = e - np.max(e, axis=0, keepdims=True)
    g = np.log(1.0 + f * f)
    x = x + 0.1 * (g - np.sum(g * a, axis=0, keepdims=True))
    y = y * 0.9 + np.sqrt(1.0 + d * d)
    a = np.sin(x) * y
    b = np.tanh(a + x)
    c = np.exp(-b * b)
    d = c / np.sum(c, axis=1, keepdims=True)
    e = np.cos(y) + d * x
    f = e - np.max(e, axis=0, keepdims=True)
    g = np.log(1.0 + f * f)
    x = x + 0.1 * (g - np.sum(g * a, axis=0, keepdims=True))
    y = y * 0.9 + np.sqrt(1.0 + d * d)
    a = np.sin(x) * y
    b = np.tanh(a + x)
    c = np.exp(-b * b)
    d = c / np.sum(c, axis=1, keepdims=True)
    e = np.cos(y) + d * x
    f = e - np.max(e, axis=0, keepdims=True)
    g = np.log(1.0 + f * f)
    x = x + 0.1 * (g - np.sum(g * a, axis=0, keepdims=True))
    y = y * 0.9 + np.sqrt(1.0 + d * d)
    a = np.sin(x) * y
    b = np.tanh(a + x)
    c = np.exp(-b * b)
    d = c / np.sum(c, axis=1, keepdims=True)
    e = np.cos(y) + d * x
    f = e - np.max(e, axis=0, keepdims=True)
    g = np.log(1.0 + f * f)
    x = x + 0.1 * (g - np.sum(g * a, axis=0, keepdims=True))
    y = y * 0.9 + np.sqrt(1.0 + d * d)
    return np.sum(x * y)


OPCHAIN_OPS = 4 * 27 + 2


def _round(x, y):
    """One round of `opchain`, keeping what its backward needs."""
    sx = np.sin(x)
    a = sx * y
    b = np.tanh(a + x)
    c = np.exp(-b * b)
    s = np.sum(c, axis=1, keepdims=True)
    d = c / s
    e = np.cos(y) + d * x
    m = np.max(e, axis=0, keepdims=True)
    f = e - m
    g = np.log(1.0 + f * f)
    r = np.sqrt(1.0 + d * d)
    saved = (x, y, sx, a, b, c, s, d, e == m, f, g, r)
    return x + 0.1 * (g - np.sum(g * a, axis=0, keepdims=True)), y * 0.9 + r, saved


def _round_back(saved, dx_out, dy_out):
    x, y, sx, a, b, c, s, d, argmax, f, g, r = saved
    dg = 0.1 * dx_out
    dt = -np.sum(dg, axis=0, keepdims=True)   # t = sum(g * a, axis=0) broadcast over axis 0
    dy = 0.9 * dy_out
    dd = dy_out * d / r
    da = dt * g
    df = (dg + dt * a) * 2.0 * f / (1.0 + f * f)
    de = df - argmax * np.sum(df, axis=0, keepdims=True)
    dy -= np.sin(y) * de
    dd += de * x
    dx = dx_out + de * d
    dc = (dd - np.sum(dd * d, axis=1, keepdims=True)) / s
    dz = -2.0 * b * c * dc * (1.0 - b * b)
    da += dz
    return dx + dz + da * np.cos(x) * y, dy + da * sx


def opchain_grad(x, y):
    saved = []
    for _ in range(4):
        x, y, keep = _round(x, y)
        saved.append(keep)
    dx, dy = y, x
    for keep in reversed(saved):
        dx, dy = _round_back(keep, dx, dy)
    return dx, dy


# ---------------------------------------------------------------------------------------------------------------


def _make_workloads():
    rng = np.random.default_rng(20)
    batch, inputs, hidden, classes = 32, 64, 128, 10
    X = rng.standard_normal((batch, inputs))
    Y = np.eye(classes)[rng.integers(0, classes, batch)]  # one-hot labels
    mlp_args = (rng.standard_normal((inputs, hidden)) * 0.1, rng.standard_normal(hidden) * 0.1,
                rng.standard_normal((hidden, classes)) * 0.1, rng.standard_normal(classes) * 0.1, X, Y)
    hidden, inputs, steps = 32, 16, 50
    rnn_args = (rng.standard_normal((hidden, inputs)) / math.sqrt(inputs),
                rng.standard_normal((hidden, hidden)) / math.sqrt(hidden), rng.standard_normal(hidden) * 0.1,
                rng.standard_normal((steps, inputs)), np.zeros(hidden))
    seq, dim = 16, 8
    attn_args = (rng.standard_normal((seq, dim)), *(rng.standard_normal((dim, dim)) / math.sqrt(dim) for _ in range(3)),
                 1.0 + 0.1 * rng.standard_normal(dim), 0.1 * rng.standard_normal(dim))
    kmeans_args = (rng.standard_normal((5, 2)), rng.standard_normal((64, 2)) * 2.0)
    torch_max = {"torch": "torch.max(t, axis=..., keepdims=True) returns (values, indices), not an array"}
    return [
        Workload("mlp_xent", "MLP, batch 32, 64 -> tanh 128 -> 10, softmax cross-entropy (max, sums with axis=1, "
                 "keepdims=True); d/d(W1, b1, W2, b2)", mlp_xent, mlp_xent_grad, mlp_args, 4, namespaces=("np",),
                 cannot=torch_max),
        Workload("rnn_vec", "tanh RNN, unbatched (W @ h), 50 steps, hidden 32, input 16, loss 0.5*dot(h_T, h_T); "
                 "d/d(Wx, Wh, b)", rnn_vec, rnn_vec_grad, rnn_args, 3, namespaces=("np",),
                 quick_skip={"jax.jit": "compiling the unrolled 50 steps takes seconds",
                             "zygotepy[jax.jit]": "compiling the unrolled 50 steps takes seconds"}),
        Workload("attention", "layer norm + one softmax attention head + residual on (16, 8), loss mean(out**2); "
                 "d/d(X, Wq, Wk, Wv, gamma, beta)", attention, attention_grad, attn_args, 6, namespaces=("np",),
                 cannot=torch_max),
        Workload("soft_kmeans", "soft k-means, 64 points in 2-d, 5 centres, written with array methods (.sum(axis=2), "
                 ".min(axis=1, keepdims=True)); d/dC", soft_kmeans, soft_kmeans_grad, kmeans_args, 1,
                 namespaces=("np",), cannot=torch_max),
    ]


UNTUNED_WORKLOADS = _make_workloads()

OPCHAIN = Workload("opchain", f"{OPCHAIN_OPS} elementwise and reduction operations on (2, 4) float64 arrays; d/d(x, y)",
                   opchain, opchain_grad, tuple(np.random.default_rng(21).standard_normal((2, 2, 4))), 2,
                   namespaces=("np",))

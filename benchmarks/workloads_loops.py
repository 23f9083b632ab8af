"""Loop workloads: a user helper called in a loop, a tanh RNN, and an RK4 ODE integration.

Same conventions as workloads.py: the math written once against `np`/`math`, differentiated arguments first, a
hand-written gradient checked against finite differences. The scalar loops get forward-mode hand-written gradients
(fused, no tape); the RNN and the ODE get backpropagation through the steps (the ODE's is the discrete adjoint).
"""
import math

import numpy as np
from workloads import Workload

__all__ = ["LOOP_WORKLOADS"]

# ---------------------------------------------------------------------------------------------------------------
# 5. a loop calling a small user helper


def cell(a, b):
    return a * math.sin(b) + b


def helper_loop(a, b, y, n):
    for i in range(n):
        y = 0.5 * cell(a, y) + b
    return y


def helper_loop_grad(a, b, y, n):
    """Forward mode: y' = 0.5 (sin y da + (a cos y + 1) dy) + db, for the tangents of a and b."""
    da, db = 0.0, 0.0
    for i in range(n):
        s = math.sin(y)
        d = 0.5 * (a * math.cos(y) + 1.0)
        da, db = d * da + 0.5 * s, d * db + 1.0
        y = 0.5 * (a * s + y) + b
    return da, db


# ---------------------------------------------------------------------------------------------------------------
# 6. tanh RNN: h = tanh(x_t Wx + h Wh + b) over the steps, loss sum(h_T ** 2)


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def rnn_grad(Wx, Wh, b, xs, h0):
    """Backpropagation through time: keep every h, walk the steps backwards."""
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(x @ Wx + hs[-1] @ Wh + b))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = 2.0 * hs[-1]
    for t in range(len(xs) - 1, -1, -1):
        dz = dh * (1.0 - hs[t + 1] * hs[t + 1])
        dWx += xs[t].T @ dz
        dWh += hs[t].T @ dz
        db += dz.sum(axis=0)
        dh = dz @ Wh.T
    return dWx, dWh, db


# ---------------------------------------------------------------------------------------------------------------
# 7. RK4 integration of Lotka-Volterra, parameters and initial state differentiated


def lotka_volterra(u, v, alpha, beta, gamma, delta):
    return alpha * u - beta * u * v, delta * u * v - gamma * v


def rk4(alpha, beta, gamma, delta, u, v, dt, n):
    for i in range(n):
        k1u, k1v = lotka_volterra(u, v, alpha, beta, gamma, delta)
        k2u, k2v = lotka_volterra(u + 0.5 * dt * k1u, v + 0.5 * dt * k1v, alpha, beta, gamma, delta)
        k3u, k3v = lotka_volterra(u + 0.5 * dt * k2u, v + 0.5 * dt * k2v, alpha, beta, gamma, delta)
        k4u, k4v = lotka_volterra(u + dt * k3u, v + dt * k3v, alpha, beta, gamma, delta)
        u = u + dt / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u)
        v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    return u * v


def _lv_vjp(u, v, ru, rv, alpha, beta, gamma, delta):
    """(ru, rv) times the Jacobian of the vector field: cotangents of (u, v, alpha, beta, gamma, delta)."""
    return (ru * (alpha - beta * v) + rv * delta * v, rv * (delta * u - gamma) - ru * beta * u,
            ru * u, -ru * u * v, -rv * v, rv * u * v)


def rk4_grad(alpha, beta, gamma, delta, u, v, dt, n):
    """Discrete adjoint: run forward keeping each step's state, then walk the steps back through the four stages."""
    p = (alpha, beta, gamma, delta)
    states = []
    for i in range(n):
        states.append((u, v))
        k1u, k1v = lotka_volterra(u, v, *p)
        k2u, k2v = lotka_volterra(u + 0.5 * dt * k1u, v + 0.5 * dt * k1v, *p)
        k3u, k3v = lotka_volterra(u + 0.5 * dt * k2u, v + 0.5 * dt * k2v, *p)
        k4u, k4v = lotka_volterra(u + dt * k3u, v + dt * k3v, *p)
        u = u + dt / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u)
        v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    bu, bv = v, u  # d(u * v)
    bp = [0.0, 0.0, 0.0, 0.0]
    for u, v in reversed(states):
        k1u, k1v = lotka_volterra(u, v, *p)
        s2u, s2v = u + 0.5 * dt * k1u, v + 0.5 * dt * k1v
        k2u, k2v = lotka_volterra(s2u, s2v, *p)
        s3u, s3v = u + 0.5 * dt * k2u, v + 0.5 * dt * k2v
        k3u, k3v = lotka_volterra(s3u, s3v, *p)
        s4u, s4v = u + dt * k3u, v + dt * k3v
        # stage k4 (weight dt/6), then k3 and k2 (dt/3, plus what the next stage's input sends back), then k1
        g4u, g4v, *g4p = _lv_vjp(s4u, s4v, dt / 6.0 * bu, dt / 6.0 * bv, *p)
        g3u, g3v, *g3p = _lv_vjp(s3u, s3v, dt / 3.0 * bu + dt * g4u, dt / 3.0 * bv + dt * g4v, *p)
        g2u, g2v, *g2p = _lv_vjp(s2u, s2v, dt / 3.0 * bu + 0.5 * dt * g3u, dt / 3.0 * bv + 0.5 * dt * g3v, *p)
        g1u, g1v, *g1p = _lv_vjp(u, v, dt / 6.0 * bu + 0.5 * dt * g2u, dt / 6.0 * bv + 0.5 * dt * g2v, *p)
        bp = [b + a1 + a2 + a3 + a4 for b, a1, a2, a3, a4 in zip(bp, g1p, g2p, g3p, g4p)]
        bu, bv = bu + g1u + g2u + g3u + g4u, bv + g1v + g2v + g3v + g4v
    return (*bp, bu, bv)


# ---------------------------------------------------------------------------------------------------------------


def _make_workloads():
    rng = np.random.default_rng(2)
    hidden, inputs, batch, steps = 32, 16, 8, 50
    Wx = rng.standard_normal((inputs, hidden)) / math.sqrt(inputs)
    Wh = rng.standard_normal((hidden, hidden)) / math.sqrt(hidden)
    b = rng.standard_normal(hidden) * 0.1
    xs = rng.standard_normal((steps, batch, inputs))
    h0 = np.zeros((batch, hidden))
    return [
        Workload("helper", "y = 0.5*cell(a, y) + b with a 1-line user helper cell, 1 000 calls; d/da, d/db",
                 helper_loop, helper_loop_grad, (0.9, 0.5, 0.1, 1000), 2, namespaces=("math",), helpers=("cell",),
                 quick_skip={"jax": "one call takes ~5 s", "jax.jit": "compiling the unrolled loop takes ~25 s",
                             "zygotepy[jax]": "one call takes ~0.3-0.5 s",
                             "zygotepy[jax.jit]": "compiling the unrolled loop takes ~30 s"}),
        Workload("rnn", "tanh RNN, 50 steps, hidden 32, input 16, batch 8, loss sum(h_T**2); d/d(Wx, Wh, b)",
                 rnn, rnn_grad, (Wx, Wh, b, xs, h0), 3, namespaces=("np",),
                 quick_skip={"zygotepy[jax.jit]": "compiling the unrolled 50 steps takes ~3-4 s"}),
        Workload("rk4", "RK4 Lotka-Volterra, 200 steps of 0.01 on scalars, loss u*v; d/d(4 parameters, u0, v0)",
                 rk4, rk4_grad, (1.1, 0.4, 0.4, 0.1, 10.0, 5.0, 0.01, 200), 6,
                 quick_skip={"jax": "one call takes ~7 s", "jax.jit": "compiling the unrolled loop takes ~3 min",
                             "zygotepy[jax]": "one call takes ~0.7 s"},
                 skip={"zygotepy[jax.jit]": "compiling the unrolled 200 steps did not finish in 6 min"}),
    ]


LOOP_WORKLOADS = _make_workloads()

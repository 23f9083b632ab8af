"""zygotepy in one minute: gradients of ordinary Python, and the code that computes them."""
import math

import numpy as np

from zygotepy import gradient, pullback, show_adjoint, value_and_gradient


def pow(x, n):
    """The seed example: a while loop."""
    r = 1
    while n > 0:
        n -= 1
        r *= x
    return r


print("gradient(pow, 5, 3) =", gradient(pow, 5, 3))  # (75, None): n is a loop count, so it gets None
print()
print("The generated forward and pullback of pow:")
print(show_adjoint(pow))


def wave(t, k):
    """Branches, a for loop and math functions."""
    total = 0.0
    for i in range(k):
        if i % 2 == 0:
            total += math.sin(i * t)
        else:
            total += math.cos(t) / (i + 1)
    return total


print("gradient(wave, 0.3, 5) =", gradient(wave, 0.3, 5))


def mlp_loss(W1, b1, W2, x, y):
    """A two-layer network on NumPy arrays."""
    h = np.tanh(x @ W1 + b1)
    out = h @ W2
    return np.mean((out - y) ** 2)


rng = np.random.default_rng(0)
W1, b1, W2 = rng.standard_normal((4, 8)), np.zeros(8), rng.standard_normal((8, 1))
x, y = rng.standard_normal((16, 4)), rng.standard_normal((16, 1))
loss, (dW1, db1, dW2, dx, dy) = value_and_gradient(mlp_loss, W1, b1, W2, x, y)
print(f"mlp loss {loss:.4f}; |dW1| = {np.linalg.norm(dW1):.4f}, |dW2| = {np.linalg.norm(dW2):.4f}")

z, back = pullback(lambda a, b: (a * b, a + b), 2.0, 3.0)
print("pullback of (a*b, a+b) at (2, 3) with cotangent (1, 0):", back((1.0, 0.0)))

"""Helpers for tests/test_features.py that live in a second module: calls across modules must differentiate too."""
import math

import numpy as np

OFFSET = 0.5  # a module global read by helpers (a constant)


def cube(x):
    return x * x * x


def affine(x, a=2.0, b=1.0):
    return a * x + b


def poly(x, coeffs):
    """Horner evaluation of coeffs[0] + coeffs[1] x + ... (coeffs is a tuple that may carry gradients)."""
    acc = 0.0
    for c in reversed(coeffs):
        acc = acc * x + c
    return acc


def shifted_sin(x):
    return math.sin(x + OFFSET)


def split(x):
    """Returns a tuple: callers unpack it."""
    return x * x, math.exp(x)


def rpow(x, n):
    """Recursive power, in the other module."""
    if n == 0:
        return 1.0
    return x * rpow(x, n - 1)


def softplus(v):
    return np.log1p(np.exp(v))


class Accumulator:
    """A class defined in the helper module; instances are created by the test module."""

    def __init__(self, weight):
        self.weight = weight

    def apply(self, x):
        return self.weight * x * x

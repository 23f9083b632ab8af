"""Differentiation à la carte: nested reverse mode, as on the seed's slide, and derivatives to any depth."""
import math
import sys
import time

from zygotepy import adjoint, gradient

sys.setrecursionlimit(20000)  # five levels of generated code nest Python frames past the default limit


def nestlevel():
    return 0


@adjoint(nestlevel)
def _():
    return nestlevel() + 1, lambda _: ()


def f(x):
    print(nestlevel(), "levels of nesting")
    return x


f(1.0)                                          # 0 levels of nesting
gradient(f, 1.0)                                # 1 levels of nesting
gradient(lambda x: x * gradient(f, x)[0], 1.0)  # 2 levels of nesting
print()


def power(x):
    """x^8 by a loop."""
    r = 1.0
    for _ in range(8):
        r = r * x
    return r


def d(g):
    return lambda x: gradient(g, x)[0]


# up to MAX_LEVELS (5) each level transforms the generated code of the level below (a fifth derivative's first call
# takes ~40 s, so it is skipped here); beyond, the outer levels are taken by forward-over-reverse
# (adjoints/nesting/deep.py), after the transform route is tried once and refused at the sixth level
for k in (1, 2, 3, 4, 6, 8):
    g = power
    for _ in range(k):
        g = d(g)
    start = time.perf_counter()
    value = g(0.7)
    cold = time.perf_counter() - start
    expected = math.factorial(8) / math.factorial(8 - k) * 0.7 ** (8 - k)
    print(f"d^{k}/dx^{k} x^8 at 0.7 = {value:.10g}  (closed form {expected:.10g}; first call {cold:.2f} s)")
    assert abs(value - expected) <= 1e-9 * abs(expected)

"""One array given twice to a call that may update its arguments (`k(X, X)` of a kernel object): the cotangents of
the array after the call, one per argument, go to the callee once, summed (adjoints/mutation/calls.py
`_derived_call`, ast_adjoint/pullbacks.py `FinalsPullback`). Each was handed to both of the callee's parameters, so a
composite kernel's gradient in X counted a leaf twice ([5, -10] for [4, -8]), silently, in both settings."""
import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.testing import check_grads


class Leaf:
    def __call__(self, A, B):
        return A * B


class Scale:
    def __init__(self, a):
        self.a = a

    def __call__(self, A, B):
        return self.a * A * B


class Sum:
    def __init__(self, k1, k2):
        self.k1, self.k2 = k1, k2

    def __call__(self, A, B):
        return self.k1(A, B) + self.k2(A, B)


class Prod:
    def __init__(self, k1, k2):
        self.k1, self.k2 = k1, k2

    def __call__(self, A, B):
        return self.k1(A, B) * self.k2(A, B)


def _trees(n):
    """Every binary tree of Sums over `n` Leaf objects."""
    if n == 1:
        yield Leaf()
        return
    for i in range(1, n):
        for a in _trees(i):
            for b in _trees(n - i):
                yield Sum(a, b)


X = np.array([0.5, -1.0])


@pytest.mark.parametrize("n", [3, 4, 5])
def test_every_tree_of_sums_given_one_array_twice(mode, n):
    for k in _trees(n):
        got = gradient(lambda x, k=k: np.sum(k(x, x)), X)[0]
        assert np.allclose(got, 2 * n * X), (n, got)


def test_kernel_algebra_given_one_array_twice(mode):
    def f(k1, k2, x):
        k = Sum(Sum(k1, Prod(k1, k2)), k2)  # k1 + k1 k2 + k2
        return np.sum(k(x, x))
    a, b = 2.0, 3.0
    got = gradient(f, Scale(a), Scale(b), X)
    assert np.allclose(got[2], 2 * a * X + 4 * a * b * X ** 3 + 2 * b * X)
    assert np.isclose(got[0]["a"], np.sum(X ** 2 + b * X ** 4)) and np.isclose(got[1]["a"], np.sum(a * X ** 4 + X ** 2))


def test_one_array_twice_and_a_copy_agree_with_finite_differences(mode):
    k = Sum(Sum(Leaf(), Sum(Leaf(), Scale(0.5))), Prod(Leaf(), Scale(2.0)))
    check_grads(lambda x: np.sum(k(x, x)) + np.sum(k(x, x * 1.0)), X)

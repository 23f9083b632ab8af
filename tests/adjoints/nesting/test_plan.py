"""The plan of a nested level's call (adjoints/nesting/plan.py): an unhashable callable object (a dataclass with
`__call__`, whose `eq=True` drops `__hash__`) inside an inner gradient crashed the plan (`fn in _IN_PLACE`:
TypeError), which MAML-style code with dataclass modules hits."""
from dataclasses import dataclass

import numpy as np
import pytest

from zygotepy import gradient

_X = np.array([[1.0, 2.0], [0.5, -1.0]])


@dataclass
class _Lin:
    W: np.ndarray

    def __call__(self, x):
        return x @ self.W


def _sum_of_inner_gradient(m):
    g = gradient(lambda q: np.sum(q(_X) ** 2), m)[0]
    return np.sum(g.W)


@pytest.mark.dual_route
def test_an_unhashable_callable_object_inside_a_nested_gradient(mode):
    (g,) = gradient(_sum_of_inner_gradient, _Lin(np.array([0.3, -0.2])))
    np.testing.assert_allclose(g.W, 2 * _X.T @ _X @ np.ones(2))  # d/dW of sum(2 X^T X W)

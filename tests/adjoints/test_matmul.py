"""The `@` operator's rule (adjoints/matmul.py) against central finite differences in float64: every pairing of
ranks the rule has a case for, complex operands (the conjugate convention), and the `need` mask it declares."""
import operator

import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.adjoints import registry
from zygotepy.adjoints.matmul import matmul, vector_product_cotangent
from zygotepy.testing import check_grads

RNG = np.random.default_rng(7)


def _real(*shape):
    return RNG.standard_normal(shape)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def product_loss(a, b):
    y = a @ b
    return np.sum(np.real(y * np.conj(y))) * 0.5 + np.sum(np.real(y))


CASES = [
    ("matrix_matrix", _real(3, 4), _real(4, 2)),
    ("matrix_vector", _real(3, 4), _real(4)),
    ("vector_matrix", _real(4), _real(4, 2)),
    ("vector_vector", _real(4), _real(4)),
    ("batched", _real(2, 3, 4), _real(4, 2)),
    ("batched_both", _real(2, 3, 4), _real(2, 4, 5)),
    ("vector_batched", _real(4), _real(2, 4, 3)),
    ("complex_matrix_vector", _complex(3, 4), _complex(4)),
    ("complex_and_real", _complex(2, 3), _real(3, 2)),
]


@pytest.mark.parametrize("a, b", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matmul_matches_finite_differences(a, b):
    check_grads(product_loss, a, b)


def test_the_rule_is_the_registered_one_and_declares_need():
    assert registry.find_rule(operator.matmul) is matmul and registry.takes_need(matmul)


@pytest.mark.parametrize("a, b", [(_real(3, 4), _real(4, 2)), (_real(3, 4), _real(4)), (_real(4), _real(4, 2))])
def test_need_skips_the_cotangent_nobody_reads(a, b):
    y, back = matmul(a, b)
    dy = np.ones_like(y)
    full = back(dy)
    only_a = back(dy, (True, False))
    assert only_a[1] is None and np.allclose(only_a[0], full[0])
    only_b = back(dy, (False, True))
    assert only_b[0] is None and np.allclose(only_b[1], full[1])


def test_vector_products_agree_with_the_general_case():
    a, b, v = _real(3, 4), _real(4, 2), _real(4)
    for x, y in ((a, v), (v, b)):
        dy = np.ones(np.shape(x @ y))
        for k in (0, 1):
            general = np.asarray(matmul(x.astype(np.complex128), y)[1](dy.astype(np.complex128))[k]).real
            assert np.allclose(vector_product_cotangent(dy, x, y, k), general)
    assert vector_product_cotangent(np.ones((3, 2)), a, b, 0) is None  # (two matrices: not its case)


def test_gradient_through_a_product_in_a_function():
    def layer(W, x):
        return np.sum(np.tanh(W @ x))
    W, x = _real(3, 4), _real(4)
    gW, gx = gradient(layer, W, x)
    d = 1 - np.tanh(W @ x) ** 2
    assert np.allclose(gW, np.outer(d, x)) and np.allclose(gx, W.T @ d)

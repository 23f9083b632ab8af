"""`np.r_[...]` and `np.c_[...]` are differentiated (issue case 6, part 5: they ran as constants, and
`gradient(lambda x: np.sum(np.r_[x, 1.0, x] * np.arange(5.0)), x)` was `(None,)`), against central finite differences
in float64 (zygotepy.testing.check_grads), over the forms NumPy accepts: arrays, scalars, lists, slices, directives."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient
from zygotepy.testing import check_grads

RNG = np.random.default_rng(6)
V = RNG.standard_normal(3)
W = RNG.standard_normal(2)
A = RNG.standard_normal((2, 3))
B = RNG.standard_normal((1, 3))


def weights(y):
    """Fixed, distinct weights for every entry of y: a sum of y * weights sees each entry's cotangent."""
    return np.arange(1.0, y.size + 1.0).reshape(y.shape) / 7.0


def total(y):
    return np.sum(np.sin(y) * weights(y))


# (name, f, arguments)
ROWS = [
    ("issue_example", lambda x: np.sum(np.r_[x, 1.0, x] * np.arange(5.0)), (np.array([0.5, -0.1]),)),
    ("arrays", lambda v, w: total(np.r_[v, w, v * w[0]]), (V, W)),
    ("scalars", lambda a, b: total(np.r_[a, b, 2.0, a * b]), (0.3, -1.2)),
    ("scalar_and_array", lambda a, v: total(np.r_[a, v, 3.0]), (0.7, V)),
    ("list_piece", lambda a, v: total(np.r_[[a, 1.0, a * a], v]), (0.4, V)),
    ("list_of_arrays", lambda v: total(np.r_[[v, 2.0 * v]]), (V,)),
    ("slice_constant", lambda v: total(np.r_[0:3, v, -1:1:0.5]), (V,)),
    ("single_piece", lambda v: total(np.r_[v]), (V,)),
    ("two_d_rows", lambda a, b: total(np.r_[a, b, a * 2.0]), (A, B)),
    ("directive_axis_minus1", lambda a: total(np.r_['-1', a, a ** 2]), (A,)),
    ("directive_ndmin", lambda v, w: total(np.r_['0,2', v, v * w[1]]), (V, W)),
    ("directive_ndmin_trans", lambda v: total(np.r_['0,2,0', v, np.cos(v)]), (V,)),
    ("directive_axis1", lambda a: total(np.r_['1', a, a[:, :1]]), (A,)),
    ("c_columns", lambda v, w: total(np.c_[v, v * w[0], np.exp(v)]), (V, W)),
    ("c_matrix_and_column", lambda a, v: total(np.c_[a.T, v]), (A, V)),
    ("c_2d", lambda a: total(np.c_[a, a * a]), (A,)),
    ("c_scalar_pieces", lambda a, b: total(np.c_[a, b, 1.0]), (0.3, -0.8)),
    ("loop", lambda v: sum(total(np.r_[v[:k], v[k] ** 2]) for k in range(3)), (V,)),
]


@pytest.mark.parametrize("name, f, args", ROWS, ids=[r[0] for r in ROWS])
def test_concatenators_against_finite_differences(name, f, args):
    grads = check_grads(f, *args)
    assert all(g is not None for g in grads), f"{name}: a piece got no gradient"
    for g, a in zip(grads, args, strict=True):
        assert type(g) is type(a) or isinstance(a, np.ndarray) and g.shape == a.shape and g.dtype == a.dtype


def test_issue_example_exactly():
    g, = gradient(lambda x: np.sum(np.r_[x, 1.0, x] * np.arange(5.0)), np.array([0.5, -0.1]))
    np.testing.assert_allclose(g, [3.0, 5.0])


def test_float32_piece_keeps_its_dtype():
    x = np.array([0.5, -0.1], dtype=np.float32)
    g, = gradient(lambda x: np.sum(np.r_[x, x] * np.arange(4.0)), x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [2.0, 4.0])


def test_constants_only_carry_nothing():
    g, = gradient(lambda a: a * np.sum(np.r_[0:3, 1.0]), 2.0)
    assert g == pytest.approx(4.0)


def test_foreign_piece_is_refused():
    torch = pytest.importorskip("torch")
    with pytest.raises(ZygoteError, match="concat"):
        gradient(lambda x: np.sum(np.r_[x, x]), torch.tensor([1.0, 2.0], dtype=torch.float64))


@pytest.mark.parametrize("inner, x, want", [
    (lambda y: np.sum(np.r_[y, 2.0 * y] ** 3), np.array([0.5, -0.1]), lambda x: 54.0 * x),
    (lambda b: np.sum(np.c_[b, b * b] ** 2), np.array([0.7, -0.3]), lambda x: 2.0 + 12.0 * x * x),
])
def test_second_order(inner, x, want):
    """The rule's back is differentiated at an outer level (the sum of a gradient: here the diagonal Hessian)."""
    g, = gradient(lambda x: np.sum(gradient(inner, x)[0]), x)
    np.testing.assert_allclose(g, want(x), rtol=1e-10)

"""NumPy rule conventions the random rows of the table cannot reach: zeros in products, ties, errors where a
gradient is undefined, dtypes, and end-to-end calls through `gradient` (methods, constants)."""
import numpy as np
import pytest
from test_rules import check_against_finite_differences

import zygotepy
from zygotepy import gradient
from zygotepy.testing import check_grads
from zygotepy.adjoints import registry


# --- products with zeros: the product of the others, no division -------------------------------------------------------
@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, -1.5], [0.0, 0.0, 3.0, 2.0], [[0.0, 2.0], [3.0, 0.5]]])
@pytest.mark.parametrize("op", [np.prod, np.cumprod, np.ndarray.prod, np.ndarray.cumprod])
def test_products_with_zeros_match_finite_differences(op, x):
    x = np.array(x)
    check_against_finite_differences(op, [x], [True])
    if x.ndim == 2:
        check_against_finite_differences(op, [x], [True], kwargs={"axis": 0})


def test_prod_with_one_zero_is_the_product_of_the_others():
    _, back = registry.find_rule(np.prod)(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(back(1.0)[0], [0.0, 6.0, 0.0])


# --- order statistics ---------------------------------------------------------------------------------------------------
def test_ptp_and_median_ties_and_even_counts():
    _, back = registry.find_rule(np.ptp)(np.array([1.0, 3.0, 3.0, 0.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.5, 0.5, -1.0])
    _, back = registry.find_rule(np.median)(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.0, 0.5, 0.5])
    _, back = registry.find_rule(np.median)(np.array([[4.0, 1.0, 3.0], [0.0, 5.0, 6.0]]), axis=1)
    np.testing.assert_allclose(back(np.array([1.0, 2.0]))[0], [[0, 0, 1], [0, 2, 0]])


def test_nan_reductions_skip_nans():
    x = np.array([1.0, np.nan, 3.0])
    _, back = registry.find_rule(np.nanmean)(x)
    np.testing.assert_allclose(back(1.0)[0], [0.5, 0.0, 0.5])
    _, back = registry.find_rule(np.nansum)(x)
    np.testing.assert_allclose(back(2.0)[0], [2.0, 0.0, 2.0])
    _, back = registry.find_rule(np.nanmax)(x)
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.0, 1.0])


# --- shapes and conversions ---------------------------------------------------------------------------------------------
def test_float_casts_return_the_argument_dtype():
    x = np.array([1.0, 2.0, 3.0])
    y, back = registry.find_rule(np.float32)(x)
    assert y.dtype == np.float32
    (g,) = back(np.ones(3, np.float32))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, np.ones(3))
    _, back = registry.find_rule(np.float64)(np.float32(2.0))
    assert back(np.float64(3.0))[0].dtype == np.float32
    _, back = registry.find_rule(np.float64)(2.0)
    assert type(back(np.float64(3.0))[0]) is float


def test_pad_with_a_computed_mode_raises():
    _, back = registry.find_rule(np.pad)(np.ones(3), 1, "mean")
    with pytest.raises(zygotepy.ZygoteError, match="mode='mean'"):
        back(np.ones(5))


def test_repeated_indices_accumulate():
    x = np.arange(4.0)
    _, back = registry.find_rule(np.take)(x, [1, 1, 3, 1])
    np.testing.assert_array_equal(back(np.ones(4))[0], [0, 3, 0, 1])
    import operator
    _, back = registry.find_rule(operator.getitem)(x, np.array([2, 2]))
    np.testing.assert_array_equal(back(np.array([1.0, 5.0]))[0], [0, 0, 6, 0])


def test_end_to_end_methods_and_conversions():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert gradient(lambda x: x.flatten()[3] * 2, x)[0].tolist() == [[0, 0], [0, 2]]
    assert gradient(lambda x: x.item(1) * 3 + np.float64(x[1, 1]), x)[0].tolist() == [[0, 3], [0, 1]]
    assert gradient(lambda x: x.tolist()[1][0] ** 2, x)[0].tolist() == [[0, 0], [6, 0]]
    assert gradient(lambda x: np.sort(x, axis=None)[-1] + x.cumsum().sum(), x)[0].tolist() == [[4, 3], [2, 2]]


# --- linear algebra: undefined gradients raise, defined ones keep working ------------------------------------------------
la = np.linalg


def test_repeated_singular_values_and_eigenvalues_raise():
    _, back = registry.find_rule(la.svd)(np.eye(3))
    with pytest.raises(zygotepy.ZygoteError, match="singular vectors"):
        back((np.ones((3, 3)), None, None))
    np.testing.assert_allclose(back((None, np.ones(3), None))[0], np.eye(3))  # the values alone are fine
    _, back = registry.find_rule(la.eigh)(np.diag([1.0, 1.0, 2.0]))
    with pytest.raises(zygotepy.ZygoteError, match="eigenvectors"):
        back((None, np.ones((3, 3))))
    np.testing.assert_allclose(back((np.array([1.0, 0.0, 0.0]), None))[0], np.diag([1.0, 0.0, 0.0]))
    _, back = registry.find_rule(la.norm)(np.eye(2), 2)
    with pytest.raises(zygotepy.ZygoteError, match="repeated singular values"):
        back(1.0)


def test_undefined_decomposition_gradients_raise():
    rng = np.random.default_rng(0)
    _, back = registry.find_rule(la.qr)(rng.normal(size=(2, 4)))
    with pytest.raises(zygotepy.ZygoteError, match="tall or square"):
        back((np.ones((2, 2)), None))
    with pytest.raises(zygotepy.ZygoteError, match="mode='reduced'"):
        registry.find_rule(la.qr)(rng.normal(size=(3, 2)), "complete")
    _, back = registry.find_rule(la.svd)(rng.normal(size=(4, 2)))  # full_matrices=True: U is 4x4
    with pytest.raises(zygotepy.ZygoteError, match="full_matrices=False"):
        back((np.ones((4, 4)), None, None))
    dU = np.zeros((4, 4))
    dU[:, :2] = 1.0
    assert back((dU, None, None))[0].shape == (4, 2)  # no cotangent on the completing columns: defined


def test_einsum_operand_list_form_is_refused():
    with pytest.raises(zygotepy.ZygoteError, match="subscripts"):
        registry.find_rule(np.einsum)(np.ones(3), [0], [0])


@pytest.mark.parametrize("op, shapes", [(la.inv, [(3, 3)]), (la.det, [(3, 3)]), (la.solve, [(3, 3), (3,)]),
                                        (np.einsum, None), (la.norm, [(4,)]), (np.vdot, [(3,), (3,)]),
                                        (np.kron, [(2,), (3,)]), (la.svdvals, [(3, 2)]),
                                        (la.eigvalsh, [(3, 3)]), (la.cholesky, [(3, 3)]), (la.pinv, [(3, 2)]),
                                        (la.matrix_power, None)])
def test_float32_linear_algebra(op, shapes):
    rng = np.random.default_rng(1)
    if op is np.einsum:
        args = ["ij,jk", rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(3, 2)).astype(np.float32)]
    elif op is la.matrix_power:
        args = [(rng.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32), 3]
    elif op is la.cholesky or op is la.eigvalsh:
        b = rng.normal(size=(3, 3))
        args = [(b @ b.T + 3 * np.eye(3)).astype(np.float32)]
    else:
        args = [(rng.normal(size=s) + (3 * np.eye(s[0]) if len(s) == 2 and s[0] == s[1] else 0)).astype(np.float32)
                for s in shapes]
    y, back = registry.find_rule(op)(*args)
    assert np.asarray(y).dtype == np.float32
    grads = back(np.ones_like(y))
    for g, a in zip(grads, args, strict=True):
        if isinstance(a, np.ndarray):
            assert g.dtype == np.float32, f"{op.__name__}: float32 argument got a {g.dtype} cotangent"


# --- end to end: method calls, constants, dtypes -------------------------------------------------------------------------
def test_method_calls_reach_their_rules():
    x = np.array([[1.0, 3.0], [2.0, 5.0]])
    np.testing.assert_allclose(gradient(lambda x: x.prod(), x)[0], [[30, 10], [15, 6]])
    np.testing.assert_allclose(gradient(lambda x: x.var(ddof=1), x)[0], 2 * (x - x.mean()) / 3)
    np.testing.assert_allclose(gradient(lambda x: x.cumsum(axis=0)[1, 1], x)[0], [[0, 1], [0, 1]])
    np.testing.assert_allclose(gradient(lambda x: x.swapaxes(0, 1)[0, 1], x)[0], [[0, 0], [1, 0]])
    np.testing.assert_allclose(gradient(lambda x: np.einsum("ii", x), x)[0], np.eye(2))


def test_constant_method_calls_run_as_constants():
    x = np.array([1.0, 3.0, 2.0])
    np.testing.assert_allclose(gradient(lambda x: x[x.argmax()] * 2 + x[x.argsort()[0]], x)[0], [1, 2, 0])
    np.testing.assert_allclose(gradient(lambda x: x.sum() * x.round().sum() + x.all(), x)[0], [6, 6, 6])


def test_float32_in_float32_gradient_out_end_to_end():
    x = np.array([[1.0, 3.0], [2.0, 5.0]], np.float32)
    for f in (lambda x: np.prod(x), lambda x: np.std(x, axis=0).sum(), lambda x: np.linalg.det(x),
              lambda x: np.tile(x, 2).sum(), lambda x: np.linalg.norm(x), lambda x: np.cumprod(x).sum()):
        assert gradient(f, x)[0].dtype == np.float32


def test_interp_gradient_for_the_table_abscissae():
    x = np.array([-2.5, -1.0, 0.2, 0.7, 1.9, 3.0])
    xp, fp = np.array([-2.0, -0.5, 0.5, 2.0]), np.array([1.0, -1.0, 0.5, 2.0])
    check_against_finite_differences(np.interp, [x, xp, fp], [True, True, True])


def test_moments_refuse_where():
    with pytest.raises(zygotepy.ZygoteError, match="where="):
        registry.find_rule(np.var)(np.ones(3), where=np.array([True, False, True]))


@pytest.mark.parametrize("op", [la.cholesky, la.qr, la.eigh, la.eigvalsh, la.svd, la.svdvals])
def test_complex_decompositions_are_refused(op):
    with pytest.raises(zygotepy.ZygoteError, match="real matrices"):
        registry.find_rule(op)(np.eye(2) * (1 + 1j))


# --- where= masks: entries left out of a reduction get no gradient ------------------------------------------------------
_MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, False]])


@pytest.mark.parametrize("reduce", [
    lambda x: np.sum(x * x, where=_MASK),
    lambda x: np.sum(x * x, axis=1, where=_MASK),
    lambda x: np.sum(x * x, 0, None, None, False, 0.0, _MASK),
    lambda x: np.mean(x * x, where=_MASK),
    lambda x: np.mean(x * x, axis=1, keepdims=True, where=_MASK),
    lambda x: np.mean(x * x, axis=0, where=np.array([[True], [False], [True]])),
], ids=["sum", "sum_axis", "sum_positional", "mean", "mean_axis_keepdims", "mean_broadcast_mask"])
def test_where_masks(reduce):
    x = np.random.default_rng(3).uniform(0.5, 2.0, (3, 4))
    check_grads(lambda x: np.sum(reduce(x)), x)


def test_where_mask_zeroes_left_out_entries():
    (g,) = gradient(lambda x: np.sum(x, where=_MASK), np.ones((3, 4)))
    assert np.array_equal(g, _MASK.astype(float))


def test_integer_and_boolean_arrays_get_none():
    x, n, m = np.array([1.0, 2.0]), np.array([1, 2]), np.array([True, False])
    gx, gn, gm = gradient(lambda x, n, m: np.sum(x * n * m), x, n, m)
    assert np.array_equal(gx, [1.0, 0.0]) and gn is None and gm is None
    assert gradient(lambda n: np.sum(n * 2.0), np.int64(3)) == (None,)


def test_nansum_with_a_positional_where_mask():
    x = np.array([[1.0, np.nan, 2.0], [0.5, 1.5, np.nan]])
    mask = np.array([[True, True, False], [True, False, True]])
    (g,) = gradient(lambda x: np.nansum(x, None, None, None, False, 0.0, mask) * 3.0, x)
    want = np.where(mask & ~np.isnan(x), 3.0, 0.0)  # entries masked out or NaN get nothing
    assert np.array_equal(g, want)

"""NumPy rule conventions the random rows of the table cannot reach: zeros in products, ties, errors where a
gradient is undefined, dtypes, and end-to-end calls through `gradient` (methods, constants)."""
import numpy as np
import pytest
from test_rules import check_against_finite_differences

import zygotepy
from zygotepy import gradient
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

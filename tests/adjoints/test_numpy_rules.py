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

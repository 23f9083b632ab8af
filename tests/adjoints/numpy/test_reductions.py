"""Tests of `zygotepy/adjoints/numpy/reductions.py` (sum, mean, max/min, prod, var/std and trace): its rows of the rule
table against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py) and what
the random rows cannot reach."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import check_against_finite_differences, row_tests  # noqa: E402

import zygotepy  # noqa: E402
from zygotepy import gradient  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("reductions"))


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


def test_ties_split_evenly_in_numpy_extrema():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    _, back = registry.find_rule(np.max)(x)
    np.testing.assert_allclose(back(1.0)[0], [[0, 0.5, 0.5], [0, 0, 0]])
    _, back = registry.find_rule(np.min)(x, axis=1)
    np.testing.assert_allclose(back(np.array([1.0, 2.0]))[0], [[1, 0, 0], [0, 2, 0]])
    a = np.array([1.0, 2.0, 3.0])
    _, back = registry.find_rule(np.maximum)(a, np.array([1.0, 0.0, 5.0]))
    da, db = back(np.ones(3))
    np.testing.assert_allclose(da, [0.5, 1.0, 0.0])
    np.testing.assert_allclose(db, [0.5, 0.0, 1.0])


def test_a_whole_arrays_extremum_shares_any_cotangent():
    """The finite real cotangent is written into zeros; an infinite or NaN one multiplies the mask, as it always did
    (0 * inf is NaN off the maxima); float32 stays float32."""
    x = np.array([1.0, 3.0, 3.0, -2.0])
    _, back = registry.find_rule(np.max)(x)
    np.testing.assert_array_equal(back(np.float64(-3.0))[0], [0.0, -1.5, -1.5, 0.0])
    np.testing.assert_array_equal(back(np.inf)[0], [np.nan, np.inf, np.inf, np.nan])
    assert np.isnan(back(float("nan"))[0]).all()
    _, back = registry.find_rule(np.min)(x.astype(np.float32))
    got = back(2.0)[0]
    assert got.dtype == np.float32 and np.array_equal(got, [0.0, 0.0, 0.0, 2.0])


def test_moments_refuse_where():
    with pytest.raises(zygotepy.ZygoteError, match="where="):
        registry.find_rule(np.var)(np.ones(3), where=np.array([True, False, True]))


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


def test_float32_in_float32_gradient_out_end_to_end():
    x = np.array([[1.0, 3.0], [2.0, 5.0]], np.float32)
    for f in (lambda x: np.prod(x), lambda x: np.std(x, axis=0).sum(), lambda x: np.linalg.det(x),
              lambda x: np.tile(x, 2).sum(), lambda x: np.linalg.norm(x), lambda x: np.cumprod(x).sum()):
        assert gradient(f, x)[0].dtype == np.float32


@pytest.mark.parametrize("optimized", [True, False])
def test_std_and_var_centre_on_a_given_mean(optimized):
    """mean= (NumPy >= 2): var = sum |x - m|^2 / (N - ddof) with m as given, which gets a cotangent too."""
    x = np.array([1.0, 2.0, 4.0])
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3, 4))
    with zygotepy.optimizations(optimized):
        (g,) = gradient(lambda x: np.std(x, mean=np.zeros(())), x)
        np.testing.assert_allclose(g, x / 3 / np.sqrt(np.sum(x ** 2) / 3), rtol=1e-12)
        (g, dm) = gradient(lambda x, m: np.var(x, axis=0, mean=m).sum(), X, np.ones((1, 4)))
        np.testing.assert_allclose(g, 2 * (X - 1) / 3, rtol=1e-12)
        np.testing.assert_allclose(dm, -2 * np.sum(X - 1, axis=0, keepdims=True) / 3, rtol=1e-12)
        check_grads(lambda x, m: np.std(x, axis=1, ddof=1, keepdims=True, mean=m), X, rng.normal(size=(3, 1)))
        check_grads(lambda x, m: x.std(axis=0, mean=m), X, rng.normal(size=(1, 4)))
        check_grads(lambda x, m: x.var(mean=m), X, np.float64(0.25))


@pytest.mark.parametrize("reduce", [np.sum, np.max, np.min, np.nansum], ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [0, -1])
def test_a_0d_array_reduced_over_axis_0_or_minus_1(mode, reduce, axis):
    """NumPy accepts axis 0 and -1 for a 0-d array; the back once took the axis modulo ndim (0): ZeroDivisionError."""
    from zygotepy import gradient
    got, = gradient(lambda x: reduce(x, axis=axis) * 3.0, np.array(0.7))
    assert np.shape(got) == () and got == 3.0


@pytest.mark.parametrize("axis", [0, -1])
def test_prod_of_a_0d_array_over_an_axis(mode, axis):
    """The back took the axis modulo ndim 0 (ZeroDivisionError)."""
    assert gradient(lambda x: np.prod(x * 3.0, axis=axis), np.array(1.5))[0] == 3.0


@pytest.mark.parametrize("axis", [0, 1, None])
def test_prod_of_an_empty_array(mode, axis):
    """Shape (0, 3) over axis 1: the product of the others reshaped a size-0 array with -1 (ValueError)."""
    got = gradient(lambda x: np.sum(np.prod(x, axis=axis)), np.zeros((0, 3)))[0]
    assert got.shape == (0, 3)


@pytest.mark.parametrize("f", [lambda x: np.mean(x), lambda x: np.mean(x * 2), lambda x: np.mean(x ** 2),
                               lambda x: (x ** 2).mean()], ids=["mean", "mean of product", "mean of square", "method"])
def test_the_mean_of_float16_is_numpys(f, mode):
    """NumPy sums float16 in float32 for a mean; the rule's `x.sum() / x.size` summed in float16, so the value
    differed from the plain call's (-0.0661 for -0.06616; found by a probe of numeric types)."""
    from zygotepy import value_and_gradient
    x = np.array([-0.6, 1.3, 0.77, -1.9, 0.1], dtype=np.float16)
    value, (g,) = value_and_gradient(f, x)
    assert value == f(x) and value.dtype == np.float16 and g.dtype == np.float16


def test_means_and_moments_over_no_entries(mode):
    """np.mean / np.var / np.std along an axis of an empty array (ZeroDivisionError: the count of entries per output
    was taken as 0), and a variance with as many entries as ddof (NumPy's value nan or inf: so is the gradient)."""
    import warnings

    import numpy as np

    from zygotepy import gradient
    y = np.array([1.0, 2.0, 3.0])
    for reduce in (np.mean, np.var, np.std):
        for shape in ((0, 3), (3, 0)):
            gx, gy = gradient(lambda x, y: np.sum(reduce(x, axis=1)) + np.sum(y ** 2), np.zeros(shape), y)
            assert gx.shape == shape
            np.testing.assert_allclose(gy, 2 * y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        (g,) = gradient(lambda x: np.sum(np.var(x, axis=1, ddof=1)), np.array([[0.3], [0.5], [-0.2]]))
    assert g.shape == (3, 1) and np.isnan(g).all()

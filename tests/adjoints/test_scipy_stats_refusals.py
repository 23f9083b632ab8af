"""scipy.stats methods without a rule (adjoints/scipy_stats_refusals.py): refused where a gradient flows into them,
naming the user's line (they raised SourceUnavailable naming SciPy's generated `_parse_args`); run as constants where
none does, their values and the other gradients checked against central differences in float64."""
import numpy as np
import pytest
from plain_checks import central, line_of

from zygotepy import ZygoteError, value_and_gradient

st = pytest.importorskip("scipy.stats")

COUNTS = np.array([1, 3, 2])


def poisson_log_likelihood(lam):
    return np.sum(st.poisson.logpmf(COUNTS, lam))  # refused


def normal_tail(mu):
    return np.sum(st.norm.sf(np.array([0.1, 0.5]), loc=mu))  # refused


def frozen_quantile(mu):
    return st.norm(mu, 1.0).ppf(0.3)  # refused


def frozen_discrete_pmf(p):
    return st.binom(5, p).pmf(2)  # refused


def reparameterised_draw(mu):
    return np.sum(st.norm.rvs(loc=mu, size=3, random_state=np.random.default_rng(0)))  # refused


def gamma_mean(a):
    return st.gamma.mean(a)  # refused


@pytest.mark.parametrize("f, what", [(poisson_log_likelihood, "poisson.logpmf"), (normal_tail, "norm.sf"),
                                     (frozen_quantile, "norm.ppf"), (frozen_discrete_pmf, "binom.pmf"),
                                     (reparameterised_draw, "norm.rvs"), (gamma_mean, "gamma.mean")],
                         ids=lambda v: getattr(v, "__name__", v))
def test_a_gradient_into_a_method_without_a_rule_is_refused_naming_the_line(f, what, mode):
    line = line_of(f, "refused")
    with pytest.raises(ZygoteError, match=rf"test_scipy_stats_refusals\.py:{line}: .*scipy\.stats\.{what}: "
                                          r"zygotepy has rules for the logpdf"):
        value_and_gradient(f, 0.35)


def weighted_by_a_constant_pmf(x):
    return np.sum(st.poisson.pmf(np.array([1, 2]), 2.0) * x ** 2)


def shifted_by_constant_draws(x):
    z = st.norm.rvs(size=3, random_state=np.random.default_rng(0))
    return np.sum(np.sin(z * x))


def scaled_by_a_constant_quantile(x):
    return st.norm(0.0, 2.0).ppf(0.8) * x + st.gamma.mean(3.0) * x ** 2


@pytest.mark.parametrize("f", [weighted_by_a_constant_pmf, shifted_by_constant_draws, scaled_by_a_constant_quantile],
                         ids=lambda f: f.__name__)
def test_the_methods_run_as_constants_where_no_gradient_flows_in(f, mode):
    value, (grad,) = value_and_gradient(f, 0.35)
    np.testing.assert_allclose(value, f(0.35), rtol=1e-12)
    np.testing.assert_allclose(grad, central(f, (0.35,), 0), rtol=1e-6, atol=1e-9)

"""Second derivatives through the scipy.stats rules (zygotepy/adjoints/scipy_stats.py `_on_duals`): `hessian` runs the
rules on dual numbers, whose value is SciPy's at the primals and whose tangent comes from the family's partials (the
cdfs' weights too); a log-likelihood's Hessian (a Laplace approximation, standard errors) was refused. Checked
against central differences of the gradient, with every optimisation on and off."""
import numpy as np
import pytest

pytest.importorskip("scipy.stats")

from scipy import stats  # noqa: E402

from zygotepy import gradient, hessian  # noqa: E402

X = np.array([0.4, 1.3, 2.2])

ROWS = [
    ("norm_logpdf", lambda p: stats.norm.logpdf(X, p[0], p[1]).sum(), [0.3, 1.4]),
    ("norm_logpdf_keywords", lambda p: stats.norm.logpdf(X, loc=p[0], scale=p[1]).sum(), [0.3, 1.4]),
    ("t_logpdf", lambda p: stats.t.logpdf(X, p[0], p[1], p[2]).sum(), [3.5, 0.3, 1.4]),
    ("gamma_logpdf", lambda p: stats.gamma.logpdf(X, p[0], scale=p[1]).sum(), [2.5, 1.4]),
    ("beta_logpdf", lambda p: stats.beta.logpdf(X / 3.0, p[0], p[1]).sum(), [2.5, 1.4]),
    ("norm_pdf", lambda p: stats.norm.pdf(X, p[0], p[1]).sum(), [0.3, 1.4]),
    ("norm_cdf", lambda p: stats.norm.cdf(X, p[0], p[1]).sum(), [0.3, 1.4]),
    ("norm_logcdf", lambda p: stats.norm.logcdf(X, p[0], p[1]).sum(), [0.3, 1.4]),
    ("point_too", lambda p: stats.norm.logpdf(X * p[0], p[1], 2.0).sum() * p[0], [0.7, 0.2]),
    ("frozen", lambda p: stats.norm(p[0], p[1]).logpdf(X).sum(), [0.3, 1.4]),
    ("frozen_keyword", lambda p: stats.gamma(p[0], scale=p[1]).logpdf(X).sum(), [2.5, 1.4]),
]


@pytest.mark.parametrize("f, p", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_hessian_of_a_log_likelihood(mode, f, p):
    p = np.array(p)
    h = 1e-5
    want = np.stack([(gradient(f, p + h * e)[0] - gradient(f, p - h * e)[0]) / (2 * h) for e in np.eye(len(p))], axis=1)
    assert np.allclose(hessian(f, p), want, rtol=1e-5, atol=1e-6)


@pytest.mark.dual_route  # (the nested gradient goes forward-over-reverse: the rule's own code is not transformed)
def test_a_gradient_of_a_gradient_of_a_log_likelihood(mode):
    def slope(m):
        return gradient(lambda mu: stats.norm.logpdf(X, mu, 1.5).sum(), m)[0]
    assert np.isclose(gradient(slope, 0.2)[0], -3 / 1.5 ** 2)

"""The scipy.stats rules (zygotepy/adjoints/scipy_stats.py): one row per (distribution, method, argument form), each a
user-level function checked against central finite differences in float64 (`zygotepy.testing.check_grads`, through
the whole transform) on Python floats and on broadcast arrays, away from the edges of the support; the forward values
against SciPy's; and the refusals (a cdf's shape parameter, another distribution, a singular covariance, foreign
arrays) raising a ZygoteError that names what has no rule.
"""
import inspect
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("scipy.stats")

import scipy.stats  # noqa: E402
from scipy.stats import beta, gamma, lognorm, multivariate_normal, norm, t  # noqa: E402

import zygotepy  # noqa: E402
import zygotepy.adjoints.scipy_stats as scipy_stats  # noqa: E402  (registers its rules before the package wires it)
from zygotepy.adjoints import registry  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

# where each parameter is drawn, by distribution: inside the support, z = (x - loc) / scale away from its edges
DOMAINS = {
    "norm": {"x": (-2.0, 2.0), "loc": (-0.5, 0.5), "scale": (0.7, 2.0)},
    "t": {"x": (-2.0, 2.0), "loc": (-0.5, 0.5), "scale": (0.7, 2.0), "df": (2.5, 6.0)},
    "gamma": {"x": (0.6, 3.0), "loc": (-0.3, 0.3), "scale": (0.8, 1.5), "a": (1.5, 4.0)},
    "beta": {"x": (0.35, 0.65), "loc": (-0.05, 0.05), "scale": (1.0, 1.2), "a": (1.5, 4.0), "b": (1.5, 4.0)},
}
# the broadcast case: each parameter's shape (None: a Python float)
BROADCAST = {"x": (2, 3), "loc": (3,), "scale": None, "df": (2, 1), "a": (2, 1), "b": None}


@dataclass(frozen=True)
class Row:
    dist: str
    method: str
    form: str
    fn: object  # the user's function; its parameters name the distribution's parameters it draws

    @property
    def params(self):
        return tuple(inspect.signature(self.fn).parameters)

    @property
    def name(self):
        return f"{self.dist}.{self.method}[{self.form}]"


ROWS = [
    # norm: no shapes
    Row("norm", "logpdf", "positional", lambda x, loc, scale: norm.logpdf(x, loc, scale)),
    Row("norm", "logpdf", "keywords", lambda x, loc, scale: norm.logpdf(x, loc=loc, scale=scale)),
    Row("norm", "logpdf", "defaults", lambda x: norm.logpdf(x)),
    Row("norm", "logpdf", "module-path", lambda x, scale: scipy.stats.norm.logpdf(x, 0.0, scale)),
    Row("norm", "pdf", "positional", lambda x, loc, scale: norm.pdf(x, loc, scale)),
    Row("norm", "pdf", "keywords", lambda x, loc, scale: norm.pdf(x, loc=loc, scale=scale)),
    Row("norm", "logcdf", "positional", lambda x, loc, scale: norm.logcdf(x, loc, scale)),
    Row("norm", "logcdf", "keywords", lambda x, loc, scale: norm.logcdf(x, loc=loc, scale=scale)),
    Row("norm", "cdf", "positional", lambda x, loc, scale: norm.cdf(x, loc, scale)),
    Row("norm", "cdf", "keywords", lambda x, loc, scale: norm.cdf(x, loc=loc, scale=scale)),
    Row("norm", "cdf", "x-keyword", lambda x, scale: norm.cdf(x=x, scale=scale)),
    # t: df differentiated in logpdf and pdf, a constant in cdf and logcdf
    Row("t", "logpdf", "positional", lambda x, df, loc, scale: t.logpdf(x, df, loc, scale)),
    Row("t", "logpdf", "keywords", lambda x, df, loc, scale: t.logpdf(x, df, loc=loc, scale=scale)),
    Row("t", "logpdf", "shape-keyword", lambda x, df, loc, scale: t.logpdf(x, df=df, loc=loc, scale=scale)),
    Row("t", "pdf", "positional", lambda x, df, loc, scale: t.pdf(x, df, loc, scale)),
    Row("t", "pdf", "keywords", lambda x, df, scale: t.pdf(x, df, scale=scale)),
    Row("t", "logcdf", "positional", lambda x, loc, scale: t.logcdf(x, 3.5, loc, scale)),
    Row("t", "logcdf", "shape-keyword", lambda x, loc, scale: t.logcdf(x, df=3.5, loc=loc, scale=scale)),
    Row("t", "cdf", "positional", lambda x, loc, scale: t.cdf(x, 3.5, loc, scale)),
    Row("t", "cdf", "int-shape", lambda x, loc, scale: t.cdf(x, 3, loc=loc, scale=scale)),
    # gamma: a differentiated in logpdf and pdf
    Row("gamma", "logpdf", "positional", lambda x, a, loc, scale: gamma.logpdf(x, a, loc, scale)),
    Row("gamma", "logpdf", "keywords", lambda x, a, loc, scale: gamma.logpdf(x, a, loc=loc, scale=scale)),
    Row("gamma", "logpdf", "shape-keyword", lambda x, a, scale: gamma.logpdf(x, a=a, scale=scale)),
    Row("gamma", "pdf", "positional", lambda x, a, loc, scale: gamma.pdf(x, a, loc, scale)),
    Row("gamma", "pdf", "keywords", lambda x, a, loc, scale: gamma.pdf(x, a, loc=loc, scale=scale)),
    Row("gamma", "logcdf", "positional", lambda x, loc, scale: gamma.logcdf(x, 2.5, loc, scale)),
    Row("gamma", "logcdf", "shape-keyword", lambda x, loc, scale: gamma.logcdf(x, a=2.5, loc=loc, scale=scale)),
    Row("gamma", "cdf", "positional", lambda x, loc, scale: gamma.cdf(x, 2.5, loc, scale)),
    Row("gamma", "cdf", "shape-keyword", lambda x, scale: gamma.cdf(x, a=2.5, scale=scale)),
    # beta: a and b differentiated in logpdf and pdf
    Row("beta", "logpdf", "positional", lambda x, a, b, loc, scale: beta.logpdf(x, a, b, loc, scale)),
    Row("beta", "logpdf", "keywords", lambda x, a, b, loc, scale: beta.logpdf(x, a, b, loc=loc, scale=scale)),
    Row("beta", "logpdf", "shape-keyword", lambda x, a, b: beta.logpdf(x, a, b=b)),
    Row("beta", "pdf", "positional", lambda x, a, b, loc, scale: beta.pdf(x, a, b, loc, scale)),
    Row("beta", "pdf", "keywords", lambda x, a, b, scale: beta.pdf(x, a, b, scale=scale)),
    Row("beta", "logcdf", "positional", lambda x, loc, scale: beta.logcdf(x, 2.5, 1.8, loc, scale)),
    Row("beta", "logcdf", "shape-keyword", lambda x, loc, scale: beta.logcdf(x, a=2.5, b=1.8, loc=loc, scale=scale)),
    Row("beta", "cdf", "positional", lambda x, loc, scale: beta.cdf(x, 2.5, 1.8, loc, scale)),
    Row("beta", "cdf", "shape-keyword", lambda x, scale: beta.cdf(x, a=2.5, b=1.8, scale=scale)),
]
CASES = [(r, case) for r in ROWS for case in ("float", "broadcast")]
IDS = [f"{r.name}:{case}" for r, case in CASES]


def _draw(row, case):
    rng = np.random.default_rng(zlib.crc32(f"{row.name}:{case}".encode()))
    args = []
    for p in row.params:
        lo, hi = DOMAINS[row.dist][p]
        shape = None if case == "float" else BROADCAST[p]
        args.append(float(rng.uniform(lo, hi)) if shape is None else rng.uniform(lo, hi, shape))
    return args


@pytest.mark.parametrize("r, case", CASES, ids=IDS)
def test_rule_matches_finite_differences(r, case):
    args = _draw(r, case)
    for seed in (0, 1):  # two random directions and cotangents
        grads = check_grads(r.fn, *args, seed=seed)
    for g, a in zip(grads, args, strict=True):
        assert g is not None
        assert np.shape(g) == np.shape(a), f"gradient of shape {np.shape(g)} for an argument of shape {np.shape(a)}"
        if isinstance(a, float):  # a Python float gets a number, not an array
            assert isinstance(g, float), type(g)


@pytest.mark.parametrize("r, case", CASES, ids=IDS)
def test_forward_values_are_scipys(r, case):
    """The value under differentiation is bit for bit the one SciPy computes when the function runs plainly."""
    args = _draw(r, case)
    y, _ = zygotepy.pullback(r.fn, *args)
    expected = r.fn(*args)
    assert np.shape(y) == np.shape(expected)
    np.testing.assert_array_equal(y, expected)


def test_every_method_has_a_row():
    covered = {(r.dist, r.method) for r in ROWS}
    expected = {(d, m) for d in scipy_stats.FAMILIES_BY_NAME for m in scipy_stats.METHODS}
    assert expected <= covered, sorted(expected - covered)
    for m in scipy_stats.METHODS:  # keyed by the function the bound methods share, as dispatch looks them up
        assert registry.find_rule(getattr(type(norm), m)) is scipy_stats.CONTINUOUS[m]


def test_shape_gradients_against_closed_forms():
    """d/ddf of t's logpdf at z = 0 is (digamma((df+1)/2) - digamma(df/2) - 1/df) / 2; d/da of gamma's at x = 1 is
    -digamma(a): the tables checked against a formula, not only against finite differences."""
    from scipy.special import digamma
    (g_df,) = zygotepy.gradient(lambda df: t.logpdf(0.0, df), 3.0)
    assert g_df == pytest.approx(0.5 * (digamma(2.0) - digamma(1.5) - 1 / 3), rel=1e-12)
    (g_a,) = zygotepy.gradient(lambda a: gamma.logpdf(1.0, a), 2.5)
    assert g_a == pytest.approx(-digamma(2.5), rel=1e-12)


def test_outside_the_support_gradient_is_zero():
    x = np.array([-1.0, 0.5, 2.0])
    gx, ga = zygotepy.gradient(lambda x, a: np.sum(gamma.pdf(x, a)), x, 2.5)
    assert gx[0] == 0.0 and np.all(np.isfinite(gx)) and np.isfinite(ga)
    (gx,) = zygotepy.gradient(lambda x: np.sum(beta.cdf(x, 2.0, 3.0)), np.array([-0.5, 0.3, 1.5]))
    assert gx[0] == 0.0 and gx[2] == 0.0 and gx[1] > 0


def test_no_cotangent_gives_none():
    _, back = registry.find_rule(type(t).logpdf)(t, np.ones(3), 3.0, loc=0.5)
    grads = back(None)
    assert len(grads) == 4 and grads[:3] == (None, None, None)  # (self, x, df), then the keywords'
    assert all(g is None for g in grads[3].values())


# --- refusals ----------------------------------------------------------------------------------------------------------
X = np.array([-0.3, 0.4, 1.1])


@pytest.mark.parametrize("f, args, name", [
    (lambda x, df: np.sum(t.cdf(x, df)), (X, 3.0), "df"),
    (lambda x, df: np.sum(t.logcdf(x, df, 0.0, 1.5)), (X, 3.0), "df"),
    (lambda x, a: np.sum(gamma.cdf(x, a, 0.0, 1.0)), (X + 1.0, 2.0), "a"),
    (lambda x, b: np.sum(beta.logcdf(x, 2.0, b)), (X * 0.4 + 0.3, 2.0), "b"),
    (lambda x, df, m: np.sum(t.cdf(x, df, loc=m)), (X, 3.0, 0.5), "df"),
], ids=["t.cdf", "t.logcdf", "gamma.cdf", "beta.logcdf", "t.cdf[keywords]"])
def test_cdf_shape_parameter_is_refused(f, args, name):
    with pytest.raises(zygotepy.ZygoteError, match=f"shape parameter {name}"):
        zygotepy.gradient(f, *args)


def test_cdf_shape_parameter_by_keyword_is_refused_only_where_it_carries_a_gradient():
    with pytest.raises(zygotepy.ZygoteError, match="df="):
        zygotepy.gradient(lambda x, df: np.sum(t.cdf(x, df=df)), X, 3.0)
    gx, gdf = zygotepy.gradient(lambda x, df: np.sum(t.cdf(x, df=3.0)), X, 3.0)
    np.testing.assert_allclose(gx, t.pdf(X, 3.0), rtol=1e-12)
    assert gdf is None


def test_other_distribution_is_refused():
    with pytest.raises(zygotepy.ZygoteError, match="scipy.stats.lognorm.logpdf"):
        zygotepy.gradient(lambda x: np.sum(lognorm.logpdf(x, 0.5)), np.array([0.5, 1.5]))


def test_foreign_arrays_are_refused():
    xp = pytest.importorskip("array_api_strict")
    with pytest.raises(zygotepy.ZygoteError, match="NumPy arrays"):
        zygotepy.gradient(lambda x: xp.sum(norm.logpdf(x, 0.0, 1.0)), xp.asarray([0.5, 1.0]))


# --- frozen distributions ----------------------------------------------------------------------------------------------
def test_frozen_distributions():
    check_grads(lambda m, s: norm(m, s).logpdf(X), 0.5, 2.0)
    check_grads(lambda m, s: norm(m, scale=s).cdf(X), np.array([0.1, 0.2, 0.3]), 1.5)
    check_grads(lambda df, m, x: t(df, loc=m).logpdf(x), 3.0, 0.5, X)
    check_grads(lambda x, a: gamma(a, scale=2.0).pdf(x), X + 1.0, 2.5)
    (gx,) = zygotepy.gradient(lambda x: np.sum(t(3.0).cdf(x)), X)  # a constant frozen object: x alone
    np.testing.assert_allclose(gx, t.pdf(X, 3.0), rtol=1e-12)
    with pytest.raises(zygotepy.ZygoteError, match="shape parameter df"):
        zygotepy.gradient(lambda x, df: np.sum(t(df).cdf(x)), X, 3.0)


# --- multivariate_normal -----------------------------------------------------------------------------------------------
RNG = np.random.default_rng(7)
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])
MEAN = np.array([0.1, -0.2, 0.3])
POINTS = RNG.standard_normal((4, 3))

MVN = [
    ("logpdf[points]", lambda x, m, c: multivariate_normal.logpdf(x, m, c), (POINTS, MEAN, COV)),
    ("logpdf[point]", lambda x, m, c: multivariate_normal.logpdf(x, m, c), (POINTS[0], MEAN, COV)),
    ("logpdf[keywords]", lambda x, m, c: multivariate_normal.logpdf(x, mean=m, cov=c), (POINTS, MEAN, COV)),
    ("logpdf[cov-only]", lambda x, c: multivariate_normal.logpdf(x, cov=c), (POINTS, COV)),
    ("logpdf[diagonal]", lambda x, m, v: multivariate_normal.logpdf(x, m, v), (POINTS, MEAN, np.array([1.5, 0.7, 2.0]))),
    ("logpdf[scalar-cov]", lambda x, m, v: multivariate_normal.logpdf(x, m, v), (POINTS, MEAN, 1.3)),
    ("logpdf[one-dim]", lambda x, m, v: multivariate_normal.logpdf(x, m, v), (np.array([0.2, -0.4, 1.0]), 0.3, 1.7)),
    ("pdf[points]", lambda x, m, c: multivariate_normal.pdf(x, m, c), (POINTS, MEAN, COV)),
    ("pdf[keywords]", lambda x, m, c: multivariate_normal.pdf(x, mean=m, cov=c), (POINTS[1], MEAN, COV)),
    ("frozen-logpdf", lambda x, m, c: multivariate_normal(m, c).logpdf(x), (POINTS, MEAN, COV)),
    ("frozen-pdf", lambda x, m, c: multivariate_normal(mean=m, cov=c).pdf(x), (POINTS, MEAN, COV)),
]


@pytest.mark.parametrize("f, args", [row[1:] for row in MVN], ids=[row[0] for row in MVN])
def test_multivariate_normal(f, args):
    for seed in (0, 1):
        grads = check_grads(f, *args, seed=seed)
    for g, a in zip(grads, args, strict=True):
        assert g is not None and np.shape(g) == np.shape(a)
    y, _ = zygotepy.pullback(f, *args)
    np.testing.assert_array_equal(y, f(*args))


def test_multivariate_normal_symmetric_gradient():
    """The cotangent of cov, read from its lower triangle, agrees with the symmetric gradient -(S^-1 - a a^T) / 2 on
    symmetric perturbations."""
    x = POINTS[0]
    (gc,) = zygotepy.gradient(lambda c: multivariate_normal.logpdf(x, MEAN, c), COV)
    inv = np.linalg.inv(COV)
    alpha = inv @ (x - MEAN)
    sym = -0.5 * (inv - np.outer(alpha, alpha))
    np.testing.assert_allclose(gc + gc.T - np.diag(np.diag(gc)), 2 * sym - np.diag(np.diag(sym)), rtol=1e-10)
    assert np.all(np.triu(gc, 1) == 0)


def test_multivariate_normal_singular_covariance_is_refused():
    singular = np.array([[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(zygotepy.ZygoteError, match="singular covariance"):
        zygotepy.gradient(lambda m: multivariate_normal.logpdf(np.zeros(2), m, singular, allow_singular=True),
                          np.zeros(2))

"""The scipy.special rules (zygotepy/adjoints/scipy_special.py), one row per function, against central finite
differences in float64 (`zygotepy.testing.check_grads`, through the whole transform) on Python floats and on arrays
(with broadcasting for two-argument functions), at points away from poles, branch points and kinks. Every function
the module registers must have a row (`test_every_rule_has_a_row`), so a rule added without a test fails.
"""
import math
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")

import zygotepy  # noqa: E402
from zygotepy.adjoints import registry, scipy_special  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402


@dataclass(frozen=True)
class Dom:
    """Random values uniform in [lo, hi], with a random sign when `signed` (away from a kink or a pole at 0)."""
    lo: float
    hi: float
    signed: bool = False

    def draw(self, rng, shape):
        x = rng.uniform(self.lo, self.hi, () if shape is None else shape)
        if self.signed:
            x = x * rng.choice([-1.0, 1.0], x.shape)
        return float(x) if shape is None else np.asarray(x)


@dataclass(frozen=True)
class Row:
    fn: object                  # the scipy.special function the row covers
    doms: tuple                 # one Dom per random argument
    shapes: tuple               # cases: one shape per random argument (None: a Python float)
    consts: tuple = ()          # (position, value) of constant arguments (data: an order, a dimension)
    kwargs: tuple = ()          # constant keyword arguments, as (name, value) pairs
    label: str = ""

    @property
    def name(self):
        return self.label or self.fn.__name__


ANY, POS, NZ = Dom(-2.0, 2.0), Dom(0.5, 3.0), Dom(0.3, 2.0, signed=True)
U1 = ((None,), ((2, 3),))                       # a Python float, a 2x3 array
U2 = ((None, None), ((2, 3), (3,)), ((4,), None))  # floats; arrays broadcast; an array with a float


def unary(fn, dom, label=""):
    return Row(fn, (dom,), U1, label=label)


def binary(fn, dom_a, dom_b, label=""):
    return Row(fn, (dom_a, dom_b), U2, label=label)


ROWS = [
    # gamma family
    unary(sc.gammaln, POS), unary(sc.gammaln, Dom(-2.8, -2.2), label="gammaln[negative]"),
    unary(sc.loggamma, POS), unary(sc.gamma, POS), unary(sc.gamma, Dom(-1.8, -1.2), label="gamma[negative]"),
    unary(sc.rgamma, POS), unary(sc.digamma, POS), unary(sc.psi, POS, label="psi"),
    Row(sc.polygamma, (POS,), ((None,), ((2, 3),)), consts=((0, 1),)),
    Row(sc.polygamma, (POS,), (((3,),),), consts=((0, np.array([0, 1, 2])),), label="polygamma[orders]"),
    Row(sc.multigammaln, (Dom(2.0, 4.0),), ((None,), ((3,),)), consts=((1, 3),)),
    # error functions, the normal distribution
    unary(sc.erf, ANY), unary(sc.erfc, ANY), unary(sc.erfcx, Dom(-1.0, 3.0)), unary(sc.erfi, Dom(-1.5, 1.5)),
    unary(sc.erfinv, Dom(-0.9, 0.9)), unary(sc.erfcinv, Dom(0.1, 1.9)), unary(sc.dawsn, ANY),
    unary(sc.ndtr, ANY), unary(sc.log_ndtr, Dom(-6.0, 2.0)), unary(sc.ndtri, Dom(0.05, 0.95)),
    unary(sc.ndtri_exp, Dom(-3.0, -0.1)),
    # logistic
    unary(sc.expit, Dom(-3.0, 3.0)), unary(sc.logit, Dom(0.1, 0.9)), unary(sc.log_expit, Dom(-3.0, 3.0)),
    # entropy, Lambert-type
    unary(sc.entr, Dom(0.1, 2.0)), unary(sc.wrightomega, ANY), unary(sc.spence, Dom(0.2, 2.5)),
    # Bessel
    unary(sc.i0, ANY), unary(sc.i1, ANY), unary(sc.i0e, NZ), unary(sc.i1e, NZ),
    unary(sc.k0, POS), unary(sc.k1, POS), unary(sc.k0e, POS), unary(sc.k1e, POS),
    unary(sc.j0, Dom(-3.0, 3.0)), unary(sc.j1, Dom(-3.0, 3.0)), unary(sc.y0, POS), unary(sc.y1, POS),
    # elementary
    unary(sc.expm1, ANY), unary(sc.log1p, Dom(-0.5, 2.0)), unary(sc.exp2, ANY), unary(sc.exp10, Dom(-1.0, 1.0)),
    unary(sc.cbrt, NZ), unary(sc.sindg, Dom(-170.0, 170.0)), unary(sc.cosdg, Dom(-170.0, 170.0)),
    unary(sc.gammasgn, Dom(0.3, 2.5, signed=True)),
    unary(sc.sinc, NZ),  # scipy.special.sinc is np.sinc: numpy/elementwise.py's rule
    # two arguments
    binary(sc.xlogy, ANY, POS), binary(sc.xlog1py, ANY, Dom(-0.5, 2.0)), binary(sc.betaln, POS, POS),
    binary(sc.beta, POS, POS), binary(sc.rel_entr, POS, POS), binary(sc.kl_div, POS, POS),
    binary(sc.huber, Dom(0.8, 1.2), Dom(0.1, 0.6, signed=True), label="huber[inside]"),
    binary(sc.huber, Dom(0.8, 1.2), Dom(1.5, 3.0, signed=True), label="huber[outside]"),
    binary(sc.pseudo_huber, POS, ANY), binary(sc.owens_t, ANY, ANY),
    binary(sc.boxcox, POS, ANY), binary(sc.boxcox1p, Dom(-0.5, 2.0), ANY),
    unary(sc.exprel, Dom(-2.0, 2.0)),
    # reductions
    Row(sc.logsumexp, (ANY,), ((None,), ((5,),), ((2, 3),))),
    Row(sc.logsumexp, (ANY,), (((2, 3),), ((2, 3, 2),)), kwargs=(("axis", 1),), label="logsumexp[axis]"),
    Row(sc.logsumexp, (ANY,), (((2, 3),),), kwargs=(("axis", -1), ("keepdims", True)), label="logsumexp[keepdims]"),
    Row(sc.logsumexp, (ANY,), (((2, 3, 2),),), kwargs=(("axis", (0, 2)),), label="logsumexp[axes]"),
    Row(sc.logsumexp, (ANY, POS), (((2, 3), (2, 3)), ((2, 3), (3,))), kwargs=(("axis", 0),), label="logsumexp[b]"),
    # b of more axes than a: SciPy broadcasts a against b (per-row mixture weights; the back broadcast only b)
    Row(sc.logsumexp, (ANY, POS), (((3,), (5, 3)),), kwargs=(("axis", 1),), label="logsumexp[b wider]"),
    Row(sc.logsumexp, (ANY, POS), (((4,), (1, 4)), ((4,), (3, 4))), label="logsumexp[b wider, all]"),
    Row(sc.softmax, (ANY,), (((5,),), ((2, 3),))),
    Row(sc.softmax, (ANY,), (((2, 3),),), kwargs=(("axis", 1),), label="softmax[axis]"),
    Row(sc.log_softmax, (ANY,), (((5,),), ((2, 3),))),
    Row(sc.log_softmax, (ANY,), (((2, 3),),), kwargs=(("axis", 0),), label="log_softmax[axis]"),
]
if hasattr(sc, "softplus"):  # new in SciPy 1.15
    ROWS.append(unary(sc.softplus, Dom(-3.0, 3.0)))


def _arguments(row, random):
    """The call's (args, kwargs): the row's constants put in place among the random arguments; logsumexp's second
    random argument is its weights `b`, passed by keyword."""
    consts, kwargs = dict(row.consts), dict(row.kwargs)
    it = iter(random)
    args = [consts[k] if k in consts else next(it) for k in range(len(row.doms) + len(consts))]
    if row.fn is sc.logsumexp and len(args) == 2:
        return args[:1], {**kwargs, "b": args[1]}
    return args, kwargs


def _target(row):
    """The function check_grads differentiates: `row.fn` of the random arguments."""
    fn = row.fn

    def call(*random):
        args, kwargs = _arguments(row, random)
        return fn(*args, **kwargs)
    return call


CASES = [(r, case) for r in ROWS for case in r.shapes]
IDS = [f"{r.name}:{'-'.join('float' if s is None else 'x'.join(map(str, s)) or '0d' for s in case)}"
       for r, case in CASES]


@pytest.mark.parametrize("r, case", CASES, ids=IDS)
def test_rule_matches_finite_differences(r, case):
    rng = np.random.default_rng(zlib.crc32(IDS[CASES.index((r, case))].encode()))
    args = [d.draw(rng, s) for d, s in zip(r.doms, case, strict=True)]
    f = _target(r)
    for seed in (0, 1):  # two random directions and cotangents
        grads = check_grads(f, *args, seed=seed)
    for g, a, s in zip(grads, args, case, strict=True):
        assert g is not None
        assert np.shape(g) == np.shape(a), f"gradient of shape {np.shape(g)} for an argument of shape {np.shape(a)}"
        if s is None:  # a Python float gets a number, not an array
            assert isinstance(g, float), type(g)


def test_every_rule_has_a_row():
    covered = {r.fn for r in ROWS} | {getattr(sc, name) for name in _CONSTANT_FIRST}  # (those: the test below)
    mine = {t for t, rule in registry.RULES.items() if getattr(rule, "__module__", "") == scipy_special.__name__}
    tables = {*scipy_special.UNARY, *scipy_special.BINARY, *scipy_special.CUSTOM}
    assert mine == tables, "a function registered outside the tables"
    missing = sorted(getattr(t, "__name__", repr(t)) for t in mine - covered)
    assert not missing, f"scipy.special rules without a row: {missing}"
    assert len(mine) >= 25


@pytest.mark.parametrize("r", ROWS, ids=[r.name for r in ROWS])
def test_no_cotangent_gives_none(r):
    rng = np.random.default_rng(0)
    args, kwargs = _arguments(r, [d.draw(rng, s) for d, s in zip(r.doms, r.shapes[0], strict=True)])
    _, back = registry.find_rule(r.fn)(*args, **kwargs)
    grads = back(None)
    if kwargs and isinstance(grads[-1], dict):  # a keyword-aware rule: the keywords' cotangents last
        assert all(g is None for g in grads[-1].values())
        grads = grads[:-1]
    assert len(grads) == len(args) and all(g is None for g in grads)


# --- conventions at the edges ------------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:divide by zero")  # d/dx xlogy(x, 0) = log(0) = -inf
def test_xlogy_at_zero():
    """xlogy(0, y) = 0 for every y: the gradient wrt y is 0 there (also at y = 0), wrt x it is log(y)."""
    _, back = registry.find_rule(sc.xlogy)(np.array([0.0, 0.0, 2.0]), np.array([3.0, 0.0, 4.0]))
    dx, dy = back(np.ones(3))
    np.testing.assert_array_equal(dy, [0.0, 0.0, 0.5])
    np.testing.assert_allclose(dx[[0, 2]], [math.log(3.0), math.log(4.0)])
    assert zygotepy.gradient(lambda y: sc.xlogy(0.0, y), 2.0) == (0.0,)
    assert zygotepy.gradient(lambda y: sc.xlog1py(0.0, y), -1.0) == (0.0,)


@pytest.mark.filterwarnings("ignore:divide by zero")  # d/dx of x log x at x = 0: -inf
def test_entropies_at_zero():
    """rel_entr(0, y) = 0 and kl_div(0, y) = y: their gradients wrt y are 0 and 1 there."""
    _, back = registry.find_rule(sc.rel_entr)(0.0, 2.0)
    assert back(1.0)[1] == 0.0
    _, back = registry.find_rule(sc.kl_div)(0.0, 2.0)
    assert back(1.0)[1] == 1.0


def test_spence_at_one():
    """The integrand log(t) / (1 - t) of spence tends to -1 at t = 1 (the rule takes the limit, not 0/0)."""
    assert zygotepy.gradient(sc.spence, 1.0)[0] == pytest.approx(-1.0)


def test_logsumexp_with_sign_and_all_minus_infinity():
    a, b = np.array([0.5, 1.0, -0.3]), np.array([1.0, -2.0, 0.5])
    g = check_grads(lambda a, b: sc.logsumexp(a, b=b, return_sign=True)[0], a, b)
    assert all(x.shape == (3,) for x in g)
    _, back = registry.find_rule(sc.logsumexp)(np.full(3, -np.inf))
    np.testing.assert_array_equal(back(1.0)[0], np.zeros(3))


def test_logsumexp_b_by_position():
    a, b = np.array([0.5, 1.0, -0.3]), np.array([1.0, 2.0, 0.5])
    check_grads(lambda a, b: sc.logsumexp(a, None, b), a, b)


def test_complex_argument():
    """A holomorphic function of a complex argument: the gradient of a real loss is dL/dRe + 1j dL/dIm."""
    z = np.array([0.3 + 0.4j, -0.5 + 0.2j])
    check_grads(lambda z: np.sum(np.abs(sc.erf(z)) ** 2), z)
    check_grads(lambda z: np.sum(np.real(sc.loggamma(z))), z + 1.5)


@pytest.mark.parametrize("z", [[0.3 + 0.4j, -2.7 + 0.2j], [9.5 - 3.0j, 0.05 + 0.02j], [-0.5 - 4.0j, 25.0 + 1.0j]])
def test_digamma_of_complex_arguments(z):
    """psi's derivative is polygamma(1, z), which SciPy computes for real z only (a TypeError for complex ones):
    zygotepy's own trigamma, checked on both half-planes, near a pole and far out."""
    z = np.array(z)
    check_grads(lambda z: np.sum(np.abs(sc.psi(z)) ** 2), z)
    check_grads(lambda t: np.sum(np.imag(sc.digamma(t * (1.0 + 0.5j)))), z.real)


@pytest.mark.parametrize("fn", [sc.gammaln, sc.erf, sc.expit, sc.i0e])
def test_float32_stays_float32(fn):
    x = np.array([0.5, 1.5, 2.0], dtype=np.float32)
    _, back = registry.find_rule(fn)(x)
    assert back(np.ones(3, dtype=np.float32))[0].dtype == np.float32


def test_other_libraries_arrays_are_refused():
    xp = pytest.importorskip("array_api_strict")
    with pytest.raises(zygotepy.ZygoteError, match="NumPy arrays"):
        zygotepy.gradient(lambda x: xp.sum(sc.erf(x)), xp.asarray([0.5, 1.0]))


def _gammaln_slope(t):
    return zygotepy.gradient(sc.gammaln, t)[0]


def test_second_derivative_by_nesting():
    """The rules are ordinary Python: differentiating a gradient goes through them (digamma's rule, then polygamma's)."""
    assert zygotepy.gradient(_gammaln_slope, 2.0)[0] == pytest.approx(float(sc.polygamma(1, 2.0)), rel=1e-12)


_BESSEL_AT = np.array([0.4, 1.3, 2.7])
_WEIGHTS = np.array([1.0, -0.5, 2.0])


def _weighted(fn, order, x):
    return np.sum(fn(order, x) * _WEIGHTS)


_CONSTANT_FIRST = ["jv", "yv", "iv", "kv", "jve", "yve", "ive", "kve", "gammainc", "gammaincc"]


@pytest.mark.parametrize("name", _CONSTANT_FIRST)
@pytest.mark.parametrize("order", [1.5, 2])
def test_bessel_and_incomplete_gamma_functions_of_a_constant_first_argument(name, order, mode):
    """Their derivative in x by the recurrences (refused before: MissingAdjoint); x > 0, and x < 0 for an integer order
    of the functions defined there. An order that carries a gradient is refused, naming it."""
    fn = getattr(sc, name)
    points = [_BESSEL_AT] + ([-_BESSEL_AT] if order == 2 and name in ("jv", "iv", "jve", "ive") else [])
    for x in points:
        got = zygotepy.gradient(_weighted, fn, order, x, argnums=2)
        want = [(_weighted(fn, order, x + h) - _weighted(fn, order, x - h)) / 2e-6 for h in 1e-6 * np.eye(3)]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    with pytest.raises(zygotepy.ZygoteError, match=rf"test_scipy_special.py:\d+: zygotepy has no derivative of "
                                                   rf"scipy.special.{name} with respect to"):
        zygotepy.gradient(_weighted, fn, 1.5, _BESSEL_AT)


def test_boxcox_at_lambda_zero_is_its_limit():
    """At lambda = 0 the transform is log x, and its slope in lambda the limit (log x)^2 / 2, not 0/0."""
    for fn, x, log_x in ((sc.boxcox, 1.7, math.log(1.7)), (sc.boxcox1p, 0.7, math.log1p(0.7))):
        dx, dlam = zygotepy.gradient(fn, x, 0.0)
        assert math.isclose(dlam, 0.5 * log_x ** 2) and math.isclose(dx, math.exp(-log_x))

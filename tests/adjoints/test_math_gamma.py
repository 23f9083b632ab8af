"""math.gamma and math.lgamma (zygotepy/adjoints/math_gamma.py): their rules and inlined scalar derivatives against
central finite differences, and the pure-Python digamma they fall back on without SciPy (not skipped without SciPy:
a subprocess checks the core install's path with SciPy made unimportable)."""
import math
import subprocess
import sys
import textwrap

import pytest

import zygotepy
from zygotepy.adjoints import math_gamma, registry
from zygotepy.testing import check_grads

EULER = 0.5772156649015329
POINTS = [0.3, 0.5, 1.0, 1.7, 2.5, 7.25, 12.0, 40.0, -0.4, -1.6, -2.5, -7.3]


def gamma_of(x):
    return math.gamma(x)


def lgamma_of(x):
    return math.lgamma(x)


def loop(x):
    """A loop of Python floats: the compiler inlines the table's scalar derivatives here (the fast path)."""
    s = 0.0
    for k in range(3):
        s = s + math.lgamma(x + k) + 0.1 * math.gamma(x + 0.5 * k)
    return s


@pytest.mark.parametrize("x", POINTS)
@pytest.mark.parametrize("f", [gamma_of, lgamma_of])
def test_matches_finite_differences(f, x):
    (g,) = check_grads(f, x)
    assert type(g) is float
    check_grads(f, x, seed=1)


@pytest.mark.optimizations
@pytest.mark.parametrize("x", [0.6, 1.9, 3.3])
def test_inlined_scalar_derivatives(x):
    check_grads(loop, x)
    assert "digamma" in str(zygotepy.show_adjoint(loop, optimized=True))  # the inlined derivatives, not a call of the rule


@pytest.mark.parametrize("target", list(math_gamma.GAMMA))
def test_scalar_derivative_agrees_with_rule(target):
    for x in (0.7, 2.2, -1.3):
        y, back = registry.find_rule(target)(x)
        assert back(0.5) == pytest.approx(registry.find_scalar(target)(0.5, y, x), rel=1e-15)
        assert back(None) == (None,)


def test_int_argument_is_differentiated():
    assert zygotepy.gradient(math.lgamma, 4)[0] == pytest.approx(1 + 1 / 2 + 1 / 3 - EULER, rel=1e-14)


def test_pure_python_digamma_known_values():
    d = math_gamma._digamma
    assert d(1.0) == pytest.approx(-EULER, rel=1e-15)
    assert d(0.5) == pytest.approx(-EULER - 2 * math.log(2), rel=1e-15)
    assert d(10.0) == pytest.approx(sum(1 / k for k in range(1, 10)) - EULER, rel=1e-15)
    assert d(-0.5) == pytest.approx(-EULER - 2 * math.log(2) + 2, rel=1e-14)  # psi(x + 1) = psi(x) + 1/x
    assert math.isnan(d(0.0)) and math.isnan(d(-3.0))  # the poles


@pytest.mark.parametrize("x", [1e-3, 0.1, 0.9, 1.4616321449683622, 3.7, 9.99, 10.0, 123.4, 1e8, -0.01, -3.3, -20.7])
def test_pure_python_digamma_against_lgamma_slope(x):
    """digamma is the slope of lgamma: a 4th-order central difference of math.lgamma agrees to ~1e-9 (a step small
    against the distance to the nearest pole, large against rounding)."""
    h = 1e-5 if abs(x) < 0.05 else 1e-4 * max(1.0, x)
    slope = (8 * (math.lgamma(x + h) - math.lgamma(x - h)) - (math.lgamma(x + 2 * h) - math.lgamma(x - 2 * h))) / (12 * h)
    assert math_gamma._digamma(x) == pytest.approx(slope, rel=1e-8, abs=1e-8)


def test_pure_python_digamma_against_scipy():
    sc = pytest.importorskip("scipy.special")
    for x in [1e-6, 0.2, 0.5, 1.0, 1.5, 2.0, 4.5, 9.5, 10.5, 33.3, 1e5, 1e12, -0.3, -1.5, -4.75, -100.2]:
        assert math_gamma._digamma(x) == pytest.approx(float(sc.digamma(x)), rel=1e-13, abs=1e-14), x


def test_without_scipy():
    """SciPy unimportable: zygotepy imports, scipy_special registers nothing, and math.gamma's gradient uses the
    pure-Python digamma."""
    code = textwrap.dedent("""
        import math, sys
        sys.modules["scipy"] = None  # `import scipy` raises ImportError
        import zygotepy
        from zygotepy.adjoints import math_gamma, registry, scipy_special
        assert scipy_special.sc is None and math_gamma._scipy_digamma is None
        assert scipy_special.UNARY == scipy_special.BINARY == scipy_special.CUSTOM == {}
        assert not [t for t, r in registry.RULES.items() if getattr(r, "__module__", "") == scipy_special.__name__]
        y, back = registry.find_rule(math.gamma)(2.5)
        expected = math.gamma(2.5) * (-0.5772156649015329 - 2 * math.log(2) + 2 + 2 / 3)  # psi(2.5)
        assert abs(back(1.0)[0] - expected) < 1e-14, back(1.0)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def _lgamma_slope(t):
    return zygotepy.gradient(math.lgamma, t)[0]


def test_second_derivative_by_nesting():
    """d2/dx2 lgamma(x) = trigamma(x); trigamma(1) = pi^2 / 6 (nesting goes through the rule's back and digamma)."""
    assert zygotepy.gradient(_lgamma_slope, 1.0)[0] == pytest.approx(math.pi ** 2 / 6, rel=1e-9)

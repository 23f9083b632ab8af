"""Tests of `zygotepy/adjoints/numpy/convolutions.py` (convolve, correlate and polyval): its rows of the rule table
against finite differences (tests/adjoints/numpy/rows_*.py, `row_tests` of tests/adjoints/test_rules.py)."""
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("convolutions"))


import numpy as np  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent.parent))  # tests/plain_checks.py
from plain_checks import central  # noqa: E402

from zygotepy import gradient  # noqa: E402


def complex_central(f, args, k):
    """dL/dRe z + 1j dL/dIm z of the real loss f at args[k] (docs/api.md's convention), by central differences; a real
    argument gets its real derivative."""
    z = args[k]
    if not np.iscomplexobj(z):
        return central(f, args, k)
    re = central(lambda x, *rest: f(*rest[:k], x + 1j * z.imag, *rest[k:]), [z.real, *args[:k], *args[k + 1:]], 0)
    im = central(lambda y, *rest: f(*rest[:k], z.real + 1j * y, *rest[k:]), [z.imag, *args[:k], *args[k + 1:]], 0)
    return re + 1j * im


_RNG = np.random.default_rng(11)
_A_REAL, _V_REAL = _RNG.normal(size=5), _RNG.normal(size=3)
_A_CPLX, _V_CPLX = _A_REAL + 1j * _RNG.normal(size=5), _V_REAL + 1j * _RNG.normal(size=3)
_W = _RNG.normal(size=7)


@pytest.mark.parametrize("fn", [np.convolve, np.correlate])
@pytest.mark.parametrize("how", ["full", "same", "valid"])
@pytest.mark.parametrize("pair", ["complex-v", "complex-a", "both-complex", "both-complex-v-longer"])
def test_complex_convolve_and_correlate_against_central_differences(mode, fn, how, pair):
    """np.correlate conjugates its second argument; the back must not conjugate it again: the cotangent of a is dy
    correlated with v (da_i = sum_j dy_(i+j) conj(v_j)), for complex inputs in either or both places, every mode."""
    a, v = {"complex-v": (_A_REAL, _V_CPLX), "complex-a": (_A_CPLX, _V_REAL), "both-complex": (_A_CPLX, _V_CPLX),
            "both-complex-v-longer": (_V_CPLX, _A_CPLX)}[pair]
    n = {"full": a.size + v.size - 1, "same": max(a.size, v.size), "valid": abs(a.size - v.size) + 1}[how]
    w = _W[:n]
    for loss in (lambda a, v: np.sum(np.imag(fn(a, v, how)) * w),
                 lambda a, v: np.sum(np.abs(fn(a, v, mode=how)) ** 2 * w)):
        grads = gradient(loss, a.copy(), v.copy())
        for k, g in enumerate(grads):
            np.testing.assert_allclose(g, complex_central(loss, [a, v], k), rtol=1e-6, atol=1e-7)

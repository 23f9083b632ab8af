"""Tests of `zygotepy/adjoints/numpy/fft.py` (np.fft's transforms and shifts): its rows of the rule table against finite
differences (tests/adjoints/numpy/rows_fft.py, `row_tests` of tests/adjoints/test_rules.py), and gradients of small
functions that use the FFT as a user would, against finite differences and, where there is one, a closed form."""
import sys
from pathlib import Path

import numpy as np
import pytest

import zygotepy
from zygotepy import ZygoteError
from zygotepy.adjoints import registry
from zygotepy.testing import check_grads

sys.path.insert(0, str(Path(__file__).parent.parent))  # the helpers of tests/adjoints
from rule_table import rows_of  # noqa: E402
from test_rules import row_tests  # noqa: E402

test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(rows_of("fft"))

RNG = np.random.default_rng(7)
X8 = RNG.normal(size=8)
X7 = RNG.normal(size=7)
W8 = RNG.normal(size=8)


def checked_gradient(f, *args):
    """The gradient of f at args, after `check_grads` has held f's pullback to central finite differences (its own
    result is the pullback of a random cotangent, not the gradient)."""
    check_grads(f, *args)
    return zygotepy.gradient(f, *args)


def energy(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def power_spectrum(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


@pytest.mark.parametrize("x", [X8, X7], ids=["even", "odd"])
def test_parseval(x):
    """sum |fft(x)|^2 = n sum x^2 (Parseval), so its gradient is 2 n x."""
    (g,) = checked_gradient(energy, x)
    np.testing.assert_allclose(g, 2 * len(x) * x, rtol=1e-12)


def test_parseval_of_a_complex_signal():
    """For complex z the gradient (dL/dRe + 1j dL/dIm) of n sum |z|^2 is 2 n z."""
    z = X8 + 1j * W8
    (g,) = zygotepy.gradient(energy, z)
    np.testing.assert_allclose(g, 2 * 8 * z, rtol=1e-12)


def test_parseval_with_the_unitary_norm():
    (g,) = checked_gradient(lambda x: np.sum(np.abs(np.fft.fft(x, norm="ortho")) ** 2), X7)
    np.testing.assert_allclose(g, 2 * X7, rtol=1e-12)


def test_parseval_in_two_dimensions():
    x = RNG.normal(size=(3, 4))
    (g,) = checked_gradient(lambda x: np.sum(np.abs(np.fft.fft2(x)) ** 2), x)
    np.testing.assert_allclose(g, 2 * 12 * x, rtol=1e-12)


@pytest.mark.parametrize("x", [X8, X7], ids=["even", "odd"])
def test_power_spectrum(x):
    """The one-sided power spectrum counts bins 1..(n-1)/2 once, not twice as the full one does: its gradient is 2 n x
    less the mirrored bins' share, 2 Re(F^H (bins 0..n/2 of F x))."""
    (g,) = checked_gradient(power_spectrum, x)
    n = len(x)
    kept = np.fft.fft(x) * (np.arange(n) <= n // 2)
    np.testing.assert_allclose(g, 2 * n * np.real(np.fft.ifft(kept)), rtol=1e-10)


def test_convolution_through_the_fft():
    """y = ifft(fft(x) fft(k)) is the circular convolution of x and k: d<w, y>/dx is the circular correlation of w
    with k, d<w, y>/dk that of w with x."""
    k = RNG.normal(size=8)

    def loss(x, k):
        return np.sum(W8 * np.real(np.fft.ifft(np.fft.fft(x) * np.fft.fft(k))))
    gx, gk = checked_gradient(loss, X8, k)
    correlate = lambda w, v: np.array([np.sum(w * np.roll(v, j)) for j in range(8)])  # noqa: E731
    np.testing.assert_allclose(gx, correlate(W8, k), rtol=1e-10)
    np.testing.assert_allclose(gk, correlate(W8, X8), rtol=1e-10)


def test_a_short_kernel_zero_padded_by_n():
    """fft(k, n=8) zero-pads a 3-tap kernel: its gradient is the first three entries of the padded one's."""
    k = np.array([1.0, -0.5, 0.25])
    check_grads(lambda x, k: np.sum(np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(k, n=8), n=8) ** 2), X8, k)


def test_fftshift():
    """fftshift is a permutation: the gradient of <w, fftshift(x)> is ifftshift(w)."""
    x = RNG.normal(size=(4, 5))
    w = RNG.normal(size=(4, 5))
    (g,) = checked_gradient(lambda x: np.sum(w * np.fft.fftshift(x)), x)
    np.testing.assert_allclose(g, np.fft.ifftshift(w))
    (g,) = checked_gradient(lambda x: np.sum(w * np.fft.ifftshift(np.fft.fftshift(x, axes=0), axes=(0,))), x)
    np.testing.assert_allclose(g, w)


def test_keywords_and_the_round_trip():
    """irfft(rfft(x), n) is x for every n: the gradient of <w, round trip> is w, with the arguments given by keyword."""
    (g,) = checked_gradient(lambda x: np.sum(W8 * np.fft.irfft(np.fft.rfft(a=x, norm="ortho"), n=8, norm="ortho")), X8)
    np.testing.assert_allclose(g, W8, rtol=1e-12)
    (g,) = checked_gradient(lambda x: np.sum(X7 * np.fft.irfftn(np.fft.rfftn(x, axes=(0,)), s=(7,), axes=(0,))), X7)
    np.testing.assert_allclose(g, X7, rtol=1e-12)


def test_a_spectral_filter():
    """A low-pass filter in the frequency domain of a 2-d signal, a smooth loss of its output."""
    x = RNG.normal(size=(4, 6))
    mask = np.zeros((4, 4))
    mask[:2, :2] = 1.0
    check_grads(lambda x: np.sum(np.fft.irfft2(np.fft.rfft2(x) * mask, s=x.shape) ** 3), x)


def test_second_derivative():
    """The Hessian of sum |fft(x)|^2 is 2 n I (nested reverse mode through the rule's back)."""
    x = X7[:5]
    np.testing.assert_allclose(zygotepy.hessian(energy, x), 10 * np.eye(5), atol=1e-10)


def test_float32_stays_float32():
    (g,) = zygotepy.gradient(power_spectrum, X8.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, zygotepy.gradient(power_spectrum, X8)[0], rtol=1e-4, atol=1e-4)


def test_frequencies_take_the_gradient_of_their_spacing(mode):
    """fftfreq(n, d) = k / (n d): a box length L setting the spacing (a particle-mesh energy) has a gradient through
    it, which was silently missing (the frequencies were constants)."""
    def energy(L, x):
        k = 2 * np.pi * np.fft.rfftfreq(8, d=L / 8)
        return np.sum(np.abs(np.fft.rfft(x)) ** 2 * np.exp(-k ** 2) / L)
    check_grads(energy, 7.5, X8)


def test_frequencies_are_constants_in_the_data():
    (g,) = zygotepy.gradient(lambda x: np.sum(x * np.fft.fftfreq(8, 0.5)), X8)
    np.testing.assert_allclose(g, np.fft.fftfreq(8, 0.5))
    (g,) = zygotepy.gradient(lambda x: np.sum(x * np.fft.rfftfreq(8)), X8[:5])
    np.testing.assert_allclose(g, np.fft.rfftfreq(8))


def test_out_is_written_after_the_call():
    """Generated code computes `np.fft.fft(x, out=buf)` without out= and writes the result into buf (the compiler's
    handling of out=), so the gradient is that of the plain call; the rule itself, handed out=, refuses it."""
    buf = np.empty(8, complex)
    (g,) = zygotepy.gradient(lambda x: np.sum(np.abs(np.fft.fft(x, out=buf)) ** 2), X8)
    np.testing.assert_allclose(g, 2 * 8 * X8, rtol=1e-12)
    np.testing.assert_allclose(buf, np.fft.fft(X8))
    with pytest.raises(ZygoteError, match="out="):
        registry.find_rule(np.fft.fft)(X8, out=buf)


def _masked_spectra(x):
    h = np.zeros(6)  # (a mask built with stores: hessian cannot retry by reverse-over-reverse through them)
    h[1] = 2.0
    h[2] = -0.5
    k = np.zeros(4)
    k[0] = 1.5
    power = np.abs(np.fft.rfft(x * x)) ** 2
    return np.sum(np.sin(np.fft.fft(x).real * h)) + np.sum(power[:4] * k) + np.sum(np.fft.irfft(np.fft.rfft(x) * 0.5, 6) ** 3)


def test_hessian_through_transforms_beside_stores(mode):
    """The transforms' backs run on hessian's dual numbers (they made plain arrays of them, and the retry by
    reverse-over-reverse cannot pass the stores)."""
    x = np.array([0.3, -1.2, 0.7, 0.4, 0.1, -0.6])
    H = zygotepy.hessian(_masked_spectra, x)
    h = 1e-5
    want = np.stack([(zygotepy.gradient(_masked_spectra, x + h * e)[0]
                      - zygotepy.gradient(_masked_spectra, x - h * e)[0]) / (2 * h) for e in np.eye(6)], axis=1)
    assert np.allclose(H, want, atol=1e-5)

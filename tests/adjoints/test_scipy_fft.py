"""scipy.fft (zygotepy/adjoints/scipy_fft.py): its transforms and shifts, which were refused (no rule), differentiated
as np.fft's; against central differences in float64 with every optimisation on and off, SciPy's own value (single
precision kept), its extra parameters, and `plan=` refused."""
import numpy as np
import pytest

sf = pytest.importorskip("scipy.fft")

from zygotepy import ZygoteError, gradient, value_and_gradient  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

X = np.linspace(-1.0, 1.0, 8) ** 2 + np.array([0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.0, 0.7])
W = np.arange(1.0, 11.0)


def padded_power(x):
    return np.sum(np.abs(sf.fft(x, 10, norm="ortho")) ** 2 * W)


def real_round_trip(x):
    spectrum = sf.rfft(x, workers=1, overwrite_x=True)
    return np.sum(spectrum.real * W[:5]) + np.sum(sf.irfft(spectrum * 1j, 8) ** 2)


def two_dimensional(x):
    a = x.reshape(2, 4)
    return np.sum(np.abs(sf.fft2(a)) ** 2 * 0.1) + np.sum(sf.ifftshift(sf.fftshift(a) * W[:8].reshape(2, 4)) * a)


def hermitian(x):
    return np.sum(sf.ihfft(x).imag * 3.0) + np.sum(sf.hfft(x[:5] + 0.5j, 8)) + np.sum(np.abs(sf.ifftn(x.reshape(2, 4), axes=(0,))))


def inverse_of_a_product(x):
    return np.sum(sf.irfftn(sf.rfftn(x.reshape(2, 4)) * sf.rfftn(x.reshape(2, 4) ** 2), s=(2, 4)) * x.reshape(2, 4))


@pytest.mark.parametrize("f", [padded_power, real_round_trip, two_dimensional, hermitian, inverse_of_a_product],
                         ids=lambda f: f.__name__)
def test_scipy_transforms_against_finite_differences(f, mode):
    value, _ = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    check_grads(f, X.copy())


def test_a_single_precision_input_keeps_scipys_value_and_its_dtype(mode):
    x = X.astype(np.float32)
    value, (g,) = value_and_gradient(lambda x: np.sum(np.abs(sf.rfft(x)) ** 2), x)
    assert value == np.sum(np.abs(sf.rfft(x)) ** 2)  # (SciPy's complex64 spectrum, not NumPy's complex128)
    assert g.dtype == np.float32


def test_a_plan_is_refused():
    with pytest.raises(ZygoteError, match="plan= is not differentiable"):
        gradient(lambda x: np.sum(np.abs(sf.fft(x, plan=object())) ** 2), X)


def test_sample_frequencies_take_the_gradient_of_their_spacing(mode):
    """scipy.fft.fftfreq / rfftfreq take np.fft's rule: the spacing d gets a gradient, by position and by keyword."""
    check_grads(lambda L: np.sum(sf.fftfreq(8, d=L) ** 2) + np.sum(sf.rfftfreq(7, L / 7) * W[:4]), 1.7)

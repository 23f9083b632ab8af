"""scipy.signal.lfilter (zygotepy/adjoints/scipy_signal.py, its tangent in forward/scipy_rules.py): the gradient and
the tangent with respect to the signal and to both coefficient lists, along any axis, against central differences in
float64 with every optimisation on and off; `hessian` (forward over reverse) of a filtered loss; initial conditions
(`zi`) refused, naming the user's line. It had no rule: refused in reverse mode, a SciPy ValueError in forward mode."""
import numpy as np
import pytest

signal = pytest.importorskip("scipy.signal")

from plain_checks import central, central_hessian, line_of  # noqa: E402
from zygotepy import ZygoteError, gradient, hessian, jvp  # noqa: E402
from zygotepy.testing import check_grads  # noqa: E402

X = np.array([0.3, -1.0, 0.5, 2.0, -0.7])
B, A = np.array([0.5, 0.3]), np.array([1.2, -0.4, 0.2])


def discounted_returns(r):
    return np.sum(signal.lfilter([1.0], [1.0, -0.9], r[::-1])[::-1] * np.arange(5))  # (the RL idiom)


def filtered_energy(b, a, x):
    return np.sum(signal.lfilter(b, a, x) ** 2)


def along_the_first_axis(x):
    return np.sum(np.sin(signal.lfilter([0.5, 0.2], [1.0, -0.3, 0.1], x, axis=0)))


def coefficients_by_keyword(x):
    return np.sum(signal.lfilter(b=[0.5, 0.2], a=[1.0, -0.5], x=x) * x)


@pytest.mark.parametrize("f, args", [(discounted_returns, (X,)), (filtered_energy, (B, A, X)),
                                     (along_the_first_axis, (np.arange(12.0).reshape(4, 3) / 7,)),
                                     (coefficients_by_keyword, (X,))],
                         ids=["discounted returns", "coefficients", "axis=0", "keywords"])
def test_against_central_differences(f, args, mode):
    check_grads(f, *args)


def test_coefficients_given_as_lists(mode):
    (g,) = gradient(lambda b: filtered_energy(b, [1.0, -0.5], X), [0.5, 0.3])
    want = central(lambda b: filtered_energy(b, [1.0, -0.5], X), (np.array([0.5, 0.3]),), 0)
    assert isinstance(g, list) and np.allclose(g, want, rtol=1e-6)


def test_tangents_and_the_hessian(mode):
    tangents = (np.ones(2), np.full(3, 0.1), np.ones(5))
    step = lambda s: filtered_energy(*(p + s * t for p, t in zip((B, A, X), tangents)))  # noqa: E731
    assert jvp(filtered_energy, (B, A, X), tangents)[1] == pytest.approx((step(1e-6) - step(-1e-6)) / 2e-6, rel=1e-6)
    want = central_hessian(lambda x: filtered_energy(B, A, x), X.copy())
    assert np.allclose(hessian(lambda x: filtered_energy(B, A, x), X), want, rtol=1e-5, atol=1e-6)


def with_initial_conditions(x):
    y, _ = signal.lfilter([1.0], [1.0, -0.5], x, zi=np.array([0.2]))
    return np.sum(y)


def test_initial_conditions_are_refused_naming_the_line():
    with pytest.raises(ZygoteError, match=f"{line_of(with_initial_conditions, 'zi=')}.*initial conditions"):
        gradient(with_initial_conditions, X)

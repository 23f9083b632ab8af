"""`hessian` through NumPy functions' rules in a function that also stores into an array it made: forward-over-reverse
runs the rules' backs on dual numbers (`common.arrayed` keeps a cotangent's tangent where `np.asarray` refused it), and
the retry by reverse-over-reverse cannot pass the store, so each row was refused before unless its rule already took
dual numbers. Checked against central differences of the gradient, with every optimisation on and off."""
import numpy as np
import pytest

from zygotepy import gradient, hessian, jvp

X = np.array([0.3, -0.8, 1.9, 0.4])

ROWS = {
    "linspace": lambda v: np.sum(np.linspace(v[0], v[1] * 2, 5) ** 3),
    "polyval": lambda v: np.sum(np.polyval(v, np.array([0.3, 0.7])) ** 2),
    "polyder": lambda v: np.sum(np.polyval(np.polyder(v), 0.3) ** 2),
    "vander": lambda v: np.sum(np.vander(v, 3) ** 2),
    "ediff1d": lambda v: np.sum(np.ediff1d(v ** 2) ** 2),
    "select": lambda v: np.sum(np.select([v > 0, v <= 0], [v ** 2, v ** 3])),
    "quantile": lambda v: np.quantile(v ** 2, 0.3) ** 2,
    "cov": lambda v: np.sum(np.cov(np.stack([v, v ** 2])) ** 2),
    "median": lambda v: np.median(v ** 3) + np.nanmedian(v ** 2),
    "nanstd": lambda v: np.nanstd(v ** 2) + np.nanvar(v),
    "sort": lambda v: np.sum(np.sort(v) ** 3),
    "hstack": lambda v: np.sum(np.hstack([v, v[:2] * 3]) ** 3),
    "kron": lambda v: np.sum(np.kron(v[:2], v[2:]) ** 2),
    "pad": lambda v: np.sum(np.pad(v, 1, mode="edge") ** 3),
}


def _beside_a_store(g):
    def f(v):
        c = np.zeros(2)
        c[0] = 1.0
        return g(v) * c.sum()
    return f


@pytest.mark.parametrize("name", list(ROWS))
def test_hessian_beside_a_store(mode, name):
    f = _beside_a_store(ROWS[name])
    h = 1e-5
    want = np.stack([(gradient(f, X + h * e)[0] - gradient(f, X - h * e)[0]) / (2 * h) for e in np.eye(4)], axis=1)
    assert np.allclose(hessian(f, X), want, atol=1e-4, rtol=1e-4)


BINS = np.array([0, 1, 1, 2])


def _binned(x):
    return np.sum(np.sin(np.bincount(BINS, weights=x, minlength=3))) + np.sum(np.bincount(BINS, x * x) ** 2)


def test_bincount_in_forward_mode_and_hessian(mode):
    """np.bincount's weights (by keyword too) carry tangents: linear in them (a tangent rule, and the reverse rule's
    value on dual numbers); jvp raised MissingTangentRule and hessian refused."""
    h = 1e-5
    want = np.stack([(gradient(_binned, X + h * e)[0] - gradient(_binned, X - h * e)[0]) / (2 * h) for e in np.eye(4)],
                    axis=1)
    assert np.allclose(hessian(_binned, X), want, atol=1e-6)
    t = np.array([1.0, -1.0, 0.5, 2.0])
    assert np.isclose(jvp(_binned, (X,), (t,))[1], gradient(_binned, X)[0] @ t)


def _distances_from_a_list(w):
    ws = w.tolist()  # (numbers in a dict, as a shortest-path relaxation keeps them)
    dist = {0: 0.0}
    for k in range(3):
        dist[k + 1] = dist[k] + ws[k] * ws[k + 1]
    return dist[3] ** 3


def test_hessian_through_tolist(mode):
    """tolist's back made a NumPy array of hessian's dual numbers (refused): a dual array of them."""
    h = 1e-5
    f = _distances_from_a_list
    want = np.stack([(gradient(f, X + h * e)[0] - gradient(f, X - h * e)[0]) / (2 * h) for e in np.eye(4)], axis=1)
    assert np.allclose(hessian(f, X), want, atol=1e-5)

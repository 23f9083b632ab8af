"""The passes of `f` a forward-mode derivative makes (forward/passes.py), and state outside `f`'s arguments that one
pass leaves for the next: a running average on an object `f` captures (`s.m = 0.5 * s.m + 0.5 * x`), a dict or list
entry, a log. `hessian` and `jacobian(mode="forward")` ran the next pass from that state, perturbation included: a
wrong Hessian (diagonal [0.45, -0.5] for [0.45, -0.75]) returned as a dual number, and the user's state left holding
dual numbers (found by a probe of nested differentiation). Refused now before the next pass, naming the state; `jvp`,
`hvp` and the reverse-mode derivatives (one pass) leave it as one call of `f` does."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient, hessian, hvp, jacobian, jvp


class _State:
    def __init__(self):
        self.m = np.zeros(2)


def _running_average(s):
    def f(x):
        s.m = 0.5 * s.m + 0.5 * x
        return np.sum((x - s.m) ** 2 * x)
    return f


def _entry_of(d):
    def f(x):
        d["m"] = 0.5 * d["m"] + 0.5 * x
        return np.sum((x - d["m"]) ** 2 * x)
    return f


X = np.array([0.3, -0.5])


@pytest.mark.parametrize("derive", [lambda f: hessian(f, X), lambda f: jacobian(f, X, mode="forward")],
                         ids=["hessian", "forward jacobian"])
def test_state_a_pass_leaves_for_the_next_is_refused(derive, mode):
    s, d = _State(), {"m": np.zeros(2)}
    with pytest.raises(ZygoteError, match=r"in state outside them \(s\.m\)"):
        derive(_running_average(s))
    assert type(s.m) is np.ndarray  # (made the values it carries: no dual number left with the user)
    with pytest.raises(ZygoteError, match=r"\(d\['m'\]\)"):
        derive(_entry_of(d))
    assert type(d["m"]) is np.ndarray


def test_one_pass_derivatives_leave_the_state_as_one_call_does(mode):
    s = _State()
    _, t = jvp(_running_average(s), (X,), (np.ones(2),))
    np.testing.assert_allclose(s.m, 0.5 * X)
    assert type(s.m) is np.ndarray
    np.testing.assert_allclose(t, gradient(_running_average(_State()), X)[0] @ np.ones(2))
    s = _State()
    (hv,) = hvp(_running_average(s), (X,), (np.ones(2),))
    assert type(s.m) is np.ndarray
    np.testing.assert_allclose(hv, 6 * 0.25 * X)  # (the Hessian is diagonal, 6 (1/4) x: f = sum(x^3) / 4)
    np.testing.assert_allclose(jacobian(_running_average(_State()), X, mode="reverse")[0],
                               gradient(_running_average(_State()), X)[0])


def test_an_object_argument_left_with_dual_numbers_is_made_plain(mode):
    class Norm:
        def __init__(self):
            self.running = np.zeros(2)

    def f(x, m):
        m.running = 0.5 * x
        return np.sum(x ** 3)
    m = Norm()
    h = hessian(f, X, m, argnums=0)
    np.testing.assert_allclose(h, np.diag(6 * X))
    assert type(m.running) is np.ndarray


def test_each_pass_draws_the_random_numbers_the_first_drew(mode):
    """`hessian` and a forward `jacobian` of a function drawing from a generator made outside it: each pass drew new
    numbers (a Hessian of no single realisation, not symmetric; found by a probe of random code). The generators the
    function may draw from are put back before each pass after the first, and end as one call leaves them."""
    rng = np.random.default_rng(0)

    def f(x):
        a = rng.standard_normal((x.size, x.size))
        return 0.5 * x @ (a + a.T) @ x + np.sum(x ** 3)

    x = np.array([0.3, -0.5, 0.8])
    h = hessian(f, x)
    a = np.random.default_rng(0).standard_normal((3, 3))
    np.testing.assert_allclose(h, a + a.T + np.diag(6 * x), rtol=1e-12)
    assert rng.standard_normal() == np.random.default_rng(0).standard_normal(10)[-1]
    rng = np.random.default_rng(0)
    np.testing.assert_allclose(jacobian(f, x, mode="forward")[0], (a + a.T) @ x + 3 * x ** 2, rtol=1e-12)


def _stores_through_one(x, y):
    x[0] = 3.0 * x[1]
    return np.sum(x * y)


def _scales_one(x, y):
    x *= 2.0
    return np.sum(x * y)


@pytest.mark.parametrize("f", [_stores_through_one, _scales_one], ids=lambda f: f.__name__)
def test_an_array_given_twice_and_updated_is_refused(f):
    """`jvp(f, (b, b), ...)` perturbs the two arguments as separate inputs: the update through one reached the other's
    value, not its tangent (-10 for -16, 9 for 12). Refused, as `gradient(f, b, b)` is (which answered the second)."""
    a, v = np.array([0.5, -1.0, 2.0]), np.ones(3)
    b = a.copy()
    with pytest.raises(ZygoteError, match="shares its memory"):
        jvp(f, (b, b), (v, v))
    b = a.copy()
    with pytest.raises(ZygoteError, match="same object|both reach"):
        gradient(f, b, b)
    b = a.copy()
    with pytest.raises(ZygoteError, match="shares its memory"):
        jacobian(f, b, b, mode="forward")
    assert jvp(lambda x, y: np.sum(x * y), (a, a), (v, 2 * v))[1] == pytest.approx(3 * np.sum(a))

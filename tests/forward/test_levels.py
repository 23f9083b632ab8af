"""Entering and leaving a level of forward mode (forward/levels.py): `make_dual` perturbs numbers, arrays and
containers of them at a tag, keeps constants (a None tangent) as they are, and refuses what it cannot perturb;
`tangent_of` reads a result's tangent in the result's structure."""
import dataclasses
import types

import numpy as np
import pytest

from zygotepy import jacobian, jvp
from zygotepy.errors import ForwardModeError, ZygoteError
from zygotepy.forward.dual import Dual, new_tag
from zygotepy.forward.levels import make_dual, tangent_of


def test_numbers_arrays_and_containers_are_perturbed_at_the_tag():
    tag = new_tag()
    x = make_dual({"a": [1.0, np.array([1, 2])], "b": 2.0}, {"a": [0.5, np.array([1.0, 0.0])], "b": None}, tag)
    assert isinstance(x["a"][0], Dual) and x["a"][0].tag == tag and x["b"] == 2.0
    assert x["a"][1].tangent.dtype == np.float64  # (an int array's tangent is real)
    y = x["a"][0] * 3.0 + np.sum(x["a"][1] * x["a"][1])
    assert tangent_of(y, tag) == pytest.approx(0.5 * 3.0 + 2.0 * 1.0 * 1.0)


def test_what_cannot_be_perturbed_is_refused():
    with pytest.raises(ForwardModeError, match="cannot perturb a str"):
        make_dual("x", 1.0, new_tag())
    with pytest.raises(ForwardModeError, match="tangent of shape"):
        make_dual(np.zeros(3), np.zeros(2), new_tag())


@dataclasses.dataclass(frozen=True)
class _Pair:
    a: float
    b: np.ndarray


def test_an_objects_tangent_is_an_object_of_its_type():
    """Forward mode returned None for a dataclass, SimpleNamespace or plain object output (`derivative(lambda t:
    O(t * 2), 3.0)`), where reverse mode's jacobian gives `O(a=2.0)`."""
    from zygotepy import derivative, jvp
    got = derivative(lambda t: _Pair(t * 2.0, np.array([t, t * t])), 3.0)
    assert type(got) is _Pair and got.a == 2.0
    np.testing.assert_allclose(got.b, [1.0, 6.0])
    y, t = jvp(lambda s: types.SimpleNamespace(a=s * 2.0, c="label"), (3.0,), (1.0,))
    assert (y.a, y.c, t.a) == (6.0, "label", 2.0) and type(y.a) is float


class _Model:
    def __init__(self, w):
        self.w = w

    def predict(self, X):
        return np.tanh(X @ self.w)

    def loss(self, X, Y):  # (a method calling another: the call `m.loss(...)` may update m, as the lowering reads it)
        return np.mean((self.predict(X) - Y) ** 2)


_X, _Y = np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.1, 0.2])


def _outer(w):
    import zygotepy
    return np.sum(zygotepy.gradient(lambda m: m.loss(_X, _Y), _Model(w))[0].w ** 2)


@pytest.mark.dual_route
def test_a_nested_gradient_over_a_model_object():
    """The inner gradient's argument is an object: forward mode refused to perturb it ("cannot perturb a _Model")."""
    w = np.array([0.3, -0.4])
    import zygotepy
    (g,) = zygotepy.gradient(_outer, w)
    fd = [(_outer(w + 1e-6 * e) - _outer(w - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_jvp_of_an_object_argument_takes_a_tangent_of_its_fields():
    import zygotepy
    m = _Model(np.array([1.0, 2.0]))
    y, t = zygotepy.jvp(lambda m: np.sum(m.w ** 2), (m,), (zygotepy.StructGrad(w=np.array([0.0, 1.0])),))
    assert (y, t) == (5.0, 4.0)


class _SelfHolding:
    def __init__(self, w):
        self.w = w
        self.me = self


def test_an_object_met_twice_is_not_perturbed_in_a_copy():
    """A copy's `me` would point at the unperturbed original (jvp gave 3.0 for 6.0): refused."""
    import zygotepy
    with pytest.raises(ForwardModeError, match="cannot perturb a _SelfHolding"):
        zygotepy.jvp(lambda s: s.w ** 2 + s.me.w * 3.0, (_SelfHolding(1.5),), (zygotepy.StructGrad(w=1.0),))


@pytest.mark.parametrize("f, x, v", [
    (lambda a: scipy_linalg().inv(a), np.array([[2.0, 0.3], [0.1, 1.5]]), np.array([[0.1, 0.2], [-0.3, 0.4]])),
    (lambda a: scipy_linalg().expm(a), np.array([[0.2, 0.3], [0.1, -0.5]]), np.array([[0.1, 0.2], [-0.3, 0.4]])),
    (lambda a: scipy_linalg().det(a) * a, np.array([[2.0, 0.3], [0.1, 1.5]]), np.array([[0.1, 0.2], [-0.3, 0.4]])),
    (lambda x: np.sinc(x) + np.fmax(x, 0.5), np.array([0.3, 1.2]), np.array([1.0, -2.0])),
    (lambda x: np.gradient(x ** 2), np.array([0.3, 1.2, 0.5]), np.array([1.0, -2.0, 0.4]))],
    ids=["scipy inv", "scipy expm", "scipy det", "sinc and fmax", "np.gradient"])
def test_a_tangent_from_the_reverse_rule_where_there_is_no_tangent_rule(f, x, v):
    """Functions with a reverse rule and no tangent rule (jvp and a forward jacobian refused them: MissingTangentRule)
    get the tangent from the reverse rule's back, one backward per output element (a small output)."""
    y, t = jvp(f, (x,), (v,))
    h = 1e-6
    np.testing.assert_allclose(y, f(x))
    np.testing.assert_allclose(t, (f(x + h * v) - f(x - h * v)) / (2 * h), rtol=1e-6, atol=1e-7)


def scipy_linalg():
    return pytest.importorskip("scipy.linalg")


@pytest.mark.parametrize("f", [
    lambda z: np.rot90(z),
    lambda z: np.linalg.matrix_transpose(z) if hasattr(np.linalg, "matrix_transpose") else z.T,
    lambda z: np.lib.stride_tricks.sliding_window_view(z.ravel(), 2)], ids=["rot90", "matrix_transpose", "windows"])
def test_a_view_s_tangent_from_the_reverse_rule_is_a_view(f):
    """A view made by a function with a reverse rule only got a new tangent array: an update in place through the
    view changed the values of its array but not their tangents (jvp 1 for 2)."""
    def g(a):  # (the base updated: the view shows it, tangent included)
        z = a * 1.0
        r = f(z)
        z *= 2.0
        z[0, 0] = 5.0 * z[1, 1]
        return r * 1.0
    a, v = np.arange(1.0, 7.0).reshape(2, 3), np.linspace(0.5, 1.5, 6).reshape(2, 3)
    y, t = jvp(g, (a,), (v,))
    np.testing.assert_allclose(y, g(a))
    np.testing.assert_allclose(t, (g(a + 1e-6 * v) - g(a - 1e-6 * v)) / 2e-6, atol=1e-6)


def test_namedtuple_arguments_and_outputs_in_forward_mode():
    """A namedtuple argument (`jvp`) or output (a forward `jacobian`) was rebuilt from one generator: TypeError."""
    import collections
    Pair = collections.namedtuple("Pair", "w s")

    def f(p):
        return np.sum(p.w ** 2) * p.s
    p, v = Pair(np.array([1.0, 2.0]), 3.0), Pair(np.array([1.0, 0.0]), 1.0)
    y, t = jvp(f, (p,), (v,))
    assert y == pytest.approx(15.0) and t == pytest.approx(2.0 * 3.0 + 5.0)
    with pytest.raises(ZygoteError, match="real numbers or real arrays"):  # (as a plain tuple's: documented)
        jacobian(lambda x: Pair(x * 2.0, x[0]), np.array([1.0, 2.0]), mode="forward")

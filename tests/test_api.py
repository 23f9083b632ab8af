"""The entry points' contract on what they hand back (zygotepy/api.py)."""
import collections

import numpy as np
import pytest

import zygotepy
from zygotepy import ZygoteError, gradient, tree_map, value_and_gradient


def test_two_arguments_never_share_one_gradient_array():
    """`x + y` hands both operands the same cotangent: returned as is, `gx *= 0.5` changed `gy` too (found by a probe
    of research-style programs). Each argument gets an array of its own."""
    def f(x, y):
        return np.sum(x + y)

    x, y = np.ones(3), np.ones(3)
    gx, gy = gradient(f, x, y)
    assert not np.shares_memory(gx, gy)
    gx *= 0.5
    assert gy.tolist() == [1.0, 1.0, 1.0]
    _, (gx, gy) = value_and_gradient(f, x, y)
    assert gx is not gy and gx.tolist() == gy.tolist() == [1.0, 1.0, 1.0]


def test_hvp_leaves_the_vector_and_hessian_checks_argnums():
    """hvp of a function that updates its argument in place overwrote the caller's vector (the dual's tangent, updated
    in place with it); hessian with an argnums naming no argument raised an IndexError."""
    import pytest

    from zygotepy import ZygoteError, hessian, hvp

    def f(x):
        x[0] = x[0] ** 2
        return np.sum(x * x)

    v = np.array([1.0, 1.0])
    np.testing.assert_allclose(hvp(f, (np.array([3.0, 1.0]),), (v,))[0], [108.0, 2.0])
    assert v.tolist() == [1.0, 1.0]
    with pytest.raises(ZygoteError, match="argnums=2 does not name"):
        hessian(lambda x, y: np.sum(x ** 3) * y, np.ones(2), 1.0, argnums=2)


def test_entry_points_inside_reverse_mode_say_so():
    """gradient of a function calling jacobian, hessian, hvp, jvp or derivative failed deep inside zygotepy's own files
    (try/except, an update in place of theirs); a ZygoteError names the call now."""
    import pytest

    from zygotepy import ZygoteError, derivative, hessian, hvp, jacobian, jvp

    def cubic(x):
        return np.sum(x ** 3)

    calls = [lambda x: np.sum(jacobian(np.sin, x)[0]), lambda x: np.sum(hessian(cubic, x)),
             lambda x: np.sum(hvp(cubic, (x,), (x,))[0]), lambda x: jvp(cubic, (x,), (x,))[1],
             lambda x: derivative(lambda t: t * np.sum(x), 1.0)]
    for f in calls:
        with pytest.raises(ZygoteError, match="called inside a function that reverse mode differentiates"):
            gradient(f, np.array([0.3, 0.5]))


def test_pullback_checks_the_cotangent_and_hvp_takes_trees():
    """back(dy) with a cotangent of another shape raised NumPy's errors from inside a rule, and a list cotangent a
    TypeError; hvp of a list of arrays raised NumPy's ValueError (hessian and jvp took it)."""
    import pytest

    from zygotepy import ZygoteError, hvp, pullback

    x = np.array([0.3, -0.5, 0.8])
    y, back = pullback(lambda v: np.sin(v) * 2.0, x)
    with pytest.raises(ZygoteError, match=r"a cotangent of shape \(2,\) for an output of shape \(3,\)"):
        back(np.ones(2))
    np.testing.assert_allclose(back([1.0, 0.0, 1.0])[0], 2 * np.cos(x) * [1.0, 0.0, 1.0])

    def f(ps):
        return np.sum(ps[0] ** 2 * ps[1][0])

    a, b = np.array([0.3, -0.5, 0.8]), np.array([1.1, 0.4])
    got = hvp(f, ([a, b],), ([np.ones(3), np.zeros(2)],))[0]
    np.testing.assert_allclose(got[0], 2 * b[0] * np.ones(3))
    np.testing.assert_allclose(got[1], [2 * np.sum(a), 0.0])


@pytest.mark.parametrize("out, dy, what", [
    ((lambda x: (x * 2, x)), np.ones(3), "does not match the output"),
    ((lambda x: {"a": x * 2}), {"b": 1.0}, "does not match the output"),
    ((lambda x: [x, x]), 1.0, "does not match the output"),
    ((lambda x: {"a": x * 2}), [1.0, 2.0], "does not match the output"),
    ((lambda x: (x * 2, x)), (1.0,), "has 1 entries, the output 2"),
    ((lambda x: x), 1.0, r"has shape \(\), the output \(3,\)"),
    ((lambda x: np.cumsum(x)), 1.0, r"has shape \(\), the output \(3,\)"),
], ids=["array-for-tuple", "unknown-key", "number-for-list", "list-for-dict", "short-tuple", "number-for-array",
        "number-for-cumsum"])
def test_a_cotangent_that_does_not_match_the_output_is_refused(out, dy, what):
    # (an array for a tuple crashed with ValueError; an unknown key was dropped: a gradient of None; a number for an
    # array output gave the identity's argument a float gradient, and crashed others)
    _, back = zygotepy.pullback(out, np.ones(3))
    with pytest.raises(ZygoteError, match=what):
        back(dy)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_0d_array_gets_a_0d_array_of_its_dtype(dtype):
    # (its gradient was a NumPy scalar, np.float64, where the conventions say an array of the argument's shape)
    x = np.array(0.7, dtype=dtype)
    for f in (lambda v: v * v, lambda v: np.sin(v) * v):
        g = gradient(f, x)[0]
        assert type(g) is np.ndarray and g.shape == () and g.dtype == dtype
        np.testing.assert_allclose(g, 2 * 0.7 if f(2.0) == 4.0 else np.cos(0.7) * 0.7 + np.sin(0.7), rtol=1e-6)
    g = gradient(lambda ps: ps[0] * ps[1], [x, 2.0])[0]
    assert type(g[0]) is np.ndarray and g[0].shape == () and type(g[1]) is float


@pytest.mark.parametrize("library", ["torch", "jax.numpy", "array_api_strict", "numpy"])
def test_a_float_beside_another_librarys_array_gets_a_float(library):
    # (it got a 0-d tensor or array of that library)
    lib = pytest.importorskip(library)
    x = lib.ones(3, dtype=lib.float64) if library != "jax.numpy" else lib.ones(3)
    _, ga = gradient(lambda x, a: lib.sum(x * a) + a ** 2, x, 1.5)
    assert type(ga) is float and ga == 6.0


@pytest.mark.parametrize("library", ["torch", "array_api_strict", "numpy"])
def test_a_float32_argument_beside_a_float64_one_gets_float32(library):
    # (torch's and array-API arrays got float64: the cast used `.astype`, which they have not)
    lib = pytest.importorskip(library)
    g32, g64 = gradient(lambda x, w: lib.sum(x * w), lib.ones(3, dtype=lib.float32), lib.ones(3, dtype=lib.float64))
    assert g32.dtype == lib.float32 and g64.dtype == lib.float64


def test_a_jax_array_read_through_numpy_gets_a_jax_gradient():
    # (`np.asarray(x)` in f: the gradient was a NumPy array)
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.array([0.3, -1.2, 0.7])
    g = gradient(lambda x: float(np.sum(np.asarray(x) ** 2)), x)[0]
    assert type(g) is type(x) and np.allclose(np.asarray(g), 2 * np.asarray(x))


@pytest.mark.parametrize("on", [True, False], ids=["optimized", "plain"])
def test_an_ints_gradient_is_a_float_in_both_modes(on):
    """With every optimisation off, `abs(n)` of an int gave an `np.float64`."""
    with zygotepy.optimizations(on):
        g, = gradient(lambda n: abs(n) * 2, 4)
        assert type(g) is float and g == 2.0


def test_argnums_may_be_a_numpy_integer():
    """`argnums=np.int64(1)` was refused ("does not name positional arguments")."""
    assert gradient(lambda x, y: x * y, 2.0, 3.0, argnums=np.int64(1)) == 2.0
    assert zygotepy.hessian(lambda x, y: x * y * y, 2.0, 3.0, argnums=np.int64(1)) == 4.0


@pytest.mark.parametrize("on", [True, False], ids=["optimized", "plain"])
def test_a_numpy_integer_scalar_is_data_as_integer_arrays_are(on):
    """api.md: a Python int in arithmetic gets a float gradient; a NumPy integer scalar, like an integer array, gets
    None (whatever route computes its cotangent), so that `x * x` and `x ** n` agree."""
    with zygotepy.optimizations(on):
        assert gradient(lambda x: x * x, np.int64(3)) == (None,)
        assert gradient(lambda x, n: x ** n, 2.0, np.int64(3)) == (12.0, None)
        assert gradient(lambda x, n: x ** n, 2.0, 3)[1] == pytest.approx(8 * np.log(2.0))


def test_an_integer_torch_tensor_gets_no_gradient():
    """api.md: integer arrays are data; an int64 tensor got x truncated as its "gradient"."""
    torch = pytest.importorskip("torch")
    assert gradient(lambda x: torch.sum(x * x), torch.tensor([1, 2, 3])) == (None,)


def test_a_numpy_arguments_gradient_is_a_numpy_array_whatever_library_f_hands_it_to(mode):
    """With optimisations on, `np.sum(a ** 2) + jnp.sum(j ** 2)` gave `a` a JAX array as its gradient; the torch
    analogue crashed casting a tensor to a NumPy dtype."""
    a = np.array([1.0, 2.0])
    jnp = pytest.importorskip("jax.numpy")
    got = gradient(lambda a, j: np.sum(a ** 2) + jnp.sum(j ** 2), a, jnp.array([0.5, 1.5]))
    assert type(got[0]) is np.ndarray and got[0].dtype == np.float64
    np.testing.assert_allclose(got[0], 2 * a)
    assert type(gradient(lambda a: jnp.sum(jnp.asarray(a) ** 2), a)[0]) is np.ndarray
    torch = pytest.importorskip("torch")
    t = torch.tensor([3.0, 4.0], dtype=torch.float64)
    got = gradient(lambda a, t: (t ** 2).sum() * np.sum(a ** 2), a, t)
    assert type(got[0]) is np.ndarray
    np.testing.assert_allclose(got[0], 2 * a * 25.0)
    torch.testing.assert_close(got[1], 2 * t * 5.0)


class _Items(list):
    pass


class _Pair(tuple):
    pass


class _Config(dict):
    def __init__(self, name, **entries):  # (a constructor that does not take the items)
        super().__init__(**entries)
        self.name = name


@pytest.mark.parametrize("make", [
    lambda: collections.defaultdict(float, a=2.0, b=3.0), lambda: _Config("c", a=2.0, b=3.0),
    lambda: _Items([2.0, 3.0]), lambda: _Pair([2.0, 3.0]),
], ids=["defaultdict", "dict-subclass", "list-subclass", "tuple-subclass"])
def test_a_container_subclass_argument_gets_a_gradient_of_its_type(mode, make):
    """`defaultdict` and list/tuple subclasses crashed in the projection (`type(arg)(items)`); a dict subclass whose
    constructor takes other arguments got `{}`, silently."""
    arg = make()
    keys = ("a", "b") if isinstance(arg, dict) else (0, 1)
    got = gradient(lambda d: d[keys[0]] * d[keys[1]] ** 2, arg)[0]
    assert type(got) is type(arg)
    assert [got[k] for k in keys] == [9.0, 12.0]
    assert tree_map(lambda v: v * 2, arg)[keys[1]] == 6.0


def test_a_pullbacks_gradient_is_not_the_callers_cotangent_object(mode):
    """`x + 1.0` passes dy through: the gradient returned was the caller's own dy, so `g *= 0` zeroed it."""
    from zygotepy import pullback
    _, back = pullback(lambda x: x + 1.0, np.zeros(3))
    dy = np.ones(3)
    (g,) = back(dy)
    g *= 0.0
    assert dy.tolist() == [1.0, 1.0, 1.0]


def test_a_pullbacks_gradients_share_no_array_with_the_cotangent_or_each_other(mode):
    """A structured output passing arrays through (`(x, z)`, `{"a": x}`): both gradients were the caller's `dy`, so
    scaling one in place changed the other, the caller's `dy`, and a later `back` of the same `dy`."""
    from zygotepy import pullback
    _, back = pullback(lambda x, z: (x, z), np.zeros(3), np.ones(3))
    dy = np.ones(3)
    gx, gz = back((dy, dy))
    gx *= 0.5
    assert gz.tolist() == [1.0, 1.0, 1.0] and dy.tolist() == [1.0, 1.0, 1.0]
    _, back = pullback(lambda x: {"a": x}, np.zeros(3))
    (g1,) = back({"a": dy})
    g1 *= 0.1
    assert back({"a": dy})[0].tolist() == [1.0, 1.0, 1.0]


def test_a_list_argument_taken_as_an_array_gets_a_list():
    """`np.sort(xs)` and `np.clip(xs, ...)` of a list crashed inside their rules (`list.ndim`); `np.linalg.norm`,
    `np.dot` and `np.array` of a list gave an array, where a list's gradient is a list (docs/api.md)."""
    w = np.array([1.0, -2.0, 0.5])
    cases = [(lambda x: np.sum(np.sort(x) * w), [0.3, -1.2, 2.5], [-2.0, 1.0, 0.5]),
             (lambda x: np.sum(np.clip(x, -1.0, 1.0) * w), [0.3, -1.2, 2.5], [1.0, 0.0, 0.0]),
             (lambda x: np.linalg.norm(x), [3.0, 4.0], [0.6, 0.8]),
             (lambda x: np.dot(x, x), [1.0, 2.0], [2.0, 4.0]),
             (lambda x: np.sum(np.array(x) * np.array([1.0, 2.0])), [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [1.0, 2.0]])]
    for f, x, want in cases:
        (g,) = gradient(f, x)
        assert type(g) is list and np.allclose(g, want), (g, want)
        assert all(type(v) is list for v in g) if type(x[0]) is list else True


@pytest.mark.parametrize("arg", [1.5, np.float64(1.5), 2])
def test_a_number_through_a_one_entry_array_gets_a_number(arg, mode):
    """`np.ravel(a)`, `np.outer(a, M)`, `np.kron(a, M)` of a float: its gradient was a 0-d array."""
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    with zygotepy.optimizations(mode):
        for f, want in ((lambda a: np.sum(np.ravel(a) * 2.0), 2.0), (lambda a: np.sum(np.outer(a, M)), 10.0),
                        (lambda a: np.sum(np.kron(a, M)), 10.0)):
            (g,) = zygotepy.gradient(f, arg)
            assert g == want and type(g) is (np.float64 if type(arg) is np.float64 else float)


def _cubes(x):
    return np.sum(x ** 3)


def _doubled_squares(x):
    x *= 2.0
    return np.sum(x ** 2)


def test_an_array_updated_after_pullback_is_refused_by_back(mode):
    """`back` reads the arrays (x for x ** 3, y for exp): an update in place between pullback and back gave the gradient
    at the new values (an optimiser's step, then a second back)."""
    with zygotepy.optimizations(mode):
        x = np.array([1.0, 2.0, 3.0])
        _, back = zygotepy.pullback(_cubes, x)
        np.testing.assert_allclose(back(1.0)[0], [3.0, 12.0, 27.0])
        x -= 0.1
        with pytest.raises(ZygoteError, match="argument 0 of pullback was updated in place"):
            back(1.0)
        y, back = zygotepy.pullback(np.exp, np.array([0.5, -1.0]))
        y *= 0.0
        with pytest.raises(ZygoteError, match="the output of pullback"):
            back(np.ones(2))
        x = np.array([1.0, 2.0])
        _, back = zygotepy.pullback(_doubled_squares, x)  # (f's own update is no later one: x is 2 x0 after the call)
        np.testing.assert_allclose(back(1.0)[0], [8.0, 16.0])
        np.testing.assert_allclose(back(1.0)[0], [8.0, 16.0])


def _weighted(x, argnums=1.0):
    return x * argnums


class _Lin:
    def __init__(self, w):
        self.w = w

    def apply(self, v):
        return self.w * v


def test_grad_passes_a_keyword_named_argnums_to_f_and_refuses_no_arguments():
    assert zygotepy.grad(_weighted)(2.0, argnums=4.0) == 4.0
    assert zygotepy.value_and_grad(_weighted)(2.0, argnums=4.0) == (8.0, 4.0)
    with pytest.raises(ZygoteError, match="no arguments"):
        zygotepy.grad(_weighted)()


def test_forwarddiff_of_a_callable_holding_values_with_a_gradient_is_refused():
    """A bound method's object, a partial's arguments, a callable object's fields got None (forwarddiff differentiates
    with respect to x only; a closure's captured floats are handled, these were not)."""
    import functools
    for loss in (lambda m, v: zygotepy.forwarddiff(m.apply, v),
                 lambda m, v: zygotepy.forwarddiff(functools.partial(lambda w, t: w * t, m.w), v)):
        with pytest.raises(ZygoteError, match="holds values whose gradient is needed"):
            gradient(loss, _Lin(2.0), 3.0)
    assert gradient(lambda v: zygotepy.forwarddiff(_Lin(2.0).apply, v), 3.0) == (2.0,)


def test_the_function_of_the_point_refuses_a_call_without_one():
    """`gradient(f)()` curried again and handed back a function where a gradient was asked for."""
    f = lambda x, y: x * y  # noqa: E731
    assert gradient(f)(2.0, 3.0) == (3.0, 2.0) and gradient(f, argnums=1)(2.0, 3.0) == 2.0
    for entry in (gradient, value_and_gradient):
        with pytest.raises(ZygoteError, match="no arguments"):
            entry(f)()


def test_hvp_of_an_object_gives_an_object_gradient_as_gradient_does():
    """hvp of a dataclass argument gave a plain dict, where gradient gives a StructGrad (attributes and keys); the
    values against the Hessian written out: f = sum(w^3) + b^3 sum(w)."""
    import dataclasses

    from zygotepy import StructGrad, hvp

    @dataclasses.dataclass
    class Params:
        w: np.ndarray
        b: float

    def f(p):
        return np.sum(p.w ** 3) + p.b ** 3 * np.sum(p.w)

    p, v = Params(np.array([1.0, 2.0]), 0.5), Params(np.array([1.0, 0.0]), 1.0)
    (hv,) = hvp(f, (p,), (v,))
    assert isinstance(hv, StructGrad) and isinstance(gradient(f, p)[0], StructGrad)
    h_ww, h_wb, h_bb = np.diag(6 * p.w), 3 * p.b ** 2 * np.ones(2), 6 * p.b * np.sum(p.w)
    np.testing.assert_allclose(hv.w, h_ww @ v.w + h_wb * v.b)
    assert hv.b == pytest.approx(h_wb @ v.w + h_bb * v.b)


def test_an_object_argument_numpy_converts_through_its_array_method_is_refused():
    """An argument with `__array__` given to np.asarray in f: its gradient came back as the converted array's (an
    ndarray, not a gradient of its fields, whose numbers differ: d/dy was -6 for -12). Refused now, as for such an
    object made inside f."""
    class Pt:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def __array__(self, dtype=None, copy=None):
            return np.array([self.x, 2.0 * self.y])

    def f(p):
        return float(np.sum(np.asarray(p) ** 2))

    with pytest.raises(ZygoteError, match="an object of class Pt reached a NumPy or builtin function"):
        gradient(f, Pt(0.5, -1.5))

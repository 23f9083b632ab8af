"""The entry points' contract on what they hand back (zygotepy/api.py)."""
import numpy as np
import pytest

import zygotepy
from zygotepy import ZygoteError, gradient, value_and_gradient


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


@pytest.mark.parametrize("out, dy", [((lambda x: (x * 2, x)), np.ones(3)), ((lambda x: {"a": x * 2}), {"b": 1.0}),
                                     ((lambda x: [x, x]), 1.0)],
                         ids=["array-for-tuple", "unknown-key", "number-for-list"])
def test_a_cotangent_that_does_not_match_the_output_is_refused(out, dy):
    # (an array for a tuple crashed with ValueError; an unknown key was dropped: a gradient of None)
    _, back = zygotepy.pullback(out, np.ones(3))
    with pytest.raises(ZygoteError, match="does not match the output"):
        back(dy)

"""The emitter (zygotepy/ast_adjoint/emit.py): generated code keeps what the user's code means."""
import numpy as np
import pytest


# A negative literal as the base of ** or of an attribute: the emitter printed `(-1) ** k` as `-1 ** k`, which Python
# reads as -(1 ** k): value and gradient were both wrong (found by a red-team session).
def _neg_literal_power(x):
    return x ** 2 * (-1) ** 2


def _alternating_series(x):
    t = 0.0
    for k in range(5):
        t += (-1) ** k * x ** k
    return t


def _neg_literal_method(x):
    return x * (-1.5).__abs__() + (-2).bit_length() * x


@pytest.mark.parametrize("f", [_neg_literal_power, _alternating_series, _neg_literal_method],
                         ids=lambda f: f.__name__)
def test_negative_literals_keep_their_sign_in_generated_code(f):
    from zygotepy import value_and_gradient
    from zygotepy.testing import check_grads
    y, _ = value_and_gradient(f, 0.7)
    assert y == pytest.approx(f(0.7), rel=1e-15)
    check_grads(f, 0.7)


# `axis is None` in a helper called with axis=-1: once the call's constant was put in, the emitter wrote `-1 is None`,
# which Python compiles with a SyntaxWarning, a SyntaxError under `-W error` (found differentiating np.cumprod's back
# in a hessian). An identity comparison of constants is folded; a constant number compared with a value is named.
def _reduce_last(x, axis=-1):
    if axis is None:
        return x.sum()
    shift = 0 if axis is not None else 1
    return (x * x).sum(axis=axis) + shift


def _calls_reduce_last(x):
    return _reduce_last(x, -1)[0] + _reduce_last(x, None) * 2.0


def test_identity_comparisons_of_constants_compile_without_a_warning():
    import warnings

    import numpy as np

    from zygotepy import show_adjoint, value_and_gradient
    from zygotepy.testing import check_grads
    x = np.array([[0.5, -1.5, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, (g,) = value_and_gradient(_calls_reduce_last, x)
        check_grads(_calls_reduce_last, x)
        text = show_adjoint(_calls_reduce_last, optimized=True)
    assert y == pytest.approx(_calls_reduce_last(x), rel=1e-15)
    np.testing.assert_allclose(g, 2 * x + 2.0)
    assert "-1 is" not in text and "is -1" not in text


def _kernel_loss(x, y, type=1, slice=2.0, int=3.0):  # (scipy.linalg.eigh has a parameter `type`)
    z = x + y
    k = 0
    for i in range(2):
        k = k + i
    return np.sum(z * z) * type + np.sum(x[0:2]) * slice * int + x[k] * 0.0


def test_a_variable_named_like_a_builtin_the_guards_call(mode):
    """The optimised code's guards called `type(x)` (and `slice(...)`, `int`) by their plain names, which a parameter of
    the user's of that name hid: 'int' object is not callable."""
    import zygotepy
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    with zygotepy.optimizations(mode):
        gx, gy = zygotepy.gradient(_kernel_loss, x, y)
    np.testing.assert_allclose(gx, 2 * (x + y) + [6.0, 6.0, 0.0])
    np.testing.assert_allclose(gy, 2 * (x + y))


# A `while` whose condition is `name and ...` or `name or ...`: the condition's code is one `if` (the `and` of a bare
# name makes no call first), which the emitter took for the one call of a plain condition (an AttributeError before
# anything ran; found by a probe of control-flow syntax).
def _while_flag_and_count(x):
    flag, i = True, 0
    while flag and i < 3:
        x = x * 1.1
        i += 1
    return x


def _while_stack_and_top(x):
    stack = [x, 2.0 * x]
    while stack and stack[-1] > 1.0:
        stack.pop()
    return sum(stack) + x


def _while_done_or_count(x):
    done, i = False, 0
    while done or i < 2:
        x = x * x + 0.1
        i += 1
        done = i > 5
    return x


@pytest.mark.parametrize("f", [_while_flag_and_count, _while_stack_and_top, _while_done_or_count],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_while_condition_starting_with_a_bare_name(f, mode):
    from zygotepy import value_and_gradient
    from zygotepy.testing import check_grads
    y, _ = value_and_gradient(f, 0.7)
    assert y == pytest.approx(f(0.7), rel=1e-15)
    check_grads(f, 0.7)

"""The emitter (zygotepy/ast_adjoint/emit.py): generated code keeps what the user's code means."""
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

"""Forward mode refuses a number read back from text a dual number was formatted into (forward/transform.py
`_refuse_text_read_back`): `float(f"{x}")` under `jvp` computed the value and the tangent 0 (the jvp of
`float(repr(x)) * x` was 1.3 for 2.6). Text that is only logged, and text of constants, are read as before."""
import json

import numpy as np
import pytest

from zygotepy import derivative, hessian, jacobian, jvp
from zygotepy.errors import ForwardModeError


def through_repr(x):
    s = repr(x)
    return float(s) * x


def through_fstring(x):
    return float(f"{x}") + x


def through_format(x):
    return np.float64(format(x, ".17g")) * x


def through_format_method(x):
    return float("{:.17g}".format(x)) * 2.0


def through_str_of_an_array_item(x):
    return float(str(x[0])) * np.sum(x)


@pytest.mark.parametrize("f", [through_repr, through_fstring, through_format, through_format_method],
                         ids=lambda f: f.__name__)
def test_a_number_read_back_from_a_dual_number_s_text_is_refused(f):
    for run in (lambda: jvp(f, (1.3,), (1.0,)), lambda: derivative(f, 1.3)):
        with pytest.raises(ForwardModeError, match="read back from text") as info:
            run()
        assert "test_text_read_back.py" in str(info.value)


def test_jacobian_in_forward_mode_refuses_too():
    with pytest.raises(ForwardModeError, match="read back from text"):
        jacobian(through_str_of_an_array_item, np.array([1.3, 0.4]), mode="forward")


def logged(x):
    s = 0.0
    for i in range(3):
        s = s + x * i
        message = f"step {i}: {s:.3f}"
    return s * float("2.5") * json.loads('{"a": 2.0}')["a"] + len(message)


def test_logging_and_text_of_constants_are_followed():
    value, tangent = jvp(logged, (1.3,), (1.0,))
    assert value == pytest.approx(1.3 * 3 * 5.0 + len("step 2: 3.900"))
    assert tangent == pytest.approx(15.0)
    assert hessian(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]))[1, 1] == pytest.approx(12.0)


def test_a_level_s_texts_are_forgotten_when_it_ends():
    """The notes end with their level: the next call may read the same text back as a constant."""
    assert derivative(lambda x: len(f"{x}") * x, 1.3) == 3.0
    assert derivative(lambda x: x * float("1.3"), 2.0) == pytest.approx(1.3)


def test_a_float_s_hex_text_read_back_is_refused():
    with pytest.raises(ForwardModeError, match="read back from text"):
        jvp(lambda x: float.fromhex(x.hex()) * x, (0.7,), (1.0,))
    assert derivative(lambda x: len(x.hex()) * x, 0.7) == len((0.7).hex())

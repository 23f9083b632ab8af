"""The forward source transform (forward/transform.py): `x.__class__` of a dual number is its value's class, as
`type(x)` is (the branch `if x.__class__ is float:` took the other arm under jvp: tangent 1.47 for 1.4); keywords of
`pow` reach its tangent rule (a crash)."""
import functools

import pytest

from zygotepy import derivative, gradient, hessian, jvp


def squared_if_float(x):
    if x.__class__ is float:
        return x * x
    return x * x * x


def by_class_name(x):
    return x * x if x.__class__.__name__ == "float" else x


def rebuilt(x):
    return x.__class__(0.5) * x


@pytest.mark.parametrize("f, slope, curvature", [(squared_if_float, 1.4, 2.0), (by_class_name, 1.4, 2.0),
                                                 (rebuilt, 0.5, 0.0)], ids=lambda v: getattr(v, "__name__", ""))
def test_the_class_of_a_dual_number_is_its_value_s(f, slope, curvature):
    assert jvp(f, (0.7,), (1.0,))[1] == pytest.approx(slope)
    assert derivative(f, 0.7) == pytest.approx(slope)
    assert gradient(f, 0.7)[0] == pytest.approx(slope)
    assert hessian(f, 0.7) == pytest.approx(curvature)


def test_pow_with_keywords_in_forward_mode():
    assert jvp(lambda x: pow(x, exp=2), (0.7,), (1.0,)) == pytest.approx((0.49, 1.4))
    assert derivative(functools.partial(pow, exp=3), 2.0) == pytest.approx(12.0)

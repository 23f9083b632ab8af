"""Forward mode on code written under `from __future__ import annotations`, annotated with names that exist only for
type checkers (imported under `typing.TYPE_CHECKING`). Plain Python never evaluates such annotations; forward mode
compiled its transformed code without the file's `__future__` features, so a nested def's annotations were evaluated
and raised `NameError: name 'TypeIs' is not defined` (scipy.stats.iqr reaches array_api_compat's clip that way).
Every position an annotation can take is here: parameters, keyword-only and variadic ones, the return, the outer
function's own, a nested def's, a class body's and its methods', a dataclass's fields and a local variable's."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import pytest

from plain_checks import central
from zygotepy import MissingTangentRule, gradient, hessian, jacobian, jvp

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from only_for_type_checkers import Weights  # (no such module: never imported)


def nested_def_annotated(x: Weights) -> TypeIs[float]:
    def big(a: Weights, *rest: Weights, scale: Weights = 2.0, **named: Weights) -> TypeIs[float]:
        return a > 0.5
    return np.sum(np.where(big(x), x ** 2, np.sin(x)))


def nested_def_called_with_keywords(x: Weights) -> Weights:
    def scaled(a: Weights, *, by: Weights) -> Weights:
        out: Weights = a * by
        return out
    return np.sum(scaled(x, by=np.cos(x)) ** 2)


def closure_annotated(x):
    w: Weights = np.exp(x)

    def weigh(a: Weights) -> Weights:
        return a * w
    return np.sum(weigh(x) ** 2)


def class_in_body(x):
    class Scaler:
        factor: Weights
        offset: TypeIs[float] = 0.5

        def __init__(self, factor: Weights) -> None:
            self.factor = factor

        def __call__(self, a: Weights) -> Weights:
            return self.factor * a + self.offset
    return np.sum(Scaler(np.tanh(x))(x) ** 2)


def dataclass_in_body(x):
    @dataclasses.dataclass
    class Pair:
        first: Weights
        second: TypeIs[float]

        def total(self) -> Weights:
            return self.first * self.second
    return np.sum(Pair(x, np.sin(x)).total())


def lambda_beside_annotations(x):
    def apply(g: Weights, a: Weights) -> Weights:
        return g(a)
    return np.sum(apply(lambda a: a ** 3, x))


FUNCTIONS = [nested_def_annotated, nested_def_called_with_keywords, closure_annotated, class_in_body,
             dataclass_in_body, lambda_beside_annotations]
X = np.array([0.2, 0.9, 1.3, -0.4])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_forward_mode_leaves_annotations_unevaluated(mode, f):
    want = central(f, (X,), 0)
    value, got = jvp(f, (X,), (np.ones(4),))
    assert value == pytest.approx(f(X), rel=1e-12)
    assert got == pytest.approx(np.sum(want), abs=1e-6)
    np.testing.assert_allclose(jacobian(f, X, mode="forward")[0], want, atol=1e-6)
    np.testing.assert_allclose(gradient(f, X)[0], want, atol=1e-6)
    of_grad = lambda v: gradient(f, v)[0]  # noqa: E731
    want_h = np.stack([(of_grad(X + e) - of_grad(X - e)) / 2e-6 for e in np.eye(4) * 1e-6], axis=-1)
    np.testing.assert_allclose(hessian(f, X), want_h, atol=1e-5)


def test_nested_annotations_stay_strings_as_in_plain_python(mode):
    """The nested function forward mode makes carries the same (string) annotations as the plain one."""
    def annotations_of(x):
        def big(a: Weights) -> TypeIs[float]:
            return a
        assert big.__annotations__ == {"a": "Weights", "return": "TypeIs[float]"}
        return x * 2.0
    assert jvp(annotations_of, (1.5,), (1.0,)) == (3.0, 2.0)


def test_scipy_iqr_is_refused_cleanly_not_a_name_error(mode):
    """scipy.stats.iqr reaches array_api_compat's clip, whose nested def is annotated with a TYPE_CHECKING-only name:
    forward mode raised NameError there; now it goes on and refuses where a dual number meets an array's flags."""
    import scipy.stats
    with pytest.raises(MissingTangentRule, match="no forward-mode"):
        jvp(scipy.stats.iqr, (X,), (np.ones(4),))

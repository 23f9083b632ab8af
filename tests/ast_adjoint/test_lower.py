"""The lowering (zygotepy/ast_adjoint/lower/): functions made inside comprehensions."""
import sys

import pytest

from zygotepy import gradient


# Lambdas made inside comprehensions raised "its code object was not found" (Python 3.11 compiles a comprehension as a
# code object of its own).
def _lambdas_with_defaults_in_a_listcomp(x):
    fs = [lambda t, k=k: t ** k for k in range(1, 4)]
    return sum(g(x) for g in fs)


def _lambdas_reading_a_local_in_a_listcomp(x):
    w = 2.0 * x
    fs = [lambda t: t * w for _ in range(3)]
    return sum(g(x) for g in fs)


def _lambdas_in_a_dictcomp(x):
    fs = {k: (lambda t, k=k: t * k) for k in range(3)}
    return fs[2](x) + fs[1](x * x)


@pytest.mark.parametrize("f", [_lambdas_with_defaults_in_a_listcomp, _lambdas_reading_a_local_in_a_listcomp,
                               _lambdas_in_a_dictcomp], ids=lambda f: f.__name__)
def test_lambdas_made_in_comprehensions(f):
    from zygotepy.testing import check_grads
    check_grads(f, 0.7)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 inlines comprehensions: the lambda's cell is the function's")
def test_a_lambda_reading_the_comprehension_variable_is_refused_clearly():
    from zygotepy import UnsupportedSyntax

    def f(x):
        fs = [lambda t: t ** k for k in range(1, 4)]
        return sum(g(x) for g in fs)
    with pytest.raises(UnsupportedSyntax, match="reads the comprehension's variable 'k'.*k=k"):
        gradient(f, 0.7)


def _evaluated(x):
    return eval("x * 2")  # (the value, and no gradient: a string zygotepy never reads)


def _local_names(x):
    return locals()["x"] * 2


@pytest.mark.parametrize("f, name", [(_evaluated, "eval"), (_local_names, "locals")], ids=["eval", "locals"])
def test_eval_and_locals_are_refused(f, name):
    from zygotepy import UnsupportedSyntax, gradient
    with pytest.raises(UnsupportedSyntax, match=rf"test_lower.py:\d+: .*{name}\(\) in a differentiated function"):
        gradient(f, 0.7)


def _try_finally(x):
    try:
        y = x * 2.0
    finally:
        x = 0.0
    return y


def _nested_try_finally(x):
    def g(t):
        try:
            return t * 2.0
        finally:
            pass
    return g(x)


@pytest.mark.parametrize("f, name", [(_try_finally, "try/finally"), (_nested_try_finally, "try/finally")],
                         ids=["finally", "nested"])
def test_a_try_statement_is_named_by_its_clauses(f, name):
    from zygotepy import UnsupportedSyntax, gradient
    with pytest.raises(UnsupportedSyntax, match=rf"test_lower.py:\d+: zygotepy cannot differentiate {name}\n"):
        gradient(f, 0.7)

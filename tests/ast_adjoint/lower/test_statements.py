"""`import` statements inside the differentiated function (ast_adjoint/lower/statements.py `stmt_Import`): each name is
bound, when the statement runs, to what Python binds (`runtime.import_name`), a constant of the differentiation; an
import under an `if` that does not run imports nothing. Before, any import inside a function was refused. Each
gradient is checked against its formula and against central differences in float64."""
import numpy as np
import pytest

import zygotepy
from zygotepy import gradient
from zygotepy.testing import check_grads

X = np.array([0.3, 0.7])


def package_path(x):
    import numpy.linalg
    return numpy.linalg.norm(x) ** 2


def renamed_and_from(x):
    import numpy.linalg as la
    from math import cos, sin as s
    from os import path
    return la.norm(x) ** 2 + s(x[0]) * cos(x[1]) + len(path.sep)


def under_an_if_not_taken(x):
    if x[0] > 100.0:
        import zygotepy_has_no_such_module  # noqa: F401
    return np.sum(x * x)


def in_a_nested_function(x):
    def g(t):
        from functools import reduce
        return reduce(lambda a, v: a * 2.0 + v, t, 0.0)
    return g(x) * x[0]


@pytest.mark.parametrize("optimized", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("f", [package_path, renamed_and_from, under_an_if_not_taken, in_a_nested_function],
                         ids=lambda f: f.__name__)
def test_an_import_inside_the_function(f, optimized):
    with zygotepy.optimizations(optimized):
        check_grads(f, X.copy())


def test_the_gradient_by_hand():
    (g,) = gradient(renamed_and_from, X.copy())
    a, b = X
    np.testing.assert_allclose(g, [2 * a + np.cos(a) * np.cos(b), 2 * b - np.sin(a) * np.sin(b)], rtol=1e-14)


def test_a_missing_name_raises_as_python_does():
    def f(x):
        from numpy import no_such_name_here  # noqa: F401
        return x
    with pytest.raises(ImportError, match="no_such_name_here"):
        gradient(f, X.copy())


def test_the_statement_reads_as_written():
    text = zygotepy.show_adjoint(renamed_and_from)
    assert "la = _import_name(None, 'numpy.linalg', '', 0)" in text
    assert "s = _import_name(None, 'math', 'sin', 0)" in text

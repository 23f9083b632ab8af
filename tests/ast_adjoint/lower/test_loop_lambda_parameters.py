"""A nested function's own parameters are not the names of the function around it (lower/loops.py `_may_update`):
`sorted(P, key=lambda p: p[0])`, then `for p in reversed(pts)`, read the loop's items only, but the lambda's `p` made
the loop's `p` one "updated somewhere", and the loop over a copy was refused ("updating the loop variable 'p' in
place"). Each checked against central differences in float64, in both optimisation settings, beside a loop whose items
a helper does update, over a copy."""
import numpy as np
import pytest
from plain_checks import central

from zygotepy import gradient

P0 = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [3.0, 0.2]])


def convex_hull_like(P):
    pts = sorted(P, key=lambda p: p[0])
    s = 0.0
    for p in reversed(pts):
        s = s + p[0] * p[1]
    return s


def nested_def_with_the_loops_name(P):
    def weight(p, scale=2.0):
        return p[1] * scale
    rows = sorted(P, key=weight)
    s = 0.0
    for p in rows[::-1]:
        s = s + np.sum(p ** 2) * weight(p)
    return s


def _scale(p):
    p *= 2.0


def updated_by_a_helper_through_a_copy(P):
    rows = [r * 1.0 for r in P]
    s = 0.0
    for p in reversed(rows):
        _scale(p)
        s = s + np.sum(p)
    return s + np.sum(rows[0])


@pytest.mark.parametrize("f", [convex_hull_like, nested_def_with_the_loops_name, updated_by_a_helper_through_a_copy],
                         ids=lambda f: f.__name__)
def test_a_lambda_parameter_named_as_a_loop_variable(f, mode):
    (g,) = gradient(f, P0.copy())
    np.testing.assert_allclose(g, central(f, (P0.copy(),), 0), rtol=1e-6, atol=1e-8)



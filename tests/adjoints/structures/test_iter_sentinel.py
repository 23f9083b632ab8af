"""`iter(callable, sentinel)`: Python calls the callable as the items are taken, natively, so zygotepy sees none of
what it computes. Where the callable reads a value carrying a gradient (through its closure, its defaults, the object
a method is bound to), the items' gradients were silently dropped (a gradient of None where it is 2 per entry): that
is refused, naming the line and the way out (a while loop calling it). A callable reading no gradient still works."""
import numpy as np
import pytest

from plain_checks import central
from zygotepy import ZygoteError, gradient, value_and_gradient


def closure_over_values(x):
    vals = list(x)
    pos = [0]

    def nxt():
        pos[0] += 1
        return vals[pos[0] - 1] if pos[0] <= len(vals) else None
    return sum(v * 2.0 for v in iter(nxt, None))  # marker


def lambda_over_iterator(x):
    it = iter([x[0], 3.0 * x[1]])
    return sum(iter(lambda: next(it, None), None))  # marker


def bound_method(x):
    vals = [x[0], 2.0 * x[1], -1.0]
    return sum(iter(vals.pop, -1.0))  # marker


def generator_next(x):
    gen = (v * x[0] for v in [1.0, 2.0])
    return sum(iter(gen.__next__, None))  # marker


def default_argument(x):
    def nxt(box=[x[0] * 2.0]):
        return box.pop() if box else None
    return sum(iter(nxt, None))  # marker


REFUSED = [closure_over_values, lambda_over_iterator, bound_method, generator_next, default_argument]
X = np.array([0.7, -0.3])


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_callable_reading_a_gradient_is_refused(mode, f):
    f(X.copy())  # (plain Python runs it)
    with pytest.raises(ZygoteError, match=r"test_iter_sentinel\.py:\d+: zygotepy cannot differentiate "
                                          r"iter\(callable, sentinel\).*write a while loop calling it"):
        gradient(f, X.copy())


def counter_callable(x):
    n = [4]

    def dec():
        n[0] -= 1
        return n[0]
    return np.sum(x * sum(iter(dec, 0)))


def lines_of_text(x):
    lines = ["a", "bb", ""]
    return np.sum(x ** 2) * sum(len(s) for s in iter(lines.pop, "a"))


def while_loop_instead(x):
    vals = list(x)
    pos = [0]

    def nxt():
        pos[0] += 1
        return vals[pos[0] - 1] if pos[0] <= len(vals) else None
    total = 0.0
    v = nxt()
    while v is not None:
        total = total + v * 2.0
        v = nxt()
    return total


@pytest.mark.parametrize("f", [counter_callable, lines_of_text, while_loop_instead], ids=lambda f: f.__name__)
def test_callable_reading_no_gradient_and_the_way_out(mode, f):
    value, (grad,) = value_and_gradient(f, X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    np.testing.assert_allclose(grad, central(f, (X,), 0), rtol=1e-6, atol=1e-6)

"""A generator expression is handed out as an iterator over the list of its items (lower/control.py): it has none of a
generator's own methods, so `g.close()`, `g.throw(...)` (the "raise inside a lambda" idiom), `g.send(...)` and the
`gi_*` attributes raised AttributeError ('Items' object has no attribute 'close') from deep inside zygotepy. They are
refused when the function is lowered, naming the line (lower/lazy.py `refuse_generator_methods`); a generator taken
with `next` and left unfinished still runs."""
import numpy as np
import pytest

from plain_checks import central, line_of
from zygotepy import value_and_gradient
from zygotepy.errors import UnsupportedSyntax


def close_kept(x):
    g = (v * x for v in [1.0, 2.0])
    first = next(g)
    g.close()  # marker
    return first


def throw_in_a_lambda(x):
    fail = lambda: (_ for _ in ()).throw(ValueError("neg"))  # noqa: E731  # marker
    try:
        return x if x > 0 else fail()
    except ValueError:
        return x * 2.0


def send_kept(x):
    g = (v * x for v in [1.0, 2.0])
    next(g)
    return g.send(None)  # marker


def frame_of_kept(x):
    g = (v * x for v in [1.0, 2.0])
    return x if g.gi_frame is not None else 0.0  # marker


def running_of_inline(x):
    return x * 2.0 if not (v for v in [x]).gi_running else x  # marker


def close_inline(x):
    (v for v in [x]).close()  # marker
    return x * 3.0


REFUSED = [(close_kept, "close"), (throw_in_a_lambda, "throw"), (send_kept, "send"), (frame_of_kept, "gi_frame"),
           (running_of_inline, "gi_running"), (close_inline, "close")]


@pytest.mark.parametrize("f, attr", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_a_generator_method_of_a_generator_expression_is_refused(mode, f, attr):
    f(-1.5)  # (plain Python runs it)
    line = line_of(f, "# marker")
    with pytest.raises(UnsupportedSyntax, match=rf":{line}: .*generator method or attribute \.{attr} of a generator "
                                                r"expression.*write a generator function"):
        value_and_gradient(f, -1.5)


def next_then_left(x):
    g = (v * x for v in [1.0, 2.0, 3.0])
    first = next(g)
    second = next(g)
    return first * second


def closed_attribute_of_another_object(x):
    g = (v * x for v in [1.0, 2.0])
    box = np.array([x, 2.0 * x])
    return next(g) + float(np.sum(box.T)) + float(box.real.sum())


@pytest.mark.parametrize("f", [next_then_left, closed_attribute_of_another_object], ids=lambda f: f.__name__)
def test_generators_without_those_methods_run(mode, f):
    x = 1.3
    value, (grad,) = value_and_gradient(f, x)
    assert value == pytest.approx(f(x), rel=1e-12)
    assert grad == pytest.approx(central(f, (x,), 0), rel=1e-6, abs=1e-6)

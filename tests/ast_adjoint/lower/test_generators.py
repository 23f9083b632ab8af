"""A generator expression is lowered as a list made when it is made (lower/control.py), where Python computes each
item as it is taken: where the two could differ silently, it is refused naming the line: an assignment expression in
it (`any((big := v) > 2 for v in xs)` left `big` the last item's: value 9.0 for 7.5, gradient on the wrong item), an
update in place in it (`any(seen.append(v) or ...)` appended every item), and an endless iterator (`next(v * x for v
in count())` never returned). Generators taken whole or in part without such effects are followed."""
import itertools
import math

import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.errors import UnsupportedSyntax


def walrus_in_any(xs):
    if any((big := v) > 2.0 for v in xs):
        return big * 3.0
    return 0.0


def append_in_any(xs):
    seen = []
    any(seen.append(v) or v > 2.0 for v in xs)
    return sum(seen)


def next_over_count(x):
    return next(v * x for v in itertools.count() if v > 3)


def loop_over_cycle(x):
    for v in (t * x for t in itertools.cycle([1.0, 2.0])):
        if v > 2.0:
            return v
    return 0.0


def sum_over_repeat(x):
    return sum(itertools.islice((t * x for t in itertools.repeat(2.0)), 3))


@pytest.mark.parametrize("f, arg, what", [
    (walrus_in_any, [1.0, 2.5, 3.0], r"an assignment expression \(:=\) in a generator expression"),
    (append_in_any, [1.0, 2.5, 3.0], r"calling \.append\(\.\.\.\) in a generator expression"),
    (next_over_count, 1.5, r"a generator expression over an endless iterator \(count\)"),
    (loop_over_cycle, 1.5, r"a generator expression over an endless iterator \(cycle\)"),
    (sum_over_repeat, 1.5, r"a generator expression over an endless iterator \(repeat\)"),
])
def test_generators_that_would_differ_are_refused(mode, f, arg, what):
    with pytest.raises(UnsupportedSyntax, match=rf"test_generators\.py:\d+: zygotepy cannot differentiate {what}"):
        gradient(f, arg)


def first_of_generator(xs):
    return next(math.sin(v) * 2.0 for v in xs if v > 0.5)


def any_over_generator(xs):
    return xs[0] * 3.0 if any(v > 2.0 for v in xs) else xs[0]


def loop_left_by_break(xs):
    total = 0.0
    for r in (v * v for v in xs):
        if r > 4.0:
            break
        total += r
    return total


def module_function_named_add(xs):
    return sum(np.add(v, 1.0) * v for v in xs)  # (np.add is no update in place, though `add` names set.add)


def bounded_count(x):
    return sum(v * x for v, _ in zip(itertools.count(1), range(3)))


@pytest.mark.parametrize("f, arg, want", [
    (first_of_generator, [0.2, 0.9, 1.4], [0.0, 2.0 * math.cos(0.9), 0.0]),
    (any_over_generator, [1.0, 2.5, 3.0], [3.0, 0.0, 0.0]),
    (loop_left_by_break, [1.0, 1.5, 3.0], [2.0, 3.0, 0.0]),
    (module_function_named_add, [1.0, 2.0], [3.0, 5.0]),
])
def test_generators_without_effects_are_followed(mode, f, arg, want):
    got, = gradient(f, arg)
    np.testing.assert_allclose([0.0 if g is None else g for g in got], want, rtol=1e-12)


def test_a_bounded_walk_of_count_is_followed(mode):
    assert gradient(bounded_count, 1.5) == (6.0,)


# --- a generator calling a method that updates its object ------------------------------------------------------------
# `next(a.mul(2.0) for _ in range(3))` with `mul` setting `self.v`: zygotepy ran `mul` for every item, Python for the
# first only (value 13.0 for 5.2, found by a probe of control-flow syntax). Refused where the items may be taken in
# part or in turns (next, any, kept, a helper, zip, a loop that may stop); used up at once, it runs.

class Acc:
    def __init__(self, v):
        self.v = v

    def mul(self, k):
        self.v = self.v * k
        return self.v


def _first(it):
    for v in it:
        return v


def method_update_in_next(x):
    a = Acc(x)
    return next(a.mul(2.0) for _ in range(3)) + a.v


def method_update_in_a_loop_left_by_break(x):
    a = Acc(x)
    for _ in (a.mul(2.0) for _ in range(3)):
        break
    return a.v


def method_update_in_two_zipped_generators(x):
    a = Acc(x)
    s = 0.0
    for p, q in zip((a.mul(2.0) for _ in range(2)), (a.mul(0.5) for _ in range(2))):
        s = s + p * q
    return s


def method_update_given_to_a_helper(x):
    a = Acc(x)
    return _first(a.mul(2.0) for _ in range(3)) + a.v


@pytest.mark.parametrize("f", [method_update_in_next, method_update_in_a_loop_left_by_break,
                               method_update_in_two_zipped_generators, method_update_given_to_a_helper],
                         ids=lambda f: f.__name__)
def test_a_generator_calling_an_updating_method_taken_in_part_is_refused(f, mode):
    with pytest.raises(UnsupportedSyntax, match="may update an object in a generator expression"):
        gradient(f, 1.3)


def method_update_summed(x):
    a = Acc(x)
    return sum(a.mul(2.0) for _ in range(3)) + a.v


def method_update_walked_whole(x):
    a = Acc(x)
    s = 0.0
    for t in (a.mul(2.0) for _ in range(3)):
        s = s + t
    return s + a.v


@pytest.mark.parametrize("f", [method_update_summed, method_update_walked_whole], ids=lambda f: f.__name__)
def test_a_generator_calling_an_updating_method_used_up_at_once_runs(f, mode):
    h = 1e-6
    assert gradient(f, 1.3)[0] == pytest.approx((f(1.3 + h) - f(1.3 - h)) / (2 * h), rel=1e-6)


def draws_taken_by_next(mu):
    rng = np.random.default_rng(3)
    first = next(mu + rng.standard_normal() for _ in range(10))
    return first + mu * rng.standard_normal()


def draws_kept_in_a_name(mu):
    rng = np.random.default_rng(3)
    gen = (mu + rng.standard_normal() for _ in range(10))
    first = next(gen)
    return first + mu * rng.standard_normal()


def draws_of_a_mapped_lambda(mu):
    rng = np.random.default_rng(3)
    drawn = map(lambda v: v * mu + rng.normal(), [1.0, 2.0, 3.0])
    return next(drawn) + mu * rng.normal()


def draws_in_a_loop_left_by_break(mu):
    total = 0.0
    for v in (mu * np.random.randn() for _ in range(5)):
        total = total + v
        if total > -100.0:
            break
    return total + np.random.randn()


@pytest.mark.parametrize("f", [draws_taken_by_next, draws_kept_in_a_name, draws_of_a_mapped_lambda,
                               draws_in_a_loop_left_by_break], ids=lambda f: f.__name__)
def test_random_draws_in_an_iterator_taken_in_part_are_refused(f, mode):
    """Every item was computed when the iterator was made: numbers Python never draws were drawn, and the next draw
    was another (value 2.53 for 1.42, gradient 1.23 for -1.56)."""
    with pytest.raises(UnsupportedSyntax, match=r"test_generators.py:\d+: zygotepy cannot differentiate a (call that "
                                                r"may update an object|draw of random numbers)"):
        gradient(f, 0.4)


def draws_summed(mu):
    rng = np.random.default_rng(3)
    return sum(mu * rng.standard_normal() for _ in range(4)) + mu * rng.standard_normal()


def test_random_draws_in_a_generator_used_up_at_once_run(mode):
    want = draws_summed(1.0)  # (linear in mu: the value at 1 is the derivative)
    assert gradient(draws_summed, 0.4) == (pytest.approx(want),)

"""Sets of differentiable values (zygotepy/adjoints/structures/sets.py): `|`, `&`, `-`, `^`, their in-place forms
(aliases see the update, as in Python) and `add`, against central differences in float64, with every optimisation on
and off (the suite's two runs), and `set(...)` / `frozenset(...)` of a list, tuple, set or dict. Before, the
combinations and `frozenset({...})` dropped their elements' gradients silently, `-` crashed, `set.update` ran unseen
and `set(list)` had no rule; a method with no rule is refused now. A dict's keys view combines as a set (`d.keys() |
s`): its keys' gradients were dropped (`-` gave a wrong one)."""
import pytest

from zygotepy import ZygoteError, gradient, value_and_gradient
from zygotepy.testing import check_grads


def union(a, b):
    return sum({a, 2.0} | {b, a * b}) * 2.0


def intersection(a, b):
    return sum({a, b, 3.0} & {a, 3.0}) + a * b


def difference(a, b):
    return sum({a, b * b} - {b * b}) * b


def symmetric(a, b):
    return sum({a, b} ^ {b, 3.0, a * a})


def frozen(a, b):
    return sum(frozenset({a, b}) | {a * 3.0})


def made_by_calls(a, b):
    return sum(set([a, b, a])) + sum(frozenset({a * b: 1, 2.0: 0})) * sum(set((b,)))


def in_place(a, b):
    s = {a}
    t = s
    s |= {b, 2 * b}
    s -= {2 * b}
    s &= {a, b, 7.0}
    s ^= {a * a}
    s.add(b * a)
    return sum(t) * 1.5


def bits_and_masks(a, b):
    keep = {0, 1, 2} & {1, 2}
    return a * len(keep) + (6 & 3) * b + (5 ^ 1) * a


def keys_views(a, b):
    d = {a: 1.0, 2.0: b}
    e = {b * b: a}
    return (sum(d.keys() | {b}) + sum({a * b} | e.keys()) + sum(d.keys() & {a, 5.0}) + sum(d.keys() - {2.0}) * b
            + sum(d.keys() ^ e.keys()) + sum(frozenset(d.keys())) * a + sum(set(e.keys())))


@pytest.mark.parametrize("f", [union, intersection, difference, symmetric, frozen, made_by_calls, in_place,
                               bits_and_masks, keys_views],
                         ids=lambda f: f.__name__)
def test_against_central_differences(f):
    a, b = 0.7, 1.3
    value, _ = value_and_gradient(f, a, b)
    assert value == f(a, b)
    check_grads(f, a, b)


def test_an_update_without_a_rule_is_refused_where_the_set_holds_gradients():
    def f(a, b):
        s = {a}
        s.update({b})
        return sum(s)

    with pytest.raises(ZygoteError, match="set.update on a set of differentiable values"):
        gradient(f, 0.7, 1.3)

    def g(a, b):
        seen = {1, 2}
        seen.update({3})
        seen.discard(1)
        return a * len(seen) + b

    assert gradient(g, 0.7, 1.3) == (2.0, 1.0)


@pytest.mark.dual_route  # (the gradient of a gradient through a dict display takes forward over reverse)
def test_second_derivatives_of_floats_as_set_members_and_dict_keys():
    """Under hessian (and a gradient of a gradient) the floats are forward mode's dual numbers, which hash as their
    values (they were unhashable: a TypeError)."""
    from zygotepy import hessian

    def members(x):
        return sum({x * x, 2 * x})

    def key(x):
        d = {x * x: "v"}
        return next(iter(d)) * 3
    assert hessian(members, 0.7) == 2.0
    assert hessian(key, 0.7) == 6.0
    assert abs(gradient(lambda t: gradient(key, t)[0], 0.7)[0] - 6.0) < 1e-12

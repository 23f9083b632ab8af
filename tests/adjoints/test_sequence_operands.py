"""A list or tuple beside a NumPy array in an operator (`x * [a, 2.0]`, `x + (a, b)`, `y[1:3] = [a, b]`, `x @ [a, b]`):
NumPy takes the sequence as an array, item by item, and each item gets its own cotangent
(operators.sequence_operand, backends.unbroadcast and sequence_cotangent). Before, `x * [a, 2.0]` took the repetition
path of `[a] * 3` and gave a silently wrong gradient (none for x, a number for a), and the other operators raised
TypeError or AttributeError. Every row against central differences; a Python int still repeats a list."""
import numpy as np
import pytest

from zygotepy import gradient, hessian, optimizations
from zygotepy.testing import check_grads


def _store_pair(a, x):
    y = x.copy()
    y[1:3] = [a, a * 2.0]
    return np.sum(y * y)


def _store_fancy(a, x):
    y = x.copy()
    y[[0, 2]] = (a * x[1], a)
    return np.sum(y ** 3)


def _store_row(a, x):
    m = np.zeros((2, 2))
    m[0] = [a, x[1]]
    m[1, :] = (x[2], a * a)
    return np.sum(m ** 2)


def _in_place_ops(a, x):
    y = x.copy()
    y += [a, a * a, 0.5]
    y *= [a, 2.0, x[0]]
    y -= (1.0, a, 0.0)
    y /= [2.0, a, 1.5]
    return np.sum(y ** 2)


def _nested(a, x):
    return np.sum((x[:, None] + [[a, 1.0]]) ** 2) + np.sum([[a, 1.0], [x[0], a]] @ np.ones((2, 3)))


def _repetition(a, x):
    pair = [a, x[0]]
    return np.sum((pair * 2)[2] * x) + np.sum(np.array(3 * pair) * x[:1])


PROGRAMS = {
    "array * list": lambda a, x: np.sum((x * [a, 2.0, a * a]) ** 2),
    "list * array": lambda a, x: np.sum(([a, 2.0, x[1]] * x) ** 2),
    "array + list": lambda a, x: np.sum((x + [a, a * a, 1.0]) ** 2),
    "tuple - array": lambda a, x: np.sum(((a, 1.0, x[2]) - x) ** 2),
    "array / list": lambda a, x: np.sum(x / [a, 2.0, a + 1.0]),
    "array ** list": lambda a, x: np.sum(np.abs(x) ** [a, 2.0, 1.5]),
    "list ** array": lambda a, x: np.sum([a, 2.0, 1.5] ** np.abs(x)),
    "array @ list": lambda a, x: x @ [a, 2.0, x[0]],
    "list @ matrix": lambda a, x: np.sum([a, x[1]] @ np.outer(x[:2], x)),
    "store a list in a slice": _store_pair,
    "store a tuple at indices": _store_fancy,
    "store lists in rows": _store_row,
    "in-place operators with lists": _in_place_ops,
    "nested lists": _nested,
    "a Python int repeats": _repetition,
}


@pytest.mark.parametrize("on", [True, False], ids=["optimized", "plain"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_sequence_beside_an_array_is_taken_item_by_item(name, on):
    with optimizations(on):
        check_grads(PROGRAMS[name], 0.7, np.array([0.3, -0.8, 0.5]))


def test_the_product_with_a_list_was_silently_wrong():
    da, dx = gradient(lambda a, x: np.sum(x * [a, 2.0]), 0.5, np.array([3.0, 4.0]))
    assert da == 3.0 and np.array_equal(dx, [0.5, 2.0])


def test_a_list_argument_gets_a_list_of_item_cotangents():
    da, dlist = gradient(lambda a, items: np.sum(np.array([1.0, 2.0]) * items * a), 2.0, [0.5, 0.25])
    assert da == 1.0 and type(dlist) is list and dlist == [2.0, 4.0]
    dpair, = gradient(lambda pair: np.sum(np.ones(2) + pair), (1.0, 2.0))
    assert type(dpair) is tuple and dpair == (1.0, 1.0)


def test_second_derivative_through_a_list_operand():
    # f(a) = a^2 + 4 a^4, so f''(a) = 2 + 48 a^2
    assert hessian(lambda a: np.sum((np.array([1.0, 2.0]) * [a, a * a]) ** 2), 0.3) == pytest.approx(2 + 48 * 0.09)


def test_sequences_between_themselves_and_with_ints_keep_python_meaning():
    """Python repeats a list by an int, NumPy's ints too (`np.int64(2) * [a, 3.0]` has four items)."""
    assert gradient(lambda a: sum([a, 1.0] + [a]), 2.0) == (2.0,)
    assert gradient(lambda a: sum([a] * 3), 2.0) == (3.0,)
    assert gradient(lambda a: len(np.int64(2) * [a, 3.0]) * (np.int64(2) * [a, 3.0])[2], 2.0) == (4.0,)
    with pytest.raises(TypeError):
        gradient(lambda a: sum([a] * 2.0), 2.0)  # as Python raises

"""collections.deque (zygotepy/adjoints/mutation/deques.py): construction (`maxlen` too), every method that updates a
deque, reads, stores and deletes by position, iteration, NumPy of a deque, sliding windows, helpers that update a
deque, operators, a deque as an argument (its gradient is a list, one entry per position); Hessians through the
rules; and what is refused, with the operation named. Gradients against central finite differences in float64."""
import copy
import sys
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from zygotepy import ZygoteError, adjoint, gradient, hessian, pullback, value_and_gradient
from zygotepy.testing import check_grads as check_direction

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central_hessian, fd  # noqa: E402

W = np.array([1.0, -2.0, 0.5])


# --- construction ---------------------------------------------------------------------------------------------------

def built_empty(x):
    q = deque()
    q.append(x)
    q.appendleft(3.0 * x)
    return q[0] * q[1]


def built_from_list(x):
    q = deque([x, 2.0 * x])
    q.append(x * x)
    q.popleft()
    return sum(q)


def built_from_generator(x):
    q = deque(v * x for v in [1.0, 2.0, 3.0])
    return q[0] + 3.0 * q[2]


def built_bounded(x):
    q = deque([x, 2.0 * x, x * x], maxlen=2)  # keeps the last two
    return q[0] + 10.0 * q[1]


def built_bounded_positional(x):
    q = deque([x, 2.0 * x, x ** 3], 2)
    q.append(x * x)
    return q[0] + 10.0 * q[1]


def built_by_keywords(x):
    q = deque(iterable=[x, x * x], maxlen=1)
    return 3.0 * q[0]


def built_from_generator_bounded(x):
    q = deque((v * x for v in [1.0, 2.0, 3.0]), maxlen=2)
    return q[0] + 3.0 * q[1]


def built_from_deque(x):
    q = deque([x, 2.0 * x])
    r = deque(q, maxlen=1)
    return 3.0 * r[0] + q[0] * q[1]


def built_from_array(x):
    q = deque(np.array([x, x * x]) * 2.0)
    return q[0] + 3.0 * q[1]


def bounded_zero(x):
    q = deque(maxlen=0)
    q.append(x)  # dropped at once
    return len(q) + x


# --- the methods that update a deque ---------------------------------------------------------------------------------

def append_drops_left(x):
    q = deque([x, 2.0 * x], maxlen=2)
    q.append(x * x)  # x falls off the left
    return q[0] + 10.0 * q[1]


def appendleft_drops_right(x):
    q = deque([x, 2.0 * x], maxlen=2)
    q.appendleft(5.0 * x * x)  # 2x falls off the right
    return q[0] + 10.0 * q[1]


def pops(x):
    q = deque([x, 2.0 * x, x * x])
    a = q.pop()
    return a * q[-1] + sum(q)


def poplefts(x):
    q = deque([x, 2.0 * x, x * x])
    a = q.popleft()
    return a * q[0] + q[-1]


def extends(x):
    q = deque([x])
    q.extend([2.0 * x, x * x])
    return q[0] + 3.0 * q[1] + 5.0 * q[2]


def extends_bounded(x):
    q = deque([x], maxlen=2)
    q.extend(v * x for v in [2.0, 3.0, 4.0])
    return q[0] + 3.0 * q[1]


def extends_with_array(x):
    q = deque([x])
    q.extend(np.array([x, x * x]) * 2.0)
    return q[0] + 3.0 * q[1] + 5.0 * q[2]


def extends_itself(x):
    q = deque([x, x * x])
    q.extend(q)
    return q[0] + 3.0 * q[1] + 5.0 * q[2] + 7.0 * q[3]


def extendleft_reverses(x):
    q = deque([x])
    q.extendleft([2.0 * x, x * x])  # [x*x, 2x, x]
    return q[0] + 3.0 * q[1] + 5.0 * q[2]


def extendleft_bounded(x):
    q = deque([x, 2.0 * x], maxlen=3)
    q.extendleft([3.0 * x, x * x])  # [x*x, 3x, x]: 2x falls off the right
    return q[0] + 3.0 * q[1] + 5.0 * q[2]


def rotates(x):
    q = deque([x, 2.0 * x, x * x])
    q.rotate(1)
    return q[0] + 3.0 * q[1] + 5.0 * q[2]


def rotates_back(x):
    q = deque([x, 2.0 * x, x * x])
    q.rotate(-2)
    return q[0] + 3.0 * q[1] + 5.0 * q[2]


def rotates_in_a_loop(x):
    q = deque([x, 2.0 * x, x * x])
    s = 0.0
    for i in range(4):
        q.rotate()
        s = s + q[0] * (i + 1)
    return s


def clears(x):
    q = deque([x, 2.0 * x])
    q.clear()
    q.append(3.0 * x)
    return q[0] * x


def reverses(x):
    q = deque([x, x * x])
    q.reverse()
    return q[0] + 3.0 * q[1]


def removes(x):
    q = deque([x, 2.0, x * x])
    q.remove(2.0)
    return q[0] + 3.0 * q[1]


def inserts(x):
    q = deque([x, x * x])
    q.insert(1, 7.0 * x)
    return q[0] + 3.0 * q[1] + 5.0 * q[2]


def inserts_from_the_end(x):
    q = deque([x, x * x, 3.0 * x])
    q.insert(-1, 7.0 * x)
    return q[0] + 3.0 * q[1] + 5.0 * q[2] + 11.0 * q[3]


def copies(x):
    q = deque([x, x * x])
    r = q.copy()
    r.append(x)  # the copy only
    return sum(r) + 3.0 * q[1] + len(q)


def index_and_count(x):
    q = deque([x, 2.0])
    return q[q.index(2.0)] * x + q.count(2.0) * q[0]


def maxlen_read(x):
    q = deque([x], maxlen=2)
    q.append(x * x)
    q.append(3.0 * x)
    return q[0] * (q.maxlen or 1)


# --- reads, stores, deletes, iteration --------------------------------------------------------------------------------

def reads_negative(x):
    q = deque([x, 2.0 * x, x * x])
    return q[-1] * q[-3] + len(q) * q[1]


def stores(x):
    q = deque([x, 2.0 * x])
    q[0] = x * x
    q[-1] = q[-1] * 3.0
    return q[0] + 5.0 * q[1]


def stores_in_place(x):
    q = deque([x, x * x])
    q[0] += 3.0 * x
    q[-1] *= x
    return q[0] + 3.0 * q[1]


def deletes(x):
    q = deque([x, 2.0 * x, x * x])
    del q[1]
    return q[0] + 3.0 * q[1]


def loops(x):
    q = deque([x, 2.0 * x, x * x])
    s = 0.0
    for v in q:
        s = s + v * v
    return s


def walks(x):
    q = deque([x, x * x, 0.5])
    a, b, _ = q
    pairs = [u * w for u, w in zip(q, [1.0, 2.0, 3.0])]
    ranked = sorted(q)
    listed = list(q)
    back = list(reversed(q))
    return (a + 3.0 * b + sum(pairs) + ranked[0] * ranked[-1] + listed[1] * back[0] + max(q) - min(q)
            + sum(v * v for v in q) + sum([2.0 * v for v in q]) + sum((i + 1) * v for i, v in enumerate(q)))


def to_numpy(x):
    q = deque([x, x * x])
    return np.sum(q) + 2.0 * np.mean(q) + np.asarray(q) @ W[:2] + np.sum(q * W[:2]) + np.sum(np.exp(q))


def stacks_rows(x):
    q = deque([np.array([x, 2.0 * x]), np.array([x * x, 1.0])])
    return np.sum(np.array(q) ** 2) + np.sum(np.stack(q) * np.arange(1.0, 5.0).reshape(2, 2))


# --- sliding windows, helpers, containers -----------------------------------------------------------------------------

def sliding_window(x):
    window = deque(maxlen=3)
    total = 0.0
    for i in range(6):
        window.append(x * (i + 1.0) ** 0.5 + x * x)
        total = total + sum(window) * i
    return total


def _push(q, v):
    q.append(v * 2.0)


def helper_appends(x):
    q = deque([x])
    _push(q, x * x)
    return q[0] + 3.0 * q[1]


def _shift(window, v):
    window.append(v)
    return sum(window) / len(window)


def helper_shifts_window(x):
    window = deque([0.0, 0.0], maxlen=2)
    out = 0.0
    for k in range(4):
        out = out + _shift(window, x ** (k + 1))
    return out


def queue_until_empty(x):
    q = deque([x])
    s, i = 0.0, 0
    while q:
        v = q.popleft()
        s = s + v
        if i < 3:
            q.append(v * x)
            q.append(0.5 * v)
        i += 1
    return s


def operators(x):
    q = deque([x, 2.0 * x]) + deque([x * x])
    r = deque([x, x * x], maxlen=3) * 2  # the last three of four
    s = deque([x, 2.0 * x], maxlen=3)
    s += (x * x, 4.0 * x)  # x falls off
    t = deque([x, x * x], maxlen=3)
    t *= 2
    return (q[0] + 3.0 * q[1] + 5.0 * q[2] + r[0] + 3.0 * r[1] + 5.0 * r[2] + s[0] + 3.0 * s[1] + 5.0 * s[2]
            + t[0] + 7.0 * t[2] + (3 * deque([x, x * x]))[3])


def holds_an_array_updated_later(x):
    a = np.array([x, 2.0])
    q = deque([a])
    a *= x
    row = [x, 1.0]
    q.append(row)
    row[1] = x * x
    return float(np.sum(q[0])) + q[1][1] * 2.0 + q[1][0]


def updates_rows_in_a_loop(x):
    q = deque([np.array([x, 2.0]), np.array([x * x, 1.0])])
    q[0] *= x
    for v in q:
        v *= x
    return float(np.sum(q[0]) + 3.0 * np.sum(q[1]))


class _Holder:
    def __init__(self, x):
        self.q = deque([x], maxlen=2)

    def push(self, v):
        self.q.append(v)


def in_containers(x):
    h = _Holder(x)
    h.push(x * x)
    h.push(3.0 * x)
    d = {"q": deque([x])}
    d["q"].append(x * x)
    qs = [deque([x]), deque([2.0 * x])]
    qs[0].append(x * x)
    return h.q[0] + 3.0 * h.q[1] + d["q"][0] + 3.0 * d["q"][1] + qs[0][1] + 3.0 * qs[1][0]


def of_data(x):
    q = deque([1, 2, 3])
    q.rotate(1)
    q.append(4)
    return x * q[0]


SCALAR_CASES = [built_empty, built_from_list, built_from_generator, built_bounded, built_bounded_positional,
                built_by_keywords, built_from_generator_bounded, built_from_deque, built_from_array, bounded_zero,
                append_drops_left, appendleft_drops_right, pops, poplefts, extends, extends_bounded,
                extends_with_array, extends_itself, extendleft_reverses, extendleft_bounded, rotates, rotates_back,
                rotates_in_a_loop, clears, reverses, removes, inserts, inserts_from_the_end, copies, index_and_count,
                maxlen_read, reads_negative, stores, stores_in_place, deletes, loops, walks, to_numpy, stacks_rows,
                sliding_window, helper_appends, helper_shifts_window, queue_until_empty, operators,
                holds_an_array_updated_later, updates_rows_in_a_loop, in_containers, of_data]


@pytest.mark.parametrize("f", SCALAR_CASES, ids=lambda f: f.__name__)
def test_gradient_matches_central_differences(f):
    x = 1.3
    value, (grad,) = value_and_gradient(f, x)
    assert value == pytest.approx(f(x), rel=1e-12)
    want = fd(lambda v: f(float(v)), x)
    np.testing.assert_allclose(0.0 if grad is None else grad, want, rtol=1e-6, atol=1e-6)
    check_direction(f, x)


# --- array inputs: windows of rows ------------------------------------------------------------------------------------

def window_of_rows(x):
    window = deque(maxlen=2)
    total = 0.0
    for i in range(4):
        window.append(x * (i + 1.0) + x ** 2)
        total = total + np.sum(np.stack(window) ** 2) * (i + 1)
    return total


def rows_rotated(x):
    q = deque([x, np.sin(x), x * x])
    q.rotate(-1)
    q.appendleft(np.cos(x))
    q.pop()
    return float(np.sum(np.array(q) * np.arange(1.0, 4.0)[:, None]) + np.sum(q[0] * q[-1]))


ARRAY_CASES = [window_of_rows, rows_rotated]


@pytest.mark.parametrize("f", ARRAY_CASES, ids=lambda f: f.__name__)
def test_array_gradient_matches_central_differences(f):
    x = np.array([0.3, -1.2, 0.7])
    grad = gradient(f, x.copy())[0]
    np.testing.assert_allclose(grad, fd(f, x), rtol=1e-6, atol=1e-6)


# --- a deque as an argument: its gradient is a list, one entry per position -------------------------------------------

def arg_product(q):
    return q[0] * q[1]


def arg_updated(q):
    q.append(q[0] * 2.0)  # bounded: the first item falls off
    q.popleft()
    q.appendleft(q[-1] * 3.0)
    q.pop()
    return sum(q) * q[-1]


def arg_loop(q):
    s = 0.0
    for v in q:
        s = s + v * v
    return s


def arg_unread(q):
    return q[2] if len(q) > 2 else 1.0


ARGUMENT_CASES = [(arg_product, [2.0, 3.0], None, [3.0, 2.0]),
                  (arg_updated, [2.0, 3.0, 4.0], 3, [24.0, None, 20.0]),
                  (arg_loop, [1.0, 2.0], None, [2.0, 4.0]),
                  (arg_unread, [1.0, 2.0], None, None)]


@pytest.mark.parametrize("f, items, maxlen, want", ARGUMENT_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_deque_argument_gets_a_list(f, items, maxlen, want):
    arg = deque(items, maxlen)
    plain = deque(items, maxlen)
    value, (grad,) = value_and_gradient(f, arg)
    assert value == f(plain)
    assert arg == plain and arg.maxlen == maxlen  # left as one plain call leaves it
    assert grad == want
    if want is not None:
        numeric = [fd(lambda v, k=k: f(deque(items[:k] + [float(v)] + items[k + 1:], maxlen)), items[k])
                   for k in range(len(items))]
        np.testing.assert_allclose([0.0 if g is None else g for g in grad], numeric, rtol=1e-6, atol=1e-6)


def test_deque_argument_of_arrays_and_a_second_backward():
    rows = [np.array([1.0, 2.0]), np.array([0.5, -1.0])]

    def f(q):
        q.rotate(1)
        return np.sum(np.stack(q) ** 2 * np.array([[1.0], [3.0]]))
    arg = deque([r.copy() for r in rows])
    y, back = pullback(f, arg)
    first, second = back(1.0)[0], back(1.0)[0]
    for g in (first, second):
        assert type(g) is list and len(g) == 2
        np.testing.assert_allclose(g[0], 6.0 * rows[0])
        np.testing.assert_allclose(g[1], 2.0 * rows[1])
    assert y == f(deque([r.copy() for r in rows]))


# --- second derivatives: forward-over-reverse through the rules -------------------------------------------------------

HESSIAN_CASES = [built_from_list, append_drops_left, appendleft_drops_right, extendleft_bounded, rotates_in_a_loop,
                 sliding_window, helper_shifts_window, queue_until_empty, stores, operators]


@pytest.mark.parametrize("f", HESSIAN_CASES, ids=lambda f: f.__name__)
def test_hessian_matches_differences_of_the_gradient(f):
    x, h = 1.3, 1e-5
    want = (gradient(f, x + h)[0] - gradient(f, x - h)[0]) / (2 * h)
    np.testing.assert_allclose(hessian(f, x), want, rtol=1e-5, atol=1e-6)


def test_hessian_of_a_window_of_rows():
    x = np.array([0.3, -1.2, 0.7])
    np.testing.assert_allclose(hessian(window_of_rows, x), central_hessian(window_of_rows, x), rtol=1e-5, atol=1e-5)


# --- refused, naming the operation ------------------------------------------------------------------------------------

def kept_bound_method(x):
    q = deque([x])
    push = q.append
    push(x * x)
    return q[0] + q[1]


def mapped_bound_method(x):
    q = deque([x])
    list(map(q.append, [x * x]))
    return q[0] + q[1]


def shallow_copied(x):
    q = deque([x, x * x])
    r = copy.copy(q)
    return r[0] + r[1]


def refilled(x):
    q = deque([x])
    deque.__init__(q, [x * x])
    return q[0]


def _total(q):
    return sum(q)


@adjoint(_total)
def _total_rule(q):
    return sum(q), lambda dy: (dy,)  # one cotangent for the whole deque: wrong, and refused where it lands


def rule_gives_one_value(x):
    q = deque([x, x * x])
    q.append(x)
    return _total(q)


REFUSALS = [(kept_bound_method, "deque.append called through a bound method"),
            (mapped_bound_method, "deque.append called through a bound method"),
            (shallow_copied, "copy.copy of a deque"),
            (refilled, r"deque.__init__, which updates its object in place"),
            (rule_gives_one_value, "cannot route the gradient of a collections.deque through append")]


@pytest.mark.parametrize("f, message", REFUSALS, ids=lambda v: getattr(v, "__name__", ""))
def test_refused_with_the_operation_named(f, message):
    with pytest.raises(ZygoteError, match=message):
        gradient(f, 1.3)


@pytest.mark.dual_route  # (the twins refuse updates in place, a list's too: nesting/deep.py's dual numbers serve)
@pytest.mark.parametrize("f", HESSIAN_CASES, ids=lambda f: f.__name__)
def test_nested_gradient(f):
    x, h = 1.3, 1e-5
    want = (gradient(f, x + h)[0] - gradient(f, x - h)[0]) / (2 * h)
    np.testing.assert_allclose(gradient(lambda v: gradient(f, v)[0], x)[0], want, rtol=1e-5, atol=1e-6)

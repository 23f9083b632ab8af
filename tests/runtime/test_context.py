"""Per-call state is per thread (zygotepy/runtime/context.py): `gradient` calls running at once in 8 threads, on shared
and on distinct functions, with and without updates in place, give exactly what the same calls give one after the
other, and leave their arguments as those calls do. Before the context object, the journal of updates in place, the log of updated objects and the other records
were module globals: one thread's entry point cleared or claimed another's."""
import copy
import math
import sys
import threading
import types

import numpy as np
import pytest

from zygotepy import gradient, pullback


def dense(x, w):
    return np.sum(np.tanh(w @ x) ** 2)


def filled(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = math.sin(x[i]) * x[i]
    return out.sum()


def appended(x):
    squares = []
    for v in x:
        squares.append(v * v)
    return sum(squares)


def scale_(a, s):
    a[:] = a * s


def helper_updates(x):
    y = x * 1.0
    scale_(y, 2.0)
    return np.sum(y * y)


def keyed(x):
    d = {x[0]: 1.0, "b": x[1]}
    total = 0.0
    for k in d:
        total = total + d[k] * 3.0
    return total


class Recorder:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def with_block(x):
    with Recorder():
        y = x * x
    return np.sum(y)


def updates_its_argument(x, w):
    x[1:] = np.tanh(w * x[:-1])
    x[0] = x[0] * 2.0
    return np.sum(x * x)


def second_order(x):
    return gradient(lambda t: np.sum(np.sin(t) * t), x)[0].sum()


CASES = [(dense, lambda r: (r.normal(size=5), r.normal(size=(4, 5)))), (filled, lambda r: (r.normal(size=40),)),
         (appended, lambda r: (list(r.normal(size=6)),)), (helper_updates, lambda r: (r.normal(size=7),)),
         (keyed, lambda r: ([float(v) for v in r.normal(size=2)],)), (with_block, lambda r: (r.normal(size=3),)),
         (second_order, lambda r: (r.normal(size=4),)), (updates_its_argument, lambda r: (r.normal(size=6), 0.7))]


def _copy(fn):
    """The same code as another function object, with its own cache of compiled adjoints."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _equal(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    return bool(np.array_equal(a, b))


def _run(fn, args):
    """The gradient, and the arguments as the call left them (it updates some in place)."""
    args = copy.deepcopy(args)
    return gradient(fn, *args), args


def _calls(seed):
    """(function index, arguments) for one thread: every case, several inputs each, in a shuffled order."""
    rng = np.random.default_rng(seed)
    calls = [(k, make(rng)) for k, (_, make) in enumerate(CASES) for _ in range(4)]
    order = rng.permutation(len(calls))
    return [calls[i] for i in order]


@pytest.mark.parametrize("shared", [True, False], ids=["shared functions", "distinct functions"])
def test_eight_threads_give_the_serial_gradients(shared):
    workloads = [_calls(seed) for seed in range(8)]
    serial = [[_run(CASES[k][0], args) for k, args in calls] for calls in workloads]
    functions = [[fn for fn, _ in CASES] if shared else [_copy(fn) for fn, _ in CASES] for _ in range(8)]
    results, errors = [None] * 8, []
    start = threading.Barrier(8)

    def work(t):
        try:
            start.wait()
            out = []
            for _ in range(10):  # (rounds, so that the threads' calls overlap in many ways)
                out = [_run(functions[t][k], args) for k, args in workloads[t]]
            results[t] = out
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (the threads take turns every few operations, not every 5 ms: calls interleave)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    for t in range(8):
        for (k, _), want, got in zip(workloads[t], serial[t], results[t]):
            assert _equal(want, got), (CASES[k][0].__name__, want, got)


def test_a_pullback_taken_in_one_thread_runs_in_another():
    x = np.random.default_rng(1).normal(size=30)
    y, back = pullback(filled, x.copy())
    got = []
    thread = threading.Thread(target=lambda: got.append(back(1.0)))
    thread.start()
    thread.join()
    assert _equal(got[0], back(1.0)) and _equal(got[0], gradient(filled, x.copy()))

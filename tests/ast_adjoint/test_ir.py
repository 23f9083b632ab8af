"""The IR: its printer, and the round trip source -> IR -> Python (no AD) that must compute what the user's code does."""
import math

import numpy as np
import pytest

from zygotepy.ast_adjoint.adjoint import adjoint
from zygotepy.ast_adjoint.emit import emit
from zygotepy.ast_adjoint.lower import lower
from zygotepy.ast_adjoint.source import get_source


def primal_roundtrip(fn):
    """Lower `fn` to IR and emit it back with nothing active: the forward must compute `fn` itself."""
    code = fn.__code__
    ir, namer = lower(get_source(fn), code)
    namer.reserve("_globals")
    adj = adjoint(ir, code, set(), fn.__globals__, namer)
    text, helpers, _ = emit(adj, namer, get_source(fn).lines, code.co_filename, [f"{n}_cell" for n in code.co_freevars])
    scope = dict(fn.__globals__)
    exec(compile(text, "<roundtrip>", "exec"), scope)
    forward, _ = scope["_make"](fn.__globals__, *helpers.values(), *(fn.__closure__ or ()))
    forward.__defaults__, forward.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    return lambda *a, **k: forward(*a, **k)[0]


def p_pow(x, n):
    r = 1
    while n > 0:
        n -= 1
        r *= x
    return r


def p_branches(x):
    if x > 2:
        y = x * 2
    elif x > 0:
        y = -x
    else:
        y = x ** 2
    return y + (1 if x > 1 else 2)


def p_boolops(a, b, c):
    return (a and b) or c, a or b and c, not a


def p_chain(x):
    return 0 < x < 3, 1 < x > 0, x == x != 0


def p_break_continue(xs):
    total = 0
    for i, x in enumerate(xs):
        if x < 0:
            continue
        if x > 10:
            break
        total += i * x
    return total


def p_return_in_loop(xs, target):
    for i, x in enumerate(xs):
        for j in range(3):
            if x * j == target:
                return i, j
    return None


def p_while_else_return(n):
    k = 0
    while True:
        k += 1
        if k * k > n:
            return k
    return -1


def p_swap(a, b, n):
    for _ in range(n):
        a, b = b, a + b
    return a


def p_unpack(pair, triple):
    a, b = pair
    (c, d), e = triple
    return a * b + c - d * e


def p_closure(x):
    scale = x * 2

    def inner(y, k=3):
        return scale * y + k
    lam = lambda z: inner(z) - scale  # noqa: E731
    return lam(x) + inner(1, k=2)


def p_containers(x):
    t = (x, 2 * x)
    lst = [t[0], t[1], 3]
    d = {"a": lst[0], "b": lst[-1]}
    return d["a"] + d["b"] + len(lst) + t[1]


def p_strings(x):
    msg = f"x={x:.2f} {x!r}"
    return len(msg) + x


def p_numpy(x):
    y = np.sin(x) * 2 + x.T @ x
    return y.sum() + x[0] + x[1:].mean()


def p_star(*xs, scale=1.0, **extra):
    return sum(xs) * scale + len(extra)


def p_math(x):
    return math.sin(x) + math.exp(-x) * math.sqrt(abs(x))


def p_walrus(x):
    if (y := x * 2) > 3:
        return y
    return -y


def p_assert(x):
    assert x > 0, "x must be positive"
    return x


def p_recursion(n):
    return 1 if n <= 1 else n * p_recursion(n - 1)


CORPUS = [
    (p_pow, (2.0, 5)), (p_pow, (3, 0)), (p_branches, (3.0,)), (p_branches, (1.0,)), (p_branches, (-2.0,)),
    (p_boolops, (0, 2, 3)), (p_boolops, (1, 0, 5)), (p_boolops, (1, 2, 0)), (p_chain, (2.0,)), (p_chain, (5.0,)),
    (p_break_continue, ([1.0, -2.0, 3.0, 20.0, 4.0],)), (p_return_in_loop, ([1, 2, 3], 4)),
    (p_return_in_loop, ([1, 2, 3], 100)), (p_while_else_return, (30,)), (p_swap, (0, 1, 10)),
    (p_unpack, ((2.0, 3.0), ((1.0, 2.0), 4.0))), (p_closure, (1.5,)), (p_containers, (2.0,)), (p_strings, (1.25,)),
    (p_numpy, (np.arange(4.0),)), (p_star, (1.0, 2.0, 3.0)), (p_math, (0.7,)), (p_walrus, (2.0,)),
    (p_walrus, (1.0,)), (p_assert, (2.0,)), (p_recursion, (6,)),
]


@pytest.mark.parametrize("fn, args", CORPUS, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CORPUS)])
def test_roundtrip_computes_the_same(fn, args):
    expected = fn(*args)
    got = primal_roundtrip(fn)(*args)
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        np.testing.assert_allclose(got, expected)
    else:
        assert got == expected


def test_roundtrip_keyword_only_and_defaults():
    assert primal_roundtrip(p_star)(1.0, 2.0, scale=3.0, a=1) == p_star(1.0, 2.0, scale=3.0, a=1)


def test_roundtrip_assert_still_raises():
    with pytest.raises(AssertionError, match="positive"):
        primal_roundtrip(p_assert)(-1.0)


def test_printer_shows_structure_and_user_names():
    ir, _ = lower(get_source(p_pow), p_pow.__code__)
    text = str(ir)
    assert text.startswith("func p_pow(x, n):")
    assert "while carry [" in text and "r = 1" in text
    assert "next [" in text and "return r" in text


def test_ssa_versions_keep_the_user_name_first():
    def f(x):
        y = x + 1
        y = y * 2
        return y
    ir, _ = lower(get_source(f), f.__code__)
    names = [s.out.name for s in ir.body]
    assert names == ["y", "y_2"]

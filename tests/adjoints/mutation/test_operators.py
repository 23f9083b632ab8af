"""The in-place operators (zygotepy/adjoints/mutation/operators.py): every augmented assignment operator with an alias
taken before the update (`a = y; y op= c`), checked against one plain call (value, and the state it leaves its argument
in) and central finite differences in float64. An array is updated in place, so the alias sees the new values, whether
or not a gradient flows through the update and whether or not a backward saved the array earlier: `y @= M`, `y **= 2`,
`y %= m` and `y //= m` have no scalar fast path, and once ran out of place when the backward saved `y` (the alias missed
the update). Python numbers are immutable (`+=` rebinds, the alias keeps the old value); lists extend and repeat in
place; `|=` merges a dict (routing each entry's cotangent) or updates a set or a mask in place. Also: an update with no
gradient through it on an array a backward reads, helpers rebinding float parameters with `*=`, a tuple grown by `+=`,
names a maybe-in-place update split apart (JAX)."""

import linecache
import os
import sys
import textwrap

import numpy as np
import pytest

from zygotepy import gradient, pullback
from zygotepy.testing import check_grads

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from plain_checks import agree_at, central  # noqa: E402


X = np.array([[0.3, 1.2], [0.7, 0.4]])  # positive: `x **= 1.5` is real
M = np.array([[1.0, 2.0], [0.5, -1.0]])
OPS = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "@="]
# a right operand for each operator on the 2x2 arrays here (away from the kinks of `//` and `%`)
OPERAND = {"+=": "M", "-=": "M", "*=": "M", "/=": "M", "//=": "0.65", "%=": "0.65", "**=": "1.5", "@=": "M"}

# Each case is a template: `{op}` is the operator, `{c}` its right operand. The functions are defined from their
# text (registered in linecache, as a notebook cell is), so each is exactly the augmented assignment it tests.
TEMPLATES = {
    "alias_of_active": """
def f(x):
    y = x * x + 0.5
    a = y
    y {op} {c}
    return np.sum(a * x) + np.sum(y)
""",
    "alias_of_saved_constant": """
def f(x):
    c = np.full((2, 2), 1.5)
    b = c
    z = x * c  # the backward of `*` reads `c`: the update below must not change what it reads
    c {op} {c}
    return np.sum(z * b) + np.sum(c * x)
""",
    "alias_of_saved_in_loop": """
def f(x):
    c = np.full((2, 2), 1.2)
    b = c
    s = 0.0
    for _ in range(3):
        s = s + np.sum(np.sin(c * x))  # each iteration's backward reads `c` as it was then
        c {op} {c}
    return s + np.sum(b * x)
""",
    "alias_of_argument": """
def f(x):
    a = x  # the caller's array: updated in place, as one plain call leaves it
    x {op} {c}
    return np.sum(a * a)
""",
    "right_operand_active": """
def f(x):
    c = np.full((2, 2), 2.5)
    b = c
    c {op} x * x + 0.5
    return np.sum(b * x)
""",
    "python_number": """
def f(x):
    y = x[0, 0] * 1.0 + 2.0  # a Python float: the update rebinds `y`, the alias keeps the old value
    a = y
    y {op} {c}
    return a * x[1, 0] + y * x[0, 1]
""",
}


def define(name, op, c=None):
    """The function of template `name` for operator `op`, compiled from its text."""
    c = OPERAND[op] if c is None else c
    text = textwrap.dedent(TEMPLATES[name]).lstrip("\n").replace("{op}", op).replace("{c}", c)
    filename = f"<inplace-aliases:{name}:{op}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np, "M": M}
    exec(compile(text, filename, "exec"), namespace)
    return namespace["f"]


ARRAY_CASES = ["alias_of_active", "alias_of_saved_constant", "alias_of_saved_in_loop", "alias_of_argument",
               "right_operand_active"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("name", ARRAY_CASES)
def test_array_alias_sees_the_update(name, op):
    agree_at(define(name, op), X)


@pytest.mark.parametrize("op", [o for o in OPS if o != "@="])
def test_number_alias_keeps_the_old_value(op):
    agree_at(define("python_number", op, "1.5"), X)


def list_extend(x):
    lst = [x[0, 0], x[0, 1]]
    a = lst
    z = lst[0] * lst[1]  # its backward reads the items
    lst += [x[1, 0] * 3.0]
    return z + sum(a) * a[2]


def list_repeat(x):
    lst = [x[0, 0], x[1, 1] * 2.0]
    a = lst
    lst *= 2
    return sum(v * v for v in a) + len(a) * x[0, 1]


@pytest.mark.parametrize("f", [list_extend, list_repeat])
def test_list_alias_sees_the_update(f):
    agree_at(f, X)


def saved_int_array(x):
    idx = np.array([0, 1])
    b = idx
    z = x[idx] * 2.0  # reads x through idx; the update of idx must reach b, not what z's backward reads
    idx += 1
    idx %= 2
    return np.sum(x[b] * z)


def test_int_array_alias_sees_the_update():
    agree_at(saved_int_array, X)


def dict_merge_in_place(x):
    d = {"a": x * 1.0, "c": x * 3.0}
    e = d
    z = np.sum(d["a"] * x)
    d |= {"b": x * 2.0, "c": x * x}  # `e` sees the merge; the old "c" entry gets no gradient
    return np.sum(e["a"] * e["b"]) + np.sum(e["c"]) + z


def dict_merge(x):
    d = {"a": x * 1.0, "c": x * 3.0}
    e = d | {"b": x * 2.0, "c": x * x}  # once no gradient at all: `|` counted as non-differentiable
    return np.sum(e["a"] * e["b"]) + np.sum(e["c"]) + np.sum(d["c"])


def set_and_mask_in_place(x):
    s = {1, 2}
    t = s
    s |= {3}
    m = x > 0.5
    k = m
    m |= x < 0.35
    return np.sum(x[k] ** 2) * len(t)


@pytest.mark.parametrize("f", [dict_merge_in_place, dict_merge, set_and_mask_in_place])
def test_or_in_place_on_dicts_sets_and_masks(f):
    agree_at(f, X)


def test_matmul_in_place_that_would_change_the_shape_raises_numpys_error():
    def f(x):
        y = x * 1.0
        y @= np.ones(2)
        return np.sum(y)
    with pytest.raises(ValueError):
        gradient(f, X)


# --- an in-place operator's method called by name: refused, never run unseen -----------------------------------------

def dunder_in_a_conditional_expression(x):
    a = x * 1.0
    y = a.__imul__(2.0) if x[1] > 0 else a  # updates `a` in place: was run unseen (gradient 1 where 2 is right)
    return np.sum(a) + 0.0 * np.sum(y)


def dunder_on_a_constant_array(x):
    a = np.ones(3)
    a.__iadd__(x)
    return np.sum(a * x)


@pytest.mark.parametrize("f", [dunder_in_a_conditional_expression, dunder_on_a_constant_array],
                         ids=lambda f: f.__name__)
def test_an_in_place_operator_method_called_by_name_is_refused_with_its_line(f):
    from zygotepy import UnsupportedSyntax
    with pytest.raises(UnsupportedSyntax, match=r"test_operators\.py:\d+: .*calling __i(mul|add)__ by name"):
        gradient(f, np.array([0.5, 1.5, -1.0]))


def test_aliases_see_the_update_as_in_python():
    def f(x):
        b = [1.0, 2.0]
        a = b
        a[0] = x
        return b[0] * x
    assert gradient(f, 3.0) == (6.0,)
    x = np.arange(3.0)
    y = x

    def g(x):
        z = x
        z += 1.0
        return np.sum(x)
    assert np.allclose(gradient(g, y)[0], np.ones(3))
    assert np.array_equal(x, np.arange(3.0) + 1)  # the caller's array was updated, as a plain call would


# --- found by the random-program test: an in-place update with no gradient through it, on an array a backward reads --
def _update_unused_in_loop(a, c):
    a = a * c          # the backward of this product reads c
    for _ in range(1):
        c += a         # updates c in place; the updated c is never used
    c = a * a
    return (a * c).sum()


def test_in_place_update_with_no_gradient_on_a_saved_array():
    rng = np.random.default_rng(1)
    a, c = rng.uniform(-1.5, 1.5, 3), rng.uniform(-1.5, 1.5, 3)
    check_grads(_update_unused_in_loop, a, c)
    (ga, gc) = gradient(_update_unused_in_loop, a.copy(), c.copy())
    assert np.allclose(ga, 3 * (a * c) ** 2 * c) and np.allclose(gc, 3 * (a * c) ** 2 * a)


# --- helpers that rebind a float parameter with *=: equal floats are one object by chance -------------------------

def g1(p1, p2):
    p1 *= 1.0
    return p2


def g3(p1, p2, p3):
    t4, t5 = (g1(p3, p3), g1(p3, g1(g1(p2, p3), p1)))
    t4 -= 0.5
    return p1


def rebinding_helpers(a, n):
    L = [a for j in range(3)]
    t12 = g3(L[n], g3(a, 2.0, g1(g3(a, L[n], a), a)), a)
    return t12 + sum(L)


def c3(p1, p2, p3):
    t4 = p3
    t4 -= 0.5
    return p1


def alias_rebound_in_helper(a):
    return c3(a, 2.0, a) + 3 * a


@pytest.mark.parametrize("fn, args, expected", [(rebinding_helpers, (-0.9019, 2), 4.0),
                                                (alias_rebound_in_helper, (0.3,), 4.0)])
def test_helpers_rebinding_float_parameters(fn, args, expected):
    y, back = pullback(fn, *args)
    first = back(1.0)
    assert first[0] == pytest.approx(expected, rel=1e-12)
    assert back(1.0) == first  # a second backward pass gives the same
    assert first[0] == pytest.approx(central(fn, args, 0), rel=1e-6)


# --- refusals that were false: nothing updated an argument --------------------------------------------------------

def pool(inputs):
    new_shape = inputs.shape[:1]
    for i in [1]:
        new_shape += (inputs.shape[i],)  # a tuple: never in place
    return inputs * 1.0


def predictions(inputs):
    cur = inputs
    for k in range(1):
        cur = pool(cur)
    return cur


def test_a_tuple_grown_by_plus_equals_is_not_an_update_of_its_source():
    X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    g = gradient(lambda X: np.sum(predictions(X) ** 2), X)[0]
    np.testing.assert_allclose(g, 2 * X)


def test_names_a_maybe_in_place_update_split_apart_are_not_refreshed_together():
    # on JAX `z2 *= 0.5` makes a new array and `x` keeps the old one; a later update of what may hold `x` (f5, made
    # from z2) refreshed x and gave its version to z2 too: the returned sum lost the factor 0.5
    jnp = pytest.importorskip("jax.numpy")
    import jax
    jax.config.update("jax_enable_x64", True)

    class Box:
        def __init__(self, v):
            self.v = v

    def program(x, b):
        B1 = Box(b)
        z2 = x
        z2 *= 0.5
        f5 = 0.1 * jnp.tanh(z2) + B1.v
        B1.v = b
        return jnp.sum(z2)
    g = gradient(program, jnp.asarray([0.3, 0.6, -0.4]), 0.2)[0]
    assert np.allclose(np.asarray(g), 0.5, rtol=1e-12)

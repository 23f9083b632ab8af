"""The rows of adjoints/derivatives.py: every form each row makes, against central finite differences in float64, and
the forms of one function all bound from its one row (sin's derivative is stated once)."""
import cmath
import linecache
import math
import pathlib
import re

import numpy as np
import pytest

import zygotepy
from zygotepy import gradient, jvp, optimizations, show_adjoint
from zygotepy.adjoints import derivatives, registry
from zygotepy.adjoints.numpy import array_inline
from zygotepy.ast_adjoint.source import register_source
from zygotepy.forward.dual import FORWARD

ROWS = derivatives.ROWS
H = 1e-6


def _label(row):
    return row.numpy.split()[0] if row.numpy else row.math


def _points(row):
    """Points inside the row's domain."""
    name = _label(row)
    if name in ("log", "log2", "log10", "sqrt"):
        return [0.3, 0.7, 1.5, 2.2]
    if name == "arccosh":
        return [1.2, 1.7, 2.5, 3.0]
    return [-0.7, -0.3, 0.4, 0.8]


def _fd(f, x):
    return (f(x + H) - f(x - H)) / (2 * H)


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def _cases(form):
    return [pytest.param(row, target, id=f"{_label(row)}-{getattr(target, '__name__', target)}")
            for row in ROWS for target in row.forms.get(form, {})]


def test_every_row_makes_its_forms():
    for row in ROWS:
        assert "tangent" in row.forms and ("numpy" in row.forms or "scalar" in row.forms), row
        for fns in row.forms.values():
            assert all(fn.row is row for fn in fns.values())


# --- the forms themselves ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("row, target", _cases("scalar"))
def test_math_form_and_rule(row, target):
    template = row.forms["scalar"][target]
    assert registry.find_scalar(target) is template
    for x in _points(row):
        want = _fd(target, x)
        _close(template(1.0, target(x), x)[0], want)
        if target is not math.log:  # (its rule takes a base too: written out)
            y, back = registry.find_rule(target)(x)
            assert back(1.0)[0] == template(1.0, y, x)[0]
        _close(gradient(target, x)[0], want)
    f = _compiled(f"def scaled(x):\n    return math.{target.__name__}(x) * 3.0\n")  # the template pasted in
    for x in _points(row):
        got = gradient(f, x)[0]
        _close(got, 3.0 * _fd(target, x))
        with optimizations(scalar_paths=False, loop_copies=False):
            assert gradient(f, x)[0] == got


@pytest.mark.parametrize("row, target", _cases("shared"))
def test_shared_form_gives_the_bits_of_the_math_form(row, target):
    partner, shared = registry.find_shared(target)
    assert shared is row.forms["shared"][target]
    for x in _points(row):
        assert shared(0.7, target(x), partner(x))[0] == row.forms["scalar"][target](0.7, target(x), x)[0]


@pytest.mark.parametrize("row, target", _cases("cmath"))
def test_cmath_form(row, target):
    d = row.forms["cmath"][target]
    for z in (0.3 + 0.4j, -0.5 + 0.2j, 0.7 - 0.6j):
        want = (target(z + H) - target(z - H)) / (2 * H)
        np.testing.assert_allclose(d(z, target(z)), want, rtol=1e-6)
        # the rule: a real loss Re(w) pulls back to conj(f'(z))
        assert gradient(lambda z: target(z).real, z)[0] == pytest.approx(np.conj(want), rel=1e-6)


@pytest.mark.parametrize("row, target", _cases("numpy"))
def test_numpy_form_and_rule(row, target):
    x = np.array(_points(row))
    d = row.forms["numpy"][target]
    _close(d(x, target(x)) * np.ones_like(x), _fd(target, x))
    y, back = registry.find_rule(target)(x)
    dy = np.linspace(0.5, 1.5, x.size)
    _close(back(dy)[0], dy * _fd(target, x))
    x32 = x.astype(np.float32)
    assert registry.find_rule(target)(x32)[1](dy.astype(np.float32))[0].dtype == np.float32  # float32 stays
    if "D->D" not in target.types:  # (a ufunc of real numbers only)
        return
    z = x + 0.1j
    _close(registry.find_rule(target)(z)[1](np.ones_like(z))[0], np.conj(d(z, target(z))))  # conj(f'(z)) dy
    if row.cmath:  # holomorphic: the derivative holds off the real line too (either side of it)
        for z in (x + 0.1j, x - 0.1j, -x + 0.3j):
            _close(d(z, target(z)), _fd(target, z))


def _compiled(text):
    """The function `text` defines, its source registered for the transform."""
    space = {"np": np, "math": math}
    exec(compile(text, "<derivatives test>", "exec"), space)
    fn = space[text.partition("(")[0].removeprefix("def ")]
    register_source(fn, text)
    return fn


def _summed(target):
    """`def summed(x, w): return np.sum(np.<name>(x) * w)`."""
    return _compiled(f"def summed(x, w):\n    return np.sum(np.{target.__name__}(x) * w)\n")


@pytest.mark.parametrize("row, target", _cases("array"))
def test_array_form_and_path(row, target):
    formula = row.forms["array"][target]
    assert array_inline.UNARY[target] is formula and registry.find_array(target).fn is formula
    x = np.array(_points(row))
    w = np.linspace(0.5, 1.5, x.size)
    y, back = registry.find_rule(target)(x)
    assert np.array_equal(formula(w, y, x)[0], back(w)[0])  # the rule's bits
    f = _summed(target)
    got = gradient(f, x, w)[0]
    _close(got, w * _fd(target, x))
    with optimizations(array_paths=False):
        assert np.array_equal(gradient(f, x, w)[0], got)


@pytest.mark.optimizations
@pytest.mark.parametrize("row, target", _cases("array"))
def test_array_path_is_taken(row, target):
    assert "_ARRAY" in show_adjoint(_summed(target), optimized=True)


@pytest.mark.parametrize("row, target", _cases("tangent"))
def test_tangent_form(row, target):
    d = row.forms["tangent"][target]
    assert FORWARD[target] is not None
    for x in _points(row):
        want = _fd(target, x)
        _close(d(x, target(x)), want)
        _close(jvp(target, (x,), (1.0,))[1], want)
    if isinstance(target, np.ufunc):
        x = np.array(_points(row))
        _close(jvp(target, (x,), (np.ones_like(x),))[1], _fd(target, x))


# --- one place --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("side", [1.0, -1.0], ids=["above", "below"])
@pytest.mark.parametrize("fn, scalar", [(np.arcsin, cmath.asin), (np.arccos, cmath.acos)], ids=["arcsin", "arccos"])
def test_inverse_sine_and_cosine_on_their_branch_cuts(fn, scalar, side, mode):
    """z = x + 0j with |x| > 1 lies on the cut, and the sign of the zero imaginary part says which side's values
    NumPy and cmath give: the derivative was that of the other side (-0.894j for 0.894j at 1.5), as `1 - z * z` lost
    the sign. Along x, the side's own derivative, as finite differences see it."""
    def f(x):
        z = x + 0j if side > 0 else np.conj(x + 0j)
        w = fn(z)
        return np.sum(np.real(w) + 2.0 * np.imag(w))

    def g(t):
        w = scalar(complex(t, 0.0 * side))
        return w.real + 2.0 * w.imag
    x = np.array([1.5, -1.7, 2.5, 0.4])
    (got,) = gradient(f, x)
    _close(got, [_fd(lambda t: f(np.array([t])), v) for v in x])
    for v in (1.5, -1.7):
        _close(gradient(g, v)[0], _fd(g, v))


def test_sins_derivative_is_stated_once():
    from zygotepy.adjoints import complex as complex_rules, scalar
    from zygotepy.adjoints.numpy import elementwise
    from zygotepy.forward import rules
    (row,) = [r for r in ROWS if r.numpy == "sin"]
    assert row.derivative == "cos(x)"
    forms = [scalar.MATH[math.sin], scalar.SHARED[math.sin][1], complex_rules.HOLOMORPHIC[cmath.sin],
             elementwise.ELEMENTWISE[np.sin], array_inline.UNARY[np.sin], rules.UNARY[np.sin], rules.UNARY[math.sin]]
    assert all(f.row is row for f in forms)
    assert registry.find_scalar(math.sin) is forms[0] and registry.find_array(np.sin).fn is forms[4]
    # and no other module of the package has a table entry `<namespace>.sin: lambda ...: ...cos(...)`
    package = pathlib.Path(zygotepy.__file__).parent
    entry = re.compile(r"\bsin: lambda[^\n]*cos\(")
    assert not [p for p in package.rglob("*.py") if p.name != "derivatives.py" and entry.search(p.read_text())]


def test_generated_source_survives_a_cleared_linecache():
    """(linecache.clearcache() drops it: the module's loader gives it back.)"""
    from zygotepy.ast_adjoint.source import get_source
    linecache.cache.pop(derivatives.FILENAME)
    node = get_source(derivatives.forms("array")[np.sin]).node
    assert [a.id for a in node.args.args] == ["dy", "y", "x"]
    assert linecache.getline(derivatives.FILENAME, 1).startswith("_scalar_0 = lambda dy, y, x: (dy * y,)")

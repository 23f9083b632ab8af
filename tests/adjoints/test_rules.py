"""The rule tables, row by row, against central finite differences in float64 (here the rows of the rules outside
`zygotepy/adjoints/numpy/`; tests/adjoints/numpy/test_<module>.py checks those of its module with `row_tests`).

For a row's case: call the rule, pick a random cotangent `dy` shaped like the output, and for each random argument a
random direction `v`; then `<back(dy)[i], v>` must equal `(<dy, f(.., a + eps v, ..)> - <dy, f(.., a - eps v, ..)>) / 2eps`
with `f` the target itself. Inner products are real: `Re(sum(conj(a) * b))`, so for complex arguments the check is the
API's convention `gradient = dL/dx + 1j dL/dy` of the real function `L = Re<dy, f>`.
"""
import copy
import functools
import math
import operator
import pathlib
import zlib

import numpy as np
import pytest
from rule_table import (
    CPLX,
    ELEMENTWISE_DOMAINS,
    FLOAT32_BINARY,
    FLOAT32_REDUCTIONS,
    NONDIFF,
    ROWS,
    Kind,
    Seq,
    rule_module,
)

from table_base import Shaped

import zygotepy.adjoints  # noqa: F401  (registers the tables)
import zygotepy.adjoints.numpy as numpy_rules
from zygotepy.adjoints import registry

EPS = 1e-6
MINE = {"zygotepy.adjoints.scalar", "zygotepy.adjoints.operators", "zygotepy.adjoints.builtins", "zygotepy.adjoints.functional",
        *(f"zygotepy.adjoints.numpy.{m}" for m in numpy_rules.TABLES)}


# --- a small finite-difference helper -----------------------------------------------------------------------------------

def _draw(row_args, case, rng, dtype=np.float64):
    """The call's arguments, and which of them are random (and so perturbed)."""
    shapes = iter(case)
    args, random = [], []
    for spec in row_args:
        is_random = isinstance(spec, (Kind, Seq))
        args.append(spec.draw(rng, next(shapes), dtype) if is_random else spec)
        random.append(is_random)
    return args, random


def _draw_keywords(row_kwargs, rng, dtype=np.float64):
    """The call's keywords, and which of them are random (a `Kind` draws a float, a `Shaped` an array)."""
    kwargs, random = {}, []
    for name, spec in row_kwargs.items():
        if isinstance(spec, (Kind, Shaped)):
            kwargs[name] = spec.draw(rng, None, dtype)
            random.append(name)
        else:
            kwargs[name] = spec
    return kwargs, tuple(random)


def split_keywords(rule, grads, kwargs):
    """A back's result as (positional cotangents, keyword cotangents): a keyword-aware rule called with keywords
    returns the dict of the latter last (`registry.keyword_rule`); any other rule gives its keywords none."""
    if kwargs and getattr(rule, "__zygote_keywords__", False):
        assert isinstance(grads[-1], dict), f"a keyword-aware back returned {grads[-1]!r} where its dict belongs"
        assert set(grads[-1]) <= set(kwargs), f"cotangents for keywords {set(grads[-1]) - set(kwargs)} not passed"
        return grads[:-1], grads[-1]
    return grads, {}


def _like(x, rng):
    """A random value with the structure, shape and dtype of `x` (an output's cotangent, an argument's direction)."""
    if isinstance(x, (list, tuple)):
        items = [_like(v, rng) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)  # namedtuples: SVDResult, QRResult
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "c":
            return (rng.normal(size=x.shape) + 1j * rng.normal(size=x.shape)).astype(x.dtype)
        return rng.normal(size=x.shape).astype(x.dtype if x.dtype.kind == "f" else np.float64)
    if np.iscomplexobj(x):
        return complex(rng.normal(), rng.normal())
    return float(rng.normal())  # Python and NumPy scalars get a Python float, as the API's seed is


def _inner(a, b):
    """Re<a, b>; None is zero."""
    if a is None or b is None:
        return 0.0
    if isinstance(b, (list, tuple)):
        assert isinstance(a, (list, tuple)) and len(a) == len(b), f"cotangent {a!r} for {b!r}"
        return sum(_inner(x, y) for x, y in zip(a, b, strict=True))
    return float(np.real(np.sum(np.conj(np.asarray(a)) * np.asarray(b))))


def _moved(x, v, t):
    if isinstance(x, (list, tuple)):
        return type(x)(_moved(a, b, t) for a, b in zip(x, v, strict=True))
    return x + t * v


def _assert_structure(g, a, where):
    """A cotangent has its argument's structure: same container, same shape, real for a real argument."""
    if g is None:
        return
    if isinstance(a, (list, tuple)):
        assert type(g) is type(a) and len(g) == len(a), f"{where}: {type(g).__name__} cotangent for a {type(a).__name__}"
        for k, (gi, ai) in enumerate(zip(g, a, strict=True)):
            _assert_structure(gi, ai, f"{where}[{k}]")
        return
    assert np.shape(g) == np.shape(a), f"{where}: cotangent of shape {np.shape(g)} for shape {np.shape(a)}"
    if not np.iscomplexobj(a):
        assert not np.iscomplexobj(g), f"{where}: complex cotangent for a real argument"


def _listed(y):
    """`y` with the iterators a rule makes over lists (`itertools.tee`'s `Items`) as those lists, whose cotangents
    their backs take."""
    if type(y).__name__ == "Items":
        return list(y.items)
    return type(y)(_listed(v) for v in y) if type(y) in (list, tuple) else y


def _assert_close(y, expected):
    if isinstance(expected, (list, tuple)):
        assert len(y) == len(expected)
        for a, b in zip(y, expected, strict=True):
            _assert_close(a, b)
    else:
        np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)


def _pairing(dy, f, args, kwargs, i, value):
    """<dy, f(args with argument i replaced by value)>, on copies (in-place operators mutate their first argument)."""
    moved = copy.deepcopy(args)
    moved[i] = value
    return _inner(dy, f(*moved, **kwargs))


def check_against_finite_differences(op, args, random, kwargs=None, f=None, none=(), rtol=1e-5, atol=1e-6, seed=0,
                                     random_keywords=()):
    """`random_keywords` names the keywords whose cotangents are checked too (the rule must state them)."""
    rng = np.random.default_rng(seed)
    kwargs, f = kwargs or {}, f or op
    rule = registry.find_rule(op)
    assert rule is not None, f"no rule registered for {op}"
    # copies: in-place operators mutate their first argument
    y, back = rule(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    y = _listed(y)
    _assert_close(y, f(*copy.deepcopy(args), **kwargs))
    dy = _like(y, rng)
    grads, dkw = split_keywords(rule, back(dy), kwargs)
    assert type(grads) is tuple and len(grads) == len(args), f"back returned {grads!r} for {len(args)} arguments"
    for name in random_keywords:
        assert name in dkw, f"keyword {name}= gets no cotangent from the rule (it must state one)"
        _assert_structure(dkw[name], kwargs[name], f"keyword {name}=")
        v = _like(kwargs[name], rng)

        def at(t, name=name, v=v):
            return _inner(dy, f(*copy.deepcopy(args), **{**kwargs, name: _moved(kwargs[name], v, t)}))
        numeric = (at(EPS) - at(-EPS)) / (2 * EPS)
        assert _inner(dkw[name], v) == pytest.approx(numeric, rel=rtol, abs=atol), \
            f"keyword {name}=: analytic {_inner(dkw[name], v)!r}, finite differences {numeric!r}"
    for i in none:
        assert grads[i] is None, f"argument {i} should get no gradient, got {grads[i]!r}"
    for i, (a, is_random) in enumerate(zip(args, random, strict=True)):
        if not is_random:
            continue
        _assert_structure(grads[i], a, f"argument {i}")
        v = _like(a, rng)
        numeric = (_pairing(dy, f, args, kwargs, i, _moved(a, v, EPS))
                   - _pairing(dy, f, args, kwargs, i, _moved(a, v, -EPS))) / (2 * EPS)
        analytic = _inner(grads[i], v)
        assert analytic == pytest.approx(numeric, rel=rtol, abs=atol), \
            f"argument {i}: analytic {analytic!r}, finite differences {numeric!r}"


# --- the table ----------------------------------------------------------------------------------------------------------

def _fmt(shape):
    if shape is None:
        return "float"
    if shape == ():
        return "0d"
    if all(isinstance(s, int) for s in shape):
        return "x".join(map(str, shape))
    return "[" + ",".join(_fmt(s) for s in shape) + "]"


def _seed(text):
    return zlib.crc32(text.encode())


def row_tests(rows):
    """The two tests of every row of `rows`: each case against finite differences, and no cotangent in, none out.
    A test module takes them as its own: `test_rule_matches_finite_differences, test_no_cotangent_gives_none =
    row_tests(rows)`."""
    cases = [(r, case) for r in rows for case in r.shapes]

    @pytest.mark.parametrize("r, case", cases, ids=[f"{r.name}:{','.join(_fmt(s) for s in case)}" for r, case in cases])
    def test_rule_matches_finite_differences(r, case):
        seed = _seed(f"{r.name}{case}")
        rng = np.random.default_rng(seed)
        args, random = _draw(r.args, case, rng)
        kwargs, random_keywords = _draw_keywords(r.kwargs, rng)
        check_against_finite_differences(r.op, args, random, kwargs, r.f, r.none, rtol=r.rtol, seed=seed,
                                         random_keywords=random_keywords)

    @pytest.mark.parametrize("r", rows, ids=[r.name for r in rows])
    def test_no_cotangent_gives_none(r):
        rng = np.random.default_rng(0)
        args, _ = _draw(r.args, r.shapes[0], rng)
        kwargs, _ = _draw_keywords(r.kwargs, rng)
        rule = registry.find_rule(r.op)
        _, back = rule(*args, **kwargs)
        grads, dkw = split_keywords(rule, back(None), kwargs)
        assert grads == (None,) * len(args)
        assert all(g is None for g in dkw.values()), dkw
    return test_rule_matches_finite_differences, test_no_cotangent_gives_none


# the rows of the rules outside adjoints/numpy/ (those of adjoints/numpy/<module>.py: tests/adjoints/numpy/test_<module>.py)
NUMPY_PACKAGE = "zygotepy.adjoints.numpy."
test_rule_matches_finite_differences, test_no_cotangent_gives_none = row_tests(
    [r for r in ROWS if not rule_module(r).startswith(NUMPY_PACKAGE)])


def test_numpy_rows_are_checked_beside_their_modules():
    """Every module of adjoints/numpy/ with rows has tests/adjoints/numpy/test_<module>.py, which runs them."""
    here = pathlib.Path(__file__).parent / "numpy"
    modules = {rule_module(r)[len(NUMPY_PACKAGE):] for r in ROWS if rule_module(r).startswith(NUMPY_PACKAGE)}
    missing = sorted(m for m in modules if f'row_tests(rows_of("{m}"))' not in
                     ((here / f"test_{m}.py").read_text() if (here / f"test_{m}.py").exists() else ""))
    assert not missing, f"rows of adjoints/numpy/ modules that no tests/adjoints/numpy/test_<module>.py runs: {missing}"


def _mine(table):
    return {target: entry for target, entry in table.items() if getattr(entry, "__module__", None) in MINE}


# rules whose result is not a number or an array, so there is nothing to compare with finite differences: the array
# namespace a method returns (tests/adjoints/foreign/test_wrappers.py differentiates functions that look it up)
NO_ROW = {registry._key(np.ndarray.__array_namespace__)} if hasattr(np.ndarray, "__array_namespace__") else set()
# and the piecewise-constant operators of integers alone (a shift or `~` of a float raises): their rules are checked,
# on integers and on a user's class defining them, by tests/adjoints/test_piecewise.py
NO_ROW |= {registry._key(operator.lshift), registry._key(operator.rshift), registry._key(operator.invert)}
# (and their in-place forms, on int arrays: tests/adjoints/mutation/test_bitwise_in_place.py)
NO_ROW |= {registry._key(operator.ilshift), registry._key(operator.irshift)}
# and functools.update_wrapper, whose result is a function (tests/ast_adjoint/lower/test_decorated_definitions.py)
NO_ROW |= {registry._key(functools.update_wrapper)}
# and NumPy's iterator objects, whose results are iterators (tests/adjoints/numpy/test_iterators.py)
NO_ROW |= {registry._key(np.ndenumerate), registry._key(np.nditer)}
# and the scipy.stats methods refused where a gradient flows in (tests/adjoints/test_scipy_stats_refusals.py)
NO_ROW |= {t for t, r in registry.RULES.items() if getattr(r, "__module__", "") == "zygotepy.adjoints.scipy_stats_refusals"}
# and np.linalg.eig, whose eigenvectors' cotangent is refused (its eigenvalues: tests/adjoints/numpy/test_spectral.py)
NO_ROW |= {registry._key(np.linalg.eig)}
# and scipy.fft's sample frequencies, which take np.fft's rule (tests/adjoints/test_scipy_fft.py)
NO_ROW |= {t for t, r in registry.RULES.items() if getattr(r, "__qualname__", "") in ("fftfreq_rule", "rfftfreq_rule")
           and t not in (registry._key(np.fft.fftfreq), registry._key(np.fft.rfftfreq))}


def test_every_rule_has_a_row():
    covered = {registry._key(r.op) for r in ROWS} | NO_ROW
    missing = [t for t in _mine(registry.RULES) if t not in covered]
    assert not missing, f"rules without a row in rule_table.py: {missing}"


def test_every_scalar_derivative_has_a_row():
    covered = {registry._key(r.op) for r in ROWS}
    missing = [t for t in _mine(registry.SCALAR) if t not in covered]
    assert not missing, f"scalar derivatives without a row in rule_table.py: {missing}"


def test_nondifferentiable_targets():
    assert [t for t in NONDIFF if not registry.is_nondifferentiable(registry._key(t))] == []


# --- the scalar fast path agrees with the generic rules -----------------------------------------------------------------

SCALAR_TARGETS = list(_mine(registry.SCALAR))


def _float_case(target):
    for r in ROWS:
        if registry._key(r.op) is target and not r.kwargs:
            for case in r.shapes:
                if all(s is None for s in case) and not any(isinstance(a, Seq) for a in r.args):
                    return r, case
    raise AssertionError(f"no row with Python-float arguments for {target}")


@pytest.mark.parametrize("target", SCALAR_TARGETS, ids=[getattr(t, "__name__", repr(t)) for t in SCALAR_TARGETS])
def test_scalar_derivative_agrees_with_rule(target):
    r, case = _float_case(target)
    derivative = registry.find_scalar(target)
    rng = np.random.default_rng(_seed(r.name))
    for _ in range(5):
        args, _ = _draw(r.args, case, rng)
        dy = float(rng.normal())
        y = target(*args)
        inlined = derivative(dy, y, *args)
        _, back = registry.find_rule(target)(*args)
        generic = back(dy)
        assert len(inlined) == len(generic) == len(args)
        for a, b in zip(inlined, generic, strict=True):
            if a is None or b is None:
                assert a is None and b is None, (inlined, generic)
            else:
                assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


# --- complex numbers -----------------------------------------------------------------------------------------------------

COMPLEX_ROWS = [
    (operator.mul, 2), (operator.add, 2), (operator.sub, 2), (operator.truediv, 2), (operator.abs, 1), (abs, 1),
    (operator.neg, 1), (np.exp, 1), (np.multiply, 2), (np.abs, 1), (np.sin, 1), (np.square, 1),
    (np.exp2, 1), (np.arcsinh, 1), (np.conjugate, 1), (np.real, 1), (np.imag, 1), (np.angle, 1),
]
COMPLEX_SHAPES = {1: [(None,), ((3,),)], 2: [(None, None), ((3,), (3,)), ((2, 3), (3,)), (None, (3,))]}


@pytest.mark.parametrize("op, n", COMPLEX_ROWS, ids=[getattr(op, "__name__", "?") for op, _ in COMPLEX_ROWS])
def test_complex_arguments(op, n):
    for case in COMPLEX_SHAPES[n]:
        seed = _seed(f"{op}{case}")
        args, random = _draw((CPLX,) * n, case, np.random.default_rng(seed))
        check_against_finite_differences(op, args, random, seed=seed)


def test_complex_times_real_projects_onto_the_real_argument():
    args = [np.array([1.0 + 2.0j, -0.5j]), np.array([0.5, 2.0])]
    check_against_finite_differences(operator.mul, args, [True, True])
    check_against_finite_differences(operator.mul, [1.5, 2.0 - 1.0j], [True, True])


def test_abs_squared_of_a_complex_number():
    """docs/api.md: gradient(lambda z: abs(z)**2, 1+2j) == (2+4j,), composed here from the two rules."""
    z = 1 + 2j
    r, abs_back = registry.find_rule(abs)(z)
    _, pow_back = registry.find_rule(operator.pow)(r, 2)
    (dz,) = abs_back(pow_back(1.0)[0])
    assert dz == pytest.approx(2 + 4j)


# --- float32 in, float32 out -------------------------------------------------------------------------------------------

FLOAT32_OPS = [*((op, 1, {}) for op in ELEMENTWISE_DOMAINS),
               *((op, 2, {}) for op in (np.add, np.subtract, np.multiply, np.divide, np.power, np.maximum, np.minimum,
                                        np.arctan2, np.hypot, operator.add, operator.mul, operator.truediv,
                                        *FLOAT32_BINARY)),
               *((op, 1, kw) for op in (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.ndarray.sum,
                                        np.ndarray.mean, np.ndarray.max, np.ndarray.min, *FLOAT32_REDUCTIONS)
                 for kw in ({}, {"axis": 1}))]


@pytest.mark.parametrize("op, n, kw", FLOAT32_OPS,
                         ids=[f"{getattr(op, '__qualname__', op.__name__)}{kw or ''}" for op, _, kw in FLOAT32_OPS])
def test_float32_gets_float32_cotangents(op, n, kw):
    rng = np.random.default_rng(0)
    kind = ELEMENTWISE_DOMAINS.get(op, Kind("pos", 0.5, 2.0))
    args = [kind.draw(rng, (2, 3), np.float32) for _ in range(n)]
    rule = registry.find_rule(op)
    y, back = rule(*args, **kw)
    grads, _ = split_keywords(rule, back(_like(y, rng) if isinstance(y, np.ndarray) else np.float32(rng.normal())), kw)
    for g in grads:
        assert g.dtype == np.float32, f"{op}: float32 argument got a {g.dtype} cotangent"


# --- conventions the finite differences cannot see ----------------------------------------------------------------------

def test_builtin_max_ties_go_to_the_first():
    a, b = 2.0, 2.0
    _, back = registry.find_rule(max)([1.0, a, b])
    assert back(1.0)[0] == [None, 1.0, None]
    _, back = registry.find_rule(min)(3.0, 1.0, 1.0)
    assert back(1.0) == (None, 1.0, None)
    y, back = registry.find_rule(max)([], default=0.0)  # the default is returned: it gets the cotangent
    assert y == 0.0 and back(1.0) == (None, {"default": 1.0})
    y, back = registry.find_rule(max)([3.0], default=0.0)
    assert y == 3.0 and back(1.0) == ([1.0], {"default": None})


def test_need_mask_skips_unneeded_cotangents():
    """A back that takes `need` (one bool per argument) may skip the cotangents not needed; the needed ones agree."""
    rng = np.random.default_rng(0)
    checked = 0
    for r in ROWS:
        args, _ = _draw(r.args, r.shapes[-1], rng)
        kwargs, _ = _draw_keywords(r.kwargs, rng)
        y, back = registry.find_rule(r.op)(*copy.deepcopy(args), **kwargs)
        if getattr(getattr(back, "__code__", None), "co_argcount", 0) < 2:
            continue
        dy = _like(y, rng)
        # (a keyword-aware rule called with keywords ends with their cotangents: `rng.choice(a, n, p=w)`)
        aware = bool(kwargs) and getattr(registry.find_rule(r.op), "__zygote_keywords__", False)
        full = back(dy)[:-1] if aware else back(dy)
        for k in range(len(args)):
            need = tuple(j == k for j in range(len(args)))
            part = back(dy, need)[:-1] if aware else back(dy, need)
            assert len(part) == len(args), (r.name, need, part)
            _assert_close(_inner(part[k], part[k]), _inner(full[k], full[k]))
        checked += 1
    assert checked


def test_pow_with_negative_base_and_constant_exponent_has_no_nan():
    a = np.array([-2.0, -0.5, 0.0, 1.5])
    with np.errstate(all="raise"):
        _, back = registry.find_rule(operator.pow)(a, 2.0)
        da, db = back(np.ones(4))
    np.testing.assert_allclose(da, 2 * a)
    assert np.all(np.isfinite(db))  # d/db is taken as 0 where a <= 0 (documented in scalar.py)
    inlined = registry.find_scalar(operator.pow)(1.0, 4.0, -2.0, 2)
    assert inlined == (-4.0, 0.0)


def test_math_log_with_a_base():
    y, back = registry.find_rule(math.log)(8.0, 2.0)
    assert y == pytest.approx(3.0)
    dx, dbase = back(1.0)
    assert dx == pytest.approx(1 / (8 * math.log(2)))
    assert dbase == pytest.approx(-3.0 / (2 * math.log(2)))


@pytest.mark.parametrize("on", [True, False], ids=["optimized", "plain"])
def test_an_int_exponent_that_carries_a_gradient_is_differentiated_as_a_real(on):
    """`x ** n` with an int n that is an argument: the scalar template and the rule give d/dn = x**n log x (they
    disagreed: the rule gave None), against central differences of n as a real; an int array of exponents is data."""
    import zygotepy
    from zygotepy import gradient

    def f(x, n):
        return x ** n

    def g(a, n):
        return np.sum(a ** n)
    a = np.array([0.5, 1.5, 2.0])
    with zygotepy.optimizations(on):
        gx, gn = gradient(f, 1.3, 3)
        ga, gna = gradient(g, a, 3)
        assert gradient(g, a, np.array([1, 2, 3]))[1] is None
    h = 1e-6
    assert gx == pytest.approx(3 * 1.3 ** 2, rel=1e-12)
    assert gn == pytest.approx((1.3 ** (3 + h) - 1.3 ** (3 - h)) / (2 * h), rel=1e-7)
    assert gna == pytest.approx((np.sum(a ** (3 + h)) - np.sum(a ** (3 - h))) / (2 * h), rel=1e-7)
    np.testing.assert_allclose(ga, 3 * a ** 2, rtol=1e-12)

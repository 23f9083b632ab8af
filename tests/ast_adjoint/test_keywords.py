"""J's calls with keywords (ast_adjoint/keywords.py, dispatch.J_kw): a built-in keyword-aware rule's pullback is one
object (`KeywordsPullback`), which must give what the general pair (`_WithKeywords` over `RulePullback`) gives: the
positional cotangents, then one entry per keyword (the rule's, None for a constant, a `DroppedKeyword` for a
differentiable value the rule does not state). A rule's positional parameter passed by keyword gets the cotangent
the rule's back gives it among the positional ones (`bound_by_keyword`)."""
import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.adjoints import registry
from zygotepy.ast_adjoint import dispatch
from zygotepy.ast_adjoint.accumulate import DroppedKeyword
from zygotepy.ast_adjoint.keywords import KeywordsPullback, _WithKeywords
from zygotepy.ast_adjoint.pullbacks import RulePullback
from zygotepy.errors import ZygoteError
from zygotepy.testing import check_grads

X = np.random.default_rng(0).standard_normal((3, 4))

CALLS = {
    "sum along an axis, kept": (np.sum, (X,), {"axis": 1, "keepdims": True}),
    "sum with initial= (stated)": (np.sum, (X,), {"axis": 0, "initial": 0.5}),
    "sum with dtype= (a constant)": (np.sum, (X,), {"axis": 0, "dtype": np.float64}),
    "max along an axis": (np.max, (X,), {"axis": 0}),
    "min along both axes": (np.min, (X,), {"axis": (0, 1), "keepdims": True}),
    "clip with float bounds (stated)": (np.clip, (X,), {"a_min": -0.5, "a_max": 0.6}),
    "diff with prepend= (stated)": (np.diff, (X,), {"axis": 0, "prepend": 0.5}),
    "pad with constant_values=": (np.pad, (X, 1), {"constant_values": 0.5}),
    "pad_width by keyword": (np.pad, (X,), {"pad_width": 1, "constant_values": 0.5}),
}


def _general(fn, args, kwargs):
    """The pullback the general path made before the short way: `_WithKeywords` over a checked `RulePullback`."""
    rule = registry.find_rule(fn)
    y, back = rule(*args, **kwargs)
    return y, _WithKeywords(RulePullback(back, rule, len(args) + 1), rule, fn, kwargs, True)


def _same(a, b):
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, DroppedKeyword):
        assert isinstance(b, DroppedKeyword) and (a.rule, a.callee, a.name) == (b.rule, b.callee, b.name)
    elif a is None:
        assert b is None
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(CALLS))
def test_the_one_object_gives_what_the_general_pair_gives(name):
    fn, args, kwargs = CALLS[name]
    y, pb = dispatch.J_kw(fn, *args, **kwargs)
    assert isinstance(pb, KeywordsPullback)
    dy = np.random.default_rng(1).standard_normal(np.shape(y))
    if name == "pad_width by keyword":  # the general pair refuses it (the rule binds pad_width by position)
        with pytest.raises(ZygoteError, match="3 cotangents"):
            _general(fn, args, kwargs)[1](dy)
        got = pb(dy)
        assert got[0] is None and got[1].shape == X.shape and set(got[2]) == {"pad_width", "constant_values"}
        assert got[2]["pad_width"] is None
        return
    y2, general = _general(fn, args, kwargs)
    np.testing.assert_array_equal(y, y2)
    got, want = pb(dy), general(dy)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        _same(a, b)
    got, want = pb(None), general(None)
    assert len(got) == len(want) and all(g is None for g in got[:-1]) and set(got[-1]) == set(want[-1])


def test_a_differentiable_keyword_the_rule_does_not_state_is_dropped_loudly():
    """A built-in keyword-aware rule that states no cotangent for a differentiable keyword: the one object gives a
    `DroppedKeyword` (generated code raises on it where a gradient flows in), a constant keyword None."""
    def shifted(x, *, by=0.0, scale=1):
        return (x + by) * scale

    def rule(x, *, by=0.0, scale=1):
        return shifted(x, by=by, scale=scale), lambda dy: registry.keyword_cotangents((dy * scale,), {"by": by})
    rule.__module__ = "zygotepy.adjoints.a_table"  # (one of zygotepy's own: the short way applies)
    registry.keyword_rule(registry.adjoint(shifted)(rule))
    try:
        y, pb = dispatch.J_kw(shifted, 3.0, by=2.0, scale=2)
        assert isinstance(pb, KeywordsPullback)
        dself, dx, dkw = pb(1.0)
        assert dx == 2.0 and dkw["scale"] is None
        assert isinstance(dkw["by"], DroppedKeyword) and dkw["by"].name == "by"
        _same(dkw, _general(shifted, (3.0,), {"by": 2.0, "scale": 2})[1](1.0)[-1])
    finally:
        registry.RULES.pop(shifted, None)


def test_a_users_keyword_aware_rule_is_checked():
    """A rule of the user's keeps the general pair's checks: one cotangent per positional argument."""
    def scaled(x, *, by=1.0):
        return x * by

    @registry.keyword_rule
    @registry.adjoint(scaled)
    def _(x, *, by=1.0):
        return scaled(x, by=by), lambda dy: registry.keyword_cotangents((dy * by, None), {"by": by}, by=dy * x)
    try:
        y, pb = dispatch.J_kw(scaled, 3.0, by=2.0)
        assert not isinstance(pb, KeywordsPullback)
        with pytest.raises(ZygoteError, match="returned 3 cotangents"):
            pb(1.0)
    finally:
        registry.RULES.pop(scaled, None)


def pad_by_keyword(x, w):
    return np.sum(np.pad(x, pad_width=1, constant_values=w) ** 2)


def test_pad_width_by_keyword_against_finite_differences():
    """`np.pad(x, pad_width=1, ...)`: the rule takes pad_width by position, so its back gives it a (None) cotangent
    among the positional ones; J puts the call's cotangents back in order (this raised before)."""
    w = 0.5
    dx, dw = gradient(pad_by_keyword, X, w)
    eps = 1e-6
    num_w = (pad_by_keyword(X, w + eps) - pad_by_keyword(X, w - eps)) / (2 * eps)
    num_x = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        e = np.zeros_like(X)
        e[i] = eps
        num_x[i] = (pad_by_keyword(X + e, w) - pad_by_keyword(X - e, w)) / (2 * eps)
    np.testing.assert_allclose(dx, num_x, rtol=1e-6, atol=1e-8)
    assert dw == pytest.approx(num_w, rel=1e-6)


# --- a rule's positional parameters passed by keyword (keywords.bound_by_keyword) ------------------------------------

def affine(x, w, *, shift=0.0):
    return x * w + shift


def power(x, n):
    return x ** n


def affine_by_keyword(x, w, s):
    return affine(x, w=w, shift=s) ** 2


def power_by_keyword(x):
    return power(x, n=3) + power(x, 2)


def _affine_rule(x, w, *, shift=0.0):
    return affine(x, w, shift=shift), lambda dy: registry.keyword_cotangents((dy * w, dy * x), {"shift": shift},
                                                                            shift=dy)


def _power_rule(x, n):
    return power(x, n), lambda dy: (dy * n * x ** (n - 1), dy * x ** n * np.log(x))  # (n's, though an int here)


@pytest.fixture
def user_rules():
    registry.keyword_rule(registry.adjoint(affine)(_affine_rule))
    registry.adjoint(power)(_power_rule)
    yield
    registry.RULES.pop(affine, None)
    registry.RULES.pop(power, None)


def test_a_keyword_aware_rules_positional_parameter_passed_by_keyword(user_rules):
    """`affine(x, w=w, shift=s)`: the rule's back gives w's cotangent after x's (it raised "returned 3 cotangents")."""
    x = np.array([0.5, -1.0, 2.0])
    check_grads(affine_by_keyword, x, np.array([1.5, 0.25, -0.5]), np.array([0.75, 0.1, -0.2]))


def test_a_constant_int_passed_by_keyword_to_a_rules_positional_parameter(user_rules):
    """`power(x, n=3)` with an int n (not moved by position: it carries no gradient): the rule's cotangent for n is
    the keyword's, which nothing reads (it raised "returned 2 cotangents")."""
    assert gradient(power_by_keyword, 1.5) == (pytest.approx(3 * 1.5 ** 2 + 2 * 1.5),)
    check_grads(power_by_keyword, 1.5)


def test_a_cotangent_for_a_parameter_the_call_left_out_is_refused():
    def scale(x, w=2.0, b=0.0):
        return x * w + b

    def calls_scale(x):
        return scale(x, b=1.0)

    @registry.adjoint(scale)
    def _(x, w=2.0, b=0.0):
        return scale(x, w, b), lambda dy: (dy * w, dy * x, dy)  # a cotangent for w, which the call did not pass
    try:
        y, pb = dispatch.J_kw(scale, 3.0, b=1.0)
        with pytest.raises(ZygoteError, match="parameter 'w', which the call did not pass"):
            pb(1.0)
    finally:
        registry.RULES.pop(scale, None)


def test_a_wrongly_shaped_cotangent_is_refused_when_keywords_bind_positional_parameters(user_rules):
    @registry.adjoint(power)
    def _(x, n):
        return power(x, n), lambda dy: (np.sum(dy * n * x ** (n - 1)), None)  # a total where x is an array
    y, pb = dispatch.J_kw(power, np.array([1.0, 2.0]), n=3)
    with pytest.raises(ZygoteError, match="shape"):
        pb(np.ones(2))


# --- a ufunc's keywords that change no value (`casting=`, `order=`, `subok=`, `dtype=` of the inputs' type) --------

UFUNC_CALLS = {  # each was a TypeError from inside the rule ("add_rule() got an unexpected keyword argument")
    "add, dtype of the inputs": (lambda x: np.sum(np.add(x, x * x, dtype=np.float64)), lambda x: 1.0 + 2.0 * x),
    "exp, out and dtype": (lambda x: np.sum(np.exp(x, out=np.empty(x.shape), dtype=np.float64)), np.exp),
    "sin, subok": (lambda x: np.sum(np.sin(x, subok=True)), np.cos),
    "add, casting": (lambda x: np.sum(np.add(x, x, casting="same_kind")), lambda x: 2.0 + 0.0 * x),
    "multiply, order and where": (lambda x: np.sum(np.multiply(x, x, order="K", where=x > 0, out=np.zeros(x.shape))),
                                  lambda x: np.where(x > 0, 2.0 * x, 0.0)),
}


@pytest.mark.parametrize("name", UFUNC_CALLS)
def test_ufunc_keywords_that_change_no_value(name):
    f, want = UFUNC_CALLS[name]
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(gradient(f, x)[0], want(x), rtol=1e-12)


def test_a_ufunc_computed_in_another_dtype_is_refused():
    with pytest.raises(ZygoteError, match=r"np\.add\(\.\.\., dtype=.*float32.*\): zygotepy computes a ufunc in its "
                                          r"inputs' type"):
        gradient(lambda x: np.sum(np.add(x, x, dtype=np.float32)), np.array([0.3, -0.7]))

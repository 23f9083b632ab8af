"""Values that reach a rule by keyword keep their gradients (`registry.keyword_rule`), end to end through `gradient`,
against central finite differences; and where a rule cannot give a keyword's cotangent, differentiation raises (naming
the rule and the keyword) instead of dropping the gradient. Constant keywords keep working."""
import functools

import numpy as np
import pytest

from zygotepy import ZygoteError, adjoint, gradient
from zygotepy.testing import check_grads

X = np.array([1.0, 2.0, 3.0])
TABLE = np.array([0.0, 1.0, 2.0])
GRID = np.arange(6.0).reshape(2, 3) ** 2
WEIGHTS = np.arange(6.0).reshape(3, 2)


def _checked(f, *args):
    """check_grads, plus: every argument has a gradient (each case below depends on all of its arguments)."""
    grads = check_grads(f, *args)
    assert all(g is not None for g in grads), f"{f.__name__}: a gradient was dropped: {grads}"
    return grads


# --- each case once lost its keyword's gradient (None) or raised ------------------------------------------------------
CASES = {
    "average weights=": (lambda w: np.average(X, weights=w), np.array([1.0, 2.0, 0.5])),
    "average weights= and x": (lambda x, w: np.average(x, weights=w), X * 0.7, np.array([1.0, 2.0, 0.5])),
    "clip a_min=": (lambda lo: np.sum(np.clip(X, a_min=lo, a_max=2.5)), 1.5),
    "clip a_max=": (lambda hi: np.sum(np.clip(X, a_min=1.5, a_max=hi)), 2.5),
    "clip method max=": (lambda x, hi: np.sum(x.clip(max=hi) ** 2), X, 2.5),
    "max default=": (lambda d: max([], default=d), 2.0),
    "min default=": (lambda d: min([], default=d) * 3.0, 2.0),
    "sum start=": (lambda s: sum([1.0, 2.0], start=s) ** 2, 1.0),
    "sum start= of arrays": (lambda s, x: np.sum(sum([x, x], start=s) ** 2), X, X * 0.5),
    "diff prepend=": (lambda p: np.sum(np.diff(X, prepend=p) ** 2), 0.5),
    "diff append=": (lambda p: np.sum(np.diff(X, append=p) ** 2), 0.5),
    "pad constant_values=": (lambda c: np.sum(np.pad(X, 1, constant_values=c) ** 2), 0.7),
    "np.max initial=": (lambda c: np.max(X, initial=c), 5.0),
    "np.min initial=": (lambda c: np.min(X, initial=c), -1.0),
    "np.sum initial=": (lambda c: np.sum(X, initial=c) ** 2, 1.0),
    "np.prod initial=": (lambda c, x: np.prod(x, initial=c), 2.0, X),
    "method max initial=": (lambda c, x: x.max(initial=c) + x.max(axis=0, initial=c), 2.5, X),
    "nan_to_num nan=": (lambda c: np.nan_to_num(np.array([np.nan]), nan=c)[0], 3.0),
    "nan_to_num posinf=": (lambda c: np.nan_to_num(np.array([np.inf]), posinf=c)[0], 3.0),
    "nan_to_num neginf=": (lambda c: np.nan_to_num(np.array([-np.inf]), neginf=c)[0], 3.0),
    "partial b=": (lambda y: functools.partial(lambda a, b: a * b, b=y)(3.0), 2.0),
    "partial b= built outside": (lambda y: _times(b=y)(3.0) + _times(y)(2.0), 2.0),
    "interp fp": (lambda fp: np.interp(1.5, TABLE, fp), np.array([1.0, 4.0, 2.0])),
    "interp xp": (lambda xp: np.interp(1.5, xp, np.array([1.0, 4.0, 2.0])), np.array([0.0, 1.0, 2.0])),
    "interp left=": (lambda v: np.interp(-1.0, TABLE, np.array([1.0, 2.0, 3.0]), left=v), 0.3),
    "interp right=": (lambda v: np.interp(5.0, TABLE, np.array([1.0, 2.0, 3.0]), right=v), 0.3),
    "interp positional left": (lambda v: np.interp(-1.0, TABLE, np.array([1.0, 2.0, 3.0]), v), 0.3),
    # rules that are not keyword-aware: a keyword naming the next positional parameter is passed by position
    "dot b=": (lambda w: np.sum(np.dot(WEIGHTS, b=w) ** 2), np.array([0.5, -1.0])),
    "tensordot b= axes=": (lambda w: np.sum(np.tensordot(WEIGHTS, b=w, axes=1) ** 2), np.array([0.5, -1.0])),
    "polyval x=": (lambda t: np.polyval(np.array([1.0, 2.0, 3.0]), x=t), 0.7),
    "append values=": (lambda x, v: np.sum(np.append(x, values=v) ** 2), X, np.array([1.0, 2.0])),
    "pow exp=": (lambda x: pow(2.0, exp=x), 1.5),
    "pow base= exp=": (lambda x, y: pow(base=x, exp=y), 1.5, 2.0),
    "ravel order=F": (lambda a: np.sum(np.ravel(a, order="F") * np.arange(6.0)), GRID),
    "reshape order=F": (lambda a: np.sum(np.reshape(a, (3, 2), order="F") * WEIGHTS), GRID),
    "method reshape order=F": (lambda a: np.sum(a.reshape((3, 2), order="F") * WEIGHTS), GRID),
    "method ravel F": (lambda a: np.sum(a.ravel("F") * np.arange(6.0)), GRID),
    "method flatten order=F": (lambda a: np.sum(a.flatten(order="F") * np.arange(6.0)), GRID),
}


def _times(a=1.0, b=1.0):
    return functools.partial(_product, b=b) if a == 1.0 else functools.partial(_product, a)


def _product(a, b):
    return a * b


@pytest.mark.parametrize("name", list(CASES))
def test_keyword_gradient_matches_finite_differences(name):
    f, *args = CASES[name]
    _checked(f, *args)


def test_interp_with_a_period():
    """period= wraps x and the table around (it raised before); the period itself gets its cotangent too."""
    angles = np.array([-340.0, -20.0, 45.0, 400.0])  # away from the nodes (kinks) modulo 360
    _checked(lambda xp, fp: np.sum(np.interp(angles, xp, fp, period=360.0) ** 2), np.array([350.0, 10.0, 200.0]),
             np.array([1.0, 4.0, 2.0]))
    _checked(lambda p: np.sum(np.interp(angles, np.array([350.0, 10.0, 200.0]), np.array([1.0, 4.0, 2.0]), period=p)),
             365.0)


@pytest.mark.parametrize("order", ["K", "A", "F", "C"])
def test_ravel_orders_of_a_fortran_array(order):
    """order='K'/'A' read a Fortran-ordered array in its memory order: the cotangent goes back in that order. (Finite
    differences cannot check these: the perturbed copies are stored in C order, which changes what K and A read.)"""
    a = np.asfortranarray(GRID)
    weights = np.arange(6.0)
    expected = np.zeros(6)
    expected[np.ravel(np.arange(6).reshape(2, 3), order="F" if order in "KAF" else "C")] = weights
    for f in (lambda a: np.sum(np.ravel(a, order=order) * weights), lambda a: np.sum(a.flatten(order) * weights),
              lambda a: np.sum(a.ravel(order) * weights)):
        np.testing.assert_allclose(gradient(f, a)[0], expected.reshape(2, 3))


def test_ravel_order_k_of_a_transposed_view():
    """A transposed view read in memory order is its base read in C order."""
    base = np.arange(24.0).reshape(2, 3, 4)
    weights = np.arange(24.0)
    g = gradient(lambda b: np.sum(np.ravel(np.transpose(b, (2, 0, 1)), order="K") * weights), base)[0]
    np.testing.assert_allclose(g, weights.reshape(2, 3, 4))
    with pytest.raises(ZygoteError, match="negative strides"):
        gradient(lambda b: np.sum(np.ravel(b[:, ::-1], order="K")), base)


# --- constant keywords keep working -----------------------------------------------------------------------------------
LO = 0.0


def test_constant_float_keywords_run():
    x = np.array([-0.5, 0.5, 1.5])
    assert gradient(lambda x: np.sum(np.clip(x, a_min=0.0, a_max=1.0)), x)[0].tolist() == [0.0, 1.0, 0.0]
    assert gradient(lambda x: np.sum(np.clip(x, a_min=LO, a_max=1.0) * np.full(3, fill_value=2.0)), x)[0].tolist() \
        == [0.0, 2.0, 0.0]
    assert gradient(lambda x: np.sum(x * np.linspace(0.0, 1.0, num=3)), x)[0].tolist() == [0.0, 0.5, 1.0]
    assert gradient(lambda x: np.sum(np.round(x, decimals=2)) + np.sum(x) * np.allclose(x, x, atol=1e-8), x)[0] \
        .tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(gradient(lambda x: np.linalg.norm(x, ord=np.inf), x)[0], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(gradient(lambda x: np.sum(x, axis=0, dtype=np.float64, keepdims=True)[0], x)[0],
                               np.ones(3))


# --- the safety net: a rule that cannot give a keyword's cotangent ----------------------------------------------------
def scale(x, *, by=1.0):
    return x * by


def _register_rule_without_keyword_cotangents():
    """A user's rule whose back has no cotangent for the keyword-only `by=`."""
    @adjoint(scale)
    def scale_rule(x, **kwargs):
        by = kwargs.get("by", 1.0)
        return scale(x, by=by), lambda dy: (dy * by,)
    return scale_rule


def scaled_by(x, b):
    return scale(x, by=b)


def test_a_gradient_into_a_keyword_the_rule_cannot_give_raises():
    _register_rule_without_keyword_cotangents()
    with pytest.raises(ZygoteError, match=r"keyword argument by= of .*scale.*scale_rule") as info:
        gradient(scaled_by, 2.0, 3.0)
    line = scaled_by.__code__.co_firstlineno + 1
    notes = "".join(getattr(info.value, "__notes__", []))
    assert f"{__file__}, line {line}" in notes, notes  # the user's line is attached
    with pytest.raises(ZygoteError, match=r"keyword argument by="):
        gradient(lambda x, b: scale(x, by=b), 2.0, 3.0)


def test_a_constant_keyword_to_such_a_rule_runs():
    _register_rule_without_keyword_cotangents()
    assert gradient(lambda x: scale(x, by=3.0), 2.0) == (3.0,)
    assert gradient(lambda x, b: scale(x, by=3.0) + b, 2.0, 3.0) == (3.0, 1.0)


def test_a_keyword_aware_user_rule_gives_its_keyword_cotangent():
    from zygotepy.adjoints.registry import keyword_cotangents, keyword_rule

    @keyword_rule
    @adjoint(scale)
    def scale_rule_kw(x, **kwargs):
        by = kwargs.get("by", 1.0)
        return scale(x, by=by), lambda dy: keyword_cotangents((dy * by,), kwargs, by=dy * x)
    assert gradient(lambda x, b: scale(x, by=b), 2.0, 3.0) == (3.0, 2.0)


def test_a_keyword_aware_rule_that_leaves_a_keyword_out_raises():
    from zygotepy.adjoints.registry import keyword_rule

    @keyword_rule
    @adjoint(scale)
    def silent_rule(x, **kwargs):
        by = kwargs.get("by", 1.0)
        return scale(x, by=by), lambda dy: (dy * by, {})
    with pytest.raises(ZygoteError, match=r"by= .*silent_rule"):
        gradient(lambda x, b: scale(x, by=b), 2.0, 3.0)
    assert gradient(lambda x: scale(x, by=3.0), 2.0) == (3.0,)


def test_a_partial_over_such_a_rule_raises_where_the_keyword_carries_a_gradient():
    _register_rule_without_keyword_cotangents()
    with pytest.raises(ZygoteError, match=r"keyword argument by="):
        gradient(lambda x, b: functools.partial(scale, by=b)(x), 2.0, 3.0)
    assert gradient(lambda x: functools.partial(scale, by=3.0)(x), 2.0) == (3.0,)


def shift(x, by=0.0):
    return x + by


def test_a_keyword_naming_a_positional_parameter_reaches_a_positional_rule():
    """`shift(x, by=b)` with a rule written for `shift(x, by)`: passed by position, `by` gets the rule's cotangent."""
    @adjoint(shift)
    def shift_rule(x, by=0.0):
        return shift(x, by), lambda dy: (dy, 2.0 * dy)  # (a deliberately distinct cotangent, to see where it goes)
    assert gradient(lambda x, b: shift(x, by=b), 1.0, 3.0) == (1.0, 2.0)
    assert gradient(lambda x: shift(x, by=3.0), 1.0) == (1.0,)


# --- other array libraries: the same keyword-aware rules serve them ----------------------------------------------------
def test_keyword_gradients_of_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.asarray(X)
    lo, p = jnp.asarray(1.5), jnp.asarray(0.5)
    (g,) = gradient(lambda lo: jnp.sum(jnp.clip(x, min=lo, max=2.5)), lo)
    assert type(g) is type(lo) and float(g) == 1.0
    assert float(gradient(lambda p: jnp.sum(jnp.diff(x, prepend=p) ** 2), p)[0]) == pytest.approx(-1.0, rel=1e-6)
    weights = jnp.asarray(WEIGHTS)
    (g,) = gradient(lambda a: jnp.sum(jnp.reshape(a, (3, 2), order="F") * weights), jnp.asarray(GRID))
    np.testing.assert_allclose(np.asarray(g), gradient(CASES["reshape order=F"][0], GRID)[0], rtol=1e-6)


def test_keyword_gradients_of_torch_tensors():
    torch = pytest.importorskip("torch")
    t = torch.tensor(X, dtype=torch.float64)
    (g,) = gradient(lambda lo: torch.sum(torch.clip(t, min=lo, max=2.5)), torch.tensor(1.5, dtype=torch.float64))
    assert isinstance(g, torch.Tensor) and float(g) == 1.0

"""`scipy.stats`: rules for the densities and distribution functions of norm, t, gamma and beta, and for
multivariate_normal's logpdf and pdf, registered only when SciPy is importable.

Why rules at the level of the methods: SciPy's `rv_continuous` methods parse their arguments with code generated from
strings and call `f(*a, *b)`, which zygotepy cannot read, so `scipy.stats.norm.logpdf` is differentiated as a whole.
`scipy.stats.norm.logpdf` is a bound method of a `norm_gen` instance; dispatch looks a bound method up through its
function, `rv_continuous.logpdf`, shared by every continuous distribution, with the instance as first argument. So one
rule per method serves them all: it picks the distribution's table by the instance's class (`FAMILIES`) and refuses,
when a gradient reaches it, a distribution it has no table for. The values are SciPy's own (the rule calls the method
it replaces); only the cotangents are computed here. Frozen distributions (`norm(m, s).logpdf(x)`) are covered by rules
for freezing and for the frozen methods, whose object carries the cotangents of its arguments (`StructGrad`).

A location-scale family with standardized log density log f(z; shapes), z = (x - loc) / scale, has
logpdf = log f(z) - log scale, so with the score s = d log f / dz: d/dx = s / scale, d/dloc = -s / scale,
d/dscale = -(s z + 1) / scale; the shapes' derivatives are closed forms (digamma). The cdf F(z) has d/dx = pdf(x),
d/dloc = -pdf(x), d/dscale = -pdf(x) z; logcdf divides by the cdf (exp(logpdf - logcdf), stable in the tails). A cdf's
shape parameters have no closed-form derivative: a gradient flowing into one raises a ZygoteError naming it. Where the
call site knows which arguments carry a gradient (every argument by position) it is raised only for those; a call with
keywords does not tell (zygotepy hands the rule no mask then), so there a shape passed by position as a float is
refused whenever a gradient flows out of the call (pass it by keyword, `t.cdf(x, df=3.0, loc=m)`: a keyword is refused
only where its value carries a gradient). A frozen object that carries a gradient cannot tell either: its
cdf/logcdf refuse its float shapes (a constant one, `t(3.0).cdf(x)`, differentiates x). Other continuous
distributions (lognorm, ...) and discrete ones run, and raise a ZygoteError naming them where a gradient flows.
Outside the support (logpdf -inf) the gradients are 0; where SciPy's value is nan (a bad parameter), nan.

multivariate_normal: with a = cov^-1 (x - mean): d/dx = -a, d/dmean = a, d/dcov = -(cov^-1 - a a^T) / 2, folded onto
the lower triangle (SciPy's eigh reads only that triangle of cov, as np.linalg.cholesky's rule does), onto the diagonal
for a 1-d cov and onto the trace for a scalar one. A singular covariance, or a `Covariance` object, is refused.
NumPy arrays and Python numbers only: another library's arrays are refused rather than converted silently.
"""
from dataclasses import dataclass

import numpy as np

from ..ast_adjoint.dispatch import differentiable as carries
from ..ast_adjoint.runtime import DroppedKeyword
from ..backends import is_foreign, unbroadcast
from ..errors import MissingTangentRule, ZygoteError
from ..forward.dual import Dual, _split, _top_tag, has_dual, strip
from ..structgrad import StructGrad
from .numpy.common import _restore
from .numpy.linalg import _lower
from .registry import adjoint, keyword_cotangents, keyword_rule

try:
    import scipy.linalg as sla
    import scipy.special as sc
    import scipy.stats as st
    from scipy.stats._distn_infrastructure import (
        rv_continuous,
        rv_continuous_frozen,
        rv_generic,
    )
    from scipy.stats._multivariate import (
        multivariate_normal_frozen,
        multivariate_normal_gen,
    )
except ImportError:  # SciPy is optional
    st = None


@dataclass(frozen=True)
class Family:
    """A location-scale family: its score d log f / dz, the derivatives of log f in each shape parameter (in the order
    of `dist.shapes`), and the open support of z."""
    score: object
    shapes: tuple = ()
    inside: object = None


def _t_df(z, df):
    return 0.5 * (sc.digamma(0.5 * (df + 1)) - sc.digamma(0.5 * df) - 1 / df - np.log1p(z * z / df)
                  + (df + 1) * z * z / (df * (df + z * z)))


FAMILIES_BY_NAME = {
    "norm": Family(lambda z: -z),
    "t": Family(lambda z, df: -(df + 1) * z / (df + z * z), (_t_df,)),
    "gamma": Family(lambda z, a: (a - 1) / z - 1, (lambda z, a: np.log(z) - sc.digamma(a),), lambda z: z > 0),
    "beta": Family(lambda z, a, b: (a - 1) / z - (b - 1) / (1 - z),
                   (lambda z, a, b: np.log(z) - sc.digamma(a) + sc.digamma(a + b),
                    lambda z, a, b: np.log1p(-z) - sc.digamma(b) + sc.digamma(a + b)),
                   lambda z: (z > 0) & (z < 1)),
}
FAMILIES = {} if st is None else {type(getattr(st, name)): f for name, f in FAMILIES_BY_NAME.items()}
METHODS = ("logpdf", "pdf", "logcdf", "cdf")


def _refuse_foreign(name, values):
    """These rules compute with NumPy and SciPy, which would convert another library's arrays silently."""
    for a in values:
        if hasattr(a, "shape") and type(a) is not np.ndarray and is_foreign(a):
            raise ZygoteError(f"{name} is differentiated for NumPy arrays and Python numbers only, not "
                              f"{type(a).__module__}.{type(a).__name__}: use that library's own distributions "
                              f"(jax.scipy.stats, torch.distributions), or register a rule with @zygotepy.adjoint")


def _dist_name(dist):
    return f"scipy.stats.{getattr(dist, 'name', type(dist).__name__)}"


def _parameters(dist, args, kwds):
    """The call's values by parameter name ("x", the shapes, "loc", "scale"; defaults filled in), and where each given
    one came from: its index among the positional arguments (self excluded), or its keyword."""
    names = ["x", *(s.strip() for s in (dist.shapes or "").split(",") if s.strip()), "loc", "scale"]
    values, origin = {"loc": 0.0, "scale": 1.0}, {}
    for k, (name, value) in enumerate(zip(names, args)):
        values[name], origin[name] = value, k
    for name, value in kwds.items():
        values[name], origin[name] = value, name
    return values, origin


def _location_scale_partials(method, dist, family, values, y):
    """{parameter name: d method / d parameter} (None for a shape parameter without a closed form), in the shape of
    the broadcast call."""
    names = [s.strip() for s in (dist.shapes or "").split(",") if s.strip()]
    shapes = [_floats(values[n]) for n in names]
    x, loc, scale = (_floats(values[n]) for n in ("x", "loc", "scale"))
    z = (x - loc) / scale
    bad = np.isnan(y)  # SciPy's nan for a bad parameter (scale <= 0, df <= 0): its gradient is nan too
    if method in ("cdf", "logcdf"):
        given = {**{n: values[n] for n in names}, "loc": values["loc"], "scale": values["scale"]}
        if method == "cdf":
            w = _method(dist, "pdf", values["x"], given)
        else:
            lc = _method(dist, "logcdf", values["x"], given)
            below = np.isneginf(strip(lc))  # below the support: the cdf is 0 and constant there
            w = np.where(below, 0.0, np.exp(_method(dist, "logpdf", values["x"], given) - np.where(below, 0.0, lc)))
        w = np.where(bad, np.nan, w)
        return {"x": w, "loc": -w, "scale": -w * z, **dict.fromkeys(names)}
    inside = np.ones(z.shape, bool) if family.inside is None else family.inside(z)
    zs = np.where(inside, z, 0.5)  # a point inside every support: no warnings where the result is masked
    score = family.score(zs, *shapes)
    factor = np.where(bad, np.nan, np.where(inside, 1.0, 0.0) * (y if method == "pdf" else 1.0))
    out = {"x": factor * score / scale, "loc": -factor * score / scale, "scale": -factor * (score * zs + 1) / scale}
    for n, d in zip(names, family.shapes, strict=True):
        out[n] = factor * d(zs, *shapes)
    return out


def _floats(v):
    """`v` as a float array; a dual number (`hessian` runs these rules on them) as it is."""
    return v if has_dual((v,)) else np.asarray(v, dtype=float)


def _method(dist, name, x, given):
    """`dist.<name>(x, **given)`, on dual numbers too (`_on_duals`)."""
    method = getattr(type(dist), name)
    return _on_duals(dist, name, method, (x,), given) if has_dual((x,), given) else method(dist, x, **given)


def _on_duals(dist, name, method, args, kwds):
    """`dist.<name>(*args, **kwds)` given dual numbers (`hessian`'s forward-over-reverse runs this rule on them):
    SciPy's value at the primals, its tangent the family's partials times the arguments' tangents."""
    tag = _top_tag([*args, *kwds.values()])
    split_args, split_kwds = [_split(a, tag) for a in args], {k: _split(v, tag) for k, v in kwds.items()}
    primals, primal_kwds = [p for p, _ in split_args], {k: p for k, (p, _) in split_kwds.items()}
    if has_dual(primals, primal_kwds):  # (several levels of dual numbers: not taken here)
        raise MissingTangentRule(method)
    y = method(dist, *primals, **primal_kwds)
    family = FAMILIES.get(type(dist))
    if family is None:
        raise MissingTangentRule(method)
    values, origin = _parameters(dist, primals, primal_kwds)
    partials = _location_scale_partials(name, dist, family, values, y)
    y_dot = None
    for n, o in origin.items():
        t = split_args[o][1] if isinstance(o, int) else split_kwds[o][1]
        if t is None:
            continue
        if partials[n] is None:
            raise _no_rule(dist, name, n)
        y_dot = partials[n] * t if y_dot is None else y_dot + partials[n] * t
    if y_dot is None:
        return y
    return Dual(tag, y, np.broadcast_to(y_dot, np.shape(y)).copy() if np.shape(y) else y_dot)


class _Named:
    """A name standing in for a callee or a rule in DroppedKeyword's message."""
    def __init__(self, name):
        self.__qualname__ = name


def _refused_keyword(dist, method, name):
    """The cotangent of a shape parameter passed by keyword: raises, naming it, where its value carries a gradient."""
    return DroppedKeyword(_Named(f"zygotepy.adjoints.scipy_stats (which has no closed-form derivative of {method} in "
                                 f"its shape parameter {name})"), _Named(f"{_dist_name(dist)}.{method}"), name)


def _no_rule(dist, method, name, hint=""):
    return ZygoteError(f"{_dist_name(dist)}.{method}: no rule for the gradient with respect to its shape parameter "
                       f"{name} (the derivative of a {method} in its shape parameters has no closed form){hint}. "
                       f"Make {name} a constant, or register a rule with @zygotepy.adjoint")


_UNKNOWN_NEED = (", and this call passes it by position together with keywords, where zygotepy cannot tell whether a "
                 "gradient flows into it: pass it by keyword (name=value) if it is a constant")


def _cotangents(dist, method, args, kwds, y, dy, need, unknown=_UNKNOWN_NEED, keywords=True):
    """(positional cotangents, self first; keyword cotangents) of `dist.<method>(*args, **kwds)` = y. `need` (self
    first) flags the positional arguments a gradient flows into; None: not known (`unknown` words that refusal).
    `keywords`: whether the keywords want cotangents."""
    family = FAMILIES.get(type(dist))
    if family is None:
        raise ZygoteError(f"{_dist_name(dist)}.{method}: zygotepy has rules for the distributions "
                          f"{', '.join(FAMILIES_BY_NAME)} only; register a rule with @zygotepy.adjoint")
    values, origin = _parameters(dist, args, kwds)
    partials = _location_scale_partials(method, dist, family, values, y)
    grads, by_keyword = [None] * len(args), {}
    for n, o in origin.items():
        if isinstance(o, int) and need is not None and o + 1 < len(need) and not need[o + 1] \
                or isinstance(o, str) and not keywords:
            continue
        if partials[n] is None:  # a cdf's shape parameter
            if isinstance(o, str):
                by_keyword[n] = _refused_keyword(dist, method, n)
            elif need is not None:
                raise _no_rule(dist, method, n)
            elif _carries_gradient(values[n]):
                raise _no_rule(dist, method, n, unknown)
            continue
        like = values[n]
        g = _restore(unbroadcast(dy * partials[n], np.asarray(like, dtype=float)
                                 if isinstance(like, (list, tuple)) else like), like)
        if isinstance(o, str):
            by_keyword[n] = g
        else:
            grads[o] = g
    return (None, *grads), by_keyword


def _continuous_rule(method):
    """The rule of `rv_continuous.<method>` (self is the distribution): the values SciPy computes, the cotangents of the
    family's table, each unbroadcast to its argument's shape."""
    name = method.__name__

    def rule(self, *args, **kwds):
        _refuse_foreign(f"{_dist_name(self)}.{name}", (*args, *kwds.values()))
        y = _on_duals(self, name, method, args, kwds) if has_dual(args, kwds) else method(self, *args, **kwds)

        def back(dy, need=None):
            if dy is None:
                return keyword_cotangents((None,) * (len(args) + 1), kwds)
            positional, by_keyword = _cotangents(self, name, args, kwds, y, dy, need)
            return keyword_cotangents(positional, kwds, **by_keyword)
        return y, back
    rule.__qualname__ = f"{name}_rule"
    return keyword_rule(rule)


def _carries_gradient(value):
    """Could `value` carry a gradient (a float, a float array)? dispatch's test, imported when first needed (dispatch
    imports the registry, which imports the rule tables)."""
    return carries(value)


# --- frozen distributions: `norm(m, s)` holds its arguments; the frozen methods give them cotangents ----------------
def _freeze(self, *args, **kwds):
    """`dist(*args, **kwds)` and `dist.freeze(...)`: the frozen object's cotangent, StructGrad(args=..., kwds=...)
    (the fields that hold the arguments), goes back to the arguments."""
    _refuse_foreign(f"{_dist_name(self)}", (*args, *kwds.values()))
    y = rv_generic.freeze(self, *args, **kwds)

    def back(dy):
        dy = dy or {}
        dargs, dkw = tuple(dy.get("args") or ()), dy.get("kwds") or {}
        positional = (None, *(dargs[k] if k < len(dargs) else None for k in range(len(args))))
        return keyword_cotangents(positional, kwds, **{k: dkw.get(k) for k in kwds})
    return y, back


_FROZEN_SHAPES = (", which a frozen distribution holds, where zygotepy cannot tell whether a gradient flows into "
                  "it: call the distribution's method with it, e.g. t.cdf(x, df, loc, scale)")


def _frozen_rule(name):
    """`frozen.<name>(x)`: the distribution's cotangents of the frozen arguments, as the frozen object's. Which of
    those carry a gradient is not known here: where the object does, a cdf's float shapes are refused
    (`_FROZEN_SHAPES`); a constant object (`t(3.0).cdf(x)`) gives x its cotangent alone."""
    original = getattr(rv_continuous_frozen, name)

    def rule(self, x):
        _refuse_foreign(f"{_dist_name(self.dist)}.{name}", (x, *self.args, *self.kwds.values()))
        y = _on_duals(self.dist, name, getattr(type(self.dist), name), (x, *self.args), self.kwds) \
            if has_dual((x, *self.args), self.kwds) else original(self, x)

        def back(dy, need=None):
            if dy is None:
                return None, None
            if not isinstance(self, rv_continuous_frozen):  # (rv_frozen's cdf serves discrete distributions too)
                raise ZygoteError(f"{_dist_name(self.dist)}.{name}: zygotepy has no rule for discrete distributions; "
                                  f"register one with @zygotepy.adjoint")
            kwds, held = self.kwds, need is None or need[0]  # does the frozen object itself carry a gradient?
            mask = None if held else (False, True, *(False for _ in self.args))
            positional, by_keyword = _cotangents(self.dist, name, (x, *self.args), kwds, y, dy, mask, _FROZEN_SHAPES,
                                                 keywords=held)
            if not held:
                return None, positional[1]
            for k in [k for k, g in by_keyword.items() if type(g).__name__ == "DroppedKeyword"]:
                if _carries_gradient(kwds[k]):
                    raise _no_rule(self.dist, name, k, _FROZEN_SHAPES)
                del by_keyword[k]
            return StructGrad(args=tuple(positional[2:]), kwds={k: by_keyword.get(k) for k in kwds}), positional[1]
        return y, back
    rule.__qualname__ = f"frozen_{name}_rule"
    return rule


# --- multivariate_normal -----------------------------------------------------------------------------------------------
MVN_NAMES = ("x", "mean", "cov", "allow_singular")


def _mvn_parts(x, mean, cov):
    """(X of shape (..., d), the mean (d,), the covariance (d, d)) as SciPy reads its arguments."""
    cov_ = np.asarray(cov, dtype=float)
    if mean is None:
        dim = 1 if cov_.ndim < 2 else cov_.shape[0]
        mean_ = np.zeros(dim)
    else:
        mean_ = np.asarray(mean, dtype=float)
        dim = mean_.size
    mean_ = mean_.reshape(dim)
    sigma = cov_.reshape(1, 1) if dim == 1 else cov_ * np.eye(dim) if cov_.ndim == 0 else \
        np.diag(cov_) if cov_.ndim == 1 else cov_
    X = np.asarray(x, dtype=float)
    X = X[None] if X.ndim == 0 else (X[:, None] if dim == 1 else X[None, :]) if X.ndim == 1 else X
    return X, mean_, sigma


def _mvn_back(g, X, mean, sigma):
    """(dX, dmean, dsigma) of the log density, `g` its cotangent (one per point); dsigma symmetric."""
    d = mean.shape[0]
    try:
        factor = sla.cho_factor(sigma, lower=True)
    except np.linalg.LinAlgError:
        raise ZygoteError("scipy.stats.multivariate_normal: no rule for a singular covariance (its density lives on "
                          "a subspace); regularize the covariance, or register a rule with @zygotepy.adjoint") from None
    dev = (X - mean).reshape(-1, d)
    alpha = sla.cho_solve(factor, dev.T).T
    w = np.reshape(g, (-1, 1)) * alpha
    dsigma = -0.5 * (np.sum(g) * sla.cho_solve(factor, np.eye(d)) - alpha.T @ w)
    return -w.reshape(X.shape), w.sum(axis=0), dsigma


def _fold_mean(dmean, mean):
    return None if mean is None else _restore(np.reshape(dmean, np.shape(mean)), mean)


def _fold_cov(dsigma, cov):
    """The symmetric cotangent of the full covariance, as one of `cov` in the form it was given."""
    shape = np.shape(cov)
    g = dsigma.reshape(shape) if dsigma.shape[0] == 1 else np.trace(dsigma) if len(shape) == 0 else \
        np.diag(dsigma).copy() if len(shape) == 1 else _lower(dsigma)
    return _restore(np.asarray(g), cov)


def _mvn_rule(method):
    """`multivariate_normal.logpdf/pdf(x, mean=None, cov=1, allow_singular=False)`."""
    name = method.__name__

    def rule(self, *args, **kwargs):
        _refuse_foreign(f"scipy.stats.multivariate_normal.{name}", (*args, *kwargs.values()))
        y = method(self, *args, **kwargs)
        given = {**dict(zip(MVN_NAMES, args)), **kwargs}

        def back(dy, need=None):
            if dy is None:
                return keyword_cotangents((None,) * (len(args) + 1), kwargs)
            mean, cov = given.get("mean"), given.get("cov", 1)
            if isinstance(cov, st.Covariance):
                raise ZygoteError("scipy.stats.multivariate_normal: no rule for a Covariance object as cov; pass the "
                                  "covariance matrix")
            X, mean_, sigma = _mvn_parts(given["x"], mean, cov)
            g = dy * y if name == "pdf" else dy
            dX, dmean, dsigma = _mvn_back(g, X, mean_, sigma)
            out = {"x": _restore(dX.reshape(np.shape(given["x"])), given["x"]), "mean": _fold_mean(dmean, mean),
                   "cov": _fold_cov(dsigma, cov), "allow_singular": None}
            positional = [out[n] if need is None or need[k + 1] else None for k, n in enumerate(MVN_NAMES[:len(args)])]
            return keyword_cotangents((None, *positional), kwargs, **{k: out.get(k) for k in kwargs})
        return y, back
    rule.__qualname__ = f"multivariate_normal_{name}_rule"
    return keyword_rule(rule)


def _mvn_freeze(self, *args, **kwargs):
    """`multivariate_normal(mean, cov)`: the frozen object's cotangent StructGrad(mean=..., cov=...) (full vector and
    symmetric matrix, as the frozen rules give it) goes back to the arguments in the forms they were given."""
    _refuse_foreign("scipy.stats.multivariate_normal", (*args, *kwargs.values()))
    y = multivariate_normal_gen.__call__(self, *args, **kwargs)
    given = {**dict(zip(("mean", "cov", "allow_singular", "seed"), args)), **kwargs}

    def back(dy):
        dy = dy or {}
        out = {"mean": None if dy.get("mean") is None else _fold_mean(dy["mean"], given.get("mean")),
               "cov": None if dy.get("cov") is None else _fold_cov(dy["cov"], given.get("cov", 1))}
        positional = (None, *(out.get(n) for n in ("mean", "cov", "allow_singular", "seed")[:len(args)]))
        return keyword_cotangents(positional, kwargs, **{k: out.get(k) for k in kwargs})
    return y, back


def _mvn_frozen_rule(name):
    """`multivariate_normal(mean, cov).<name>(x)`: the frozen object's cotangent is StructGrad(mean=..., cov=...),
    which `_mvn_freeze` hands to the arguments."""
    original = getattr(multivariate_normal_frozen, name)

    def rule(self, x):
        _refuse_foreign(f"scipy.stats.multivariate_normal.{name}", (x,))
        y = original(self, x)

        def back(dy):
            if dy is None:
                return None, None
            X, mean, sigma = _mvn_parts(x, self.mean, self.cov)
            dX, dmean, dsigma = _mvn_back(dy * y if name == "pdf" else dy, X, mean, sigma)
            return StructGrad(mean=dmean, cov=dsigma), _restore(dX.reshape(np.shape(x)), x)
        return y, back
    rule.__qualname__ = f"multivariate_normal_frozen_{name}_rule"
    return rule


CONTINUOUS = {}
if st is not None:
    CONTINUOUS = {name: adjoint(getattr(rv_continuous, name), need=True)(_continuous_rule(getattr(rv_continuous, name)))
                  for name in METHODS}
    adjoint(rv_generic.__call__)(keyword_rule(_freeze))
    adjoint(rv_generic.freeze)(keyword_rule(_freeze))
    for _name in METHODS:
        adjoint(getattr(rv_continuous_frozen, _name), need=True)(_frozen_rule(_name))
    for _name in ("logpdf", "pdf"):
        adjoint(getattr(multivariate_normal_gen, _name), need=True)(_mvn_rule(getattr(multivariate_normal_gen, _name)))
        adjoint(getattr(multivariate_normal_frozen, _name))(_mvn_frozen_rule(_name))
    adjoint(multivariate_normal_gen.__call__)(keyword_rule(_mvn_freeze))

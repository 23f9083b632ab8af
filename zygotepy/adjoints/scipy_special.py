"""`scipy.special`: rules for its differentiable functions, registered only when SciPy is importable.

SciPy is an optional dependency: without it this module imports cleanly and registers nothing (UNARY and BINARY stay
empty). Most functions are ufuncs, so they are rows of two tables, `function: derivative(x, y)` and
`function: (d/da(a, b, y), d/db(a, b, y))` in terms of the inputs and the output, turned into rules by numpy/common.py's
`_elementwise_rule` and `_binary` (the same machinery as numpy/elementwise.py: broadcasting, Python numbers and lists,
float32 kept, the conjugate convention for complex arguments). The rest (polygamma, logsumexp, softmax, log_softmax,
multigammaln) are written out below. `scipy.special.sinc` is `np.sinc` and `psi` is `digamma`: their rules are those.

The rules compute with scipy.special and NumPy, so they take NumPy arrays and Python numbers only: another library's
arrays (JAX, torch, CuPy) are refused with an error naming the library's own special functions, rather than converted
silently. Arguments with no gradient: polygamma's order n, multigammaln's dimension d, the axes and flags; the Bessel
functions' order and the incomplete gamma functions' shape have none in closed form: a gradient asked of them is
refused (`NoDerivative`). Not covered: zeta (wrt x), the Box-Cox family.
"""
import math

import numpy as np

from ..ast_adjoint import runtime as rt
from ..ast_adjoint.call_checks import call_site
from ..backends import conj, is_foreign, unbroadcast
from ..errors import ZygoteError
from ..forward.dual import dispatch as dual_call
from .numpy.common import _binary, _elementwise_rule, _restore, as_axes
from .registry import adjoint, keyword_cotangents, keyword_rule

try:
    import scipy.special as sc
except ImportError:  # SciPy is optional
    sc = None

TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2
SQRT_2PI = math.sqrt(2 * math.pi)
DEGREE = math.pi / 180
LN2, LN10 = math.log(2), math.log(10)


def _ratio(a, b):
    """a / b, and 0 where a == 0 (even where b == 0 too): the convention of xlogy's and the entropies' derivatives,
    whose value is 0 wherever a is, whatever b. NumPy division, so a Python-number b == 0 gives inf, not an error."""
    zero = np.equal(a, 0)
    return np.where(zero, 0.0, np.divide(a, np.where(zero, 1.0, b)))


def _spence_derivative(x):
    """spence(x) = integral from 1 to x of log(t) / (1 - t) dt: the integrand, which tends to -1 at t = 1."""
    one = np.equal(x, 1)
    return np.where(one, -1.0, np.log(np.where(one, 2.0, x)) / (1 - np.where(one, 2.0, x)))


def _constant_first(name, what):
    """What stands for the partial derivative in a first argument that has none in closed form (a Bessel function's
    order, the incomplete gamma function's shape): `_two` gives that argument a `NoDerivative` cotangent, which raises
    where a gradient is asked of it, and nothing for an integer (data)."""
    return ("constant", name, what)


def _real_only(name, derivative):
    """A derivative that holds for real arguments (the scaled Bessel functions' factors `exp(-|x|)`, `exp(-|Im x|)` are
    not analytic): a complex argument is refused."""
    def checked(v, x, y):
        if np.iscomplexobj(x):
            raise ZygoteError(f"scipy.special.{name} is differentiated for real arguments only")
        return derivative(v, x, y)
    return checked


def _exprel_derivative(x, y):
    """d/dx (e^x - 1) / x = (e^x - y) / x, by its series near 0, where that difference cancels."""
    small = np.abs(x) < 1e-3
    safe = np.where(small, 1.0, x)
    return np.where(small, 0.5 + x / 3 + x * x / 8, (np.exp(safe) - np.where(small, 1.0, y)) / safe)


def _trigamma(x):
    """polygamma(1, x), digamma's derivative, for complex x too (SciPy's polygamma takes real arguments only): the
    recurrence psi1(z) = psi1(z + 1) + 1 / z^2 up to Re z >= 8, then the asymptotic series in 1 / z (error below
    1e-15 there), and the reflection psi1(1 - z) + psi1(z) = pi^2 / sin^2(pi z) for Re z < 1/2."""
    if not np.iscomplexobj(x):
        return sc.polygamma(1, x)
    z = np.asarray(x, dtype=complex)
    left = z.real < 0.5
    w = np.where(left, 1.0 - z, z)
    total = np.zeros_like(w)
    while True:
        low = w.real < 8.0
        if not low.any():
            break
        total = total + np.where(low, 1.0 / (w * w), 0.0)
        w = np.where(low, w + 1.0, w)
    r = 1.0 / w
    r2 = r * r
    series = r + r2 / 2.0 + r * r2 * (1.0 / 6 - r2 * (1.0 / 30 - r2 * (1.0 / 42 - r2 * (1.0 / 30 - r2 * 5.0 / 66))))
    psi1 = total + series
    return np.where(left, np.pi ** 2 / np.sin(np.pi * z) ** 2 - psi1, psi1)


# by name: a SciPy without one of them (softplus is new in 1.15) just lacks its rule
UNARY_BY_NAME = {
    "exprel": _exprel_derivative,
    # gamma family (digamma is psi)
    "gammaln": lambda x, y: sc.digamma(x),
    "loggamma": lambda x, y: sc.digamma(x),
    "gamma": lambda x, y: y * sc.digamma(x),
    "rgamma": lambda x, y: -y * sc.digamma(x),
    "digamma": lambda x, y: _trigamma(x),
    # error functions and the normal distribution
    "erf": lambda x, y: TWO_OVER_SQRT_PI * np.exp(-x * x),
    "erfc": lambda x, y: -TWO_OVER_SQRT_PI * np.exp(-x * x),
    "erfcx": lambda x, y: 2 * x * y - TWO_OVER_SQRT_PI,
    "erfi": lambda x, y: TWO_OVER_SQRT_PI * np.exp(x * x),
    "erfinv": lambda x, y: SQRT_PI_OVER_2 * np.exp(y * y),
    "erfcinv": lambda x, y: -SQRT_PI_OVER_2 * np.exp(y * y),
    "dawsn": lambda x, y: 1 - 2 * x * y,
    "ndtr": lambda x, y: np.exp(-0.5 * x * x) / SQRT_2PI,
    "log_ndtr": lambda x, y: np.exp(-0.5 * x * x - y) / SQRT_2PI,  # pdf / cdf, stable far in the left tail
    "ndtri": lambda x, y: SQRT_2PI * np.exp(0.5 * y * y),
    "ndtri_exp": lambda x, y: SQRT_2PI * np.exp(x + 0.5 * y * y),
    # logistic
    "expit": lambda x, y: y * (1 - y),
    "logit": lambda x, y: 1 / (x * (1 - x)),
    "log_expit": lambda x, y: sc.expit(-x),
    "softplus": lambda x, y: sc.expit(x),
    # entropy, Lambert-type
    "entr": lambda x, y: -np.log(x) - 1,
    "wrightomega": lambda x, y: y / (1 + y),
    "spence": lambda x, y: _spence_derivative(x),
    # Bessel functions: I0' = I1, I1' = (I0 + I2) / 2; the scaled ones I0e = exp(-|x|) I0 ... add -sign(x) y
    "i0": lambda x, y: sc.i1(x),
    "i1": lambda x, y: 0.5 * (sc.i0(x) + sc.iv(2, x)),
    "i0e": lambda x, y: sc.i1e(x) - np.sign(x) * y,
    "i1e": lambda x, y: 0.5 * (sc.i0e(x) + sc.ive(2, x)) - np.sign(x) * y,
    "k0": lambda x, y: -sc.k1(x),
    "k1": lambda x, y: -0.5 * (sc.k0(x) + sc.kn(2, x)),
    "k0e": lambda x, y: y - sc.k1e(x),
    "k1e": lambda x, y: y - 0.5 * (sc.k0e(x) + sc.kve(2, x)),
    "j0": lambda x, y: -sc.j1(x),
    "j1": lambda x, y: 0.5 * (sc.j0(x) - sc.jv(2, x)),
    "y0": lambda x, y: -sc.y1(x),
    "y1": lambda x, y: 0.5 * (sc.y0(x) - sc.yv(2, x)),
    # elementary functions SciPy has its own ufuncs for
    "expm1": lambda x, y: y + 1,
    "log1p": lambda x, y: 1 / (1 + x),
    "exp2": lambda x, y: y * LN2,
    "exp10": lambda x, y: y * LN10,
    "cbrt": lambda x, y: 1 / (3 * y * y),
    "sindg": lambda x, y: DEGREE * sc.cosdg(x),
    "cosdg": lambda x, y: -DEGREE * sc.sindg(x),
    "gammasgn": lambda x, y: 0.0 * x,  # (the sign of Gamma(x): piecewise constant)
}
BINARY_BY_NAME = {
    # x log y and x log(1 + y) are 0 wherever x is, whatever y: the gradient wrt y is 0 there
    "xlogy": (lambda a, b, y: np.log(b), lambda a, b, y: _ratio(a, b)),
    "xlog1py": (lambda a, b, y: np.log1p(b), lambda a, b, y: _ratio(a, 1 + b)),
    "betaln": (lambda a, b, y: sc.digamma(a) - sc.digamma(a + b), lambda a, b, y: sc.digamma(b) - sc.digamma(a + b)),
    "beta": (lambda a, b, y: y * (sc.digamma(a) - sc.digamma(a + b)),
             lambda a, b, y: y * (sc.digamma(b) - sc.digamma(a + b))),
    # relative entropies: x log(x/y) (- x + y); their value at x = 0 is 0 (resp. y)
    "rel_entr": (lambda a, b, y: np.log(_ratio(a, b)) + 1, lambda a, b, y: -_ratio(a, b)),
    "kl_div": (lambda a, b, y: np.log(_ratio(a, b)), lambda a, b, y: 1 - _ratio(a, b)),
    # huber(delta, r): r^2 / 2 inside |r| <= delta, delta (|r| - delta / 2) outside
    "huber": (lambda d, r, y: np.where(np.abs(r) <= d, 0.0, np.abs(r) - d),
              lambda d, r, y: np.where(np.abs(r) <= d, r, d * np.sign(r))),
    # pseudo_huber(delta, r) = delta^2 (s - 1), s = sqrt(1 + (r / delta)^2)
    "pseudo_huber": (lambda d, r, y: 2 * y / d - r * r / (d * np.sqrt(1 + (r / d) ** 2)),
                     lambda d, r, y: r / np.sqrt(1 + (r / d) ** 2)),
    # Bessel functions of order v (data) in x, by the recurrences of their derivatives; the scaled ones (`*e`) carry
    # exp(-|x|) (ive), exp(x) (kve), exp(-|Im x|) (jve, yve)
    "jv": (_constant_first("jv", "the order v"), lambda v, x, y: (sc.jv(v - 1, x) - sc.jv(v + 1, x)) / 2),
    "yv": (_constant_first("yv", "the order v"), lambda v, x, y: (sc.yv(v - 1, x) - sc.yv(v + 1, x)) / 2),
    "iv": (_constant_first("iv", "the order v"), lambda v, x, y: (sc.iv(v - 1, x) + sc.iv(v + 1, x)) / 2),
    "kv": (_constant_first("kv", "the order v"), lambda v, x, y: -(sc.kv(v - 1, x) + sc.kv(v + 1, x)) / 2),
    "jve": (_constant_first("jve", "the order v"),
            _real_only("jve", lambda v, x, y: (sc.jve(v - 1, x) - sc.jve(v + 1, x)) / 2)),
    "yve": (_constant_first("yve", "the order v"),
            _real_only("yve", lambda v, x, y: (sc.yve(v - 1, x) - sc.yve(v + 1, x)) / 2)),
    "ive": (_constant_first("ive", "the order v"),
            _real_only("ive", lambda v, x, y: (sc.ive(v - 1, x) + sc.ive(v + 1, x)) / 2 - np.sign(x) * y)),
    "kve": (_constant_first("kve", "the order v"),
            _real_only("kve", lambda v, x, y: y - (sc.kve(v - 1, x) + sc.kve(v + 1, x)) / 2)),
    # the regularised incomplete gamma functions in x: +- x^(a-1) e^-x / Gamma(a)
    "gammainc": (_constant_first("gammainc", "the shape a"),
                 lambda a, x, y: np.exp((a - 1) * np.log(x) - x - sc.gammaln(a))),
    "gammaincc": (_constant_first("gammaincc", "the shape a"),
                  lambda a, x, y: -np.exp((a - 1) * np.log(x) - x - sc.gammaln(a))),
    # Box-Cox: (x^l - 1) / l (log x at l = 0); in l, (x^l log x - y) / l, and (log x)^2 / 2 at l = 0
    "boxcox": (lambda x, lam, y: x ** (lam - 1), lambda x, lam, y: _boxcox_slope(np.log(x), lam, y)),
    "boxcox1p": (lambda x, lam, y: (1 + x) ** (lam - 1), lambda x, lam, y: _boxcox_slope(np.log1p(x), lam, y)),
    # Owen's T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt
    "owens_t": (lambda h, a, y: -0.5 * np.exp(-0.5 * h * h) / SQRT_2PI * sc.erf(a * h / math.sqrt(2)),
                lambda h, a, y: np.exp(-0.5 * h * h * (1 + a * a)) / (2 * math.pi * (1 + a * a))),
}


def _boxcox_slope(log_x, lam, y):
    """d/d lambda of a Box-Cox transform with log x (log(1 + x) for boxcox1p) and value y."""
    zero = lam == 0
    safe = np.where(zero, 1.0, lam)
    return np.where(zero, 0.5 * log_x * log_x, (np.exp(safe * log_x) * log_x - y) / safe)


def _refuse_foreign(fn, args):
    """Another library's arrays are refused: these rules compute with scipy.special, which would convert them to NumPy
    arrays silently (or fail on a GPU). Forward mode's dual numbers pass: they reach their own rules (or a clear
    MissingTangentRule) through NumPy's protocols."""
    for a in args:
        if hasattr(a, "shape") and type(a) is not np.ndarray and not getattr(type(a), "__zygote_number__", False) \
                and is_foreign(a):
            raise ZygoteError(f"scipy.special.{fn.__name__} is differentiated for NumPy arrays and Python numbers only, "
                              f"not {type(a).__module__}.{type(a).__name__}: use that library's own special functions "
                              f"(jax.scipy.special, torch.special), or register a rule with @zygotepy.adjoint")


def _unary(fn, derivative):
    """numpy/common.py's elementwise rule behind the check above; its back keeps the `need` mask and the running cotangents
    handed in (`registry.accumulates`), so generated code uses them as for NumPy's ufuncs."""
    inner = _elementwise_rule(fn, derivative)

    def rule(x):
        _refuse_foreign(fn, (x,))
        y, inner_back = inner(x)

        def back(dy, need=None, *into):
            return inner_back(dy, need, *into)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _two(fn, da, db):
    """numpy/common.py's binary rule behind the check above; the `need` mask spares a partial derivative nobody wants (the
    log(y) of xlogy where x is a constant). A first argument without a derivative (`_constant_first`) gets a
    `NoDerivative` where it is a float: a closure's constant `nu` runs, a gradient asked of it raises."""
    constant = da if type(da) is tuple else None
    inner = _binary(fn, (lambda a, b, y: 0.0) if constant else da, db)

    def rule(a, b):
        _refuse_foreign(fn, (a, b))
        y, inner_back = inner(a, b)

        def back(dy, need=(True, True)):
            if constant is None:
                return inner_back(dy, need)
            _, g = inner_back(dy, (False, need[1]))
            if not need[0] or dy is None or where is None and np.asarray(a).dtype.kind in "iub":
                return None, g
            return rt.NoDerivative(f"{where or 'scipy.special.' + constant[1]}: zygotepy has no derivative of "
                                   f"scipy.special.{constant[1]} with respect to {constant[2]} (its first argument), "
                                   f"and a gradient reaching it was asked for; leave that argument out (argnums=), "
                                   f"or make it a constant"), g
        where = call_site() if constant and np.asarray(a).dtype.kind not in "iub" else None  # (a float order)
        return y, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def _array(v):
    """`v` as a NumPy array, but a dual number (`hessian` runs these rules on them) as it is."""
    return v if getattr(type(v), "__zygote_number__", False) else np.asarray(v)


def _kept(v, ndim, axis, keepdims):
    """A reduction's output (or its cotangent) `v` with the reduced axes kept (size 1), so it broadcasts against the
    input; `v` as it is when they were kept, or when everything was reduced (it is a number then)."""
    if keepdims or axis is None:
        return v
    axes = as_axes(axis)
    return np.expand_dims(v, tuple(a % ndim for a in axes))


def polygamma(n, x):
    """polygamma(n, x), the n-th derivative of digamma: d/dx = polygamma(n + 1, x); the order n is data."""
    _refuse_foreign(sc.polygamma, (n, x))
    y = sc.polygamma(n, x)

    def back(dy):
        if dy is None:
            return (None, None)
        x_ = np.asarray(x) if isinstance(x, (list, tuple)) else x
        return None, _restore(unbroadcast(dy * conj(sc.polygamma(np.asarray(n) + 1, x_)), x_), x)
    return y, back


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (data): sum over j < d of gammaln(a - j / 2) plus a
    constant, so d/da = sum over j < d of digamma(a - j / 2)."""
    _refuse_foreign(sc.multigammaln, (a,))
    y = sc.multigammaln(a, d)

    def back(dy):
        if dy is None:
            return (None, None)
        a_ = np.asarray(a, dtype=float)
        return _restore(unbroadcast(dy * sum(sc.digamma(a_ - 0.5 * j) for j in range(d)), a_), a), None
    return y, back


_LOGSUMEXP = ("axis", "b", "keepdims", "return_sign")


@keyword_rule
def logsumexp(a, *args, **kwargs):
    """y = log |sum b exp(a)| over `axis`: d/da = b exp(a - y) s and d/db = exp(a - y) s, with s the sign of the sum
    (1 without b). With return_sign=True the output is (y, sign); the sign is piecewise constant: no gradient.
    Where every entry is -inf (y = -inf) the gradient is 0."""
    _refuse_foreign(sc.logsumexp, (a, *args, *kwargs.values()))
    given = {**dict(zip(_LOGSUMEXP, args)), **kwargs}
    axis, b, keepdims, with_sign = (given.get(k) for k in _LOGSUMEXP)
    out = dual_call(sc.logsumexp, (a, *args), kwargs)
    y, sign = out if with_sign else (out, None)

    def back(dy):
        if with_sign and dy is not None:
            dy = dy[0]
        if dy is None:
            return keyword_cotangents((None, *(None for _ in args)), kwargs)
        a_ = a_own = _array(a)
        if b is not None:  # (SciPy broadcasts a against b: `logsumexp(lp, axis=1, b=B)`, lp (K,), B (N, K))
            a_ = np.broadcast_to(a_, np.broadcast_shapes(a_.shape, np.shape(b)))
        y_ = _kept(_array(y), a_.ndim, axis, keepdims)
        w = np.exp(a_ - np.where(np.isneginf(np.real(y_)), 0.0, y_))  # exp(a - y): the softmax (complex y: its real part's -inf)
        if sign is not None:
            w = w * _kept(_array(sign), a_.ndim, axis, keepdims)
        g = _kept(_array(dy), a_.ndim, axis, keepdims) * conj(w)
        da = _restore(unbroadcast(g * conj(b) if b is not None else g, a_own), a)
        db = None if b is None else _restore(unbroadcast(g, _array(b)), b)
        positional = (da, *(db if name == "b" else None for name in _LOGSUMEXP[:len(args)]))
        return keyword_cotangents(positional, kwargs, **({"b": db} if "b" in kwargs else {}))
    return out, back


def _axis(args, kwargs):
    return args[0] if args else kwargs.get("axis")


def softmax(x, *args, **kwargs):
    """y = exp(x) / sum exp(x) over `axis` (all of x by default): dx = y (dy - sum(dy y)) over the same axis."""
    _refuse_foreign(sc.softmax, (x,))
    y = dual_call(sc.softmax, (x, *args), kwargs)
    axis = _axis(args, kwargs)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        dy_ = _array(dy)
        return (_restore(y * (dy_ - np.sum(dy_ * y, axis=axis, keepdims=True)), x), *(None for _ in args))
    return y, back


def log_softmax(x, *args, **kwargs):
    """y = x - logsumexp(x) over `axis`: dx = dy - exp(y) sum(dy) over the same axis."""
    _refuse_foreign(sc.log_softmax, (x,))
    y = dual_call(sc.log_softmax, (x, *args), kwargs)
    axis = _axis(args, kwargs)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args))
        dy_ = _array(dy)
        return (_restore(dy_ - np.exp(y) * np.sum(dy_, axis=axis, keepdims=True), x), *(None for _ in args))
    return y, back


CUSTOM_BY_NAME = {"polygamma": polygamma, "multigammaln": multigammaln, "logsumexp": logsumexp, "softmax": softmax,
                  "log_softmax": log_softmax}

# the registered tables, function -> derivative(s) / rule: empty without SciPy
UNARY, BINARY, CUSTOM = {}, {}, {}
if sc is not None:
    UNARY = {getattr(sc, name): d for name, d in UNARY_BY_NAME.items() if hasattr(sc, name)}
    BINARY = {getattr(sc, name): d for name, d in BINARY_BY_NAME.items() if hasattr(sc, name)}
    CUSTOM = {getattr(sc, name): rule for name, rule in CUSTOM_BY_NAME.items() if hasattr(sc, name)}
    for _fn, _d in UNARY.items():
        adjoint(_fn, accumulates=True)(_unary(_fn, _d))
    for _fn, (_da, _db) in BINARY.items():
        adjoint(_fn, need=True)(_two(_fn, _da, _db))
    for _fn, _rule in CUSTOM.items():
        adjoint(_fn)(_rule)

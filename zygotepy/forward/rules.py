"""Forward (tangent) rules: a table of derivatives for Python operators, `math` and the common NumPy functions.

Each rule is `rule(fn, primals, tangents, kwargs) -> (y, ydot)` (see `dual.tangent_rule`). The primals may still be
Duals of outer nesting levels, so rules compute with operators, NumPy ufuncs and `dispatch` (which sends Duals back
through this table), never with `math.*` directly. The elementwise functions of one argument take their derivatives
from the rows of adjoints/derivatives.py, one for a NumPy ufunc and its `math` twin.
"""
import builtins
import math
import operator

import numpy as np

from ..adjoints import derivatives, registry
from ..adjoints.math_gamma import digamma
from ..backends import SIGN_IS_UNIT, log_add_shares, power_slope
from ..errors import ForwardModeError, MissingTangentRule
from .dual import GIVEN, Dual, by_keyword, dispatch, has_dual, laid_out_like, numbers, strip, tangent_rule
from .in_place import IN_PLACE
from .levels import _zero, tangent_by_pullback


def _without_tangent_rule(fn, args, kwargs):
    """A library callable with no tangent rule, on dual numbers. One with a reverse rule only (`scipy.linalg.expm`,
    `np.sinc`, `np.fmax`) gets its output's tangent from that rule's back, one backward per output element, where the
    output is a real number or a small real array (`levels.tangent_by_pullback`); one that updates an argument in place
    does not (its back would not update the tangent)."""
    if registry.is_user_rule(fn):  # (a user's rule replacing a built-in one: its back says the derivative)
        return registry.find_rule(fn)(*args, **kwargs)[0]
    if registry.is_nondifferentiable(fn):
        return fn(*strip(args), **strip(kwargs))
    updates = IN_PLACE.get(fn)
    if updates is not None:  # (np.copyto, np.put, ...: the stores they make)
        return updates(*args, **kwargs)
    rule = _registered(fn) if not registry.is_mutating(fn) else None
    done = tangent_by_pullback(rule, args, kwargs) if rule is not None else None
    if done is None:
        raise MissingTangentRule(fn)
    return done[0]


def _registered(fn):
    """The reverse rule registered for `fn` itself (not one derived from its source), or None."""
    try:
        return registry.RULES.get(fn)
    except TypeError:
        return None


GIVEN["without_rule"] = _without_tangent_rule


def _total(terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


# --- elementwise, one argument: dy/dx in terms of x and y, the `tangent` forms of adjoints/derivatives.py's rows -------
UNARY = derivatives.forms("tangent")


def _unary(derivative):
    def rule(fn, p, t, kw):
        y = dispatch(fn, p, kw)
        return y, None if t[0] is None else derivative(p[0], y) * t[0]
    return rule


for _fn, _d in UNARY.items():
    tangent_rule(_fn)(_unary(_d))


@tangent_rule(np.absolute, operator.abs, builtins.abs)
def absolute(fn, p, t, kw):
    """|z| of a complex z is not holomorphic: its tangent is Re(conj(z) dz) / |z|, a real number, not a multiple of dz
    (sign(z) dz was the holomorphic guess, wrong for complex inputs); real inputs: sign(x) dx (0 at 0)."""
    y = dispatch(fn, p, kw)
    x, dx = p[0], t[0]
    if dx is None:
        return y, None
    if np.iscomplexobj(strip(x)):
        return y, np.real(np.conj(x) * dx) / _nonzero(y)  # (0 at 0: conj(0) dx / 1)
    return y, np.sign(x) * dx


def _nonzero(r):
    """`r` with its zeros replaced by 1: the denominator of |z|'s and sign(z)'s tangents, whose numerators vanish there."""
    return np.where(strip(r) == 0, 1.0, r)


@tangent_rule(np.sign)
def sign(fn, p, t, kw):
    """Constant for real inputs; sign(z) = z/|z| of a complex z has the tangent dz/r - z Re(conj(z) dz)/r^3, r = |z|
    (0 at z = 0)."""
    y = dispatch(fn, p, kw)
    z, dz = p[0], t[0]
    if dz is None or not SIGN_IS_UNIT or not np.iscomplexobj(strip(z)):
        return y, None
    r = np.abs(z)
    safe = _nonzero(r)
    return y, np.where(strip(r) == 0, 0.0, dz / safe - z * np.real(np.conj(z) * dz) / safe ** 3)


# --- elementwise, two arguments ------------------------------------------------------------------------------------------
@tangent_rule(operator.add, operator.iadd, np.add)
def add(fn, p, t, kw):
    return dispatch(fn, p, kw), _total(t)


@tangent_rule(operator.sub, operator.isub, np.subtract)
def sub(fn, p, t, kw):
    return dispatch(fn, p, kw), t[0] if t[1] is None else -t[1] if t[0] is None else t[0] - t[1]


@tangent_rule(operator.truediv, operator.itruediv, np.divide)
def truediv(fn, p, t, kw):
    b = p[1]
    y = dispatch(fn, p, kw)
    return y, _total([None if t[0] is None else t[0] / b, None if t[1] is None else -y * t[1] / b])


def _log_where_positive(a, complex_result=False):
    """log(a) where a > 0, else 0: d/db a**b there is taken as 0, like the reverse rules (a**b is real only for
    integer b when a <= 0). A complex base, or any base of a complex power (`(-2.0) ** (x + 1j)`), has its
    (principal) log wherever it is not 0 (NumPy orders complex numbers by their real part: `z > 0` dropped every base
    left of the imaginary axis)."""
    base = strip(a)
    if complex_result and not np.iscomplexobj(base):
        a, base = a * (1 + 0j), base * (1 + 0j)
    if np.iscomplexobj(base):
        nonzero = base != 0
        return np.where(nonzero, np.log(np.where(nonzero, a, 1.0)), 0.0) if np.ndim(base) else \
            (np.log(a) if nonzero else 0.0)
    if np.ndim(base) == 0:
        return np.log(a) if base > 0 else 0.0
    positive = base > 0
    return np.where(positive, np.log(np.where(positive, a, 1.0)), 0.0)


def _operands(p):
    """A constant list or tuple of numbers as the array NumPy makes of it (`np.power([1.0, 2.0], x)`: the rules
    compute with arrays; a list of another level's dual numbers stays as it is)."""
    return [np.asarray(v) if type(v) in (list, tuple) and not has_dual((v,)) and numbers(v) else v for v in p]


@tangent_rule(operator.pow, operator.ipow, np.power, np.float_power, builtins.pow, math.pow)
def power(fn, p, t, kw):
    if fn is builtins.pow and kw:  # (`pow(x, exp=2)`: its keywords are its positional parameters' names)
        p, t = [*p, *(kw[k] for k in ("base", "exp", "mod")[len(p):] if k in kw)], [*t, None, None]
        kw = {}
    if len(p) > 2:
        raise ForwardModeError("pow(a, b, mod) is integer arithmetic: it has no derivative")
    a, b = p = _operands(p)
    y = dispatch(fn, p, kw)
    da = None
    if t[0] is not None:
        exponent = strip(b)
        if np.ndim(exponent) == 0 and exponent == 0:
            da = 0 * t[0]
        elif np.ndim(exponent) == 0 and exponent == 2:
            da = 2 * a * t[0]
        else:
            da = power_slope(a, b, lambda u, v: dispatch(fn, [u, v], kw)) * t[0]  # (0 where b is 0, also at a = 0)
    db = None if t[1] is None else y * _log_where_positive(a, np.iscomplexobj(strip(y))) * t[1]
    return y, _total([da, db])


def _binary(da, db):
    def rule(fn, p, t, kw):
        a, b = p = _operands(p)
        y = dispatch(fn, p, kw)
        return y, _total([None if t[0] is None else da(a, b, y) * t[0], None if t[1] is None else db(a, b, y) * t[1]])
    return rule


def _radius(y):
    """hypot's value, 1 where it is 0 (the origin, where a and b are 0 too: their tangent shares are 0, as the
    reverse rules', not 0 / 0)."""
    return y + np.where(strip(y) == 0, 1.0, 0.0)


def _ties(a, b, pick_a):
    """Where a == b the derivative is the mean of both sides' (like the reverse rules)."""
    a, b = strip(a), strip(b)
    return np.where(a == b, 0.5, np.asarray(pick_a, dtype=float))


BINARY = {
    np.arctan2: (lambda a, b, y: b / np.hypot(a, b) / np.hypot(a, b), lambda a, b, y: -a / np.hypot(a, b) / np.hypot(a, b)),
    np.hypot: (lambda a, b, y: a / _radius(y), lambda a, b, y: b / _radius(y)),
    np.maximum: (lambda a, b, y: _ties(a, b, strip(a) > strip(b)), lambda a, b, y: _ties(a, b, strip(b) > strip(a))),
    np.minimum: (lambda a, b, y: _ties(a, b, strip(a) < strip(b)), lambda a, b, y: _ties(a, b, strip(b) < strip(a))),
    np.remainder: (lambda a, b, y: 1, lambda a, b, y: -np.floor(strip(a) / strip(b))),
    np.fmod: (lambda a, b, y: 1, lambda a, b, y: -np.trunc(strip(a) / strip(b))),
    np.copysign: (lambda a, b, y: np.where(np.signbit(strip(a)) == np.signbit(strip(b)), 1.0, -1.0),  # (-0.0: signbit)
                  lambda a, b, y: 0),
    np.logaddexp: (lambda a, b, y: log_add_shares(a, b, np.exp)[0], lambda a, b, y: log_add_shares(a, b, np.exp)[1]),
    np.logaddexp2: (lambda a, b, y: log_add_shares(a, b, np.exp2)[0], lambda a, b, y: log_add_shares(a, b, np.exp2)[1]),
    np.heaviside: (lambda a, b, y: 0, lambda a, b, y: np.where(strip(a) == 0, 1.0, 0.0)),
}
BINARY_TWINS = {math.atan2: np.arctan2, operator.mod: np.remainder, operator.imod: np.remainder, np.mod: np.remainder,
                math.fmod: np.fmod, math.copysign: np.copysign}
for _fn, (_da, _db) in BINARY.items():
    tangent_rule(_fn)(_binary(_da, _db))
for _fn, _twin in BINARY_TWINS.items():
    tangent_rule(_fn)(_binary(*BINARY[_twin]))


@tangent_rule(operator.floordiv, operator.ifloordiv, np.floor_divide)
def floor_divide(fn, p, t, kw):
    """Piecewise constant (`divmod(t, c)`'s first part): no tangent."""
    return fn(*strip(p), **strip(kw)), None


@tangent_rule(math.hypot)
def hypot(fn, p, t, kw):
    y = dispatch(fn, p, kw)
    return y, _total([None if ti is None else (0.0 if strip(y) == 0 else c / y) * ti for c, ti in zip(p, t)])


@tangent_rule(math.log)
def log(fn, p, t, kw):
    """math.log(x) and math.log(x, base) = ln x / ln base."""
    y = dispatch(fn, p, kw)
    lb = 1.0 if len(p) == 1 else np.log(p[1])
    return y, _total([None if t[0] is None else t[0] / (p[0] * lb),
                      None if len(p) == 1 or t[1] is None else -y * t[1] / (p[1] * lb)])


@tangent_rule(math.gamma, math.lgamma)
def gamma(fn, p, t, kw):
    """d gamma = gamma(x) digamma(x) dx, d lgamma = digamma(x) dx; digamma of a plain number only (its own derivative,
    trigamma, is not written: a second derivative of these is refused)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    if isinstance(p[0], Dual):
        raise ForwardModeError(f"math.{fn.__name__}: zygotepy has no second derivative (digamma's derivative)")
    psi = digamma(p[0])
    return y, (y * psi if fn is math.gamma else psi) * t[0]


@tangent_rule(math.ldexp)
def ldexp(fn, p, t, kw):
    return dispatch(fn, p, kw), None if t[0] is None else t[0] * 2.0 ** p[1]


# --- linear functions: the tangent goes through the same function ------------------------------------------------------
@tangent_rule(np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.swapaxes, np.moveaxis,
              np.broadcast_to, np.sum, np.mean, np.trace, np.diagonal, np.diag, np.flip, np.fliplr, np.flipud,
              np.roll, np.repeat, np.tile, np.cumsum, np.real, np.imag, np.conj, np.conjugate, np.copy, np.take,
              np.atleast_1d, np.atleast_2d, np.ndarray.astype, operator.getitem, operator.neg, operator.pos,
              np.negative, np.positive, float, np.concatenate, np.stack, np.vstack, np.hstack,
              np.column_stack, np.array, np.asarray, np.asanyarray, np.triu, np.tril, np.asfortranarray,
              np.ascontiguousarray, np.float64, np.float32, math.fsum, np.add.reduce)
def linear(fn, p, t, kw):
    """Linear in the first argument (an array, or a list/tuple of them); the other arguments are constants."""
    if any(ti is not None for ti in t[1:]):
        raise ForwardModeError(f"{getattr(fn, '__name__', fn)}: only its first argument may carry a derivative")
    y = dispatch(fn, p, kw)
    t0 = t[0]
    if t0 is None:
        return y, None
    if isinstance(t0, list):  # a sequence argument: constant entries get zero tangents, at every depth
        t0 = _filled(p[0], t0)
    if fn in (np.array, np.asarray, np.asanyarray) and "dtype" in kw or "initial" in kw:
        kw = {k: v for k, v in kw.items() if k not in ("dtype", "initial")}  # (a sum's `initial` is a constant)
    if fn in _IN_MEMORY_ORDER and type(t0) is np.ndarray and type(p[0]) is np.ndarray \
            and not p[0].flags.c_contiguous:
        t0 = laid_out_like(p[0], t0)
    return y, dispatch(fn, [t0, *p[1:]], kw)


_IN_MEMORY_ORDER = (np.ravel, np.reshape, np.copy)  # (`order="K"`/`"A"` read the entries as they lie in memory)


@tangent_rule(complex)
def complex_(fn, p, t, kw):
    """complex(re, im) = re + 1j im: linear in both parts together, not in the first alone (a constant imaginary part
    has no tangent: `complex(t, 0.5)`'s is dt, not complex(dt, 0.5))."""
    y = dispatch(fn, p, kw)
    if all(ti is None for ti in t):
        return y, None
    return y, (0.0 if t[0] is None else t[0]) + 1j * (0.0 if len(t) < 2 or t[1] is None else t[1])


@tangent_rule(np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit)
def pieces(fn, p, t, kw):
    """Linear, with several outputs: a tangent for each piece (`apply` makes a Dual of each)."""
    y, ydot = linear(fn, p, t, kw)
    return y, ydot if ydot is None else type(y)(ydot)


@tangent_rule(np.meshgrid)
def meshgrid(fn, p, t, kw):
    """Each grid is linear in one argument: the grids of the tangents (zeros for a constant argument)."""
    y = dispatch(fn, p, kw)
    if all(ti is None for ti in t):
        return y, None
    return y, type(y)(dispatch(fn, [_zero(pi) if ti is None else ti for pi, ti in zip(p, t)], kw))


def _filled(p, t):
    """The tangent `t` of the sequence `p` with its constant entries (None) as zeros, in nested sequences too
    (`np.array([[a, b], [b, 2.0]])`: a row of constants, or one constant in a row)."""
    if isinstance(p, (list, tuple)):
        return type(p)(_filled(pi, None if t is None else ti) for pi, ti in zip(p, t or [None] * len(p), strict=True))
    return _zero(p) if t is None else t


if hasattr(np, "astype"):  # NumPy 2.1's function form (the reverse rules of real and complex parts call it)
    tangent_rule(np.astype)(linear)


# --- products: bilinear ------------------------------------------------------------------------------------------------
@tangent_rule(operator.mul, operator.imul, np.multiply, operator.matmul, operator.imatmul, np.matmul, np.dot,
              np.outer, np.inner, np.vdot, np.tensordot, np.kron, np.cross)
def bilinear(fn, p, t, kw):
    y = dispatch(fn, p, kw)
    return y, _total([None if t[0] is None else dispatch(fn, [t[0], *p[1:]], kw),
                      None if t[1] is None else dispatch(fn, [p[0], t[1], *p[2:]], kw)])


# --- selections (np.clip's rule: numpy_rules.py) ----------------------------------------------------------------------
@tangent_rule(np.where)
def where(fn, p, t, kw):
    if len(p) == 1:
        return dispatch(fn, p, kw), None
    cond = p[0]
    ta = t[1] if t[1] is not None else 0.0
    tb = t[2] if t[2] is not None else 0.0
    return dispatch(fn, p, kw), None if t[1] is None and t[2] is None else np.where(strip(cond), ta, tb)


@tangent_rule(np.max, np.min, np.amax, np.amin)
def extremum(fn, p, t, kw):
    """The tangent of the entries that attain the extremum; ties share it evenly (like the reverse rules)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    axis = p[1] if len(p) > 1 else kw.get("axis")
    keepdims = kw.get("keepdims", False)
    hit = strip(p[0]) == strip(dispatch(fn, [p[0]], {**kw, "axis": axis, "keepdims": True}))
    if kw.get("where") is not None:  # (entries left out cannot attain it; `initial` may, and is a constant)
        hit = hit & np.asarray(strip(kw["where"]), dtype=bool)
    count = np.sum(hit, axis=axis, keepdims=keepdims)
    return y, np.sum(t[0] * hit, axis=axis, keepdims=keepdims) / np.maximum(count, 1)


# --- more NumPy functions: multilinear, linear, permutations, moments ----------------------------------------------------
@tangent_rule(np.einsum, np.convolve, np.correlate)
def multilinear(fn, p, t, kw):
    """Linear in each array argument (einsum's subscripts, a string, carry none): the sum over the arguments of the
    function with that argument's tangent in its place."""
    y = dispatch(fn, p, kw)
    return y, _total([None if ti is None else dispatch(fn, [*p[:i], ti, *p[i + 1:]], kw) for i, ti in enumerate(t)])


@tangent_rule(np.linspace)
def linspace(fn, p, t, kw):
    """Affine in start and stop: the same spacing of their tangents."""
    if kw.get("retstep"):
        raise ForwardModeError("forward mode supports np.linspace without retstep=True")
    y = dispatch(fn, p, kw)
    if t[0] is None and t[1] is None:
        return y, None
    ends = [_zero(p[i]) if t[i] is None else t[i] for i in (0, 1)]
    return y, np.linspace(*ends, *strip(p[2:]), **{k: v for k, v in kw.items() if k != "dtype"})


@tangent_rule(np.sort)
def sort(fn, p, t, kw):
    """A permutation of the entries along the axis: the tangent goes with its entry."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    axis = p[1] if len(p) > 1 else kw.get("axis", -1)
    x, dx = strip(p[0]), t[0]
    if axis is None:
        x, dx, axis = np.ravel(x), np.ravel(dx), -1
    return y, np.take_along_axis(dx, np.argsort(x, axis=axis, kind="stable"), axis=axis)


@tangent_rule(np.var, np.std)
def moment(fn, p, t, kw):
    """var = sum(|x - mean|^2) / (n - ddof): its tangent 2 sum(Re(conj(x - mean)(dx - mean(dx)))) / (n - ddof); std's
    is var's over 2 std."""
    p, t, kw = by_keyword(p, t, kw, ("axis", "dtype", "out", "ddof", "keepdims"))  # (`z.var(0)`, `np.std(z, -1)`)
    if any(k not in ("axis", "ddof", "keepdims") for k in kw):
        raise ForwardModeError(f"forward mode supports np.{fn.__name__}(x, axis, ddof=, keepdims=) and no others")
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    x, dx = p[0], t[0]
    axis, keepdims = kw.get("axis"), kw.get("keepdims", False)
    n = np.size(strip(x)) // np.size(np.mean(strip(x), axis=axis))
    centred = x - np.mean(x, axis=axis, keepdims=True)
    moved = dx - np.mean(dx, axis=axis, keepdims=True)
    # (|x - mean|^2 of complex entries: 2 Re(conj(x - mean) d), a real tangent)
    change = np.real(np.conj(centred) * moved) if np.iscomplexobj(strip(x)) else centred * moved
    dvar = 2 * np.sum(change, axis=axis, keepdims=keepdims) / (n - kw.get("ddof", 0))
    return y, dvar if fn is np.var else dvar / (2 * y)


# --- fresh arrays shaped like a perturbed one ---------------------------------------------------------------------------
@tangent_rule(np.zeros_like, np.ones_like, np.empty_like, np.full_like)
def fresh_like(fn, p, t, kw):
    """`out = np.zeros_like(x)` is usually filled in place next (`out[i] = f(x[i])`): for a real `x` carrying a
    perturbation it is a Dual with a zero tangent, so a store keeps the value's tangent (a plain array cannot hold one,
    and the store would fail). The fill value of `full_like` may carry a tangent itself."""
    y = dispatch(fn, p, kw)
    if np.result_type(strip(y)).kind not in "fc":
        return y, None
    if fn is np.full_like and "fill_value" in kw:
        raise ForwardModeError("np.full_like: pass fill_value by position in forward mode")
    fill = t[1] if fn is np.full_like else None
    return y, np.zeros_like(strip(y)) if fill is None else np.full_like(strip(y), 0) + fill

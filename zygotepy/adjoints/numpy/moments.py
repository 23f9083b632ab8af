"""Second moments and sample quantiles: np.cov, np.corrcoef, np.quantile, np.percentile, np.nanquantile and
np.nanpercentile. NumPy arrays only (not namespace-generic).

- cov: C = Xc W Xc^H / f, with X the variables as rows (m and y= stacked), Xc = X - its weighted row means, W the
  weights fweights * aweights and f the normalisation (N - ddof, or NumPy's weighted forms). The means drop out of
  the back (Xc w = 0), so dX = (G + G^H) Xc W / f for the cotangent G of C. aweights= gets dC/dw_k = (xc_k xc_k^H -
  C df/dw_k) / f; fweights are counts (integers): constants.
- corrcoef: R = C / (s s^T), s = sqrt(Re diag C): dC = G / (s s^T), and diag C gets -Re(sum_j G_kj R_kj + G_jk R_jk)
  / (2 C_kk) more; then cov's back. One variable gives the constant 1 (C / C): no cotangent.
- the quantiles: each result is (1 - gamma) x_(lo) + gamma x_(hi) of two order statistics of its slice, with lo, hi
  and gamma from n and q only (NumPy's formulas for each supported method, re-computed the same way): the cotangent
  goes to those two entries. Ties follow the stable sort's order, as np.sort's rule does; the nan-variants sort the
  NaNs last and count the others only (NaNs get nothing). A float q gets a cotangent: where gamma is linear in q
  (linear, the alpha-beta methods: v = q (n - 1), or n q + alpha + q (1 - alpha - beta) - 1) d/dq = (x_(hi) -
  x_(lo)) dv/dq (0 where v is clipped to the ends; /100 for the percentiles); the piecewise-constant methods (lower,
  higher, nearest, midpoint) give zeros. An int q is a constant (its cotangent None).
"""
import numpy as np

from ...backends import conj
from ...forward.dual import has_dual, strip
from ...errors import ZygoteError
from ..registry import adjoint, keyword_cotangents, keyword_rule
from .common import _float, _nones, _restore, arrayed
from .statistics import _sorted_slices

_COV = ("y", "rowvar", "bias", "ddof", "fweights", "aweights")
_COV_DEFAULTS = (None, True, False, None, None, None)


def _params(names, defaults, args, kwargs):
    return {**dict(zip(names, defaults)), **dict(zip(names, args)), **kwargs}


def _dtype(kwargs, *values):
    """The dtype NumPy computes cov in: dtype= or the inputs' with float64."""
    return kwargs.get("dtype") or np.result_type(*(np.asarray(strip(v)) for v in values if v is not None), np.float64)


def _rows(v, rowvar, dtype):
    """A cov argument as NumPy reads it: at least 2-d, variables as rows; and whether it was transposed."""
    if has_dual((v,)):  # (`hessian` runs the back on dual numbers: the same rows, with their tangents)
        a = v if v.ndim >= 2 else np.reshape(v, (1, -1))
    else:
        a = np.array(v, ndmin=2, dtype=dtype)
    flip = not rowvar and a.shape[0] != 1
    return (a.T if flip else a), flip


def _plain_or_dual(v):
    return v if has_dual((v,)) else np.asarray(v)


def _cov_back(m, p, dtype):
    """The back of np.cov's matrix C as a function of its cotangent G (shaped n x n): (dm, dy, daweights)."""
    X, flip_m = _rows(m, p["rowvar"], dtype)
    rows_m = X.shape[0]
    if p["y"] is not None:
        Y, flip_y = _rows(p["y"], p["rowvar"], dtype)
        X = np.concatenate([X, Y], axis=0)
    ddof = p["ddof"] if p["ddof"] is not None else 0 if p["bias"] else 1
    fw = None if p["fweights"] is None else np.asarray(p["fweights"], dtype=float)
    aw = None if p["aweights"] is None else np.asarray(p["aweights"], dtype=float)
    w = fw if aw is None else aw if fw is None else fw * aw
    n = X.shape[1]
    sw = n if w is None else np.sum(w)
    Xc = X - (np.mean(X, axis=1) if w is None else X @ w / sw)[:, None]
    # NumPy's normalisation, and its derivative in the aweights (fweights, when given, scale them)
    ones = np.ones(n) if fw is None else fw
    if w is None:
        fact, dfact = n - ddof, None
    elif ddof == 0:
        fact, dfact = sw, ones
    elif aw is None:
        fact, dfact = sw - ddof, None
    else:
        s2 = np.sum(w * aw)
        fact, dfact = sw - ddof * s2 / sw, ones - ddof * (2 * ones * aw / sw - s2 * ones / sw ** 2)
    fact = max(fact, 0.0)

    def back(G):
        Gs = G + conj(G.T)
        dX = Gs @ Xc / fact if w is None else (Gs @ Xc) * w / fact
        da = None
        if aw is not None:
            C = (Xc * w) @ conj(Xc.T) / fact
            pairing = np.real(np.sum(conj(G) * C))
            direct = np.real(np.einsum("ij,ik,jk->k", conj(G), Xc, conj(Xc))) / fact
            da = ones * direct - pairing * dfact / fact
        dm = dX[:rows_m].T if flip_m else dX[:rows_m]
        dy = None
        if p["y"] is not None:
            dy = dX[rows_m:].T if flip_y else dX[rows_m:]
        return dm, dy, da
    return back, X.shape[0]


def _in_form(g, v):
    """A cotangent reshaped to its argument, real for a real argument."""
    if g is None:
        return None
    g = g if np.iscomplexobj(v) else np.real(g)
    return _restore(g.reshape(np.shape(v)), v)


def _cov_cotangents(back, G, m, p, args, kwargs):
    dm, dy, da = back(G)
    dy, da = _in_form(dy, p["y"]), _in_form(da, p["aweights"])
    grads = {0: dy, 5: da}
    return keyword_cotangents((_in_form(dm, m), *(grads.get(k) for k in range(len(args)))), kwargs,
                              y=dy, aweights=da)


@keyword_rule
@adjoint(np.cov)
def cov(m, *args, **kwargs):
    """The covariance matrix of the rows (or columns) of m and y=; y= and aweights= carry gradients."""
    p = _params(_COV, _COV_DEFAULTS, args, kwargs)
    result = np.cov(m, *args, **kwargs)
    dtype = _dtype(kwargs, m, p["y"])

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        cov_back, k = _cov_back(m, p, dtype)
        return _cov_cotangents(cov_back, np.reshape(_plain_or_dual(dy), (k, k)), m, p, args, kwargs)
    return result, back


@keyword_rule
@adjoint(np.corrcoef)
def corrcoef(x, *args, **kwargs):
    """The correlation matrix: cov scaled by its diagonal."""
    p = _params(("y", "rowvar"), (None, True), args, kwargs)
    p.update(bias=False, ddof=None, fweights=None, aweights=None)
    result = np.corrcoef(x, *args, **kwargs)
    dtype = _dtype(kwargs, x, p["y"])

    def back(dy):
        if dy is None:
            return keyword_cotangents((None, *_nones(args)), kwargs)
        cov_back, k = _cov_back(x, p, dtype)
        C = np.reshape(np.cov(x, p["y"], p["rowvar"], dtype=dtype), (k, k))
        G = np.reshape(_plain_or_dual(dy), (k, k))
        if np.ndim(result) == 0:  # one variable: C / C is constant
            dC = np.zeros_like(C)
        else:
            d = np.real(np.diag(C))
            s = np.sqrt(d)
            R = C / np.outer(s, s)
            dC = G / np.outer(s, s)
            GR = np.real(conj(G) * R)
            dC = dC + np.diag(-(np.sum(GR, axis=1) + np.sum(GR, axis=0)) / (2 * d))
        return _cov_cotangents(cov_back, dC, x, p, args, kwargs)
    return result, back


# --- quantiles ------------------------------------------------------------------------------------------------------
_ALPHA_BETA = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_PICK = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}
METHODS = ("linear", "midpoint", *_ALPHA_BETA, *_PICK)
# dv/dq of each method's virtual index v as a function of the slice's count n (0: piecewise constant in q)
Q_SLOPES = {"linear": lambda n: n - 1, "midpoint": 0, **dict.fromkeys(_PICK, 0),
            **{m: (lambda n, a=a, b=b: n + 1 - a - b) for m, (a, b) in _ALPHA_BETA.items()}}


def _order_statistics(method, n, q):
    """(lo, hi, gamma): the two order statistics each quantile interpolates and the weight of hi, computed as NumPy
    computes them (numpy/lib/_function_base_impl.py: the virtual index, its floor, clipped to the slice)."""
    if method in _PICK:
        v = _PICK[method]((n - 1) * q).astype(np.intp)
        return v, v, np.zeros(v.shape)
    if method == "linear":
        v = (n - 1) * q
    elif method == "midpoint":
        v = 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
    else:
        alpha, beta = _ALPHA_BETA[method]
        v = n * q + (alpha + q * (1 - alpha - beta)) - 1
    above, below = v >= n - 1, v < 0
    lo = np.where(above, n - 1, np.where(below, 0, np.floor(v)))
    hi = np.where(above | below, lo, lo + 1)
    gamma = np.where(v % 1 == 0, 0.0, 0.5) if method == "midpoint" else v - np.floor(v)
    gamma = np.where(lo == hi, 0.0, gamma)
    return lo.astype(np.intp), hi.astype(np.intp), gamma


def _quantile_rule(fn, percent, ignore_nan):
    names = ("axis", "out", "overwrite_input", "method", "keepdims")

    def rule(a, q, *args, **kwargs):
        p = _params(names, (None, None, False, "linear", False), args, kwargs)
        unknown = sorted(k for k in kwargs if k not in names)
        if p["out"] is not None or unknown:
            raise ZygoteError(f"np.{fn.__name__}: {', '.join(unknown) or 'out='} is not differentiable here")
        if p["method"] not in METHODS:
            raise ZygoteError(f"np.{fn.__name__}: method={p['method']!r} has no rule (supported: {', '.join(METHODS)})")
        # overwrite_input only allows NumPy to reorder `a`: computed without it, the back sees `a` as it was
        result = fn(a, q, axis=p["axis"], method=p["method"], keepdims=p["keepdims"])

        def back(dy, need=None):
            if dy is None:
                return (None, None, *_nones(args))
            x = _float(a)
            qq = np.true_divide(q, 100) if percent else np.asanyarray(q)
            axes, last, moved, flat = _sorted_slices(x, p["axis"])
            order = np.argsort(flat, axis=-1, kind="stable")  # NaNs last
            size = flat.shape[-1]
            n = np.sum(~np.isnan(flat), axis=-1) if ignore_nan else np.full(flat.shape[:-1], size)
            lo, hi, gamma = _order_statistics(p["method"], n, qq.reshape(qq.shape + (1,) * n.ndim))
            d = np.reshape(arrayed(dy), qq.shape + n.shape)
            at = np.arange(size)
            weights = (at == lo[..., None]) * ((1 - gamma) * d)[..., None] + (at == hi[..., None]) * (gamma * d)[
                ..., None]
            if ignore_nan:  # a slice of NaNs only gives NaN, and no cotangent
                weights = np.where((n == 0)[..., None], 0.0, weights)
            g = np.sum(weights, axis=tuple(range(qq.ndim)))
            g = np.take_along_axis(g, np.argsort(order, axis=-1), axis=-1)
            g = np.moveaxis(g.reshape(moved.shape), last, axes)
            dq = None
            if np.asarray(q).dtype.kind == "f" and (need is None or need[1]):  # (an int q is a constant)
                slope = Q_SLOPES.get(p["method"])
                if slope is None:
                    raise ZygoteError(f"np.{fn.__name__}(method={p['method']!r}): no rule for the gradient with "
                                      f"respect to q, which carries a gradient here; make q a constant")
                dq = np.zeros(qq.shape)
                if slope != 0:
                    values = np.broadcast_to(np.take_along_axis(flat, order, axis=-1), lo.shape + (size,))
                    at_lo, at_hi = (np.take_along_axis(values, k[..., None], axis=-1)[..., 0] for k in (lo, hi))
                    step = np.where(hi > lo, (at_hi - at_lo) * slope(n), 0.0) * d
                    dq = np.sum(step, axis=tuple(range(qq.ndim, step.ndim))) / (100 if percent else 1)
                dq = _restore(np.asarray(dq, dtype=np.asarray(q).dtype), q)
            return (_restore(g.astype(np.result_type(x.dtype, np.float32), copy=False), a), dq, *_nones(args))
        return result, back
    rule.__qualname__ = f"{fn.__name__}_rule"
    return adjoint(fn, need=True)(rule)


quantile = _quantile_rule(np.quantile, percent=False, ignore_nan=False)
percentile = _quantile_rule(np.percentile, percent=True, ignore_nan=False)
nanquantile = _quantile_rule(np.nanquantile, percent=False, ignore_nan=True)
nanpercentile = _quantile_rule(np.nanpercentile, percent=True, ignore_nan=True)

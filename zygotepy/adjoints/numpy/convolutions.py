"""1-d convolutions and polynomials: `np.convolve` and `np.correlate` (modes full, same and valid) and `np.polyval`.
"""
import numpy as np

from ...backends import conj, namespace_of, on, scatter_add, unbroadcast
from ...errors import ZygoteError
from ..registry import adjoint, namespace_generic
from .common import arrayed


# --- 1-d convolutions and polynomials -------------------------------------------------------------------------------------
def _full_offset(n, m, mode):
    """Where np.convolve's `mode` output starts inside the 'full' one."""
    return {"full": 0, "same": (min(n, m) - 1) // 2, "valid": min(n, m) - 1}[mode]


def _mode_size(n, m, mode):
    return {"full": n + m - 1, "same": max(n, m), "valid": max(n, m) - min(n, m) + 1}[mode]


def _convolve_full(xp, a, v, name, mode):
    """The full convolution of two 1-d arrays of another library: the products a_i v_j summed into entry i + j (the
    array API has no convolve: a scatter of the outer product), and its back (dy gathered at i + j, times the other
    input)."""
    if mode not in ("full", "same", "valid"):
        raise ZygoteError(f"{name} of another library's arrays: no mode {mode!r} (full, same, valid)")
    where = on(a) or on(v)  # the device of the input that is an array of xp
    a, v = (xp.reshape(xp.asarray(t), (-1,)) if hasattr(t, "shape") else
            xp.reshape(xp.asarray(t, dtype=xp.float64, **where), (-1,)) for t in (a, v))
    n, m = a.shape[0], v.shape[0]
    if n == 0 or m == 0:
        raise ZygoteError(f"{name}: an empty input")
    index = xp.asarray(np.add.outer(np.arange(n), np.arange(m)).reshape(-1), **where)
    full = scatter_add(xp, n + m - 1, index, xp.reshape(a[:, None] * v[None, :], (-1,)))

    def back_full(d):
        g = xp.reshape(xp.take(d, index, axis=0), (n, m))
        return g @ conj(v), conj(a) @ g
    return full, back_full, n, m


def _shaped(xp, g, like):
    """A 1-d cotangent in the shape of its argument (a 0-d array; a list gets the 1-d array)."""
    return xp.reshape(g, tuple(like.shape)) if hasattr(like, "shape") else g


def _mode_slice(xp, full, back_full, start, size, args, after=lambda da, dv: (da, dv)):
    """The `mode` output, a slice of the full one, and the back that puts dy into a full-length cotangent."""
    total = full.shape[0]

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        dy = xp.asarray(dy, **on(full))
        d = xp.concat([xp.zeros((start,), dtype=dy.dtype, **on(full)), dy,
                       xp.zeros((total - start - size,), dtype=dy.dtype, **on(full))])
        return (*after(*back_full(d)), *(None for _ in args))
    return full[start:start + size], back


@adjoint(np.convolve)
def convolve(a, v, *args, **kwargs):
    """y_k = sum_i a_i v_(k-i): each cotangent is dy (placed in the full output) correlated with the other input."""
    mode = args[0] if args else kwargs.get("mode", "full")
    xp = namespace_of(a, v)
    if xp is not np:
        full, back_full, n, m = _convolve_full(xp, a, v, "np.convolve", mode)
        return _mode_slice(xp, full, back_full, _full_offset(n, m, mode), _mode_size(n, m, mode), args,
                           lambda da, dv: (_shaped(xp, da, a), _shaped(xp, dv, v)))
    y = np.convolve(a, v, *args, **kwargs)

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        n, m = np.size(a), np.size(v)
        full = np.zeros(n + m - 1, dtype=np.result_type(dy, np.float64 if arrayed(dy).dtype.kind not in "fc"
                                                         else dy))
        start = _full_offset(n, m, mode)
        full[start:start + np.size(dy)] = dy
        # da_i = sum_j dy_(i+j) conj(v_j): np.correlate conjugates its second argument itself
        return (np.correlate(full, np.ravel(v), "valid").reshape(np.shape(a)),
                np.correlate(full, np.ravel(a), "valid").reshape(np.shape(v)), *(None for _ in args))
    return y, back


@adjoint(np.correlate)
def correlate(a, v, *args, **kwargs):
    """correlate(a, v, "full") = convolve(a, conj(v[::-1]), "full"); the other modes are slices of it (for "same"
    with the longer v, NumPy centres the slice the other way)."""
    mode = args[0] if args else kwargs.get("mode", "valid")
    xp = namespace_of(a, v)
    if xp is not np:
        v_ = xp.asarray(v) if hasattr(v, "shape") else xp.asarray(v, dtype=xp.float64, **on(a))
        full, back_full, n, m = _convolve_full(xp, a, conj(xp.flip(xp.reshape(v_, (-1,)))), "np.correlate", mode)
        start = n - 1 - (n - 1) // 2 if mode == "same" and n < m else _full_offset(n, m, mode)
        return _mode_slice(xp, full, back_full, start, _mode_size(n, m, mode), args,
                           lambda da, dw: (_shaped(xp, da, a), _shaped(xp, conj(xp.flip(dw)), v)))
    y = np.correlate(a, v, *args, **kwargs)
    _, back_full = convolve(a, conj(np.flip(v)))

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in args))
        n, m = np.size(a), np.size(v)
        start = _full_offset(n, m, mode)
        if mode == "same" and n < m:
            start = n - 1 - (n - 1) // 2
        full = np.zeros(n + m - 1, dtype=np.result_type(dy, np.float64))
        full[start:start + np.size(dy)] = dy
        da, dw = back_full(full)
        return (da, conj(np.flip(dw)), *(None for _ in args))
    return y, back


@adjoint(np.polyval)
def polyval(p, x):
    """y = sum_i p_i x^(N-1-i): dp_i = x^(N-1-i), dx = polyval(polyder(p), x)."""
    xp = namespace_of(p, x)
    if xp is not np:
        return _polyval_foreign(xp, p, x)
    y = np.polyval(p, x)

    def back(dy):
        if dy is None:
            return (None, None)
        n = np.size(p)
        powers = np.asarray(x)[..., None] ** np.arange(n - 1, -1, -1)
        dp = np.sum(np.reshape(arrayed(dy)[..., None] * conj(powers), (-1, n)), axis=0)
        dx = dy * conj(np.polyval(np.polyder(p), x)) if n > 1 else None
        return (np.reshape(dp, np.shape(p)), unbroadcast(dx, x) if dx is not None else None)
    return y, back


def _polyval_foreign(xp, p, x):
    """np.polyval in another library's namespace: Horner's rule; dp_i = sum dy x^(N-1-i) from the powers of x, dx = dy
    times the derivative polynomial at x (Horner's rule again)."""
    p_ = xp.asarray(p) if hasattr(p, "shape") else xp.asarray(p, dtype=xp.float64, **on(x))
    if p_.ndim != 1:
        raise ZygoteError(f"np.polyval of another library's arrays: p must be 1-d, not of shape {tuple(p_.shape)}")
    x_ = xp.asarray(x) if hasattr(x, "shape") else xp.asarray(x, dtype=p_.dtype, **on(p_))
    n = p_.shape[0]
    y = xp.zeros(tuple(x_.shape), dtype=xp.result_type(p_, x_), **on(x_))
    for k in range(n):
        y = y * x_ + p_[k]

    def back(dy):
        if dy is None:
            return (None, None)
        dy = xp.asarray(dy) if hasattr(dy, "shape") else dy
        powers = [xp.ones_like(y)]
        for _ in range(n - 1):
            powers.append(powers[-1] * x_)
        dp = xp.stack([xp.sum(dy * conj(powers[n - 1 - k])) for k in range(n)])
        dx = None
        if n > 1:
            der = xp.zeros_like(y)
            for k in range(n - 1):
                der = der * x_ + (n - 1 - k) * p_[k]
            dx = unbroadcast(dy * conj(der), x)
        return (xp.reshape(dp, tuple(p_.shape)) if hasattr(p, "shape") else dp, dx)
    return y, back


# composed: Horner's rule, the outer product scattered along its anti-diagonals
namespace_generic(np.polyval, np.convolve, np.correlate)

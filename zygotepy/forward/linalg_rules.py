"""Forward (tangent) rules for `np.linalg`: the matrix functions' derivatives, in matrix form (`dA^-1 = -A^-1 dA A^-1`).

Like every tangent rule (rules.py), they compute with NumPy's functions and operators, never on plain arrays only: the
primals may be dual numbers of an outer level, which reach these rules again through NumPy's protocols.
"""
import numpy as np

from ..errors import ForwardModeError
from .dual import dispatch, strip, tangent_rule
from .rules import _total


@tangent_rule(np.linalg.inv)
def inv(fn, p, t, kw):
    y = dispatch(fn, p, kw)
    return y, None if t[0] is None else -(y @ t[0] @ y)


@tangent_rule(np.linalg.solve)
def solve(fn, p, t, kw):
    a = p[0]
    y = dispatch(fn, p, kw)
    rhs = _total([t[1], None if t[0] is None else -(t[0] @ y)])
    return y, None if rhs is None else dispatch(fn, [a, rhs], kw)


@tangent_rule(np.linalg.norm)
def norm(fn, p, t, kw):
    if len(p) > 1 or any(kw.get(k) is not None for k in ("ord", "axis")):
        raise ForwardModeError("forward mode supports np.linalg.norm(x) only (the 2-norm / Frobenius norm)")
    y = dispatch(fn, p, kw)  # (d|x| = Re(sum(conj(x) dx)) / |x|: the conjugate and the real part matter for complex x)
    return y, None if t[0] is None else np.real(np.sum(np.conj(p[0]) * t[0])) / y


@tangent_rule(np.linalg.cholesky)
def cholesky(fn, p, t, kw):
    """dL = L tril(S, half its diagonal), S = L^-1 dA L^-T (a real symmetric positive-definite A)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    inv_l = np.linalg.inv(y)
    s = inv_l @ t[0] @ np.swapaxes(inv_l, -1, -2)
    return y, y @ (np.tril(s) - 0.5 * s * np.eye(s.shape[-1]))


def _trace_of_solve(a, da):
    """tr(A^-1 dA), over the last two axes: d log det A."""
    return np.einsum("...ii->...", np.linalg.solve(a, da))


@tangent_rule(np.linalg.det)
def det(fn, p, t, kw):
    """d det A = det A tr(A^-1 dA)."""
    y = dispatch(fn, p, kw)
    return y, None if t[0] is None else y * _trace_of_solve(p[0], t[0])


@tangent_rule(np.linalg.slogdet)
def slogdet(fn, p, t, kw):
    """(sign, log |det A|): d log |det A| = Re tr(A^-1 dA); the sign of a real A is piecewise constant, a complex
    one's turns by i Im tr(A^-1 dA)."""
    y = dispatch(fn, p, kw)
    if t[0] is None:
        return y, None
    d = _trace_of_solve(p[0], t[0])
    complex_ = np.iscomplexobj(strip(p[0])) or np.iscomplexobj(strip(t[0]))
    return y, (y[0] * 1j * np.imag(d) if complex_ else None, np.real(d))

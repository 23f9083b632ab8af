"""Forward (tangent) rules for `scipy.special`, registered only when SciPy is importable.

Its ufuncs take their derivatives from the rows of adjoints/scipy_special.py (`function: derivative(x, y)` and
`function: (d/da, d/db)`), so each derivative is written once for both modes. `logsumexp`, `softmax` and `log_softmax`
are Python functions that a dual number cannot pass through (SciPy converts its arguments to plain arrays): their
tangents are written out here. With these, `hessian` of a loss that calls them runs forward-over-reverse, the reverse
rules computing on dual numbers.
"""
import numpy as np

from ..adjoints import scipy_signal, scipy_special
from ..adjoints.registry import on_import
from ..errors import ForwardModeError
from .dual import dispatch, strip, tangent_rule
from .rules import _binary, _unary

sc = scipy_special.sc

for _fn, _d in scipy_special.UNARY.items():
    tangent_rule(_fn)(_unary(_d))
for _fn, (_da, _db) in scipy_special.BINARY.items():
    tangent_rule(_fn)(_binary(_da, _db))


def _given(fn, names, p, t, kw, differentiable):
    """The call's arguments by name, and the tangents of the positional ones; only `differentiable` may carry one."""
    tangents = dict(zip(names, t))
    if any(v is not None for k, v in tangents.items() if k not in differentiable):
        raise ForwardModeError(f"scipy.special.{fn.__name__}: forward mode differentiates "
                               f"{' and '.join(differentiable)} only")
    return {**dict(zip(names, p)), **kw}, tangents


def _kept(v, ndim, axis, keepdims):
    """A reduction's output with the reduced axes kept (size 1), so that it broadcasts against the input."""
    if keepdims or axis is None:
        return v
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)  # (np.int64: `np.argmax(x.shape)`)
    return np.expand_dims(v, tuple(a % ndim for a in axes))


if sc is not None:
    @tangent_rule(sc.softmax)
    def softmax(fn, p, t, kw):
        """dy = y (dx - sum(y dx)) over `axis`."""
        given, tangents = _given(fn, ("x", "axis"), p, t, kw, ("x",))
        y = dispatch(fn, p, kw)
        tx = tangents["x"]
        return y, None if tx is None else y * (tx - np.sum(y * tx, axis=given.get("axis"), keepdims=True))

    @tangent_rule(sc.log_softmax)
    def log_softmax(fn, p, t, kw):
        """y = x - logsumexp(x): dy = dx - sum(exp(y) dx) over `axis`."""
        given, tangents = _given(fn, ("x", "axis"), p, t, kw, ("x",))
        y = dispatch(fn, p, kw)
        tx = tangents["x"]
        return y, None if tx is None else tx - np.sum(np.exp(y) * tx, axis=given.get("axis"), keepdims=True)

    @tangent_rule(sc.logsumexp)
    def logsumexp(fn, p, t, kw):
        """y = log |S|, S = sum b exp(a) over `axis`: dy = dS / S = s sum(exp(a - y) (b da + db)), s the sign of S
        (whose own tangent is zero)."""
        given, tangents = _given(fn, ("a", "axis", "b", "keepdims", "return_sign"), p, t, kw, ("a", "b"))
        out = dispatch(fn, p, kw)
        with_sign = given.get("return_sign", False)
        ta, tb = tangents["a"], tangents.get("b")
        if ta is None and tb is None:
            return out, (None, None) if with_sign else None
        a, b, axis, keepdims = given["a"], given.get("b"), given.get("axis"), given.get("keepdims", False)
        y, sign = out if with_sign else (out, 1.0)
        ndim = np.ndim(strip(a))
        w = np.exp(a - _kept(y, ndim, axis, keepdims))
        w = w * _kept(sign, ndim, axis, keepdims) if with_sign else w
        inner = (0.0 if ta is None else ta if b is None else b * ta) + (0.0 if tb is None else tb)
        ydot = np.sum(w * inner, axis=axis, keepdims=keepdims)
        return out, (ydot, None) if with_sign else ydot


def _lfilter_tangent(lfilter):
    """y = (B / A) x: A ydot = Bdot x + B xdot - Adot y, so ydot = lfilter(bdot, a, x) + lfilter(b, a, xdot) -
    lfilter(adot, a, y) (adjoints/scipy_signal.py has the back)."""
    def rule(fn, p, t, kw):
        b, a, x, axis = scipy_signal.lfilter_parts(p, kw)
        tangents = dict(zip(("b", "a", "x"), t))
        y = dispatch(fn, p, kw)
        parts = [dispatch(lfilter, (tangents["b"], a, x), {"axis": axis}) if tangents.get("b") is not None else None,
                 dispatch(lfilter, (b, a, tangents["x"]), {"axis": axis}) if tangents.get("x") is not None else None,
                 -dispatch(lfilter, (tangents["a"], a, y), {"axis": axis}) if tangents.get("a") is not None else None]
        parts = [v for v in parts if v is not None]
        return y, sum(parts[1:], parts[0]) if parts else None
    return rule


def _register_signal():
    import sys
    lfilter = sys.modules["scipy.signal"].lfilter
    tangent_rule(lfilter)(_lfilter_tangent(lfilter))


on_import("scipy.signal", _register_signal)

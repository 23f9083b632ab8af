"""The `reduce` and `accumulate` methods of NumPy's ufuncs `np.add`, `np.multiply`, `np.maximum`, `np.minimum`,
`np.logaddexp` and `np.logaddexp2`, with `axis` (default 0, negative, None, a tuple where NumPy takes one), `dtype`
(passed through; the cotangent keeps the input's float type), and for reduce `keepdims` (and `initial=`/`where=` for
the four whose NumPy function has them: sum, prod, max, min); and `outer` of the binary ufuncs with rules.

How a call reaches these rules: `np.logaddexp.reduce` is a bound builtin method, and each attribute read makes a new
one, but two of them compare (and hash) equal when they bind the same method of the same ufunc. So the registry keys
them as it keys any target (`adjoint(np.logaddexp.reduce)`), and J's lookup finds the rule for the object read in user
code: a call `np.add.reduce(x)`, compiled as a method call on `np.add`, resolves `getattr(np.add, "reduce")` and
dispatches it (dispatch._callmethod), as does `r = np.add.reduce; r(x)`. Keying each (ufunc, method) pair, not the
descriptor `np.ufunc.reduce` shared by all ufuncs, leaves every other ufunc's methods as they were: a clear
MissingAdjoint naming `ufunc.reduce`, where a gradient flows.

The reductions reuse the rules of the NumPy function each one is (reduce of add is sum, of multiply prod, of maximum
max, ties sharing the cotangent), so both agree everywhere; logaddexp's reduce is a softmax weighting. The scans are
cumsum's and cumprod's backs, a running max's (the cotangent of each output to the entries equal to it since the
running value last changed, shared evenly), and logaddexp's, computed in the log domain (it never overflows).
"""
import numpy as np

from ...ast_adjoint.dispatch import J
from ...errors import ZygoteError
from ..registry import adjoint, keyword_cotangents, keyword_rule
from .common import _expand, _restore, arrayed
from .reductions import _extremum, prod, sum_
from .scans import _cumprod_back, _reverse_cumsum

_REDUCE_NAMES = ("axis", "dtype", "out", "keepdims", "initial", "where")
_ACCUMULATE_NAMES = ("axis", "dtype", "out")


def _array(x):
    """The argument as an array (a list or a Python number converted; `_restore` gives its cotangent that form)."""
    return x if type(x) is np.ndarray else np.asarray(x)


def _keywords(name, names, args, kwargs):
    """The call's parameters by name (positional ones named); `out=` refused (NumPy's own write, not followed)."""
    kw = {**dict(zip(names, args)), **kwargs}
    if kw.get("out") is not None:
        raise ZygoteError(f"{name}: out= is not differentiable")
    kw.pop("out", None)
    return kw


def _like_input(g, x_arr):
    """A cotangent in the input's float type (dtype= may have computed in another)."""
    if type(g) is np.ndarray and x_arr.dtype.kind in "fc" and g.dtype != x_arr.dtype and g.dtype.kind != "c":
        return g.astype(x_arr.dtype)
    return g


# --- reduce ------------------------------------------------------------------------------------------------------------
def _delegated_reduce(ufunc, inner, takes_dtype):
    """`ufunc.reduce` as the rule `inner` of the NumPy function it is (np.sum for add), called with axis (default 0),
    keepdims, initial and where by keyword; its keyword cotangents (initial's) go back to wherever the call put them."""
    name = f"np.{ufunc.__name__}.reduce"

    def rule(array, *args, **kwargs):
        kw = _keywords(name, _REDUCE_NAMES, args, kwargs)
        kw.setdefault("axis", 0)
        x_arr = _array(array)
        dtype = kw.pop("dtype", None)
        if dtype is not None and takes_dtype:
            kw["dtype"] = dtype
        source = x_arr if dtype is None or takes_dtype else x_arr.astype(dtype)
        y, inner_back = inner(source, **kw)
        if dtype is not None and not takes_dtype:
            y = ufunc.reduce(array, *args, **kwargs)

        def back(dy):
            grads = inner_back(dy)
            dx, dkw = grads[0], grads[-1]
            dx = None if dx is None else _restore(_like_input(dx, x_arr), array)
            positional = (dx, *(dkw.get(n) for n in _REDUCE_NAMES[:len(args)]))
            return keyword_cotangents(positional, kwargs, **{k: v for k, v in dkw.items() if k in kwargs})
        return y, back
    rule.__qualname__ = f"{ufunc.__name__}_reduce_rule"
    return keyword_rule(rule)


def _log_reduce(ufunc, base):
    """logaddexp.reduce (base e) and logaddexp2.reduce (base 2): y = log_b sum b^x, dx = dy b^(x - y) (a softmax). A
    slice of -inf only (y = -inf) passes no cotangent."""
    name = f"np.{ufunc.__name__}.reduce"

    def rule(array, *args, **kwargs):
        kw = _keywords(name, _REDUCE_NAMES, args, kwargs)
        unsupported = sorted(k for k in ("initial", "where") if k in kw and kw[k] is not np._NoValue
                             and not (k == "where" and kw[k] is True))
        if unsupported:
            raise ZygoteError(f"{name}: the gradient rule does not support {', '.join(unsupported)}=")
        x_arr = _array(array)
        y = ufunc.reduce(array, *args, **kwargs)
        axis, keepdims = kw.get("axis", 0), kw.get("keepdims", False)

        def back(dy):
            if dy is None:
                return (None, *(None for _ in args))
            y_full = _expand(np.asarray(y), x_arr, axis, keepdims)
            with np.errstate(invalid="ignore", over="ignore"):
                weight = np.where(y_full == -np.inf, 0.0, base ** (x_arr - y_full))
            g = _expand(dy, x_arr, axis, keepdims) * weight
            return (_restore(_like_input(np.asarray(g), x_arr), array), *(None for _ in args))
        return y, back
    rule.__qualname__ = f"{ufunc.__name__}_reduce_rule"
    return rule


REDUCE = {np.add.reduce: _delegated_reduce(np.add, sum_, True),
          np.multiply.reduce: _delegated_reduce(np.multiply, prod, True),
          np.maximum.reduce: _delegated_reduce(np.maximum, _extremum(np.max), False),
          np.minimum.reduce: _delegated_reduce(np.minimum, _extremum(np.min), False),
          np.logaddexp.reduce: _log_reduce(np.logaddexp, np.e),
          np.logaddexp2.reduce: _log_reduce(np.logaddexp2, 2.0)}


# --- accumulate ----------------------------------------------------------------------------------------------------------
def _along_last(fn, axis, *arrays):
    """fn of the arrays with `axis` moved last, its result moved back."""
    return np.moveaxis(fn(*(np.moveaxis(a, axis, -1) for a in arrays)), -1, axis)


def _running_extremum_back(x, y, dy):
    """The back of a running max (or min) along the last axis: y_j's cotangent goes to the entries i <= j equal to y_j
    (ties share it). Those lie in y_j's run, the stretch over which the running value is constant, and are the entries
    equal to it there: each output's count of them is a cumulative count within its run, and each entry's cotangent a
    sum over the outputs of its run from it on. Done on the flattened rows, where every row starts a run."""
    hit = x == y
    if x.size == 0:
        return np.zeros(x.shape, dy.dtype)
    new = np.ones(x.shape, bool)
    new[..., 1:] = y[..., 1:] != y[..., :-1]
    new, hit_flat = new.reshape(-1), hit.reshape(-1)
    run = np.cumsum(new) - 1  # each entry's run
    counted = np.cumsum(hit, axis=-1).reshape(-1)  # cumulative hits, per row
    count = counted - (counted - hit_flat)[new][run]  # hits in the run up to each entry
    share = np.where(count > 0, dy.reshape(-1) / np.maximum(count, 1), 0)  # (0: a NaN run has no hit)
    tail = np.flip(np.cumsum(np.flip(share.reshape(x.shape), -1), -1), -1).reshape(-1)  # sum over j >= i, per row
    ends = np.append(new[1:], True)  # the last entry of each run
    after = (tail - share)[ends]  # what follows each run in its row
    return np.where(hit_flat, tail - after[run], 0).reshape(x.shape).astype(dy.dtype, copy=False)


def _log_accumulate_back(ufunc, base):
    """dx_i = sum_{j >= i} dy_j b^(x_i - y_j), each term at most |dy_j|: the positive and negative parts of dy summed
    in the log domain by the same scan reversed, so that no power overflows (y_j - y_i may exceed any float's range)."""
    log = np.log if base == np.e else np.log2

    def back(x, y, dy):
        parts = []
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for part in (np.maximum(dy, 0), np.maximum(-dy, 0)):
                total = np.flip(ufunc.accumulate(np.flip(log(part) - y, -1), axis=-1), -1)  # log_b sum part_j b^-y_j
                parts.append(np.where(np.isneginf(total) | np.isneginf(x), 0.0, base ** (x + total)))
        return parts[0] - parts[1]
    return back


def _accumulate(ufunc, scan_back, needs_y):
    """`ufunc.accumulate(array, axis=0, dtype=None)`: `scan_back(x, y, dy)` along the last axis, moved to `axis`."""
    name = f"np.{ufunc.__name__}.accumulate"

    def rule(array, *args, **kwargs):
        kw = _keywords(name, _ACCUMULATE_NAMES, args, kwargs)
        x_arr = _array(array)
        y = ufunc.accumulate(array, *args, **kwargs)
        axis = kw.get("axis", 0)
        axis = 0 if axis is None else axis  # (NumPy takes None for a 1-d array only)

        def back(dy):
            if dy is None:
                return (None, *(None for _ in args))
            dy = arrayed(dy)
            x = x_arr if not needs_y or x_arr.dtype == y.dtype else x_arr.astype(y.dtype)
            g = _along_last(scan_back, axis, x, y, dy)
            return (_restore(_like_input(g, x_arr), array), *(None for _ in args))
        return y, back
    rule.__qualname__ = f"{ufunc.__name__}_accumulate_rule"
    return rule


def _cumsum_back(x, y, dy):
    return _reverse_cumsum(dy, -1)


ACCUMULATE = {np.add.accumulate: _accumulate(np.add, _cumsum_back, False),
              np.multiply.accumulate: _accumulate(np.multiply, _cumprod_back, True),
              np.maximum.accumulate: _accumulate(np.maximum, _running_extremum_back, True),
              np.minimum.accumulate: _accumulate(np.minimum, _running_extremum_back, True),
              np.logaddexp.accumulate: _accumulate(np.logaddexp, _log_accumulate_back(np.logaddexp, np.e), True),
              np.logaddexp2.accumulate: _accumulate(np.logaddexp2, _log_accumulate_back(np.logaddexp2, 2.0), True)}

# --- outer ------------------------------------------------------------------------------------------------------------
def outer_twin(ufunc, a, b):
    return ufunc(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b)


def _outer(ufunc):
    """`ufunc.outer(a, b)`: the ufunc of `a` with trailing axes of 1 and `b`, differentiated through the ufunc's rule."""
    def rule(a, b):
        y, pb = J(outer_twin, ufunc, a, b)
        return y, lambda dy: pb(dy)[2:]
    rule.__qualname__ = f"{ufunc.__name__}_outer_rule"
    return rule


OUTER = {u.outer: _outer(u) for u in (np.add, np.subtract, np.multiply, np.divide, np.power, np.maximum, np.minimum,
                                      np.hypot, np.arctan2, np.logaddexp)}

for _method, _rule in {**REDUCE, **ACCUMULATE, **OUTER}.items():
    adjoint(_method)(_rule)

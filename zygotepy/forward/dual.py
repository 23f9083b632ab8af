"""Dual numbers for forward mode: `Dual(tag, primal, tangent)`, one class for Python numbers and NumPy arrays.

Invariants:
- `tangent` has the shape of `primal` (rules broadcast it when the output is larger than an input).
- Every perturbation carries the integer `tag` of the forward-mode call that created it (`new_tag()`; tags only grow,
  so a nested call's tag is larger than its caller's). A Dual's primal and tangent may themselves be Duals of *smaller*
  tags, never of equal or larger ones. An operation on Duals of different tags works at the largest tag and treats the
  others as constants (whose own perturbations ride along inside the primal). This is what keeps
  `derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0)` at 1.0 (Siskind & Pearlmutter, "Perturbation
  confusion and referential transparency", 2005; ForwardDiff.jl's tags).
- Nothing drops a tangent silently: `float(dual)` and `np.asarray(dual)` raise `ForwardModeError` (the C code of
  `math.sin` or of an array constructor would otherwise keep only the primal).

Operators reach the rules through the dunders, ufuncs through `__array_ufunc__`, NumPy functions through
`__array_function__`; `apply` splits the arguments at the working tag and runs the rule from `FORWARD`."""
import collections
import copy
import itertools
import math
import operator

import numpy as np

from ..backends import truncated
from ..errors import STORE_INTO_PLAIN_ARRAY, ForwardModeError, MissingTangentRule, NoForwardAttribute
from .texts import noted

__all__ = ["Dual", "FORWARD", "GIVEN", "tangent_rule", "new_tag", "dispatch", "apply", "has_dual", "strip"]

_LEAVES = frozenset((float, int, bool, np.ndarray, np.float64, type(None), str))
FORWARD = {}  # callable -> rule(fn, primals, tangents, kwargs) -> (y, ydot or None); keyed by the callable itself
KEYWORDS_BY_POSITION = {}  # callable -> (args, kwargs) -> the same call with keywords that may carry a tangent by position
_TAGS = itertools.count(1)


def new_tag():
    """A fresh perturbation tag, larger than every tag handed out before."""
    return next(_TAGS)


def tangent_rule(*targets):
    """Register a forward rule `rule(fn, primals, tangents, kwargs) -> (y, ydot)` for each target (latest wins).

    `primals` are the arguments with this level's perturbation removed (they may still hold outer levels' Duals);
    `tangents[i]` is the tangent of argument i, None for a constant (a list of them for a list argument). Return
    `ydot=None` for an output that does not depend on the perturbation.
    """
    def register(rule):
        for t in targets:
            FORWARD[t] = rule
        return rule
    return register


class Dual:
    """A value `primal + tangent * eps_tag` with `eps_tag ** 2 == 0`; the primal is a number, an array or a Dual of a
    smaller tag."""
    __slots__ = ("tag", "primal", "tangent")
    __zygote_number__ = True  # reverse mode treats it as a number: its operators mean what the rules say

    def __init__(self, tag, primal, tangent):
        self.tag, self.primal, self.tangent = tag, primal, tangent

    def __repr__(self):
        return f"Dual(tag={self.tag}, primal={self.primal!r}, tangent={self.tangent!r})"

    # --- array-like attributes (the primal's) ---
    shape = property(lambda self: np.shape(strip(self.primal)), lambda self, _: _refuse("assigning `x.shape`"))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))
    dtype = property(lambda self: np.result_type(strip(self.primal)))
    nbytes = property(lambda self: np.asarray(strip(self.primal)).nbytes)  # (the rules' buffer-reuse threshold)
    T = property(lambda self: np.transpose(self))
    real = property(lambda self: np.real(self))
    imag = property(lambda self: np.imag(self))

    def __len__(self):
        return len(strip(self.primal))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self):
        return bool(strip(self.primal))

    def __int__(self): return int(strip(self.primal))  # noqa: E704  (these are piecewise constant: data)
    def __round__(self, ndigits=None): return round(strip(self.primal), ndigits)  # noqa: E704
    def __trunc__(self): return math.trunc(strip(self.primal))  # noqa: E704
    def __floor__(self): return math.floor(strip(self.primal))  # noqa: E704
    def __ceil__(self): return math.ceil(strip(self.primal))  # noqa: E704

    def __index__(self):
        raise ForwardModeError("a dual number (it carries a derivative) cannot be used as an index")

    def __format__(self, spec): return noted(format(strip(self.primal), spec), self.tag)  # noqa: E704  (texts.py)
    def __divmod__(self, o): return self // o, self % o  # noqa: E704
    def __rdivmod__(self, o): return o // self, o % self  # noqa: E704
    def tolist(self): return [v.tolist() for v in self] if self.ndim > 1 else list(self) if self.ndim else self  # noqa

    def __getattr__(self, name):  # (an ndarray's `.flat`, `.fill`, `.put`, `.view`, `.base`, `.flags`: no rule here)
        if name in ("is_integer", "as_integer_ratio"):  # (a float's questions about its value: data)
            return getattr(strip(self.primal), name)
        if name == "hex":  # (its text: texts.py)
            return lambda: noted(strip(self.primal).hex(), self.tag)
        if name.startswith("__") or not hasattr(np.ndarray, name):
            raise AttributeError(name)
        raise NoForwardAttribute(f"zygotepy's forward mode has no `.{name}` of an array carrying a derivative"
                                 + (": use x.ravel()" if name == "flat" else ": compute a new array instead"))

    def __float__(self):
        raise ForwardModeError("a dual number (a value carrying a forward-mode derivative) was converted to a plain "
                               "float, which would drop its derivative: a C function without a tangent rule received "
                               "it (math.* is handled inside functions zygotepy transforms, not inside library code), "
                               "or it was stored into a plain NumPy array (build arrays of differentiable values with "
                               "np.array([...]) or np.stack instead)")

    __complex__ = __float__

    def __array__(self, dtype=None, copy=None):
        raise ForwardModeError("a dual number (a value carrying a forward-mode derivative) was converted to a plain "
                               "NumPy array, which would drop its derivative (np.asarray on it, storing it into a plain "
                               "array, or a NumPy function without a tangent rule)")

    def __hash__(self):
        """A number's, as equality compares the primals (a set member or dict key under hessian); an array's raises."""
        return hash(strip(self.primal))

    def __zygote_snapshot__(self, snapshot):
        """A copy of the values an update in place may change (reverse mode's journal: `np.add.at(y, ...)` of a dual
        array under hessian), restored by `y[...] = copy`; `snapshot` copies each level's parts."""
        return Dual(self.tag, snapshot(self.primal), snapshot(self.tangent))

    @staticmethod
    def __zygote_zeros__(shape, like):
        """Zeros of `shape` at every level of `like`, so that `zeros[index] = like` keeps its tangents (reverse
        rules that scatter a cotangent into a new array, such as indexing's, call this)."""
        def level(v):
            return Dual(v.tag, level(v.primal), level(v.tangent)) if isinstance(v, Dual) else np.zeros(
                shape, dtype=np.result_type(v, np.float64))
        return level(like)

    @staticmethod
    def __zygote_rule__(fn, *args):
        """The reverse rule of a scalar function (`math.*`, `float`) on dual numbers, where `math`'s C code cannot take
        one (adjoints.scalar.foreign_rule): forward/levels.py's `scalar_rule`."""
        return GIVEN["scalar_rule"](fn, *args)

    # --- NumPy protocols ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at" and isinstance(inputs[0], Dual) and ufunc in UFUNC_AT and len(inputs) == 3:
            return UFUNC_AT[ufunc](ufunc, *inputs)
        if method == "outer" and len(inputs) == 2 and not kwargs:  # a broadcast call: no rule of its own needed
            a, b = inputs
            return ufunc(np.reshape(a, np.shape(strip(a)) + (1,) * np.ndim(strip(b))), b)
        if method != "__call__":
            raise MissingTangentRule(ufunc, f"method {method!r}")
        if "out" in kwargs:
            if not any(isinstance(o, Dual) for o in kwargs["out"]):  # `y += v`, y plain
                raise ForwardModeError(f"{STORE_INTO_PLAIN_ARRAY}; for `y += v` of such an array write `y = y + v`")
            return _into_out(ufunc, inputs, kwargs)
        return dispatch(ufunc, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return dispatch(func, args, kwargs)

    # --- array methods, through the NumPy functions (`_METHODS`, below the class) ---
    def dot(self, b): return np.dot(self, b)  # noqa: E704
    def ravel(self, order="C"): return np.ravel(self, order)  # noqa: E704
    def flatten(self, order="C"): return np.copy(np.ravel(self, order))  # noqa: E704  (a copy, as NumPy's)
    def conj(self):  # (NumPy's method gives a real array itself: `bra = psi.conj(); bra *= 2` doubles psi)
        return self if isinstance(self.primal, np.ndarray) and not np.iscomplexobj(self.primal) \
            and not np.iscomplexobj(self.tangent) else np.conj(self)
    def swapaxes(self, a, b): return np.swapaxes(self, a, b)  # noqa: E704
    conjugate = conj

    def sort(self, axis=-1, kind=None):  # in place, as NumPy's: the tangent follows the primal's order
        self[...] = np.take_along_axis(self, np.argsort(strip(self), axis=axis, kind=kind), axis=axis)

    # copies (copy.copy, copy.deepcopy, dataclasses.asdict): new arrays, as NumPy's copies are
    def __copy__(self): return Dual(self.tag, copy.copy(self.primal), copy.copy(self.tangent))  # noqa: E704
    def __deepcopy__(self, m): return Dual(self.tag, copy.deepcopy(self.primal, m), copy.deepcopy(self.tangent, m))  # noqa

    def copy(self, order="C"):  # through np.copy, whose reverse rule a reverse pass over a Dual (hessian) then uses
        return np.copy(self, order=order)

    def reshape(self, *shape, **k):
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, **k)

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes or None)

    def astype(self, dtype, **k):
        return apply(np.ndarray.astype, (self, dtype), k)

    def item(self, *index):  # (`x.item(i)` takes a flat index, `x.item(i, j)` or `x.item((i, j))` a multi-index)
        if not index:
            return np.reshape(self, ())
        if len(index) == 1 and isinstance(index[0], (int, np.integer)):
            return np.reshape(self, (-1,))[index[0]]
        return self[index[0] if len(index) == 1 else index]

    # --- indexing ---
    def __getitem__(self, index):
        return apply(operator.getitem, (self, index), {})

    def __setitem__(self, index, value):
        """In place, like NumPy: the primal and the tangent are both updated (the value's tangent, or zero)."""
        if isinstance(value, Dual) and value.tag > self.tag:
            raise ForwardModeError("cannot store a value carrying an inner (nested) derivative into an array of an "
                                   "outer one; build a new array with np.stack or np.where instead")
        same = isinstance(value, Dual) and value.tag == self.tag
        self.primal = _stored(self.primal, index, value.primal if same else value)
        self.tangent = _stored(self.tangent, index, value.tangent if same else 0)

    # --- comparisons look at the primal only ---
    def __lt__(self, o): return strip(self.primal) < strip(o)  # noqa: E704
    def __le__(self, o): return strip(self.primal) <= strip(o)  # noqa: E704
    def __gt__(self, o): return strip(self.primal) > strip(o)  # noqa: E704
    def __ge__(self, o): return strip(self.primal) >= strip(o)  # noqa: E704
    def __eq__(self, o): return strip(self.primal) == strip(o)  # noqa: E704
    def __ne__(self, o): return strip(self.primal) != strip(o)  # noqa: E704


def _refuse(what):
    raise ForwardModeError(f"{what} of an array carrying a forward-mode derivative: compute a new array instead")


def _stored(array, index, value):
    """`array[index] = value`; a plain array given a Dual of an outer level (a third derivative through `a[1] = a[0] *
    a[1]`) first becomes a Dual of that level with a zero tangent: a plain array cannot hold one."""
    if type(value) is Dual and type(array) is not Dual:
        array = Dual(value.tag, array, np.zeros(np.shape(array)))
    array[index] = value
    return array


def by_keyword(p, t, kw, names):
    """A reduction's call `fn(x, *rest, **kw)` as `fn(x, **kw)`, `rest` named by `names` (`z.var(0)` is
    `np.var(z, axis=0)`), its `dtype=None` and `out=None` left out; a tangent rule takes its parameters by keyword."""
    if len(p) > 1 and any(d is not None for d in t[1:]):
        raise ForwardModeError("forward mode takes a derivative of a reduction's array only, not of its other arguments")
    kw = {**dict(zip(names, p[1:])), **kw}
    return p[:1], t[:1], {k: v for k, v in kw.items() if not (k in ("dtype", "out") and v is None)}


def _add_at(ufunc, target, index, value):
    """`np.add.at(target, index, value)` in place on a Dual target (scatter-adds of reverse rules)."""
    if isinstance(value, Dual) and value.tag > target.tag:
        raise ForwardModeError("np.add.at: the value carries an inner (nested) derivative the target cannot hold")
    same = isinstance(value, Dual) and value.tag == target.tag
    np.add.at(target.primal, index, value.primal if same else value)
    if same:
        np.add.at(target.tangent, index, value.tangent)


UFUNC_AT = {np.add: _add_at}
"""ufunc -> how `ufunc.at(target, index, value)` updates a dual number of an array (forward/in_place.py adds the
others: they apply one position at a time)."""


# --- levels ------------------------------------------------------------------------------------------------------------
def _walk(x, depth=2):
    """The Duals among an argument: itself, or the items of a list/tuple/dict argument (np.stack([a, b]))."""
    if isinstance(x, Dual):
        yield x
    elif depth and isinstance(x, (list, tuple, collections.deque)):
        for v in x:
            yield from _walk(v, depth - 1)
    elif depth and isinstance(x, dict):
        for v in x.values():
            yield from _walk(v, depth - 1)


def _holds_dual(a):
    t = type(a)
    if t is Dual:
        return True
    if t is float or t is int or t is np.ndarray:  # the common cases, decided without a walk
        return False
    return any(True for _ in _walk(a))


def has_dual(args, kwargs=None):
    for a in args:
        if _holds_dual(a):
            return True
    return bool(kwargs) and any(_holds_dual(a) for a in kwargs.values())


def _top_tag(args):
    top = 0
    for a in args:
        if type(a) is Dual:
            top = max(top, a.tag)
        elif _holds_dual(a):
            top = max(top, *(d.tag for d in _walk(a)))
    return top


def _split(x, tag):
    """(primal, tangent) of an argument at level `tag`; the tangent is None for a constant at that level."""
    if type(x) is Dual:
        return (x.primal, x.tangent) if x.tag == tag else (x, None)
    if isinstance(x, (list, tuple, collections.deque)) and any(True for _ in _walk(x)):
        parts = [_split(v, tag) for v in x]
        if all(t is None for _, t in parts):
            return type(x)(p for p, _ in parts), None
        # a constant item's tangent is a zero of its shape (NumPy given None raised, or corrupted its heap: `inv([[x[0],
        # 1.0], ...])`); numbers in (nested) lists are the array NumPy makes of them, which the rules compute with
        primal, tangent = type(x)(p for p, _ in parts), [_zero_of(p) if t is None else t for p, t in parts]
        if not numbers(primal):  # (tangents of an outer level below: a nested gradient's in `hessian`, that level's)
            return primal, tangent
        return np.asarray(primal), dispatch(np.asarray, (tangent,), {}) if _holds_dual(tangent) else np.asarray(tangent)
    return x, None


def _zero_of(p):
    return [_zero_of(v) for v in p] if isinstance(p, (list, tuple)) else \
        np.zeros(np.shape(p)) if isinstance(p, (int, float, np.number, np.ndarray)) else None


def numbers(p):
    """A (nested) list or tuple of numbers, not of arrays (which a rule may take one by one)?"""
    if isinstance(p, (list, tuple)):
        return len(p) > 0 and all(numbers(v) for v in p)
    return isinstance(p, (int, float, complex, np.number)) and not isinstance(p, bool)


def strip(x):
    """`x` with every perturbation of every level removed (for comparisons, shapes and constant functions)."""
    while type(x) is Dual:
        x = x.primal
    if type(x) in _LEAVES:
        return x
    if isinstance(x, (list, tuple, collections.deque)) and any(True for _ in _walk(x)):
        return type(x)(*map(strip, x)) if hasattr(type(x), "_fields") else type(x)(strip(v) for v in x)
    if isinstance(x, dict) and any(True for _ in _walk(x)):
        return {k: strip(v) for k, v in x.items()}
    return x


def _fit(ydot, y):
    """The tangent in the output's shape and, for a Python float output, as a Python float."""
    ty = type(y)
    if ty is type(ydot) and (ty is float or ty is np.ndarray and y.shape == ydot.shape):
        return ydot
    shape = np.shape(strip(y))
    if np.shape(strip(ydot)) != shape:
        kind = np.result_type(strip(y)).kind
        ydot = ydot + np.zeros(shape, dtype=np.result_type(strip(y)) if kind in "fc" else np.float64)
    if type(y) is float and isinstance(ydot, np.generic):
        ydot = float(ydot) if ydot.dtype.kind == "f" else complex(ydot)
    return ydot


def _into_out(ufunc, args, kwargs):
    """A ufunc given its output array (`np.multiply(x, x, y)`, or `out=y`): the result computed without it, then
    stored into it, primal and tangent, as NumPy stores it; refused where that array is plain and the result carries
    a derivative, as any store into one is."""
    out = args[ufunc.nin:] or kwargs.get("out")
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    rest = {k: v for k, v in kwargs.items() if k != "out"}
    if ufunc.nout != 1 or isinstance(target, tuple) or "where" in rest:
        raise MissingTangentRule(ufunc, "out= argument with several outputs or where=")
    result = dispatch(ufunc, args[:ufunc.nin], rest)
    if type(target) is Dual:
        target[...] = result
    elif type(result) is Dual:
        raise ForwardModeError(f"{STORE_INTO_PLAIN_ARRAY} (the output array of {ufunc.__name__})")
    else:
        target[...] = result
    return target


def apply(fn, args, kwargs):
    """Run the forward rule of `fn` at the largest tag among its Dual arguments (`kwargs` are constants)."""
    if type(fn) is np.ufunc and (len(args) > fn.nin or kwargs and kwargs.get("out") is not None):
        return _into_out(fn, args, kwargs)
    rule = FORWARD.get(fn)
    if rule is None:
        raise MissingTangentRule(fn)
    if kwargs and fn in KEYWORDS_BY_POSITION:  # (`np.clip(x, a_min=lo)`: its bound's tangent by position)
        args, kwargs = KEYWORDS_BY_POSITION[fn](args, kwargs)
    if kwargs and type(kwargs.get("out")) is Dual:  # (`np.clip(h, lo, hi, out=h)`: computed, then stored into it)
        target = kwargs["out"]
        target[...] = apply(fn, args, {k: v for k, v in kwargs.items() if k != "out"})
        return target
    if kwargs and has_dual((), kwargs):
        raise ForwardModeError(f"a keyword argument of {getattr(fn, '__name__', fn)} carries a derivative; "
                               f"forward mode treats keyword arguments as constants: pass it positionally")
    tag = _top_tag(args)
    parts = [_split(a, tag) for a in args]
    y, ydot = rule(fn, [p for p, _ in parts], [t for _, t in parts], kwargs)
    if ydot is not None and truncated(y, [p for p, _ in parts]):  # (`np.asarray(x, dtype=int)`: piecewise constant)
        return y
    if ydot is not None and kwargs and kwargs.get("out") is not None and not has_dual((kwargs["out"],), {}):
        raise ForwardModeError(f"{STORE_INTO_PLAIN_ARRAY} (`out=` of {getattr(fn, '__name__', fn)})")
    if isinstance(y, (tuple, list)) and isinstance(ydot, (tuple, list)):  # several outputs: a tangent each
        parts = [yi if di is None else Dual(tag, yi, _fit(di, yi)) for yi, di in zip(y, ydot, strict=True)]
        return type(y)(*parts) if hasattr(y, "_fields") else type(y)(parts)  # (slogdet's is a namedtuple)
    if type(ydot) is np.ndarray and type(y) is np.ndarray:
        ydot = _owned(y, ydot, parts)
    return y if ydot is None else Dual(tag, y, _fit(ydot, y))


def laid_out_like(primal, tangent):
    """The tangent in the primal's memory layout (a Fortran-ordered or transposed argument), so that a function
    reading entries in memory order (`ravel(x, "K")`, `reshape(x, s, order="A")`) reads both alike."""
    out = np.empty_like(primal, dtype=tangent.dtype)
    out[...] = tangent
    return out


def _owned(y, ydot, parts):
    """`ydot`, copied where it is (part of) an argument's tangent while `y` is no view of that argument (`x + 1.0`'s
    tangent is `x`'s own array: `z = x + 1.0; z *= 2.0` doubled `x`'s tangent too). A view's tangent is a view."""
    if ydot.base is None and not any(ydot is t for _, t in parts):
        return ydot
    shared = any(type(t) is np.ndarray and np.may_share_memory(ydot, t) and not (
        type(p) is np.ndarray and np.may_share_memory(y, p)) for p, t in parts)
    return ydot.copy() if shared else ydot


def dispatch(fn, args, kwargs):
    """Call a library callable on arguments that may hold Duals: its forward rule, or as a constant function when
    reverse mode's registry says it is nondifferentiable (comparisons, shapes, floor, zeros_like, ...)."""
    if not has_dual(args, kwargs):
        return fn(*args, **kwargs)
    try:
        rule = FORWARD.get(fn)
    except TypeError:
        rule = None
    if rule is not None:
        return apply(fn, args, kwargs)
    return GIVEN["without_rule"](fn, args, kwargs)


GIVEN = {}
"""What modules above this one (it sits below the registry) give it at their import: "without_rule", how a library
callable with no tangent rule runs on dual numbers, `run(fn, args, kwargs)` (forward/rules.py: the registry's
nondifferentiable ones as constants, one with a user's rule through that rule, others refused); "scalar_rule"
(forward/levels.py)."""


# ndarray methods a dual number of an array answers as NumPy's functions do (their forward rules, or a clear refusal)
for _name in ("sum", "mean", "max", "min", "prod", "std", "var", "squeeze", "repeat", "cumsum", "cumprod", "trace",
              "diagonal", "round", "argmax", "argmin", "argsort", "take", "any", "all", "nonzero", "searchsorted"):
    setattr(Dual, _name, (lambda fn: lambda self, *a, **k: fn(self, *a, **k))(getattr(np, _name)))
Dual.clip = lambda self, *bounds, **k: np.clip(self, *bounds, *[None] * (len(bounds) == 1 and "max" not in k), **k)
"""`x.clip(lo)`: an array method's one bound is the lower one (np.clip(x, lo) raises: it wants both)."""

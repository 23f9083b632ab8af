"""Rules for data structures: attribute and item reads, displays, unpacking and iteration.

A container's cotangent has the container's structure (a tuple gets a tuple, a dict a dict, `None` entries where no
gradient flows); an object's is a `StructGrad` of its fields. Array item reads scatter into a zero array, with `add.at`
so that repeated integer indices accumulate.
"""
import functools
import operator
import types

import numpy as np

from ..ast_adjoint import runtime as rt
from ..ast_adjoint.dispatch import J, differentiable
from ..errors import MissingAdjoint, ZygoteError
from ..backends import is_array_type, namespace
from ..structgrad import StructGrad
from .foreign_methods import attribute as foreign_attribute
from .registry import adjoint, keyword_rule, namespace_generic, nondifferentiable

nondifferentiable(foreign_attribute)  # (higher orders differentiate getattr_ itself)
nondifferentiable(rt.none_set, rt.any_set, rt.new_cell, rt.set_cell, rt.contained_in, rt.not_contained_in,
                  rt.raise_, rt.assertion_failed, rt.format_value, rt.join_str, rt.is_scalar, rt.is_same,
                  rt.is_none, rt.is_not_none, rt.all_true, range, slice)


def like(template, items):
    """`items` (a list of cotangents) in the structure of the sequence `template`."""
    if all(i is None for i in items):
        return None
    if isinstance(template, (set, frozenset)):  # items in the set's iteration order, keyed by element
        return {e: g for e, g in zip(template, items) if g is not None}
    if hasattr(type(template), "_fields") and isinstance(template, tuple):  # a namedtuple: a structural gradient
        return StructGrad((k, g) for k, g in zip(template._fields, items) if g is not None)
    if isinstance(template, (tuple, list)):
        return type(template)(items) if type(template) in (tuple, list) else tuple(items)
    xp = namespace(template)
    if hasattr(template, "shape"):
        rows = [xp.zeros_like(template[k], dtype=_float_dtype(template)) if g is None else xp.asarray(g)
                for k, g in enumerate(items)]
        return xp.stack(rows)
    return tuple(items)


def _float_dtype(x):
    kind = getattr(x.dtype, "kind", "f")
    return x.dtype if kind in "fc" else np.float64


ATTRIBUTES = {}  # (type, attribute name) -> f(obj, dy) giving obj's cotangent: array attributes such as `.T`


_GETTERS = {}  # (class, attribute name) -> the Python getter of a property there, or None


def _getter(cls, name):
    key = (cls, name)
    if key not in _GETTERS:
        prop = getattr(cls, name, None) if not issubclass(cls, type) else None
        _GETTERS[key] = prop.fget if type(prop) is property and type(prop.fget) is types.FunctionType else None
    return _GETTERS[key]


nondifferentiable(_getter)  # a cached lookup: nesting runs it as it is (its cache write is no data flow)


@adjoint(getattr)
def getattr_(obj, name, *default):
    attribute = ATTRIBUTES.get((type(obj), name)) or foreign_attribute(type(obj), name)
    fget = _getter(type(obj), name) if attribute is None and not is_array_type(type(obj)) else None
    if fget is not None:  # a user class's property: differentiate its getter (own names: nesting transforms this rule)
        value, pb = J(fget, obj)
        return value, lambda dy: (None if dy is None else pb(dy)[1], None, *(None for _ in default))
    y = getattr(obj, name, *default)

    def back(dy):
        if dy is None or isinstance(obj, type) or type(obj).__name__ == "module":
            return (None, None, *(None for _ in default))
        if attribute is not None:
            return (attribute(obj, dy), None, *(None for _ in default))
        if hasattr(obj, "shape") and hasattr(obj, "dtype"):  # other array attributes (shape, dtype) carry nothing
            if differentiable(y):
                raise MissingAdjoint(getattr, f"the array attribute .{name} has no rule")
            return (None, None, *(None for _ in default))
        if getattr(y, "__self__", None) is obj:  # a bound method: its cotangent is its object's
            return (dy, None, *(None for _ in default))
        return (StructGrad({name: dy}), None, *(None for _ in default))
    return y, back


@adjoint(rt.tuple_of)
def tuple_of(*items):
    def back(dy):
        return tuple(dy) if dy is not None else (None,) * len(items)
    return items, back


@adjoint(rt.list_of)
def list_of(*items):
    def back(dy):
        return tuple(dy) if dy is not None else (None,) * len(items)
    return list(items), back


@adjoint(rt.dict_of)
def dict_of(*flat):
    def back(dy):
        if dy is None:
            return (None,) * len(flat)
        keys = flat[::2]
        last = {k: i for i, k in enumerate(keys)}  # `{"a": x, "a": y}` keeps y: x receives nothing
        return tuple(g for i, k in enumerate(keys) for g in (None, dy.get(k) if last[k] == i else None))
    return rt.dict_of(*flat), back


@adjoint(rt.dict_merge)
def dict_merge(*parts):
    """`{**a, **b}`: each key's cotangent goes to the part whose entry won it (the last part holding the key)."""
    keys = [list(p.keys()) for p in parts]

    def back(dy):
        if dy is None:
            return (None,) * len(parts)
        last = {k: i for i, ks in enumerate(keys) for k in ks}
        return tuple(_part_cotangent(p, {k: dy.get(k) if last[k] == i else None for k in ks})
                     for i, (p, ks) in enumerate(zip(parts, keys)))
    return rt.dict_merge(*parts), back


def _part_cotangent(part, d):
    """A merged part's dict cotangent, None when no entry has one; a mapping that is not a dict has no dict-shaped
    cotangent, so a gradient that would reach one is an error, not a gradient dropped."""
    if all(g is None for g in d.values()):
        return None
    if type(part) is not dict:
        raise ZygoteError(f"zygotepy cannot differentiate `{{**m}}` of a {type(part).__name__}: its cotangent has no "
                          f"dict to go to; unpack dict(m) instead")
    return d


@adjoint(rt.unpack)
def unpack(value, n):
    def back(dy):
        return (like(value, list(dy)) if dy is not None else None, None)
    return rt.unpack(value, n), back


def _splat_back(stars, items, dy):
    """Cotangents of a display's items from the display's: a starred item gets its slice, in its own container."""
    if dy is None:
        return (None,) * (1 + len(items))
    out, k = (None,), 0  # built by concatenation, not `append`: an outer level transforms this code (nesting.py)
    for star, item in zip(stars, items):
        if star:
            n = len(item)
            part = dy[k:k + n]
            out = out + (None if all(g is None for g in part) else like(item, list(part)),)
            k = k + n
        else:
            out = out + (dy[k],)
            k = k + 1
    return out


@adjoint(rt.splat)
def splat(stars, *items):
    return rt.splat(stars, *items), lambda dy: _splat_back(stars, items, dy)


@adjoint(rt.splat_list)
def splat_list(stars, *items):
    return rt.splat_list(stars, *items), lambda dy: _splat_back(stars, items, dy)


@adjoint(rt.unpack_starred)
def unpack_starred(value, before, after):
    parts = rt.unpack_starred(value, before, after)

    def back(dy):
        if dy is None:
            return (None, None, None)
        middle = dy[before] if dy[before] is not None else (None,) * len(parts[before])
        return (like(value, [*dy[:before], *middle, *dy[before + 1:]]), None, None)
    return parts, back


@adjoint(rt.iterate)
def iterate(value):
    items = rt.iterate(value)
    if isinstance(value, (set, frozenset)):  # a set's cotangent is keyed by its elements
        return items, lambda dy: (like(value, list(dy)) if dy is not None else None,)
    return items, lambda dy: (dy,)


# --- sets: a set's cotangent is a dict from element to cotangent (elements are values, not positions) ---------------

@adjoint(rt.set_of)
def set_of(*items):
    def back(dy):
        if dy is None:
            return (None,) * len(items)
        # an element given twice is stored once: the first gets its cotangent
        return tuple(dy.get(v) if v not in items[:k] else None for k, v in enumerate(items))
    return set(items), back


@adjoint(rt.set_add)
def set_add(s, value):
    fresh = value not in s

    def back(dy):
        if dy is None or not fresh:
            return (dy, None)
        return ({k: g for k, g in dy.items() if k != value} or None, dy.get(value))
    return rt.set_add(s, value), back


@adjoint(enumerate)
def enumerate_(seq, start=0):
    def back(dy):
        if dy is None:
            return (None, None)
        return (like(seq, [d[1] if d is not None else None for d in dy]), None)
    return list(enumerate(seq, start)), back


@adjoint(zip)
def zip_(*seqs, strict=False):
    def back(dy):
        if dy is None:
            return (None,) * len(seqs)
        return tuple(like(s, [d[k] if d is not None else None for d in dy] + [None] * (len(s) - len(dy)))
                     for k, s in enumerate(seqs))
    # (no keyword unless it matters: an outer level of nested differentiation transforms this rule, and an inner call
    # with keywords is what it refuses)
    return list(zip(*seqs, strict=True) if strict else zip(*seqs)), back


def _is_mask(index):
    return "bool" in str(getattr(index, "dtype", ""))


def _is_fancy(index):
    parts = index if isinstance(index, tuple) else (index,)
    return any(hasattr(p, "shape") or isinstance(p, list) for p in parts)


def scatter(n, picks, items):
    """A list of `n` Nones with `items` at the positions `picks`: a sequence's cotangent from those of some entries."""
    grads = [None] * n
    for pos, g in zip(picks, items):
        grads[pos] = g
    return grads


@adjoint(scatter)
def scatter_rule(n, picks, items):
    def back(dg):  # a rule, so that an outer level differentiates getitem's back without seeing item assignment
        return (None, None, None if dg is None else tuple(dg[pos] for pos in picks))
    return scatter(n, picks, items), back


@adjoint(operator.getitem)
def getitem(x, index):
    y = x[index]
    if type(index) is int and type(x) is np.ndarray and x.ndim == 1 and x.dtype.kind == "f":
        return y, _number_back(x, index)

    def back(dy, need=None, *into):
        if dy is None:
            return into or (None, None)
        if into and into[0] is not None and rt.sole(into[0]):  # generated code's own running cotangent: add in place
            if _add_in_place(into[0], x, index, dy):
                return into
        dx = _getitem_cotangent(x, index, dy)
        return (rt.acc(into[0], dx), into[1]) if into else (dx, None)
    return y, back


def _number_back(x, index):
    """The back of `x[i]` for an int `i` and a 1-d real array `x` (a loop reading items): the running cotangent that
    generated code hands over gets `dy` added at `i` in place when it owns it, and is made on the first read."""
    shape, dtype = x.shape, x.dtype

    def back(dy, need=None, *into):
        if dy is None:
            return into or (None, None)
        if into and (type(dy) is float or type(dy) is dtype.type):  # a real dy: no cast can lose a part of it
            if into[0] is None:  # the first read the backward meets: the dense cotangent, built once
                return scatter_array(x, index, dy), into[1]
            if type(into[0]) is np.ndarray and rt.sole(into[0]) and into[0].dtype == dtype and into[0].shape == shape:
                into[0][index] += dy
                return into
        dx = _getitem_cotangent(x, index, dy)
        return (rt.acc(into[0], dx), into[1]) if into else (dx, None)
    return back


def _add_in_place(dx, x, index, dy):
    """`dx[index] += dy` where that is what accumulating `getitem`'s cotangent means: a list's entry, or an array of
    the dtype `scatter_array` would build and a real dy (a complex dy must not be cast). False: do it out of place."""
    if type(dx) is np.ndarray:
        if type(x) is not np.ndarray or dx.shape != x.shape or dx.dtype != _float_dtype(x) \
                or not (type(dy) is float or type(dy) is dx.dtype.type or type(dy) is np.ndarray and dy.dtype == dx.dtype):
            return False
        if type(index) is not int and _is_fancy(index) and not _is_mask(index):
            np.add.at(dx, index, dy)  # repeated indices accumulate
        else:
            dx[index] += dy
        return True
    if type(index) is not int or type(x) is not list or len(dx) != len(x):
        return False
    dx[index] = rt.acc(dx[index], dy)
    return True


def _getitem_cotangent(x, index, dy):
    """The cotangent `getitem`'s back gives `x`: dy at x[index], zero (None) elsewhere."""
    if isinstance(x, (tuple, list)):
        picks = range(*index.indices(len(x))) if isinstance(index, slice) else (index,)
        grads = scatter(len(x), picks, dy if isinstance(index, slice) else (dy,))
        return type(x)(grads) if type(x) in (tuple, list) else like(x, list(grads))
    if isinstance(x, dict):
        return {index: dy}
    if hasattr(x, "shape"):
        return scatter_array(x, index, dy)
    return None


def scatter_array(x, index, dy):
    """Zeros shaped like `x` with `dy` added at `x[index]`: an array's cotangent from that of `x[index]`."""
    xp = namespace(x)
    zeros = getattr(type(dy), "__zygote_zeros__", None)  # forward mode's duals: zeros that can hold dy
    g = zeros(x.shape, dy) if zeros is not None else \
        xp.zeros(x.shape, dtype=_float_dtype(x) if not rt.is_complex_like(dy) else np.complex128)
    if hasattr(g, "at") and not isinstance(g, np.ndarray):  # JAX arrays are immutable: a functional update
        return g.at[index].add(dy)
    if _is_fancy(index) and xp is not np and _is_mask(index):
        g[index] = dy  # a mask selects each entry at most once
    elif _is_fancy(index):
        if xp is not np:
            from ..errors import ZygoteError
            raise ZygoteError(f"indexing a {type(x).__name__} with an index array has no namespace-generic gradient "
                              f"(repeated indices must accumulate); use a JAX or NumPy array, or basic indices")
        np.add.at(g, index, dy)
    else:
        g[index] = dy
    return g


namespace_generic(operator.getitem)  # scatter_array computes in x's namespace


@adjoint(scatter_array)
def scatter_array_rule(x, index, dy):
    def back(dg):  # the adjoint of scattering is gathering
        return (None, None, None if dg is None else dg[index])
    return scatter_array(x, index, dy), back


@adjoint(rt.append)
def append(lst, value):
    n = len(lst)

    def back(dy):  # dy covers the final list; entries past n belong to later appends and are ignored upstream
        if dy is None:
            return (None, None)
        return (dy, dy[n] if n < len(dy) else None)
    return rt.append(lst, value), back


@adjoint(rt.dict_put)
def dict_put(d, key, value):
    overwritten = key in d

    def back(dy):
        if dy is None:
            return (None, None, None)
        g = dy.get(key)
        if overwritten:  # the earlier value under `key` was replaced: it receives nothing
            dy = {k: None if k == key else v for k, v in dy.items()}  # no `**` display: nesting transforms this
        return (dy, None, g)
    return rt.dict_put(d, key, value), back


@adjoint(super)
def super_(cls, obj):
    """`super(C, self)` is a view of `self`: its cotangent is `self`'s."""
    return super(cls, obj), lambda dy: (None, dy)


@keyword_rule
@adjoint(functools.partial)
def partial(func, *args, **kwargs):
    """The cotangent of a partial is `StructGrad(func=..., args=(...), keywords={...})` (see dispatch.PartialPullback);
    its keywords' go back to the keyword arguments they were given by."""
    def back(dy):
        dy = dy or {}
        bound = dy.get("args") or (None,) * len(args)
        given = dy.get("keywords") or {}
        return (dy.get("func"), *bound, *(({k: given.get(k) for k in kwargs},) if kwargs else ()))
    return functools.partial(func, *args, **kwargs), back


@adjoint(dict.items)
def dict_items(d):
    """`d.items()` as a list of pairs; a pair's cotangent `(None, dv)` goes back to `d[k]`."""
    pairs = list(d.items())

    def back(dy):
        if dy is None:
            return (None,)
        return ({k: p[1] for (k, _), p in zip(pairs, dy) if p is not None and p[1] is not None},)
    return pairs, back


@adjoint(dict.values)
def dict_values(d):
    keys = list(d)

    def back(dy):
        if dy is None:
            return (None,)
        return ({k: g for k, g in zip(keys, dy) if g is not None},)
    return list(d.values()), back


@adjoint(dict.get)
def dict_get(d, key, *default):
    found = key in d

    def back(dy):
        if dy is None:
            return (None, None, *(None for _ in default))
        return ({key: dy} if found else None, None, *((None if found else dy) for _ in default))
    return d.get(key, *default), back


@adjoint(list.copy)
def list_copy(lst):
    """`W.copy()` (and `copy.copy(W)`, which calls it): a new list of the same items. The caller links the copy to `W`
    like any call's result, so an item updated in place through either is seen through the other (mutation_links)."""
    return lst.copy(), lambda dy: (None if dy is None else list(dy),)


@adjoint(dict.copy)
def dict_copy(d):
    """`d.copy()`: a new dict of the same values, linked to `d` by the caller as `list.copy` is."""
    return d.copy(), lambda dy: (None if dy is None else dict(dy),)


nondifferentiable(dict.keys)

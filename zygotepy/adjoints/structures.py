"""Rules for data structures: attribute and item reads, displays, unpacking and iteration.

A container's cotangent has the container's structure (a tuple gets a tuple, a dict a dict, `None` entries where no
gradient flows); an object's is a `StructGrad` of its fields. Array item reads scatter into a zero array, with `add.at`
so that repeated integer indices accumulate.
"""
import copy
import functools
import operator
import types
import weakref

import numpy as np

from ..ast_adjoint import runtime as rt
from ..ast_adjoint.dispatch import J, call_site, differentiable
from ..errors import MissingAdjoint, ZygoteError
from ..runtime.context import current
from ..backends import asarray, is_array_type, namespace, on, on_any, zeros as zeros_on
from ..structgrad import StructGrad
from .foreign_methods import attribute as foreign_attribute
from .numpy.index_tricks import CONCATENATORS, concatenator_getitem
from .registry import adjoint, keyword_rule, namespace_generic, nondifferentiable

nondifferentiable(foreign_attribute)  # (higher orders differentiate getattr_ itself)
nondifferentiable(on, on_any, zeros_on)  # device keywords and fresh zeros: constants (an outer level runs the rules' code)
nondifferentiable(rt.none_set, rt.any_set, rt.new_cell, rt.set_cell, rt.contained_in, rt.not_contained_in,
                  rt.raise_, rt.assertion_failed, rt.format_value, rt.join_str, rt.is_scalar, rt.is_same,
                  rt.is_none, rt.is_not_none, rt.all_true, range, slice)


def like(template, items):
    """`items` (a list of cotangents) in the structure of the sequence `template`."""
    if all(i is None for i in items):
        return None
    if type(template) is Items:  # the items it had left when walked: the last ones
        return StructGrad({"items": [None] * (len(template.items) - len(items)) + list(items)})
    if isinstance(template, dict):  # its keys (`list(d)`, `sorted(d)`): they pass nothing back into the dict
        return keys_read(list(template), items)
    if isinstance(template, (set, frozenset)):  # items in the set's iteration order, keyed by element
        return {e: g for e, g in zip(template, items) if g is not None}
    if hasattr(type(template), "_fields") and isinstance(template, tuple):  # a namedtuple: a structural gradient
        return StructGrad((k, g) for k, g in zip(template._fields, items) if g is not None)
    if isinstance(template, (tuple, list)):
        return type(template)(items) if type(template) in (tuple, list) else tuple(items)
    xp = namespace(template)
    if hasattr(template, "shape"):
        rows = [xp.zeros_like(template[k, ...], dtype=_float_dtype(template)) if g is None
                else asarray(xp, g, template) for k, g in enumerate(items)]  # (on template's device)
        return xp.stack(rows)
    if hasattr(template, "__dict__") and not isinstance(template, (types.GeneratorType, types.FunctionType, type)) \
            and not type(template).__name__.endswith("iterator"):
        # a user object walked natively (sum(obj), max(obj), a, b = obj): its items' cotangents have no way back
        raise ZygoteError(f"zygotepy cannot route the gradient of the items of a {type(template).__name__} object "
                          f"walked here; iterate it in a for loop, or with list(obj), which zygotepy follows "
                          f"through its __iter__ or __getitem__")
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


_DESCRIPTORS = {}  # (class, attribute name) -> a descriptor there whose __get__ is Python code (not property), or None


def _descriptor(cls, name):
    """A class attribute whose type defines `__get__` in Python: `functools.cached_property` or a user's descriptor."""
    key = (cls, name)
    if key not in _DESCRIPTORS:
        found = None
        if not issubclass(cls, type):
            import inspect
            static = inspect.getattr_static(cls, name, None)
            get = getattr(type(static), "__get__", None)
            if isinstance(get, types.FunctionType) and not isinstance(static, (property, staticmethod, classmethod)):
                found = static
        _DESCRIPTORS[key] = found
    return _DESCRIPTORS[key]


def _missing(obj, name):
    """Does ordinary lookup (the instance's dictionary, its class) not find `name`, so `__getattr__` runs?"""
    if name in getattr(obj, "__dict__", ()):
        return False
    key = (type(obj), name)
    hit = _ON_CLASS.get(key)
    if hit is None:
        import inspect
        hit = _ON_CLASS[key] = inspect.getattr_static(type(obj), name, _MISSING) is not _MISSING
    return not hit


_MISSING = object()
_ON_CLASS = {}  # (class, name) -> does the class (or a base) define it
_CACHED = {}  # (id(obj), name) -> (weak reference to obj, the value cached_property stored, its pullback)


def _through_descriptor(obj, name, desc, default):
    """`obj.name` computed by the descriptor `desc`: its `__get__` (a cached_property's function) is differentiated.
    A cached_property computes once and stores the value in obj's `__dict__`; a later read within the same
    differentiation reaches the first computation's pullback (the cache is no field of obj that a gradient could
    reach). None where obj's own dictionary answers (a value cached before, or a non-data descriptor shadowed)."""
    nones = tuple(None for _ in default)
    own = getattr(obj, "__dict__", {})
    if isinstance(desc, functools.cached_property):
        key = (id(obj), name)
        if name in own:
            hit = _CACHED.get(key)
            if hit is None or hit[0]() is not obj or hit[1] is not own[name]:
                return None
            first_pb = hit[2]
            return own[name], lambda dy: (None if dy is None else first_pb(dy)[1], None, *nones)
        value, pb = J(desc.func, obj)
        own[name] = value
        try:
            _CACHED[key] = (weakref.ref(obj, functools.partial(_forget, key)), value, pb)
        except TypeError:  # (an object without weak references: a later read is a field of it, as before)
            pass
        return value, lambda dy: (None if dy is None else pb(dy)[1], None, *nones)
    cls = type(desc)
    if name in own and not (hasattr(cls, "__set__") or hasattr(cls, "__delete__")):
        return None  # a non-data descriptor shadowed by the instance's own attribute
    got, get_pb = J(cls.__get__, desc, obj, type(obj))
    return got, lambda dy: (None if dy is None else get_pb(dy)[2], None, *nones)


def _forget(key, _ref, table=_CACHED):
    table.pop(key, None)


nondifferentiable(_getter, _descriptor, _missing, _forget)  # cached lookups: nesting runs them as they are


@adjoint(getattr)
def getattr_(obj, name, *default):
    attribute = ATTRIBUTES.get((type(obj), name)) or foreign_attribute(type(obj), name)
    custom = type(obj).__getattribute__
    if isinstance(custom, types.FunctionType) and attribute is None and not default:
        # a user class's __getattribute__ computes every read: differentiated (it ran unseen: a silently wrong gradient)
        seen, seen_pb = J(custom, obj, name)
        return seen, lambda dy: (None if dy is None else seen_pb(dy)[1], None)
    fget = _getter(type(obj), name) if attribute is None and not is_array_type(type(obj)) else None
    if fget is not None:  # a user class's property: differentiate its getter (own names: nesting transforms this rule)
        value, pb = J(fget, obj)
        return value, lambda dy: (None if dy is None else pb(dy)[1], None, *(None for _ in default))
    desc = _descriptor(type(obj), name) if attribute is None and not is_array_type(type(obj)) else None
    if desc is not None:
        hit = _through_descriptor(obj, name, desc, default)
        if hit is not None:
            return hit
    fallback = getattr(type(obj), "__getattr__", None)
    if isinstance(fallback, types.FunctionType) and attribute is None and _missing(obj, name):
        answer, answer_pb = J(fallback, obj, name)  # a user class's __getattr__ answers: differentiated
        return answer, lambda dy: (None if dy is None else answer_pb(dy)[1], None, *(None for _ in default))
    if name == "flat" and type(obj) is np.ndarray and obj.dtype.kind in "fc":
        # a flatiter: what is read through it (x.flat[i], list(x.flat)) would carry no gradient
        raise ZygoteError("zygotepy cannot differentiate reading through x.flat; use x.ravel() (or x.reshape(-1))")
    y = getattr(obj, name, _MISSING) if default else getattr(obj, name)
    if y is _MISSING:  # `getattr(obj, name, d)` without the attribute is d, which takes the cotangent (was None)
        return default[0], lambda dy: (None, None, dy)

    def back(dy):
        if dy is None or isinstance(obj, type) or type(obj).__name__ == "module":
            return (None, None, *(None for _ in default))
        if attribute is not None:
            return (attribute(obj, dy), None, *(None for _ in default))
        if not _missing(obj, "shape") and not _missing(obj, "dtype"):  # other array attributes (shape, dtype): none
            if differentiable(y):
                raise MissingAdjoint(getattr, f"the array attribute .{name} has no rule")
            return (None, None, *(None for _ in default))
        if getattr(y, "__self__", None) is obj:  # a bound method: its cotangent is its object's
            return (dy, None, *(None for _ in default))
        if name == "__dict__" and y is getattr(obj, "__dict__", None):  # its entries are obj's fields
            return (StructGrad(dy) if isinstance(dy, dict) else dy, None, *(None for _ in default))
        return (StructGrad({name: dy}), None, *(None for _ in default))
    return y, back


@adjoint(object.__getattribute__)
def object_getattribute(obj, name):
    """`object.__getattribute__(self, name)`, as a user's `__getattribute__` calls it: the ordinary lookup (a property
    or a descriptor there is differentiated as getattr does; anything else is the field `name` of obj)."""
    fget = _getter(type(obj), name)
    if fget is not None:
        value, pb = J(fget, obj)
        return value, lambda dy: (None if dy is None else pb(dy)[1], None)
    desc = _descriptor(type(obj), name)
    if desc is not None:
        hit = _through_descriptor(obj, name, desc, ())
        if hit is not None:
            return hit
    y = object.__getattribute__(obj, name)

    def back(dy):
        if dy is None:
            return (None, None)
        if getattr(y, "__self__", None) is obj:  # a bound method: its cotangent is its object's
            return (dy, None)
        return (StructGrad({name: dy}), None)
    return y, back


@adjoint(vars)
def vars_(*obj):
    """`vars(obj)` is `obj.__dict__` (`vars()` with no argument reads the caller's locals: not differentiated)."""
    if not obj:
        raise ZygoteError("zygotepy cannot differentiate vars() without an argument; use vars(obj)")
    y, back = getattr_(obj[0], "__dict__")
    return y, lambda dy: back(dy)[:1]


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


# A dict's cotangent is keyed by its keys, so it has no room for a key's own cotangent. A key read back out of the
# dict (iteration, keys(), items(), list(d), sorted(d)) can receive one, which must reach whatever computed the key.
# Keys are immutable values, so the key object itself says where it came from: the backs of those reads file each
# key's cotangent under the key object (and give the dict a cotangent, `{}` if nothing else, so that the backs of the
# stores that put the keys in run), and the back of the store that put that key object in (a display, `d[k] = v`,
# dict(pairs), setdefault) takes it and hands it to the key. Backward runs reads before the stores they read from, and
# a taken entry is gone, so each read's cotangent reaches the key once. A key of a dict given as an input is never
# taken: like its other keys, it has no gradient.
# (The filed cotangents are this thread's: `current().read_keys`, id(key) -> (key, cotangent), while an entry point
# runs: keys read back out of a dict, not yet taken.)


def keys_read(keys, grads):
    """The dict cotangent for reads of `keys` whose cotangents are `grads`, filing each key's for its store."""
    filed = False
    read_keys = current().read_keys
    for k, g in zip(keys, grads):
        if g is not None and differentiable(k):
            held = read_keys.get(id(k))
            read_keys[id(k)] = (k, g if held is None or held[0] is not k else rt.acc(held[1], g))
            filed = True
    return {} if filed else None


def key_cotangent(key):
    """The cotangent filed for the key object `key` by reads of it out of a dict (None if none), taken."""
    read_keys = current().read_keys
    held = read_keys.get(id(key))
    if held is None or held[0] is not key:
        return None
    del read_keys[id(key)]
    return held[1]


def has_read_keys(d):
    """Were keys of `d` read back out with a cotangent (so a merge or copy of `d` must give it `{}`, not None)?"""
    read_keys = current().read_keys
    return bool(read_keys) and any(read_keys.get(id(k), (None,))[0] is k for k in d)


nondifferentiable(keys_read, has_read_keys)


@adjoint(key_cotangent)
def _key_cotangent_nested(key):
    """An outer level of nesting differentiating a back that hands a key its cotangent: not followed yet (a back with
    no key cotangent to hand, the common case, passes)."""
    if key_cotangent(key) is None:
        return None, lambda dy: (None,)
    raise ZygoteError("nested differentiation through the gradient of a dict key is not supported; keep the value in "
                      "the dict's values (a list of (key, value) pairs), or make the key a constant (dropgrad)")


@adjoint(rt.dict_of)
def dict_of(*flat):
    def back(dy):
        if dy is None:
            return (None,) * len(flat)
        keys = flat[::2]
        last = {k: i for i, k in enumerate(keys)}  # `{"a": x, "a": y}` keeps y: x receives nothing
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # ... but the dict keeps the first key object
        return tuple(g for i, k in enumerate(keys)
                     for g in (key_cotangent(k) if first[k] == i else None, dy.get(k) if last[k] == i else None))
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
        return {} if has_read_keys(part) else None
    if type(part) is not dict:
        raise ZygoteError(f"zygotepy cannot differentiate `{{**m}}` of a {type(part).__name__}: its cotangent has no "
                          f"dict to go to; unpack dict(m) instead")
    return d


@adjoint(rt.unpack)
def unpack(value, n):
    def back(dy):
        return (like(value, list(dy)) if dy is not None else None, None)
    return rt.unpack(value, n), back


def _splat_back(stars, items, dy, sizes):
    """Cotangents of a display's items from the display's: a starred item gets its slice (`sizes`: how many items each
    gave), in its own container."""
    if dy is None:
        return (None,) * (1 + len(items))
    out, k = (None,), 0  # built by concatenation, not `append`: an outer level transforms this code (nesting.py)
    for star, item, n in zip(stars, items, sizes):
        if star:
            part = dy[k:k + n]
            out = out + (None if all(g is None for g in part) else like(item, list(part)),)
            k = k + n
        else:
            out = out + (dy[k],)
            k = k + 1
    return out


def _sizes(stars, items):
    """How many items each starred item of a display gives: an iterator (`*(v for v in xs)`) what it has left."""
    return tuple((len(item.items) - item.at if type(item) is Items else len(item)) if star else 1
                 for star, item in zip(stars, items))


def _walkable(stars, items):
    """The items, with a starred iterator other than `Items` (one no gradient flows through) made a list: its size."""
    return tuple(list(item) if star and type(item) is not Items and not hasattr(item, "__len__") else item
                 for star, item in zip(stars, items))


nondifferentiable(_sizes)


@adjoint(_walkable)
def _walkable_rule(stars, items):
    """The items it returns as they are pass their cotangents through: an outer level of nesting transforms `splat`'s
    rule below, and a `_walkable` run as a constant there dropped every starred item's gradient (a fifth derivative
    of x^5 by a loop gave 112, not 120)."""
    out = _walkable(stars, items)

    def back(dy):
        if dy is None:
            return (None, None)
        return (None, tuple(d if o is i else None for o, i, d in zip(out, items, dy)))
    return out, back


@adjoint(rt.splat)
def splat(stars, *items):
    items = _walkable(stars, items)
    sizes = _sizes(stars, items)
    return rt.splat(stars, *items), lambda dy: _splat_back(stars, items, dy, sizes)


@adjoint(rt.splat_list)
def splat_list(stars, *items):
    items = _walkable(stars, items)
    sizes = _sizes(stars, items)
    return rt.splat_list(stars, *items), lambda dy: _splat_back(stars, items, dy, sizes)


@adjoint(rt.unpack_starred)
def unpack_starred(value, before, after):
    parts = rt.unpack_starred(value, before, after)

    def back(dy):
        if dy is None:
            return (None, None, None)
        middle = dy[before] if dy[before] is not None else (None,) * len(parts[before])
        return (like(value, [*dy[:before], *middle, *dy[before + 1:]]), None, None)
    return parts, back


def python_iter(value):
    """The `__iter__` of a user class (Python code, differentiated), or for a class that is a sequence through its
    `__getitem__` alone (Python's old iteration protocol) `_by_index`; else None."""
    cls = type(value)
    if is_array_type(cls) or cls is Items:
        return None
    method = getattr(cls, "__iter__", None)
    if isinstance(method, types.FunctionType):
        return method
    if method is None and isinstance(getattr(cls, "__getitem__", None), types.FunctionType):
        return _by_index
    return None


def _by_index(value):
    """Python's iteration of an object by `obj[0], obj[1], ...` until IndexError, each item differentiated."""
    items, pbs, i = [], [], 0
    while True:
        try:
            item, pb = J(type(value).__getitem__, value, i)
        except IndexError:
            break
        items.append(item)
        pbs.append(pb)
        i += 1
    return items, pbs


@adjoint(rt.iterate)
def iterate(value):
    """What a `for` loop walks. A user class's `__iter__` is differentiated (the object's cotangent comes back through
    it); another library's array (`for row in t`, a torch tensor) gets its rows' cotangents stacked; an iterator's
    cotangent is the list of its items' (which `iter`'s rule maps back to its sequence)."""
    method = python_iter(value)
    if method is _by_index:
        items, pbs = _by_index(value)

        def indexed_back(dy):
            total = None
            for g, pb in zip(dy or (), pbs):
                if g is not None:
                    total = rt.acc(total, pb(g)[1])
            return (total,)
        return items, indexed_back
    if method is not None:
        it, pb = J(method, value)
        if it is value:  # its own iterator (was a RecursionError): its __next__ updates its state in place
            raise ZygoteError(f"zygotepy cannot differentiate iterating a {type(value).__name__}, which is its own "
                              f"iterator (__next__); give the class an __iter__ that returns iter(a list of its "
                              f"items)")
        items, inner = iterate(it)

        def back(dy):
            dit = None if dy is None else inner(dy)[0]
            return (None if dit is None else pb(dit)[1],)
        return items, back
    items = rt.iterate(value)
    if isinstance(value, dict):  # its keys: they carry no gradient back into the dict (was a crash: a list for it)
        return items, lambda dy: (None if dy is None else keys_read(items, dy),)
    if isinstance(value, (set, frozenset, Items)) or items is not value and hasattr(value, "shape"):
        # a set's cotangent is keyed by its elements; an array's rows are stacked
        return items, lambda dy: (like(value, list(dy)) if dy is not None else None,)
    return items, lambda dy: (dy,)


class Items:
    """What `iter(seq)` gives generated code: an iterator over a list of the items that knows how far it has got, so
    that `next(it)` and a later walk of what is left (a for loop, list(it), sum(it)) give their items' cotangents at the
    right positions. Its cotangent is a structural gradient whose `items` is a list of one cotangent per item, as for
    any object (an outer level of nesting differentiates this class like a user's). A plain class, not slots:
    `differentiable` looks into its items."""

    def __init__(self, items):
        self.items, self.at = items, 0

    def __iter__(self):
        return self

    def __next__(self):
        at = self.at
        if at == len(self.items):
            raise StopIteration
        self.at = at + 1
        return self.items[at]

    def __length_hint__(self):
        return len(self.items) - self.at


def make_items(items):
    """`Items(items)`, as a function with a rule: an outer level of nesting transforms `iter_` below, and the level
    above that has no twin for a class's constructor (a third derivative through a generator expression, which the
    lowering hands out as `iter(list)`, raised MissingAdjoint for Items)."""
    return Items(items)


@adjoint(make_items)
def _make_items_rule(items):
    return make_items(items), lambda dy: (_item_cotangents(dy),)


@adjoint(iter)
def iter_(*args):
    """`iter(seq)`: its iterator's cotangent is the list of its items' (see `iterate` and `next_`)."""
    if len(args) != 1:
        if any(differentiable(a) for a in args):
            raise ZygoteError("zygotepy cannot differentiate iter(callable, sentinel)")
        return iter(*args), lambda dy: (None,) * len(args)
    seq = args[0]
    method = python_iter(seq)
    if method is _by_index:
        items, back = iterate(seq)
        return make_items(items), lambda dy: back(_item_cotangents(dy))
    if method is not None:
        it, pb = J(method, seq)
        return it, lambda dy: (None if dy is None else pb(dy)[1],)
    items = list(seq)
    # (`_item_cotangents(dy)`, not `dy["items"]`: a third level of nesting has no twin for an operator on a StructGrad)
    if isinstance(seq, dict):  # its keys
        return make_items(items), lambda dy: (
            None if _item_cotangents(dy) is None else keys_read(items, _item_cotangents(dy)),)
    return make_items(items), lambda dy: (None if _item_cotangents(dy) is None else like(seq, _item_cotangents(dy)),)


def _item_cotangents(dy):
    """The list of item cotangents in an `Items` iterator's cotangent, or None."""
    return None if dy is None else dy.get("items")


@adjoint(next)
def next_(it, *default):
    """`next(it)`: on an iterator made by `iter` (`Items`), its item's cotangent goes to the item's position; an
    exhausted one returns `default`, which takes the cotangent."""
    if type(it) is list:
        raise ZygoteError("zygotepy makes the iterators of zip, map, filter, enumerate and reversed lists, so next() "
                          "cannot take their first item; index the list instead (list(zip(a, b))[0]), or call iter() "
                          "on it first")
    at = it.at if type(it) is Items else None
    y = next(it, *default)
    if at is None or it.at == at:
        if at is None and differentiable(y):
            raise ZygoteError(f"zygotepy cannot differentiate next() on a {type(it).__name__}: it cannot tell which "
                              f"item came out; iterate a list (iter(list(...))) or use a for loop")
        return y, lambda dy: (None, *(dy for _ in default))
    n = len(it.items)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in default))
        return (StructGrad({"items": [None] * at + [dy] + [None] * (n - at - 1)}), *(None for _ in default))
    return y, back


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
    if type(x) in CONCATENATORS:  # np.r_[a, b], np.c_[a, b]: a concatenation
        return concatenator_getitem(x, index)
    if not hasattr(x, "shape") and is_array_type(type(x)) and differentiable(index):
        # another library's index trick (`jnp.r_[x, 0.5]`): it computes with the key, which a lookup's rule would
        # give no cotangent
        raise MissingAdjoint(type(x), f"{type(x).__module__}.{type(x).__name__}[...] with a key that carries a "
                                      f"gradient (use the library's concatenate or stack)", where=call_site())
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
        zeros_on(xp, x.shape, _float_dtype(x) if not rt.is_complex_like(dy) else xp.complex128, x)  # on x's device
    if hasattr(g, "at") and not isinstance(g, np.ndarray):  # JAX arrays are immutable: a functional update
        return g.at[index].add(dy)
    if xp is not np and type(index) is tuple and any(i is None for i in index):
        index = tuple(i for i in index if i is not None)  # the array API assigns through no new axis: drop them
        dy = xp.reshape(dy, tuple(g[index].shape))
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
        if overwritten:  # the earlier value under `key` was replaced: it receives nothing (its key object stays)
            dy = {k: None if k == key else v for k, v in dy.items()}  # no `**` display: nesting transforms this
            return (dy, None, g)
        return (dy, key_cotangent(key), g)
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
        keys = keys_read([k for k, _ in pairs], [None if p is None else p[0] for p in dy])
        return ({k: p[1] for (k, _), p in zip(pairs, dy) if p is not None and p[1] is not None} or keys,)
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
    like any call's result, so an item updated in place through either is seen through the other (mutation/links.py)."""
    return lst.copy(), lambda dy: (None if dy is None else list(dy),)


@adjoint(copy.deepcopy)
def deepcopy(x, *memo):
    """`copy.deepcopy(x)` of lists, tuples and dicts of arrays and numbers: new objects all the way down, so the
    cotangent of the copy is the original's, entry by entry. (Objects may define their own `__deepcopy__`, which may
    copy something else: they raise.)"""
    if not _plain_tree(x):
        raise ZygoteError(f"copy.deepcopy of a {type(x).__name__} (or of a container holding one) is not "
                          f"differentiated: only lists, tuples and dicts of NumPy arrays and numbers are; build the "
                          f"copy explicitly (a new object from copies of its arrays)")
    return copy.deepcopy(x, *memo), lambda dy: (dy, *(None for _ in memo))


_PLAIN_LEAVES = frozenset((float, int, bool, complex, str, bytes, type(None), np.ndarray, np.float64, np.float32,
                           np.int64, np.complex128))


def _plain_tree(x):
    t = type(x)
    if t is list or t is tuple:
        return all(_plain_tree(v) for v in x)
    if t is dict:
        return all(type(k) in _PLAIN_LEAVES and _plain_tree(v) for k, v in x.items())
    return t in _PLAIN_LEAVES


@adjoint(dict.copy)
def dict_copy(d):
    """`d.copy()`: a new dict of the same values, linked to `d` by the caller as `list.copy` is."""
    return d.copy(), lambda dy: (None if dy is None else dict(dy),)  # `{}` when only keys were read: d's stores run


@adjoint(dict.keys)
def dict_keys(d):
    """`d.keys()`: its cotangent is the list of its keys' (iterating the view), which pass nothing back into `d`."""
    keys = list(d)
    return d.keys(), lambda dy: (None if dy is None else keys_read(keys, list(dy)),)

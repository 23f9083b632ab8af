"""Attribute reads: `getattr` (array attributes such as `.T`, user properties, descriptors and `cached_property`, a
user's `__getattribute__` and `__getattr__`), `object.__getattribute__`, `vars`, and the objects that are views of
others' fields: `super(C, self)`, `functools.partial`. An object's cotangent is a `StructGrad` of its fields."""
import functools
import types
import weakref

import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint.class_lookup import ABSENT, by_class
from ...ast_adjoint.dispatch import J, differentiable
from ...backends import is_array_type
from ...errors import MissingAdjoint, ZygoteError
from ...forward.dual import Dual, strip
from ...runtime.context import current
from ...structgrad import StructGrad
from ..foreign.array_methods import attribute as foreign_attribute
from ..jax_updates import index_updates
from ..registry import adjoint, keyword_rule, nondifferentiable


nondifferentiable(foreign_attribute)  # (higher orders differentiate getattr_ itself)


ATTRIBUTES = {}  # (type, attribute name) -> f(obj, dy) giving obj's cotangent: array attributes such as `.T`


def _how_read(cls, name, found):
    """How a user's code computes `obj.name` for instances of `cls`, whose lookup finds `found` on the class: `(fget,
    None)` for a property's Python getter (any callable: a function, a `partial`, a cached function, a callable object,
    `attrgetter`, which J dispatches as any call; a getter run natively would give its reads no gradient), `(None,
    desc)` for a class attribute whose type defines `__get__` in Python (`functools.cached_property`, a user's
    descriptor), or None."""
    if issubclass(cls, type):
        return None
    if type(found) is property:
        return None if found.fget is None else (found.fget, None)
    get = getattr(type(found), "__get__", None)
    if isinstance(get, types.FunctionType) and not isinstance(found, (property, staticmethod, classmethod)):
        return (None, found)
    return None


# (class, attribute name) -> the answer, derived again where the class changed (a property replaced, added, deleted)
_reading = by_class(_how_read)
_on_class = by_class(lambda cls, name, found: found is not ABSENT)  # does the class (or a base) define the name


def _missing(obj, name):
    """Does ordinary lookup (the instance's dictionary, its class) not find `name`, so `__getattr__` runs?"""
    return name not in getattr(obj, "__dict__", ()) and not _on_class(type(obj), name)


_MISSING = object()
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
                # cached where zygotepy did not see it computed (a read whose value went unused, a call before this
                # one): computed again for its pullback, which is the cached value's only where they agree
                again, again_pb = J(desc.func, obj)
                if not _same(again, own[name]):
                    raise _stale(obj, name)
                return own[name], lambda dy: (None if dy is None else again_pb(dy)[1], None, *nones)
            _check_unchanged(obj, name, hit[3])
            first_pb = hit[2]
            return own[name], lambda dy: (None if dy is None else first_pb(dy)[1], None, *nones)
        ctx, mark = current(), len(current().log)
        value, pb = J(desc.func, obj)
        own[name] = value
        try:
            fields = (ctx, mark, {k: v for k, v in own.items() if k != name})
            _CACHED[key] = (weakref.ref(obj, functools.partial(_forget, key)), value, pb, fields)
        except TypeError:  # (an object without weak references: a later read is a field of it, as before)
            pass
        return value, lambda dy: (None if dy is None else pb(dy)[1], None, *nones)
    cls = type(desc)
    if name in own and not (hasattr(cls, "__set__") or hasattr(cls, "__delete__")):
        return None  # a non-data descriptor shadowed by the instance's own attribute
    got, get_pb = J(cls.__get__, desc, obj, type(obj))
    return got, lambda dy: (None if dy is None else get_pb(dy)[2], None, *nones)


def _check_unchanged(obj, name, fields):
    """A cached_property read again gives the value computed from the fields the object had then, whose gradient goes
    to the object through the first read's pullback: refused where a field was rebound or updated in place since
    (its gradient would reach the new values, not those the value was computed from)."""
    ctx, mark, before = fields
    now = {k: v for k, v in vars(obj).items() if k != name}
    changed = now.keys() != before.keys() or any(now[k] is not v for k, v in before.items()) or \
        ctx is current() and mt.updated_since(mark, [obj, *now.values()])
    if changed:
        raise _stale(obj, name)


def _stale(obj, name):
    return ZygoteError(f"zygotepy cannot differentiate reading the cached_property {type(obj).__name__}.{name} after "
                       f"the object changed: its cached value was computed from the fields it had before; read it "
                       f"before the change, or make it a property")


def _same(a, b):
    try:
        return a is b or type(a) is type(b) and bool(np.array_equal(a, b))
    except Exception:  # noqa: BLE001 - values that do not compare: not known to agree
        return False


def _forget(key, _ref, table=_CACHED):
    table.pop(key, None)


nondifferentiable(_reading, _on_class, _missing, _forget)  # cached lookups: nesting runs them as they are


@adjoint(getattr)
def getattr_(obj, name, *default):
    if name == "__class__" and type(obj) is Dual:  # (hessian's reverse pass on dual numbers: the value's class)
        return type(strip(obj)), lambda dy: (None, None, *(None for _ in default))
    if name == "at" and (updates := index_updates(obj)) is not None:  # JAX's `x.at[index].set(v)` (jax_updates.py)
        return updates, lambda dy: (None if dy is None else dy.get("array"), None, *(None for _ in default))
    attribute = ATTRIBUTES.get((type(obj), name)) or foreign_attribute(type(obj), name)
    if attribute is None and not is_array_type(type(obj)) and _computes(obj, name, default):
        # (the user's code that computes the attribute)
        computed = _computed_or_default(obj, name, default) if default else _computed(obj, name, default)
        if computed is not None:
            return computed
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
        if getattr(y, "__self__", None) is obj:  # a bound method: its cotangent is its object's (an array's too:
            return (dy, None, *(None for _ in default))  # `s = x.sum; s()` gave None)
        if not _missing(obj, "shape") and not _missing(obj, "dtype"):  # other array attributes (shape, dtype): none
            if differentiable(y) and name != "data":  # (torch's `x.data`: the tensor detached, as `x.detach()`)
                raise MissingAdjoint(getattr, f"the array attribute .{name} has no rule")
            return (None, None, *(None for _ in default))
        if name == "__dict__" and y is getattr(obj, "__dict__", None):  # its entries are obj's fields
            return (StructGrad(dy) if isinstance(dy, dict) else dy, None, *(None for _ in default))
        return (StructGrad({name: dy}), None, *(None for _ in default))
    return y, back


def _through_super(view, name, default):
    """`super().name` where the class after `super`'s in the method resolution order has a property or a Python
    descriptor (`functools.cached_property`) there: computed for the instance, as Python does, and differentiated as
    getattr does for the instance itself; a `super` object's cotangent is its instance's (`super_`). None otherwise
    (a method: bound to the instance, read plainly)."""
    mro = view.__self_class__.__mro__
    for cls in mro[mro.index(view.__thisclass__) + 1:]:
        if name in cls.__dict__:
            found = cls.__dict__[name]
            break
    else:
        return None
    nones = tuple(None for _ in default)
    if type(found) is property and found.fget is not None:
        value, pb = J(found.fget, view.__self__)
        return value, lambda dy: (None if dy is None else pb(dy)[1], None, *nones)
    get = getattr(type(found), "__get__", None)
    if isinstance(get, types.FunctionType) and not isinstance(found, (property, staticmethod, classmethod)):
        return _through_descriptor(view.__self__, name, found, default)
    return None


def _computes(obj, name, default):
    """Does a user's code compute `obj.name` (what `_computed` differentiates)? Asked first, so that an outer level
    transforming this rule meets `_computed_or_default`'s `try` only where such code may raise (`getattr(g, "shape",
    None)` of a number, in a rule's back, goes straight on)."""
    cls = type(obj)
    return isinstance(cls.__getattribute__, types.FunctionType) and not default or cls is super \
        or _reading(cls, name) is not None \
        or isinstance(obj, StructGrad) and name in obj \
        or isinstance(getattr(cls, "__getattr__", None), types.FunctionType) and _missing(obj, name)


nondifferentiable(_computes)


def _computed_or_default(obj, name, default):
    """`_computed`, or the default where that code raises AttributeError, as Python's getattr answers it then (its
    own function: the `try` is code an outer level transforms only where a default is given)."""
    try:
        return _computed(obj, name, default)
    except AttributeError:
        return default[0], lambda dy: (None, None, dy)


def _computed(obj, name, default):
    """`obj.name` where a user's code computes it (a class's `__getattribute__`, a property's getter, a Python
    descriptor, `__getattr__`, reached through `super()` too), differentiated: `(value, back)`, or None where the
    attribute is a plain one."""
    nones = tuple(None for _ in default)
    custom = type(obj).__getattribute__
    if isinstance(custom, types.FunctionType) and not default:
        # a user class's __getattribute__ computes every read: differentiated (it ran unseen: a silently wrong gradient)
        seen, seen_pb = J(custom, obj, name)
        return seen, lambda dy: (None if dy is None else seen_pb(dy)[1], None)
    if type(obj) is super:
        through = _through_super(obj, name, default)
        if through is not None:
            return through
    fget, desc = _reading(type(obj), name) or (None, None)
    if fget is not None:  # a user class's property: differentiate its getter (own names: nesting transforms this rule)
        value, pb = J(fget, obj)
        return value, lambda dy: (None if dy is None else pb(dy)[1], None, *nones)
    if desc is not None:
        hit = _through_descriptor(obj, name, desc, default)
        if hit is not None:
            return hit
    if isinstance(obj, StructGrad) and name in obj:  # a gradient's field read as `g.W`: `g["W"]`
        return obj[name], lambda dy: (None if dy is None else StructGrad({name: dy}), None, *nones)
    fallback = getattr(type(obj), "__getattr__", None)
    if isinstance(fallback, types.FunctionType) and _missing(obj, name):
        answer, answer_pb = J(fallback, obj, name)  # a user class's __getattr__ answers: differentiated
        return answer, lambda dy: (None if dy is None else answer_pb(dy)[1], None, *nones)
    return None


@adjoint(object.__getattribute__)
def object_getattribute(obj, name):
    """`object.__getattribute__(self, name)`, as a user's `__getattribute__` calls it: the ordinary lookup (a property
    or a descriptor there is differentiated as getattr does; anything else is the field `name` of obj)."""
    fget, desc = _reading(type(obj), name) or (None, None)
    if fget is not None:
        value, pb = J(fget, obj)
        return value, lambda dy: (None if dy is None else pb(dy)[1], None)
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


@adjoint(super)
def super_(cls, obj):
    """`super(C, self)` is a view of `self`: its cotangent is `self`'s."""
    return super(cls, obj), lambda dy: (None, dy)


@keyword_rule
@adjoint(functools.partial)
def partial(func, *args, **kwargs):
    """The cotangent of a partial is `StructGrad(func=..., args=(...), keywords={...})` (see dispatch.PartialPullback);
    its keywords' go back to the keyword arguments they were given by."""
    y = functools.partial(func, *args, **kwargs)
    merged = y.func is not func  # (Python merges a partial given as the function: `partial(partial(f, a), b)`)

    def back(dy):
        dy = dy or {}
        bound = dy.get("args") or (None,) * len(y.args)
        given = dy.get("keywords") or {}
        dfunc = dy.get("func")
        if merged:  # the inner partial's share: its arguments come first, its keywords unless a later one replaced them
            inner = len(y.args) - len(args)
            held = {k: given.get(k) for k in func.keywords if k not in kwargs}
            parts = {"func": dfunc, "args": tuple(bound[:inner]), "keywords": held}
            dfunc = StructGrad(parts) if dfunc is not None or any(g is not None for g in bound[:inner]) \
                or any(g is not None for g in held.values()) else None
            bound = bound[inner:]
        return (dfunc, *bound, *(({k: given.get(k) for k in kwargs},) if kwargs else ()))
    return y, back

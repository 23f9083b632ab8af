"""Rules for objects: constructors of namedtuples, dataclasses, `types.SimpleNamespace` and `dict(...)`.

These classes have no Python source zygotepy could read (their `__new__`/`__init__` are generated with `exec`), so their
constructors get structural rules: the cotangent of the new object is a `StructGrad` of its fields (a dict for `dict`),
and each field's entry goes back to the argument that set it, positional or keyword.
"""
import collections
import dataclasses
import inspect
import types

import numpy as np

from ..ast_adjoint.call_checks import _claim, call_site
from ..ast_adjoint.dispatch import J_mutating
from ..errors import ZygoteError
from ..runtime.context import current
from ..structgrad import StructGrad
from .registry import adjoint, class_rule, code_rule, keyword_cotangents, keyword_rule, nondifferentiable
from .structures.common import like
from .structures.dicts import key_cotangent


def fields_of(obj):
    """The cotangent-relevant fields of an object: a namedtuple's `_fields`, else its instance dictionary."""
    fields = getattr(type(obj), "_fields", None)
    if fields is not None and isinstance(obj, tuple):
        return dict(zip(fields, obj, strict=True))
    return vars(obj)


def as_fields(template, dy):
    """A cotangent given for the object `template` as a field dict: a namedtuple's tuple cotangent, or an object of
    the template's type used as its own cotangent, become `StructGrad`s."""
    if dy is None or isinstance(dy, dict):
        return dy
    fields = getattr(type(template), "_fields", None)
    if fields is not None and isinstance(dy, tuple):
        return StructGrad(zip(fields, dy, strict=True))
    if hasattr(dy, "__dict__"):
        return StructGrad(vars(dy))
    if isinstance(dy, (int, float, complex, np.ndarray, np.generic)) and hasattr(template, "__dict__") \
            and not hasattr(template, "shape") and not isinstance(template, (int, float, complex)):
        # a library function (np.sum, math.sin, float) converted the object through __array__/__float__, unseen
        kind = type(template).__name__
        raise ZygoteError(f"an object of class {kind} reached a NumPy or builtin function that converted it to a number or "
                          f"array (through __array__, __float__, ...), which zygotepy does not differentiate; pass "
                          f"the converted value itself (np.asarray(obj.w), obj.to_array()), or give the function an "
                          f"@adjoint rule for {kind} arguments")
    return dy


def constructor_pullback(template, names, keywords):
    """The pullback of `cls(*args, **kwargs)` whose positional argument k set field `names[k]` and keyword `k` set field
    `k`. (A closure, not an object of a class: an outer level differentiating the rules below, nested reverse mode,
    transforms a closure; a class's constructor would update the new object in place.)"""
    def constructor_back(dy):
        fields = as_fields(template, dy) or {}
        out = (None, *[fields.get(n) for n in names])
        return out + ({k: fields.get(k) for k in keywords},) if keywords is not None else out
    return constructor_back


def _is_namedtuple(cls):
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


@class_rule(_is_namedtuple)
def namedtuple_new(cls, args, kwargs):
    y = cls(*args, **(kwargs or {}))
    return y, constructor_pullback(y, cls._fields[:len(args)], kwargs)


# every namedtuple class has its own `_replace` function, all made from this one code object
_REPLACE = collections.namedtuple("_Probe", "a")._replace.__code__


@keyword_rule
@code_rule(_REPLACE)
def namedtuple_replace(self, **kwds):
    """`p._replace(y=v)`, of any namedtuple class (issue case 9: its source maps `kwds.pop` over the fields, a bound
    mutating method passed as a value, which has no rule): the new tuple's fields come from `self` or, where named,
    from the keywords. The cotangent of each field goes to the one it came from."""
    y = self._replace(**kwds)

    def back(dy):
        fields = as_fields(y, dy) or {}
        kept = {f: fields.get(f) for f in type(self)._fields if f not in kwds and fields.get(f) is not None}
        dself = StructGrad(kept) if kept else None
        return (dself, {k: fields.get(k) for k in kwds}) if kwds else (dself,)
    return y, back


def _is_generated_dataclass(cls):
    return dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__") \
        and getattr(cls.__init__, "__code__", None) is not None and cls.__init__.__code__.co_filename == "<string>"


nondifferentiable(dataclasses.fields)  # (class metadata; the rules below call it, and an outer level runs them too)


@class_rule(_is_generated_dataclass)
def dataclass_new(cls, args, kwargs):
    y = cls(*args, **(kwargs or {}))
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    return y, constructor_pullback(y, names[:len(args)], kwargs)


@keyword_rule
@adjoint(dataclasses.asdict)
def asdict_(obj, **kwargs):
    """`dataclasses.asdict(obj)`: the fields as a dict, recursively (dataclasses, lists, tuples and dicts inside
    converted, other values copied); its cotangent goes back field by field. Its source was differentiated, and an
    empty list in a field was taken for an argument updated in place. (`dict_factory=`: a constant.)"""
    y = dataclasses.asdict(obj, **kwargs)
    return y, lambda dy: keyword_cotangents((_fields_back(obj, dy, "dict"),), kwargs)


@keyword_rule
@adjoint(dataclasses.astuple)
def astuple_(obj, **kwargs):
    """`dataclasses.astuple(obj)`: as `asdict`, the fields in a tuple."""
    y = dataclasses.astuple(obj, **kwargs)
    return y, lambda dy: keyword_cotangents((_fields_back(obj, dy, "tuple"),), kwargs)


def _fields_back(obj, dy, kind):
    """The cotangent of `obj` from that of its conversion by asdict (`kind` "dict") or astuple ("tuple")."""
    if dy is None:
        return None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in dataclasses.fields(obj)]
        parts = dy.items() if kind == "dict" else zip(names, dy)
        fields = {k: _fields_back(getattr(obj, k), d, kind) for k, d in parts}
        return StructGrad({k: d for k, d in fields.items() if d is not None}) or None
    if isinstance(obj, (list, tuple)):
        return type(dy)(_fields_back(v, d, kind) for v, d in zip(obj, dy)) if not hasattr(obj, "_fields") else \
            type(obj)(*(_fields_back(v, d, kind) for v, d in zip(obj, dy)))
    if isinstance(obj, dict):
        return {k: _fields_back(obj[k], d, kind) for k, d in dy.items()}
    return dy


@class_rule(lambda cls: cls is types.SimpleNamespace)
def namespace_new(cls, args, kwargs):
    y = cls(*args, **(kwargs or {}))
    return y, constructor_pullback(y, (), kwargs)


def _key_cotangent(key):
    """structures.dicts.key_cotangent, imported when called (structures imports this module's neighbours); a function
    of its own, so that an outer level differentiating `dict_new`'s back (nested reverse mode) meets no import there."""
    return key_cotangent(key)


nondifferentiable(_key_cotangent)


@class_rule(lambda cls: cls is dict or cls is collections.OrderedDict)
def dict_new(cls, args, kwargs):
    # an iterable of pairs is taken once, before `dict` takes it: a generator expression or `iter(...)` (`Items`)
    # gives its pairs once, and its cotangent is its pairs' in its own structure (`like`)
    pairs = [a if isinstance(a, dict) or hasattr(a, "keys") else list(a) for a in args]
    y = cls(*pairs, **(kwargs or {}))

    def back(dy):
        if dy is None:
            return (None, *(None for _ in args)) + (({k: None for k in kwargs},) if kwargs is not None else ())
        # a mapping or an iterable of pairs; a later source of a key wins (a later pair, a keyword), so it alone
        # takes the cotangent
        later = set(kwargs or ())
        dargs = [{k: None if k in later else dy.get(k) for k in a} if isinstance(a, dict) else
                 like(a, _pair_cotangents(p, dy, later)) for a, p in zip(args, pairs)]
        return (None, *dargs) + (({k: dy.get(k) for k in kwargs},) if kwargs is not None else ())
    return y, back


def _pair_cotangents(pairs, dy, later):
    """`dict(pairs, **kw)`'s cotangents of the (key, value) pairs: a key's value only at its last pair, none where a
    keyword sets it."""
    last = {k: i for i, (k, _) in enumerate(pairs)}
    return [(_key_cotangent(k), dy.get(k) if last[k] == i and k not in later else None)
            for i, (k, _) in enumerate(pairs)]


def _is_dataclass_with_post_init(cls):
    return dataclasses.is_dataclass(cls) and isinstance(getattr(cls, "__post_init__", None), types.FunctionType) \
        and getattr(cls.__init__, "__code__", None) is not None and cls.__init__.__code__.co_filename == "<string>"


@class_rule(_is_dataclass_with_post_init)
def dataclass_post_init_new(cls, args, kwargs):
    """The generated `__init__` sets the fields (structurally, as `dataclass_new`), then the derived `__post_init__`
    updates the object in place, given the `InitVar` pseudo-fields' values (they are its parameters after `self`)."""
    fields = dataclasses.fields(cls)
    bound = inspect.signature(cls).bind(*args, **(kwargs or {}))
    given = set(bound.arguments)
    bound.apply_defaults()  # (a field with a default factory shows a placeholder as its default: made below)
    obj = object.__new__(cls)
    for f in fields:
        if f.init and (f.name in given or f.default_factory is dataclasses.MISSING):
            object.__setattr__(obj, f.name, bound.arguments[f.name])
        elif f.default is not dataclasses.MISSING:
            object.__setattr__(obj, f.name, f.default)
        elif f.default_factory is not dataclasses.MISSING:
            object.__setattr__(obj, f.name, f.default_factory())
    extra = list(inspect.signature(cls.__post_init__).parameters)[1:]
    mark = len(current().log)
    _, pb, consumed = J_mutating(cls.__post_init__, (obj, *(bound.arguments[n] for n in extra)), None)
    logged = set(current().log[mark:])
    if logged and any(not logged.isdisjoint(_parts(a)) for a in (*args, *(kwargs or {}).values()) if a is not obj):
        raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate making a {cls.__name__}: its "
                          f"__post_init__ updates in place an object the call was given (`self.parent.children."
                          f"append(self)`), which the caller's later reads would see without its gradient; make that "
                          f"update in a function called after making the object")
    names = list(inspect.signature(cls).parameters)[:len(args)]

    def back(dy):
        dy, dextra = as_fields(obj, dy), {}
        if id(obj) in consumed:
            grads = pb(None, {id(obj): dy} if dy is not None else {})
            dy, dextra = as_fields(obj, grads[1]), dict(zip(extra, grads[2:]))
        fields_of = (lambda k: None) if dy is None else dy.get

        def get(k):
            return dextra.get(k) if k in extra else fields_of(k)
        out = (None, *(get(n) for n in names))
        return out + ({k: get(k) for k in kwargs},) if kwargs is not None else out
    return obj, back


def _parts(obj):
    """The ids of `obj` and of what its fields, items or values are (two levels deep): the objects an update made
    through it would log."""
    ids, work = set(), [(obj, 2)]
    while work:
        x, depth = work.pop()
        if id(x) in ids or isinstance(x, (int, float, complex, str, bytes, type(None), np.ndarray)):
            continue
        ids.add(id(x))
        inner = vars(x).values() if hasattr(x, "__dict__") and not isinstance(x, type) else \
            x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple)) else ()
        if depth:
            work += [(v, depth - 1) for v in inner]
    return ids


def _is_plain_class(cls):
    """A class whose instances `object.__new__` makes and a Python `__init__` sets up."""
    init = getattr(cls, "__init__", None)
    return cls.__new__ is object.__new__ and isinstance(init, types.FunctionType) \
        and getattr(init.__code__, "co_filename", "<string>") != "<string>"


@class_rule(_is_plain_class)
def plain_new(cls, args, kwargs):
    """`cls(*args)`: a fresh object, then the derived `__init__`, which updates it in place; the new object's
    cotangent is that of `self` after `__init__` (dispatch.J_mutating)."""
    obj = object.__new__(cls)
    mark = len(current().log)
    _, pb, consumed = J_mutating(cls.__init__, (obj, *args), kwargs)
    passed = _hand_on_updates(cls, consumed - {id(obj)}, mark, args, kwargs)

    def back(dy):
        finals = {**current().finals[-1]} if passed else {}  # (the caller's cotangents of what __init__ updated)
        if dy is not None:
            finals[id(obj)] = as_fields(obj, dy)
        grads = pb(None, finals)
        return (None, *grads[2:])
    return obj, back


def _hand_on_updates(cls, claimed, mark, args, kwargs):
    """The arguments besides the new object that `__init__` returned as (maybe) updated in place
    (`parent.children.append(self)`, `log.append(v)`), claimed for the call site of `cls(...)`, which takes them back
    (its back hands their cotangents after the call on); refused where it does not and one was updated (the log since
    `mark` names it): its later reads would get no gradient."""
    if not claimed:
        return False
    slot = _claim((*args, *(kwargs or {}).values()))
    if slot is None:
        if claimed.isdisjoint(current().log[mark:]):
            return False
        raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate making a {cls.__name__} here: "
                          f"its __init__ updates an argument in place, and this call site does not take the updated "
                          f"object back (the object is passed through *args or **kwargs, or the class is reached "
                          f"through a name); make the object in a statement of its own (`node = {cls.__name__}(...)`)")
    slot.claimed |= claimed
    return True


def _made_by_metaclass(cls):
    """A class whose metaclass defines `__call__` in Python, which (not `__init__` alone) makes its instances."""
    return isinstance(getattr(type(cls), "__call__", None), types.FunctionType)


@class_rule(_made_by_metaclass)  # (registered last: tried before the rules above)
def metaclass_new(cls, args, kwargs):
    """Refused where a gradient flows in: the rules above would run `__init__` alone and skip the metaclass's
    `__call__` (its value and gradient were wrong)."""
    raise ZygoteError(f"zygotepy cannot differentiate making a {cls.__name__}: its metaclass "
                      f"{type(cls).__name__} defines __call__, which makes the object another way than its "
                      f"__init__ does; make the object with a function or a classmethod instead")

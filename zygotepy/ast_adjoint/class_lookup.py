"""What Python's attribute lookup finds on a class, kept per (class, name) and taken again where the class changed.

The rules ask, on every attribute read and method call, whether the object's class computes the attribute (a
property's getter, a Python descriptor, a Python method). A class can change between two calls: a property replaced
(`Q.v = property(...)`, `mock.patch.object`), added where a constant or the instance's own field answered, deleted (the
instance's dictionary answers again), or a subclass given its own. An answer kept from before would run the old getter,
or read a field where a getter now computes: a silently wrong gradient.

So each answer is kept with the dictionaries along the class's method resolution order (live views of the classes'
namespaces) and the object the lookup found; a later call asks them for the name again, which finds the first class
that defines it, as Python's lookup of an instance attribute does, without running any user code (`getattr(cls, name)`
would run a descriptor's `__get__`). On an unchanged class that is one or two dictionary lookups.
"""

ABSENT = object()  # no class along the MRO defines the name


def namespaces(cls):
    """The namespaces along `cls`'s MRO: read through `type`'s own `__dict__` (a metaclass may define another)."""
    return tuple(_TYPE_DICT(k) for k in cls.__mro__)


_TYPE_DICT = type.__dict__["__dict__"].__get__


def static_lookup(cls, name):
    """The object Python's lookup finds for `obj.name` on `type(obj) is cls` before asking the instance (what
    `inspect.getattr_static(cls, name)` gives, without its cost), or ABSENT."""
    for space in namespaces(cls):
        if name in space:
            return space[name]
    return ABSENT


def by_class(derive):
    """A function `(cls, name) -> derive(cls, name, found)`, with `found` what `static_lookup(cls, name)` gives, kept
    per class and name and derived again where the class now finds another object for the name (or its MRO changed).
    Each entry keeps the namespace that answered (object's where none did), the ones before it (which must still not
    define the name), and the MRO; a class whose MRO holds only immutable types (ndarray, NumPy's scalars, builtins:
    no attribute of theirs can be set) is not asked again."""
    table = {}

    def lookup(cls, name):
        entry = table.get((cls, name))
        if entry is not None:
            mro, before, space, found, answer = entry
            if mro is None:
                return answer
            if cls.__mro__ is mro and space.get(name, ABSENT) is found:
                for other in before:
                    if name in other:
                        break
                else:
                    return answer
        mro = cls.__mro__
        spaces = namespaces(cls)
        at = next((i for i, space in enumerate(spaces) if name in space), len(spaces) - 1)
        found = spaces[at].get(name, ABSENT)
        answer = derive(cls, name, found)
        fixed = all(k.__flags__ & _IMMUTABLE for k in mro)
        table[(cls, name)] = (None if fixed else mro, spaces[:at], spaces[at], found, answer)
        return answer
    lookup.__qualname__ = f"by_class({getattr(derive, '__qualname__', derive)})"
    return lookup


_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: setting or deleting an attribute of the type raises TypeError

"""Snapshots of what an update in place could change (an array's bytes, a torch tensor's version counter, a
container's items, an object's fields), to tell after a call whether it updated its arguments. `checkpoint` and the
function a `try` body becomes (ast_adjoint/lower/tries.py) must not; both ask after the call, rather than guess from
the code, because the update may come from any callee."""
import collections

import numpy as np

from ..errors import ZygoteError


def state(x, seen=None):
    """What an update in place of `x` would change; None for what cannot change."""
    seen = set() if seen is None else seen
    if type(x) is np.ndarray:
        return x.tobytes() if x.dtype != object else list(x.flat)
    version = getattr(x, "_version", None)  # (torch counts the updates in place of a tensor)
    if isinstance(version, int):
        return version
    if id(x) in seen or isinstance(x, (str, bytes, int, float, complex, type(None))):
        return None
    seen.add(id(x))
    if isinstance(x, (list, tuple, collections.deque)):
        return [(v, state(v, seen)) for v in x]
    if isinstance(x, dict):
        return [(k, v, state(v, seen)) for k, v in x.items()]
    if isinstance(x, (set, frozenset)):
        return set(x)
    fields = getattr(x, "__dict__", None)
    if type(fields) is dict and not callable(x) and not isinstance(x, type):
        return [(k, v, state(v, seen)) for k, v in fields.items()]
    return None


def same(a, b):
    """Are two snapshots equal (the items and fields they hold compared by identity)?"""
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(
            len(p) == len(q) and all(u is v for u, v in zip(p[:-1], q[:-1])) and same(p[-1], q[-1])
            if type(p) is tuple else p is q for p, q in zip(a, b))
    return a == b


def first_updated(args, before):
    """The position of the first of `args` whose snapshot is not `before`'s any more, or None."""
    for k, (arg, snapshot) in enumerate(zip(args, before)):
        if not same(state(arg), snapshot):
            return k
    return None


def updating(run, objects):
    """`(run(), k)`: the position of the first of `objects` that `run` updated in place, or None."""
    before = [state(a) for a in objects]
    result = run()
    return result, first_updated(objects, before)


def fields(obj):
    """The fields of an object as they are now (the objects themselves, not copies), {} for one without a `__dict__`."""
    own = getattr(obj, "__dict__", None)
    return dict(own) if type(own) is dict else {}


def same_fields(obj, before):
    """Does `obj` hold the same fields, the same objects, as `fields(obj)` gave `before`?"""
    now = fields(obj)
    return now.keys() == before.keys() and all(now[k] is v for k, v in before.items())


def sealed(values):
    """A fingerprint of each NumPy array among `values` (a pullback's arguments and its output), taken when `pullback`
    returns: its `back` reads them (x for `x ** 3`, y for `np.exp`), so an update in place before `back` runs (an
    optimiser's `x -= lr * g`, `y /= y.sum()`) would give the gradient at other values: `refuse_unsealed` says so."""
    return [(k, v, hash(v.tobytes())) for k, v in enumerate(values) if type(v) is np.ndarray and v.dtype != object]


def refuse_unsealed(seal, n):
    """A ZygoteError where an array `sealed` saw (a pullback's `n` arguments, then its output) was updated in place
    since."""
    k = next((k for k, v, print_ in seal if hash(v.tobytes()) != print_), None)
    if k is not None:
        raise ZygoteError(f"{'the output' if k == n else f'argument {k}'} of pullback was updated in place before its "
                          f"back ran, which reads it: call back first, or update a copy")

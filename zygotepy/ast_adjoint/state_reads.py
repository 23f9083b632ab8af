"""A helper run as written (no gradient flows through its call) may read a module global that the differentiated call
updated in place before (`lst = get_registry(); lst.append(v); ... get_registry()[-1]`): its reads would get no
gradient. Such a call is checked: the globals its code reads, directly or through the module functions it calls, are
looked up in the per-call log of updates, as `mutate.global_read` does for a global read by name."""
import collections
import types

import numpy as np

from ..errors import ZygoteError
from ..forward.transform import as_written
from ..runtime.context import current
from .call_checks import library

_STATE = (list, dict, set, collections.deque, bytearray, np.ndarray)
_READS = {}  # id of a code object -> (the code object, ((module globals, name), ...) of the module state it reads)


def reads_state(fn):
    """`((module globals, name), ...)`: the module globals holding containers, arrays or plain objects that `fn`'s code
    reads, or that the module functions it calls read (found once per code object, kept by identity: equal code
    objects of two modules read two modules' globals)."""
    code = fn.__code__
    hit = _READS.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    _READS[id(code)] = (code, ())  # (a function calling itself)
    found, seen = [], set()
    for scope, name in _reads(fn):
        if (id(scope), name) not in seen:
            seen.add((id(scope), name))
            found.append((scope, name))
    _READS[id(code)] = (code, tuple(found))
    return _READS[id(code)][1]


def _reads(fn):
    scope = fn.__globals__
    for name in _names(fn.__code__):
        value = scope.get(name)
        if isinstance(value, _STATE) or hasattr(value, "__dict__") and not callable(value) \
                and not isinstance(value, types.ModuleType) and type(value).__module__ != "builtins":
            yield scope, name  # (looked up again at each call: the global may be bound anew)
        elif type(value) is types.FunctionType and not library(value):
            yield from reads_state(value)


def _names(code):
    yield from code.co_names
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _names(c)


def as_written_reading(where, fn, /, *args, **kwargs):
    """`fn(*args, **kwargs)` as written, refused if a global it reads was updated in place in this differentiated
    call. `where` is (file, line) of the call."""
    ctx = current()
    if ctx.depth and (ctx.global_updates or ctx.log):
        for scope, name in reads_state(fn):
            key = id(scope.get(name))
            if key in ctx.global_updates or key in ctx.log:
                file, line = where
                raise ZygoteError(
                    f"{file}:{line}: zygotepy cannot differentiate calling {fn.__qualname__}, which reads the global "
                    f"'{name}' after it was updated in place in the same differentiated call (its reads would get no "
                    f"gradient); pass it as an argument or use a local container")
    return as_written(fn, *args, **kwargs)

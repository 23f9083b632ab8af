"""The passes of `f` a derivative makes (`Passes`: one per input entry in forward mode and `hessian`, one per `push`),
and the dual numbers a pass left in state outside `f`'s arguments: an object or a container `f` captures (`s.m = 0.5
* s.m + 0.5 * x` on an object of its closure, `history.append(v)`), its defaults, the object of a bound method or a
callable object, a partial's arguments, a module global its code names.

Each pass starts from the arguments as given, but such state carries the last pass's values, perturbation included:
the next pass would start from it (a wrong derivative, found by a probe of nested differentiation). So before a
second pass the state is looked at, the dual numbers found there are made the values they carry (the state as one
call of `f` leaves it), and the derivative is refused. After the last pass (`done`) the same making-plain leaves the
user's state free of dual numbers.
"""
import copy
import types

import numpy as np

from ..errors import ZygoteError
from ..runtime.randomness import put_back, random_sources, states
from .dual import Dual, new_tag
from .levels import settle

_LIMIT = 10_000  # objects looked at, at most (a global holding a large structure is not walked whole)
_SKIP = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, np.ndarray, str,
         bytes, int, float, complex, bool, type(None))


def _plain(v, since):
    while type(v) is Dual and v.tag > since:
        v = v.primal
    return v


def _escaped(v, since):
    return type(v) is Dual and v.tag > since


def made_plain(f, since, args=()):
    """Replace the dual numbers of tags after `since` (this derivative's: an outer level's are its own) found in the
    state `f` reaches outside its arguments (and in what the arguments `args` hold) by their values; the path of the
    first found (`"s.m"`), or None."""
    roots, found = [(f"argument {k}", a) for k, a in enumerate(args)], []  # (an object argument's fields too)
    fn = f
    while True:  # (a partial's function, a bound method's, a callable object's `__call__`)
        if isinstance(fn, types.MethodType):
            roots.append((f"{fn.__func__.__name__}.__self__", fn.__self__))
            fn = fn.__func__
        elif hasattr(fn, "func") and hasattr(fn, "args") and hasattr(fn, "keywords"):
            roots += [("partial argument", list(fn.args)), ("partial keyword", dict(fn.keywords or {}))]
            fn = fn.func
        else:
            break
    if not isinstance(fn, types.FunctionType):
        roots.append((type(fn).__name__, fn))
        fn = getattr(type(fn), "__call__", None)
    if isinstance(fn, types.FunctionType):
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # (an empty cell)
                continue
            if _escaped(value, since):
                cell.cell_contents = _plain(value, since)
                found.append(name)
            roots.append((name, value))
        roots += [("a default", list(fn.__defaults__ or ())), ("a default", dict(fn.__kwdefaults__ or {}))]
        roots += [(name, fn.__globals__[name]) for name in fn.__code__.co_names if name in fn.__globals__]
    seen = set()
    for name, value in roots:
        _walk(value, name, seen, found, 0, since)
    return found[0] if found else None


def _walk(x, path, seen, found, depth, since):
    if isinstance(x, _SKIP) or id(x) in seen or len(seen) > _LIMIT or depth > 6:
        return
    seen.add(id(x))
    if isinstance(x, (list, dict)):
        items, spell = (enumerate(x) if isinstance(x, list) else list(x.items())), "{}[{!r}]"
    elif isinstance(x, (tuple, set, frozenset)) or callable(x):
        return  # (immutable, or a function: what it holds is not `f`'s state to clean)
    else:
        fields = getattr(x, "__dict__", None)
        if type(fields) is not dict:
            return
        x, items, spell = fields, list(fields.items()), "{}.{}"
    for key, v in items:
        if _escaped(v, since):
            x[key] = _plain(v, since)
            found.append(spell.format(path, key))
        else:
            _walk(v, spell.format(path, key), seen, found, depth + 1, since)


def refuse_escaped(f, since):
    """Before another pass of `f`: refused where the last left dual numbers in state outside its arguments."""
    where = made_plain(f, since)
    if where is not None:
        raise ZygoteError(f"{getattr(f, '__qualname__', f)} keeps a value computed from its arguments in state "
                          f"outside them ({where}): this derivative runs it once per input direction, and each run "
                          f"would start from what the last one left there; pass that state as an argument, or take "
                          f"the derivative in reverse mode (jacobian(mode='reverse'), a gradient of a gradient)")


class Passes:
    """The arguments of each of the passes of `f` a derivative makes (one per input entry in forward mode and
    `hessian`, one per `push`): the first pass gets the user's own objects, so that an argument `f` updates in place
    ends as one call of `f` leaves it (as with `gradient`); each later pass gets a copy of them as they were before
    the first, so that no pass starts from an input another pass updated (a wrong derivative). Arguments that
    `copy.deepcopy` cannot copy are handed to every pass as they are."""
    __slots__ = ("args", "saved", "started", "settled", "f", "since", "randoms", "shared")

    def __init__(self, args, f=None):
        self.args, self.started, self.settled = args, False, False
        self.shared = shared_arrays(args)  # (refused in `done` where `f` updated one of them)
        self.f, self.since = f, new_tag()  # (`f`: its state outside the arguments is looked at between passes)
        # (and the generators it may draw from put back before each pass after the first: each draws the same numbers)
        self.randoms = states(random_sources(f, args)) if f is not None else ()
        try:
            self.saved = copy.deepcopy(args) if any(not isinstance(a, (int, float, complex)) for a in args) else None
        except Exception:  # (a lock, a generator, a module: nothing a derivative could have updated either)
            self.saved = None

    def next(self):
        if self.started and self.f is not None:
            refuse_escaped(self.f, self.since)
            put_back(self.randoms)
        if not self.started or self.saved is None:
            self.started = True
            return self.args
        return copy.deepcopy(self.saved)

    def settle(self, used):
        """After the first pass: the user's list and dict arguments, which it saw as copies holding dual numbers
        (`used`), made as `f` left them (`levels.settle`)."""
        if not self.settled:
            self.settled = True
            for a, u in zip(self.args, used):
                settle(a, u)

    def again(self):
        """The arguments for another way of computing the same derivative, after some passes ran."""
        self.started = True
        return self.next()

    def done(self):
        """After the last pass: dual numbers it left in state outside the arguments made the values they carry; an
        update of an argument sharing another's memory refused (`refuse_shared_updates`)."""
        if self.f is not None:
            made_plain(self.f, self.since, self.args)
        refuse_shared_updates(self.f, self.args, self.shared)


def shared_arrays(args):
    """{position: copy} of the array arguments that share memory with an earlier one (the same array given twice, a
    view of another), or None."""
    found = {k: a.copy() for k, a in enumerate(args) if type(a) is np.ndarray and any(
        type(b) is np.ndarray and np.may_share_memory(a, b) for b in args[:k])}
    return found or None


def refuse_shared_updates(f, args, copies):
    """Refuse where `f` updated in place an array argument that shares memory with another (`copies`: `shared_arrays`
    before the call): forward mode perturbs each argument on its own, so the update through one reached the other's
    value but not its derivative (a wrong tangent, silently)."""
    for k, before in (copies or {}).items():
        if not np.array_equal(args[k], before, equal_nan=True):
            raise ZygoteError(f"{getattr(f, '__qualname__', f)} updated in place an array given as argument {k} while "
                              f"another argument shares its memory (the same array, or a view of it), which forward "
                              f"mode perturbs as separate inputs; pass a copy of one of them")

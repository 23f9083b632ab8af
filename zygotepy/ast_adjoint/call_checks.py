"""What J (ast_adjoint/dispatch.py) checks about the call it dispatches, and where it was made: the cells of a nested
function, updates in place of its arguments, arguments sharing memory, keys that may carry a gradient into C code,
updates no call site can follow (an operator in place called as a function, a bound method that updates its object,
`out=` through a wrapper); `call_site`, the user's line that made the call (through the compiler's `user_line`,
injected into `COMPILER`); `library`, whether a function is zygotepy's, NumPy's or the standard library's code.
"""
import collections.abc
import dis
import numbers
import operator
import os
import sys
import sysconfig
import types

import numpy as np

from ..adjoints import registry
from ..backends import is_array_type
from ..errors import MissingAdjoint, UnsupportedSyntax, ZygoteError, where
from ..runtime.context import current
from .guards_runtime import differentiable
from . import mutate
from .runtime import ITSELF


class COMPILER:
    """The compiler's entry points J needs, given by ast_adjoint/compile.py when it is imported (the runtime sits below
    the compiler and does not import it): `derive(fn, need)` -> (forward, backward) of a Python function,
    `user_line(filename, line)` -> the user's (file, line, function) of a line of generated code, or None, and
    `reads_after` (lower/scan.py `reads_alias_after_update`), `updates_state` (lower/scan.py)."""
    derive = None
    user_line = None
    reads_after = None  # (fn, updated, other) -> may fn read its parameter `other` after updating `updated`?
    updates_state = None  # (fn) -> may fn's own code update something in place, or rebind a global?


def call_site():
    """`file:line` of the user's code that made the call being dispatched (its innermost generated frame: see
    compile.user_line; a notebook cell named as such, errors.where), or "" when none is running (an entry point's own
    function). Read only to word an error."""
    hit = call_site_parts()
    return "" if hit is None else where(*hit)


def call_site_parts():
    """`(file, line)` of `call_site`, or None."""
    user_line = COMPILER.user_line
    frame = sys._getframe(2)
    while frame is not None:
        hit = user_line(frame.f_code.co_filename, frame.f_lineno)
        if hit is not None and not hit[0].startswith(_PACKAGE):  # (a rule's code an outer level transformed: go on)
            return hit[0], hit[1]
        frame = frame.f_back
    return None


def at_call(error):
    """`error`, marked as a refusal of this call (not of the callee's code, which a call statement into code zygotepy
    cannot read would then run plainly: mutation/calls.py `_derived_call`)."""
    error.at_call = True
    return error


def check_cells(fn):
    """A nested function generated code made (runtime.make_closure) is differentiated as it was made: the cotangents
    of what it reads from its cells go to the values they held then. Called after one of those names was assigned
    anew (`f0 = ...` after `g = lambda u: u * f0`), it would read the new value and its gradient would go to the old
    one: refused, naming the call. So is a call after an object it captures was updated in place through another
    name (`row = M[0]` captured, then `M[0] = v`): the journal's log (`runtime.make_closure` notes its length) tells.
    (Made and called before the assignment or the update, or never called after it, is fine.) Its default values
    too: their cotangents go to the values they were taken from (`lambda t, ws=ws: ...`, then `ws[0] = v`)."""
    made = fn.__dict__.get("__zygote_made__")
    if made is None and "__zygote_defaults__" not in fn.__dict__:
        if fn.__closure__ is not None:
            _check_closure_reads(fn)
        return
    log = current().log
    mark = fn.__zygote_mark__ if fn.__zygote_mark__ <= len(log) else 0  # (a later call's log starts again)
    changed = set(log[mark:]) if len(log) > mark else ()
    code = fn.__code__
    defaults = fn.__defaults__ or ()
    for name, value in zip(code.co_varnames[code.co_argcount - len(defaults):code.co_argcount], defaults):
        if changed and not isinstance(value, mutate.ATOMIC) and (
                id(value) in changed or id(mutate.base_of(value)) in changed):
            raise at_call(UnsupportedSyntax(
                f"a call of the nested function {fn.__qualname__} after its default value of '{name}' was updated in "
                f"place (the function reads the new value; zygotepy gives the gradient to the value it had when the "
                f"function was made)", *(call_site_parts() or (code.co_filename, code.co_firstlineno)),
                hint="update a copy, or make the function again after the update"))
    for name, cell, value in zip(code.co_freevars, fn.__closure__ or (), made or ()):
        try:  # (data then and now, a loop's counter, has no gradient to misroute)
            now = cell.cell_contents
            same = now is value or (now is fn if value is ITSELF else not differentiable((value, now)))
        except ValueError:  # (emptied by `del`)
            same = False
        updated = same and changed and not isinstance(value, mutate.ATOMIC) and (
            id(value) in changed or id(mutate.base_of(value)) in changed) and differentiable(value)  # (not data)
        if not same or updated:
            site = call_site_parts() or (fn.__code__.co_filename, fn.__code__.co_firstlineno)
            what = "was updated in place" if updated else "was assigned a new value"
            raise at_call(UnsupportedSyntax(
                f"a call of the nested function {fn.__qualname__} after '{name}', which it captures, {what} (the "
                f"function reads the new value; zygotepy gives the gradient to the value captured when the function "
                f"was made)", *site,
                hint=f"bind the value the function should read as a default (`lambda ..., {name}={name}: ...`), give "
                     f"the new value its own name, or make the function again after the assignment" if not updated
                else "update a copy, or make the function again after the update"))
    fn.__zygote_mark__ = len(log)  # (nothing it captures has changed so far)


def _check_closure_reads(fn):
    """A closure Python made (a factory's: no generated code noted what its cells held, and their cotangents go
    nowhere) that reads an object it captures, holding values that carry gradients, after that object was updated in
    place since its last call in this gradient (by that call: `store.append(v); return sum(store)`, a memo, a running
    total; or elsewhere): the values it reads would carry no gradient back to the update. Refused, naming the call.
    A closure that only updates what it captures (`calls.append(x)`, a log) is fine."""
    log = current().log
    last = fn.__dict__.get("__zygote_last_call__")
    fn.__zygote_last_call__ = (log, len(log))
    if last is None or last[0] is not log or last[1] >= len(log):
        return
    changed = set(log[last[1]:])
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
        try:
            value = cell.cell_contents
        except ValueError:  # (an empty cell)
            continue
        if id(value) in changed and not isinstance(value, mutate.ATOMIC) and differentiable(value) \
                and name in _names_read(fn.__code__):
            raise at_call(UnsupportedSyntax(
                f"a call of the nested function {fn.__qualname__} after '{name}', which it captures and reads, was "
                f"updated in place (by an earlier call of it, or elsewhere: the values it reads would carry no "
                f"gradient back to the update)",
                *(call_site_parts() or (fn.__code__.co_filename, fn.__code__.co_firstlineno)),
                hint=f"pass '{name}' to the function as an argument, or return the new value instead"))


def _names_read(code):
    """The captured names `code` reads other than to update them (`n[0] + v`, `sum(store)`, `memo[k]`; not the
    object of `store.append(v)` or the target of `n[0] = ...`), from its bytecode: a load of the name followed by
    anything but a method lookup of an updating method or a store into it."""
    hit = _READS.get(code)
    if hit is None:
        ops = list(dis.get_instructions(code))
        hit = set()
        for k, ins in enumerate(ops):
            if ins.opname != "LOAD_DEREF":
                continue
            nxt = ops[k + 1] if k + 1 < len(ops) else None
            if nxt is not None and nxt.opname in ("LOAD_METHOD", "LOAD_ATTR") and nxt.argval in _UPDATING_METHODS:
                continue
            if _stored_into(ops, k):
                continue
            hit.add(ins.argval)
        _READS[code] = hit
    return hit


def _stored_into(ops, k):
    """Is the value the instruction `k` loads the container of a store (`n[0] = ...`: LOAD_DEREF n, LOAD_CONST 0,
    STORE_SUBSCR, with only constants or fast locals between)?"""
    for ins in ops[k + 1:k + 4]:
        if ins.opname in ("STORE_SUBSCR", "STORE_ATTR"):
            return True
        if ins.opname not in ("LOAD_CONST", "LOAD_FAST"):
            return False
    return False


_READS = {}  # code -> the captured names it reads
_UPDATING_METHODS = frozenset(("append", "extend", "insert", "add", "update", "setdefault", "clear", "discard",
                               "__setitem__"))


def captured_unchanged(obj, name, file, line, root=None, through=None):
    """A call that may update `obj` in place, which a nested function captures as `name`, returned: fine where it
    left it as it was (a number; an object it did not update; reached from an argument `root` the call left as it
    was, a number too), refused otherwise (the closure would see the new version, which its own derived code cannot
    follow). `through`: the name the update was made through, where it is another."""
    if mutate.may_have_changed(obj) and (root is None or mutate.may_have_changed(root)):
        raise UnsupportedSyntax(captured_update(name, through), file, line)


def captured_object_updated(obj, name, fn_name, file, line):
    """A function updated in place an object it captures as `name`, which now holds values carrying gradients. Where
    a function being differentiated further up the stack holds that object too (a factory's closure appending to a
    list its caller made: `push = make_push(acc); push(x); sum(acc)`), the caller's later reads of it would carry no
    gradient back to the update (the closure's derived code cannot hand the object's new version to that caller):
    refused, naming the update. An object only the user's plain code holds (a log filled for printing) is fine."""
    if isinstance(obj, mutate.ATOMIC) or not differentiable(obj) or not mutate.updated_within(obj):
        return  # (a call that may have updated it did not: `lambda t: f(t, w)` where `f` updates a local)
    frame = sys._getframe(2)  # (above the closure's own derived forward)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<zygotepy:") and code.co_name.endswith("_forward") \
                and any(v is obj for v in frame.f_locals.values()):
            caller = code.co_filename[len("<zygotepy: "):].rpartition(" at ")[0]
            raise UnsupportedSyntax(
                f"updating '{name}' in place in {fn_name}, which captures it, while {caller} (being differentiated) "
                f"holds the same object: its reads of it would get no gradient from this update",
                file, line, hint=f"pass '{name}' to {fn_name} as an argument (an update of an argument is followed), "
                                 f"or return the new value")
        frame = frame.f_back


def captured_update(name, through=None):
    """The refusal of an update in place of what a nested function captures as `name`, made through `through`."""
    if through in (None, name, "_t"):
        return f"updating '{name}' in place, which a nested function captures"
    return f"updating '{through}' in place, which a nested function captures as '{name}'"


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # zygotepy/
_LIBRARIES = (_PACKAGE, os.path.dirname(np.__file__) + os.sep, sysconfig.get_paths()["stdlib"])


def own_code(filename):
    """Is `filename` one of zygotepy's own modules (a rule's code an outer level of nesting transforms)?"""
    return filename.startswith(_PACKAGE)


def library(fn):
    """Is `fn` (a function, or its file's name) zygotepy's, NumPy's or the standard library's own code (decided by its
    file, not its `__module__`, which doctests and exec'd code borrow)?"""
    return (fn if type(fn) is str else fn.__code__.co_filename).startswith(_LIBRARIES)


def installed(fn):
    """Is `fn` an installed package's own Python (SciPy's), beside NumPy's and the standard library's?"""
    return fn.__code__.co_filename.startswith(_INSTALLED)


_INSTALLED = tuple({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})


# --- functions that update their arguments in place (see lower/mutation.py and adjoints/mutation/) ----------------

class _Slot:
    """What a call site that may update its arguments (`mutate.mutcall`) lets its callee update: the objects' ids, and
    which of them the derived callee did update (it then takes their cotangents after the call); and `made`, the ids of
    all the arguments it was given, by which the call it made is told from the calls that one makes in turn."""
    __slots__ = ("allowed", "made", "owner", "claimed")

    def __init__(self, allowed, made=None):
        self.allowed, self.made, self.owner, self.claimed = allowed, allowed if made is None else made, False, set()


def site_slot(args, kwargs, updates, keywords_taken, taken):
    """The slot of a call site that may update its arguments (`dispatch.J_mutating`): it takes back the keyword
    arguments only where `keywords_taken`, the positional ones the first `taken` (None: all)."""
    if not updates:
        return _Slot(set())
    given = (*(args if taken is None else args[:taken]), *(kwargs.values() if kwargs and keywords_taken else ()))
    allowed = {id(a.__self__ if type(a) is super else a) for a in given}
    return _Slot(allowed, None if taken is None else {id(a) for a in (*args, *(kwargs or {}).values())})


def _claim(args):
    """The slot of the innermost mutating call site, if this call is the one it made (its arguments are those)."""
    slots = current().slots
    if not slots:
        return None
    slot = slots[-1]
    if slot.owner or not all(id(a) in slot.made or type(a) in (int, float, bool, str, complex, type(None))
                             for a in args):
        return None
    slot.owner = True
    return slot


def _check_updates(fn, mutated, finals, slot, updated, surely=None):
    """A derived function updated the argument objects `updated` in place. Fine where it returns their final versions
    (`finals`, for the parameters `mutated`) to a call site that takes them (`slot`); an error otherwise. `surely`:
    the finals of those it did update, where it only maybe updated some (a parameter it gave a method: `d.update(kw)`,
    whose `**kw` no call site can take back): the others need not be taken."""
    taken = set()
    if finals and slot is not None and all(id(o) in slot.allowed or mutate.is_number(o)
                                           for o in (finals if surely is None else surely)):
        # (a number or None is no object updated in place: `out=None` where the branch writing into `out` did not run)
        # a number is never updated in place (and equal numbers may be one object): the caller keeps its cotangent
        taken = {id(o) for o in finals if not mutate.is_number(o) and id(o) in slot.allowed}
        slot.claimed.update(taken)
    if all(id(o) in taken for o in updated):
        return
    code = fn.__code__
    if finals and len(finals) == len(mutated):  # (not a number one may hold: `u[0] = left` links `left` to `u`)
        mutated = [k for k, o in zip(mutated, finals) if not mutate.is_number(o)] or mutated
    names = ("s " if len(mutated) > 1 else " ") + ", ".join(repr(code.co_varnames[k]) for k in mutated) \
        if mutated else " (one of them)"
    how = ("the call site does not take the updated object back (the call's result is used, the argument goes "
           "through *args or **kwargs, or the callee is reached through a name)" if mutated else
           "it updates it in a way zygotepy does not follow into the caller (an augmented assignment x += ..., an "
           "update through another object that holds it, or a call through a name or *args that updates it: a "
           "decorator's wrapper `fn(*args)`)")
    if mutated and 0 in mutated and code.co_varnames[0] == "self" and fn.__name__.startswith("__i") and \
            fn.__name__.endswith("__"):  # a user class's `v += u` that updates `self`
        hint = (f"Write it as `v = v {IN_PLACE_DUNDERS.get(fn.__name__, '+')} u` with an operator that returns a "
                f"new object, or update through a method called on the object (`v.add(u)`, on a line of its own).")
    elif mutated and 0 in mutated and code.co_varnames[0] == "self":  # `upd = a.update; upd(v)`, `model(x)`
        hint = (f"Call the method on its object (`obj.{fn.__name__}(...)`" if fn.__name__ != "__call__" else
                "Give the update a method of its own and call it on the object (`obj.step(...)`") + \
            ", on a line of its own), or return the updated value instead."
    else:
        hint = (f"Call it as a statement (`{fn.__name__}(...)` on a line of its own) with item updates "
                f"(x[...] = ...), or return the updated value instead.")
    raise ZygoteError(
        f"{code.co_filename}:{code.co_firstlineno}: {fn.__qualname__} updates its argument{names} in place, and "
        f"{how}, so zygotepy cannot route the gradient of the updated object. {hint}")


def _check_shared_memory(fn, mutated, finals, args, keywords=()):
    """A function that updated a parameter in place, given the same object as another argument (`h(x, x)`), or an
    array sharing its memory (`h(x, x[1:])`, or on torch `h(x, x[4])`, a view): the callee's code treats its parameters
    as separate objects, so the gradient of the other argument would miss the update (silently wrong). Refused."""
    code = fn.__code__
    for k, final in zip(mutated, finals):
        if mutate.is_number(final):
            continue
        # `h(x, x)`: one object, two parameters; fine where the other is read only before the update (`buf=x`)
        twice = sum(a is final for a in args) > 1 and _read_after(fn, code.co_varnames[k], final, args, keywords)
        if twice or any(final is a for a in args) and mutate.shared_memory(final, args):
            where = call_site()
            shares = "is that same object" if twice else "shares that array's memory (a view of it, or its base)"
            raise ZygoteError(
                f"{where + ': ' if where else ''}{fn.__qualname__} (at {code.co_filename}:{code.co_firstlineno}) "
                f"writes into its parameter {code.co_varnames[k]!r} while another of its arguments {shares}, which "
                f"zygotepy does not follow inside the function. Pass a copy of one of them (`x.copy()`), or do the "
                f"update in the caller.")


def _read_after(fn, updated, final, args, keywords):
    """May `fn` read one of its other parameters given the object `final` after updating its parameter `updated`?"""
    code = fn.__code__
    names = [code.co_varnames[i] if i < code.co_argcount else None for i in range(len(args) - len(keywords))]
    names += list(keywords)  # (each argument's parameter: None for one of *args)
    return any(name is None or COMPILER.reads_after(fn, updated, name)
               for name, a in zip(names, args) if a is final and name != updated)


def check_views(fn, mutated, finals, args):
    """A function that updated a dict parameter in place, given another argument that is or holds a view of it
    (`h(d, d.values())`, `h(d, [d.items()])`): the callee's code treats its parameters as separate objects, so its
    reads of the view after the update would see the dict as it was (silently wrong). Refused."""
    views = current().dict_views
    for k, final in zip(mutated, finals):
        noted = views.get(id(final)) if type(final) is dict else None
        if noted and noted[0] is final and any(stale_view(final, *noted[1][id(v)])
                                               for v in _passed(noted[1], args)):
            code = fn.__code__
            where = call_site()
            name = code.co_varnames[k]
            raise ZygoteError(
                f"{where + ': ' if where else ''}{fn.__qualname__} (at {code.co_filename}:{code.co_firstlineno}) "
                f"updates its parameter {name!r} in place while another of its arguments holds a view of that dict "
                f"(`.values()` or `.items()`), which zygotepy does not follow inside the function. Call "
                f"`{name}.values()` inside the function, after the update, or pass `list({name}.values())`.")


def stale_view(mapping, view, method):
    """Does the list `view`, made by the rule of `mapping.values()` or `mapping.items()`, no longer show `mapping`
    (which Python's live view would)?"""
    if len(view) != len(mapping):
        return True
    if method == "values":
        return any(a is not b for a, b in zip(view, mapping.values()))
    return any(a[0] is not k or a[1] is not v for a, (k, v) in zip(view, mapping.items()))


def _passed(views, args):
    """Those of `views` (id -> view) that are `args` or their items or values."""
    for a in args:
        for v in a if type(a) in (list, tuple) else a.values() if type(a) is dict else ():
            if id(v) in views:
                yield v
        if id(a) in views:
            yield a


_DATA_KEYS = frozenset((int, bool, slice, str, type(None), type(Ellipsis)))


_LOOKUPS = (list, tuple, dict, str, bytes, range, types.MappingProxyType, collections.abc.Mapping)


def _check_opaque_key(x, key, method):
    """`x[key]` where `x`'s `__getitem__` is C code with no rule, and the key may carry a gradient (floats, an array of
    floats): the getitem rule's cotangents are a lookup's (an entry of a sequence, mapping or array gets `dy`; the key
    none), right for a container but silently wrong for an object that computes with the key (a C-implemented
    interpolating table), so such a call raises MissingAdjoint. int, bool and slice keys are data (`_DATA_KEYS`)."""
    if isinstance(x, _LOOKUPS) or hasattr(x, "shape") or is_array_type(type(x)) or not differentiable(key):
        return
    if method is not None and (registry.find_rule(method) is not None or registry.is_nondifferentiable(method)):
        return
    x[key]  # a key the object refuses gets Python's own error (`array indices must be integers`), not this one
    raise MissingAdjoint(method if method is not None else type(x), f"indexing a {type(x).__name__} with a key that "
                         f"may carry a gradient", where=call_site())


# --- updates a call site cannot follow: refused, naming the call ---------------------------------------------------

# Python's operators in place, by their methods' names, and as the operator module's functions
IN_PLACE_DUNDERS = {"__iadd__": "+", "__isub__": "-", "__imul__": "*", "__itruediv__": "/", "__ifloordiv__": "//",
                    "__imod__": "%", "__ipow__": "**", "__imatmul__": "@", "__iand__": "&", "__ior__": "|",
                    "__ixor__": "^", "__ilshift__": "<<", "__irshift__": ">>"}
IN_PLACE_CALLS = frozenset(getattr(operator, name.strip("_")) for name in IN_PLACE_DUNDERS)


def refuse_hidden_out(fn):
    """`fn(..., out=y)` reached through code zygotepy did not lower (a partial's call, a function without source): the
    update of `y` would go unseen by the caller's bookkeeping."""
    where = call_site()
    raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate "
                      f"{getattr(fn, '__name__', fn)}(..., out=...) called through another object (a "
                      f"functools.partial, a wrapper): pass out= at the call in your own code, or store the result "
                      f"(y[...] = ...)")


def refuse_bound_update(fn):
    """`f = y.fill; f(v)`, `map(out.append, xs)`: a method that updates its object, called through the bound method
    (kept in a name, or given to another function), where the lowering cannot give the object its new version (its
    update went unseen: a silently wrong gradient, or a crash)."""
    where = call_site()
    unbound = getattr(fn, "__objclass__", None)  # (`map(list.reverse, rows)`: the method taken from its class)
    raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate "
                      f"{(unbound or type(fn.__self__)).__name__}.{fn.__name__} called through a "
                      f"{'' if unbound else 'bound '}method kept in a name or given to another function: it "
                      f"updates its object in place, which the caller cannot follow; call it on its object "
                      f"(`obj.{fn.__name__}(...)`), or loop over the items (`for v in xs: out.append(v)`)")


def refuse_store_callable(fn):
    """A store taken as a value (`map(setattr, objs, names, values)`, `any(map(ys.__setitem__, idx, vs))`): its
    update of the object would go unseen (a gradient of None), so it is refused, naming the call."""
    where = call_site()
    name = f"operator.{fn.__name__}" if fn is operator.setitem or fn is operator.delitem else fn.__qualname__
    raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate {name} called as a "
                      f"value (given to another function, or kept in a name): the store it makes updates its object "
                      f"in place, which the caller cannot follow; write the store in the function (a loop of "
                      f"`obj.name = v`, `d[k] = v`, or `setattr(obj, name, v)` called directly)")


def refuse_unseen_update(fn, first):
    """An operator in place called as a value (`f = operator.iadd; z = f(y, v)`, or through a module kept in a name):
    the lowering follows the update of `y` that `y += v` makes, never this one (a silently wrong gradient)."""
    if not isinstance(first, (numbers.Number, str, bytes, tuple, frozenset)):
        where = call_site()
        raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate operator.{fn.__name__} "
                          f"called as a function on a {type(first).__name__}, which it updates in place; write the "
                          f"augmented assignment (x += y) instead")

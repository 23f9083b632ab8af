"""Syntax scans for lower(): which code may update objects in place (an item or attribute store, `del`, a call
statement, a mutating method call, `x += v`), without entering nested functions, and which methods surely update
nothing. The loops, the control flow and the calls ask them before lowering a body (see mutation.py).
"""
import builtins
import functools
import inspect
import itertools
import types

import gast
import numpy as np

from ...adjoints.in_place import in_place_by_name, updating_function_names, updating_names
from ..source import get_source


def updating_method_name(name):
    """May a call `obj.name(...)` update `obj` in place? Yes for a name the mutation rules declared for some type
    (adjoints/in_place.py): the object's type is not known here; and for one named as torch's methods that update
    their tensor are (`y.exp_()`), which without a rule must be refused wherever it is called, not run unseen."""
    return name in updating_names() or in_place_by_name(name)


def pure_method(name):
    """Is `name` a method of the built-in and NumPy types that updates nothing? Any other method called for its value
    may be a user method that updates its object or arguments (`a = sim.decay()`), so such a call goes through
    mutcall."""
    return name in _OWN_METHODS and name not in updating_names()


_OWN_TYPES = (np.ndarray, np.generic, list, tuple, dict, set, frozenset, str, bytes, int, float, complex, range)
# (less the array methods that update their object as their arguments say, which no rule declares)
_OWN_METHODS = frozenset(name for t in _OWN_TYPES for name in dir(t) if callable(getattr(t, name))
                         and (not name.startswith("_") or name in ("__call__", "__getitem__", "__len__"))) \
    - {"setfield", "setflags", "byteswap"}


# the builtins that call what they are given: a callable of the user's that updates in place may be among it
CALLING_BACK = frozenset((map, filter, sorted, min, max, functools.reduce, itertools.starmap, itertools.accumulate,
                          itertools.filterfalse, itertools.takewhile, itertools.dropwhile, itertools.groupby))

# the stores written as calls (`operator.setitem(d, k, v)`, `setattr(o, k, v)`), which the lowering writes as the
# stores they are
_STORE_FUNCTIONS = frozenset(("setitem", "delitem", "__setitem__", "__delitem__", "setattr", "delattr", "__setattr__",
                              "__delattr__"))

def mutation_syntax(stmts, nodes=None):
    """Does this code (not entering nested functions) contain an item/attribute store, `del`, a call statement or a
    mutating method call, any of which may give objects new versions? `nodes`: the code's nodes (`nodes_no_defs`),
    when the caller has listed them already."""
    return any(map(_may_mutate, nodes if nodes is not None else nodes_no_defs(stmts)))


_UPDATES_IN_PLACE = {}  # code object -> may the function's own code update an object in place?
_LIBRARY_PACKAGES = frozenset(("builtins", "numpy", "collections", "functools", "itertools", "typing", "dataclasses",
                               "torch", "jax", "jaxlib", "scipy", "cupy", "zygotepy"))  # (their classes: not the user's)


def may_update_in_place(fn):
    """Could a call of the Python function `fn` update its arguments in place (its code stores items or attributes,
    calls a mutating method, or makes a call statement, which may)? False for code zygotepy cannot read, whose call
    is reported where it runs. Cached per code object."""
    code = fn.__code__
    hit = _UPDATES_IN_PLACE.get(code)
    if hit is None:
        _UPDATES_IN_PLACE[code] = False  # (while its calls are looked at: a `__call__` calling a local name)
        try:
            body = get_source(fn).node.body
            body = body if isinstance(body, list) else [gast.Return(value=body)]  # (a lambda's: its expression)
            nodes = nodes_no_defs(body)
            hit = mutation_syntax(body, nodes) or bool(augmented_names(body, nodes)) or _calls_updating_object(
                fn, nodes) or _calls_method_of_parameter(fn, nodes) or _calls_updating_function(fn, nodes)
        except Exception:  # noqa: BLE001 - no source, or not Python the parser reads: not ours to report here
            hit = False
        _UPDATES_IN_PLACE[code] = hit
    return hit


def constructor_updates(cls):
    """May `cls(...)` update an argument besides the new object: does its Python `__init__` store into, or call an
    updating method of, a parameter other than `self` (`parent.children.append(self)`), or hand its arguments to a
    base class's `__init__` that may? Such a call, used as a value, then goes through `valuecall`, which takes the
    updated arguments back. Cached per class."""
    hit = _CONSTRUCTORS.get(cls)
    if hit is None:
        _CONSTRUCTORS[cls] = False  # (while its bases are looked at)
        init = inspect.getattr_static(cls, "__init__", None)
        try:
            node = get_source(init).node if type(init) is types.FunctionType else None
        except Exception:  # noqa: BLE001 - no source: the constructor's rule reports an update where it runs
            node = None
        params = {a.id for a in (*node.args.args[1:], *node.args.kwonlyargs)} if node is not None else set()
        hit = node is not None and (bool(updated_in_place(node, params)) or _through_own_attribute(node, params) or any(
            isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "super"
            for n in gast.walk(node)) and any(constructor_updates(base) for base in cls.__mro__[1:-1]))
        _CONSTRUCTORS[cls] = hit
    return hit


_CONSTRUCTORS = {}  # class -> constructor_updates(class)


def _through_own_attribute(node, params):
    """Does the method `node` update an object through an attribute of its first parameter that it set to another
    parameter (`self.parent = parent`, then `self.parent.children.append(self)`), which updates that argument?"""
    if not node.args.args:
        return False
    me = node.args.args[0].id
    held = {t.attr for n in gast.walk(node) if isinstance(n, gast.Assign) and isinstance(n.value, gast.Name)
            and n.value.id in params for t in n.targets
            if isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name) and t.value.id == me}
    for n in gast.walk(node) if held else ():
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store, gast.Del)):
            target = n.value
        elif isinstance(n, gast.Call):
            target = _call_target(n, ())
        else:
            target = n.target if isinstance(n, gast.AugAssign) else None
        inner = None
        while isinstance(target, (gast.Subscript, gast.Attribute)):
            target, inner = target.value, target
        if isinstance(target, gast.Name) and target.id == me and isinstance(inner, gast.Attribute) and inner.attr in held:
            return True
    return False


def _calls_updating_object(fn, nodes):
    """Does `fn` call one of its parameters or locals (`cell(x)`), or an attribute no class of its module has as a
    method (`self.cell(x)`), while a class of its module has a `__call__` that may update its object (an RNN cell
    keeping its state)? That call may update the object `fn` was given."""
    names = set(fn.__code__.co_varnames)
    classes = [v for v in list(fn.__globals__.values()) if isinstance(v, type)
               and v.__module__.partition(".")[0] not in _LIBRARY_PACKAGES]  # (`optimizations`, imported: no user's)
    if not any(isinstance(n, gast.Call) and (isinstance(n.func, gast.Name) and n.func.id in names or isinstance(
            n.func, gast.Attribute) and not pure_method(n.func.attr) and not any(
            inspect.getattr_static(c, n.func.attr, None) is not None for c in classes)) for n in nodes):
        return False  # (`self.cell(x)`: an attribute no class here has as a method may hold a callable object)
    return any(isinstance(vars(c).get("__call__"), types.FunctionType) and may_update_in_place(vars(c)["__call__"])
               for c in classes)


def _calls_updating_function(fn, nodes):
    """Does `fn` call, by a module global's name, a user's Python function that may update its arguments (`lambda v:
    add_to(acc, v)`: the lambda's own code stores nothing, its callee does), or a method that a class of its module
    has and that may update its object (`lambda: st.step(s)`)?"""
    local = set(fn.__code__.co_varnames) | set(fn.__code__.co_freevars)
    classes = None
    for n in nodes:
        if not isinstance(n, gast.Call):
            continue
        targets = []
        if isinstance(n.func, gast.Name) and n.func.id not in local:
            targets = [fn.__globals__.get(n.func.id)]
        elif isinstance(n.func, gast.Attribute) and not pure_method(n.func.attr) and not (
                isinstance(n.func.value, gast.Name) and n.func.value.id not in local
                and isinstance(fn.__globals__.get(n.func.value.id), types.ModuleType)):  # (`np.dot(...)`: no method)
            if classes is None:
                classes = [v for v in list(fn.__globals__.values()) if isinstance(v, type)
                           and v.__module__.partition(".")[0] not in _LIBRARY_PACKAGES]
            targets = [inspect.getattr_static(c, n.func.attr, None) for c in classes]
        if any(type(t) is types.FunctionType and t is not fn and t.__module__.partition(".")[0] not in _LIBRARY_PACKAGES
               and may_update_in_place(t) for t in targets):
            return True
    return False


def _calls_method_of_parameter(fn, nodes):
    """Does `fn` call, for its value, a method of one of its parameters that may be a user's method (`return
    self.forward(x)` in a `__call__`)? That call goes through `valuecall`, which may give the parameter a new
    version: `fn` then updates it as the method does."""
    params = set(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name)
               and n.func.value.id in params and not pure_method(n.func.attr) for n in nodes)


def updates_state(fn):
    """Does the Python function `fn`'s own code update something in place (an item or attribute store, `del`, a
    mutating method call, a store function, `out=`) or rebind a name outside itself (`global`, `nonlocal`)? As
    `may_update_in_place`, but a call statement alone (`print(...)`) does not count. False where the source cannot
    be read. Cached per code object (a `with` block's end asks it at run time)."""
    code = fn.__code__
    hit = _UPDATES_STATE.get(code)
    if hit is None:
        try:
            nodes = nodes_no_defs(get_source(fn).node.body)
            hit = any(isinstance(n, (gast.Global, gast.Nonlocal)) or not isinstance(n, gast.Expr) and _may_mutate(n)
                      for n in nodes)
        except Exception:  # noqa: BLE001 - no source, or not Python the parser reads
            hit = False
        _UPDATES_STATE[code] = hit
    return hit


_UPDATES_STATE = {}  # code object -> does the function's own code update state in place?


def _may_mutate(n):
    if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store, gast.Del)):
        return True
    if isinstance(n, (gast.Global, gast.Nonlocal)):  # (a helper rebinding a module's name: refused where it is read)
        return True
    if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
        return True
    if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and (
            updating_method_name(n.func.attr) or n.func.attr in _STORE_FUNCTIONS
            or n.func.attr in updating_function_names()):
        return True
    if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in _STORE_FUNCTIONS:
        return True  # `r = setattr(o, k, v)`
    return isinstance(n, gast.Call) and any(k.arg == "out" for k in n.keywords)


def augmented_names(stmts, nodes=None):
    """Names that `x += ...` rebinds in this code (not entering nested functions); `nodes` as for `mutation_syntax`."""
    return {n.target.id for n in (nodes if nodes is not None else nodes_no_defs(stmts))
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def nodes_no_defs(stmts):
    """The nodes of `stmts`, not entering nested functions, lambdas or classes (their own nodes are included)."""
    work, out = list(stmts), []
    while work:
        n = work.pop()
        out.append(n)
        if not isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            work.extend(gast.iter_child_nodes(n))
    return out


def updated_in_place(node, names, augmented=True):
    """The `names` whose objects the code of `node` (a nested function) may update in place (`augmented` False: not
    counting `name += v`, which updates in place only arrays and lists)."""
    found = set()
    for n in gast.walk(node):
        target = None
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store, gast.Del)):
            target = n.value
        elif isinstance(n, gast.Call):
            target = _call_target(n, names)
        elif isinstance(n, gast.AugAssign) and (augmented or not isinstance(n.target, gast.Name)):
            target = n.target
        while isinstance(target, (gast.Subscript, gast.Attribute)) or _is_vars(target):
            target = target.args[0] if _is_vars(target) else target.value  # (`vars(o)[k] = v` updates `o`)
        if isinstance(target, gast.Name) and target.id in names:
            found.add(target.id)
    return found


def _call_target(n, names):
    """What the call `n` may update in place: `obj` of a mutating method `obj.append(v)`, the first argument of a store
    or update written as a function (`setattr(o, k, v)`, `operator.setitem(d, k, v)`, `np.put(a, i, v)`) or of a
    mutating method taken from a class (`list.append(ys, v)`, `object.__setattr__(o, k, v)`); else None."""
    f = n.func
    if isinstance(f, gast.Name):
        return n.args[0] if f.id in _STORE_FUNCTIONS and n.args else None
    if not isinstance(f, gast.Attribute):
        return None
    root = f.value
    while isinstance(root, (gast.Subscript, gast.Attribute)):
        root = root.value
    of_class = isinstance(root, gast.Name) and isinstance(getattr(builtins, root.id, None), type) or isinstance(
        f.value, gast.Attribute) and f.value.attr == "ndarray"  # (`list.append`, `np.ndarray.sort`)
    if n.args and not (isinstance(root, gast.Name) and root.id in names) and (
            f.attr in _STORE_FUNCTIONS or f.attr in updating_function_names() or updating_method_name(f.attr)
            and of_class):
        return n.args[0]
    return f.value if updating_method_name(f.attr) or f.attr in _STORE_FUNCTIONS else None


def _is_vars(node):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "vars" and node.args


def positional_out(fn, nargs):
    """The position of an `out` array passed positionally (`np.multiply(a, b, y)`, `np.cumsum(x, 0, None, y)`), or
    None (for a ufunc with several outputs: the first's)."""
    if isinstance(fn, np.ufunc):
        return fn.nin if nargs > fn.nin else None
    if getattr(fn, "__module__", None) is None or not str(fn.__module__).startswith("numpy") or not callable(fn):
        return None
    try:
        at = _out_position(fn)
    except TypeError:  # (unhashable)
        return None
    return at if at is not None and at < nargs else None


def array_method_out(name, nargs):
    """Could `obj.name(*args)` (`nargs` positional arguments) be an ndarray method given its out array by position
    (`X.sum(1, None, o)`)? The object's type is known only when it runs."""
    at = _out_position(getattr(np.ndarray, name, None)) if isinstance(getattr(np.ndarray, name, None),
                                                                      types.MethodDescriptorType) else None
    return at is not None and nargs > at - 1  # (the signature's first parameter is self)


@functools.lru_cache(maxsize=None)
def _out_position(fn):
    """Where NumPy's `fn` takes `out` by position (None if it does not): read from its signature once per function,
    since lowering asks at every call of NumPy."""
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    return names.index("out") if "out" in names else None


_ALIAS_READS = {}


def reads_alias_after_update(fn, updated, other):
    """May `fn`'s code read its parameter `other` after it may have updated its parameter `updated` in place? Asked
    where one object was given to both (`h(x, buf=x)`): the derived code treats them as two objects, so a read of
    `other` after the update would take the values of before. No, only where every read of `other` is in the one
    statement that first names `updated`, outside any loop (`buf[1] = v[0] * w`: its reads come before its store);
    yes wherever it cannot tell (no source, a lambda, a compound statement naming it first)."""
    key = (fn.__code__, updated, other)
    hit = _ALIAS_READS.get(key)
    if hit is None:
        hit = _ALIAS_READS[key] = _alias_read_after(fn, updated, other)
    return hit


def _alias_read_after(fn, updated, other):
    try:
        node = get_source(fn).node
    except Exception:
        return True
    if not isinstance(node, gast.FunctionDef):
        return True
    first = _first_naming(node.body, updated, False)
    if first is None:
        return True

    def reads(n):
        return sum(1 for m in gast.walk(n) if isinstance(m, gast.Name) and m.id == other
                   and not isinstance(m.ctx, gast.Param))
    inside = sum(1 for m in nodes_no_defs([first]) if isinstance(m, gast.Name) and m.id == other)
    return reads(node) - sum(reads(a) for a in node.args.defaults + node.args.kw_defaults if a is not None) != inside


def _first_naming(stmts, name, in_loop):
    """The first simple statement naming `name`, outside loops; None if it comes in a loop or a compound statement's
    header, or not at all."""
    for s in stmts:
        if isinstance(s, (gast.For, gast.While, gast.If, gast.With, gast.Try)):
            header = [s.iter, s.target] if isinstance(s, gast.For) else [s.test] if isinstance(s, (gast.While, gast.If)) \
                else [i for w in getattr(s, "items", ()) for i in (w.context_expr, w.optional_vars) if i is not None]
            if any(isinstance(m, gast.Name) and m.id == name for h in header for m in gast.walk(h)):
                return None
            loop = in_loop or isinstance(s, (gast.For, gast.While))
            for block in (s.body, getattr(s, "orelse", []), getattr(s, "finalbody", [])):
                found = _first_naming(block, name, loop)
                if found is not None or _names(block, name):
                    return found
            continue
        if _names([s], name):
            return None if in_loop else s
    return None


def _names(stmts, name):
    return any(isinstance(m, gast.Name) and m.id == name for s in stmts for m in gast.walk(s))

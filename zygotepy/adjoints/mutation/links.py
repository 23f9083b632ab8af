"""Rules that carry an update in place across the links between objects: a child updated in place gives its parent
a new version (`put_item`, `put_attr`, and `put_held` for an object held anywhere in another: an item, a value, an
attribute), and a parent updated in place gives the children read out of it before (`refresh`, `refresh_held`) their
new versions. The lowering (ast_adjoint/lower/mutation.py) places these calls; their backs route each cotangent to
the version it belongs to, by where the child sits in the parent (held.py; arrays sharing memory: overlap.py).
"""
import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.guards_runtime import differentiable
from ...backends import is_array_type
from ...errors import ZygoteError
from ...runtime.context import current
from ...structgrad import StructGrad
from ..objects import as_fields
from ..registry import adjoint
from ..structures.common import like
from .held import _opaque_parts, _place, _root, _split, _where, _where_each, _where_held, _where_items, \
    SEARCH_DEPTH, may_hold_deeper, seq_items
from .computed import computed_slot, where_unknown
from .shared import shared_contents, split_shared
from .overlap import Overlap, _is_array, _is_slot, _is_view_of, overlap, unseen_pair
from .views import through_views


def _zeros_like(x):
    return np.zeros(np.shape(x), dtype=x.dtype if getattr(x, "dtype", None) is not None and x.dtype.kind in "fc"
                    else np.float64)


def _holds(parent, kind, key, child):
    """Is `child` (or a view of its data) what `parent[key]` / `parent.key` is?"""
    if isinstance(parent, np.ndarray):
        return _is_view_of(child, parent)
    try:
        current = getattr(parent, key) if kind == "attr" else parent[key]
    except (KeyError, IndexError, AttributeError, TypeError):
        return False
    return current is child


def _to_first(dy, need=None):
    """The back of a link that links nothing: to a number (equal numbers may be one object by chance, a cached
    constant or a helper's argument returned, which says nothing about where their gradients go), or to what a maybe
    update in place did not update (mutate.NOT_IN_PLACE). The cotangent stays where it is."""
    return (dy, None, None)


def _to_child(dy):
    return (None, None, dy)


def link_begins(name=None):
    """Called as a link rule begins: keeps what the update before it wrote itself (`update_writes`: the log's entries
    since the previous link, when there are any, so taken as the first link of an update begins; the links log what
    they pass an update on to through `logged`, which is not what the update wrote) and the names of the variables
    this update's links gave new versions (`update_fresh`: a link of a later one is given its version after the
    update; an object is no key, as two names may hold it, one of them stale). Returns whether `name` was fresh."""
    ctx = current()
    n = len(ctx.log)
    if n != ctx.link_mark:
        ctx.update_writes = (ctx.link_mark if ctx.link_mark < n else 0, n)
        ctx.update_fresh = set()
        ctx.link_mark = n
    fresh = name in ctx.update_fresh
    if name is not None:
        ctx.update_fresh.add(name)
    return fresh


def logged(obj):
    """A link's note that `obj` changed in the update it passes on (not a write of the update's own)."""
    ctx = current()
    ctx.log.append(id(obj))
    ctx.link_mark = len(ctx.log)


def _written_by_update(obj):
    """Is `obj` in the log since the update these links follow began (`update_writes` may be an earlier one's)?"""
    ctx = current()
    return id(obj) in ctx.log[min(ctx.update_writes[0], ctx.link_mark):] or id(obj) in ctx.item_arrays


def _written_beside(parent, child):
    """Did the update these links follow write into `parent`, or into an object `parent` holds other than through
    `child` (`b.W *= 2`, `l.W[0] = v`, where `parent` is `b` and `child` its parent `net`)? Then `parent`'s cotangents
    away from `child` are not its version's before the update."""
    ctx = current()
    start, end = ctx.update_writes
    written = set(ctx.log[start:end])
    if not written:
        return False
    seen, todo = {id(child)}, [parent]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, _IMMUTABLE) and not isinstance(obj, tuple):
            continue
        seen.add(id(obj))
        if id(obj) in written:
            return True
        todo.extend(obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else
                    vars(obj).values() if hasattr(obj, "__dict__") and not isinstance(obj, type) else ())
    return False


def _put(kind):
    def put(parent, key, child):
        if key is mt.UNKNOWN_SLOT or computed_slot(parent, kind, key) and not _holds(parent, kind, key, child):
            # (`g.interior[0] *= 2` through a property that makes a view: computed.py; one that gives what `parent`
            # keeps is its slot; a slot one arm of an `if` linked, on the other's path: lower/region_links.py)
            return _put_held(parent, where_unknown(parent, key), child)
        link_begins()
        if child is mt.NOT_IN_PLACE:  # `x += v` made a new object: `parent` still holds the old one, unchanged
            return parent, _to_first
        if child is parent:  # (`root["me"] = root`, then `root["me"]["w"] *= 2`: the object's own update)
            return parent, _to_child
        if unseen_pair(parent, child) and id(child) in current().log:  # (`v = x[1:4]; v[0] = 7.0` on a device:
            overlap(parent, child)  # is `v` a view? nothing tells: refused)
        if _is_array(parent):
            plan = "self" if parent is child else overlap(parent, child)
            direct = kind == "item" and isinstance(plan, Overlap) and _is_slot(parent, key, child)
        elif kind == "attr" and not differentiable(child) and is_array_type(type(parent)):
            plan = None  # (an array's device or dtype, given to a call that may update it: nothing to route)
        else:
            plan = _holds(parent, kind, key, child) or None
            if plan is None and kind == "item":  # `out = W[:]`: a copy holding W's items, found where they sit now
                plan = _where_items(parent, child)
            elif plan is not None:  # every place it sits, deeper ones too (`d = {"w": y, "in": [y]}`, then
                plan = _where_deep(parent, child) or plan  # `d["w"][0] = v`): a read through any is the update's
            direct = False
        if plan == "opaque":
            raise ZygoteError(f"zygotepy cannot differentiate this update in place: it writes through a view whose "
                              f"elements do not line up with its array's ({kind} {key!r} of a {parent.dtype} array "
                              f"seen as {child.dtype}: .real/.imag of a complex array, .view(dtype)); update the "
                              f"array itself (z[0] = complex(v, z[0].imag)), or copy the view first")
        if plan is not None and mt.may_have_changed(child):
            if kind == "attr" and getattr(type(parent), key, None) is child:
                _refuse_class_attribute(parent, key, child)
            logged(parent)  # updated through its item or attribute (dispatch checks arguments' updates)
        shared = shared_contents(parent, child) if plan is not None and not _is_array(parent) else None

        def back(dy):
            rest, _, dchild = _routed(dy)
            if shared is not None and rest is not None:
                rest, dchild = split_shared(shared, parent, rest, dchild)
            return rest, None, dchild

        def _routed(dy):
            if dy is None or plan is None:
                return (dy, None, None)
            if _is_array(parent) and not direct or isinstance(plan, tuple):  # (held.py's plans: _split)
                rest, dchild = _split(plan, parent, dy, None)
                return (rest, None, dchild)
            if kind == "attr" and key == "__dict__" and child is getattr(parent, "__dict__", None):
                return (None, None, dict(as_fields(parent, dy)))  # its fields are the dict's entries
            if kind == "attr":
                dy = as_fields(parent, dy)
                places = [n for n, v in vars(parent).items() if v is child] if hasattr(parent, "__dict__") else [key]
                rest = {k: v for k, v in dy.items() if k not in places and v is not None}
                dchild = _sum(dy.get(k) for k in places)
                return (StructGrad(rest) if rest else None, None, dchild)
            if isinstance(parent, np.ndarray):
                dchild = dy[key]
                dp = dy.copy()
                dp[key] = 0
                return (dp, None, dchild)
            if isinstance(parent, dict):  # the same object may sit under other keys too: all of them are its
                places = [k for k, v in parent.items() if v is child]
                return ({k: v for k, v in dy.items() if k not in places} or None, None,
                        _sum(dy.get(k) for k in places))
            dp = seq_items(parent, dy)
            places = [k for k, v in enumerate(parent) if v is child]
            dchild = _sum(dp[k] for k in places)
            for k in places:
                dp[k] = None
            return (type(parent)(dp) if type(parent) in (list, tuple) else like(parent, dp), None, dchild)
        if isinstance(child, dict):  # `pack = [d, d.values()]`, then `pack[0]["a"] = v`
            return parent, through_views(parent, child, back, 2)
        return parent, back
    return put


def _refuse_class_attribute(obj, name, child):
    """`obj.name.append(v)` where `name` is its class's attribute (`items = []` in the class body): the list is every
    instance's, so a read through another instance (or one zygotepy sees as data) would miss the update's gradient."""
    if hasattr(obj, "__dict__") and not isinstance(obj, type) and name not in vars(obj) and differentiable(child):
        raise ZygoteError(f"zygotepy cannot differentiate this update in place of '{type(obj).__name__}.{name}', an "
                          f"object its class holds (shared by every instance): a read of it elsewhere would miss "
                          f"the gradient of what this stores; make it the instance's own (`self.{name} = ...` in "
                          f"`__init__`)")


def _where_deep(parent, child):
    """Where `child` sits in the list, dict or object `parent` (a held.py plan) when it sits deeper than in `parent`'s
    own slots too, or shares memory with an array there; None when it is only in the slots themselves (the plain
    routing below serves those)."""
    items = parent.values() if isinstance(parent, dict) else vars(parent).values() if hasattr(parent, "__dict__") \
        else parent if isinstance(parent, (list, tuple)) else _opaque_parts(parent)  # (a `__slots__` object's)
    if not may_hold_deeper(items, child):
        return None
    roots = {_root(child): [child]} if isinstance(child, np.ndarray) else {}
    plan = _where_each(parent, {id(child): child}, roots).get(id(child))
    if not isinstance(plan, tuple) or all(sub == "self" for _, _, sub in plan[1]):
        return None
    return plan


def _sum(grads):
    total = None
    for g in grads:
        total = rt.acc(total, g)
    return total


adjoint(mt.put_item, updates=True)(_put("item"))
adjoint(mt.put_attr, updates=True)(_put("attr"))


@adjoint(mt.put_held, updates=True)
def put_held(parent, where, child):
    """`child` may sit somewhere in `parent` (found by identity now, at any depth): the cotangents there are
    `child`'s. Or `child` holds `parent`'s items (`boxes = [Box(a) for a in W]`, then `boxes[0].w *= 2` changes
    `W[0]`): `parent`'s cotangents of those items are `child`'s where they sit in it. `where` is (file, line of the
    update, parent's name, line of the call that made the link)."""
    return _put_held(parent, where, child)


def _put_held(parent, where, child):
    """`put_held`, and the put of a slot a property or descriptor computes (computed.py)."""
    fresh = link_begins(where[2] if type(where) is tuple else None)
    if mt.is_number(child) or child is mt.NOT_IN_PLACE:  # a number is never updated in place: one found
        if mt.is_number(child):  # in `parent` is there by chance; `parent` is left as it was by this update (as
            mt.passed_through((parent,), len(current().log))  # refresh_held's child, when its maybe holder is one)
        return parent, _to_first
    plan = _where(parent, child) if parent is not child else "self"
    inside = _where_items(child, parent) if plan is None else None
    if (plan is not None or inside is not None) and mt.may_have_changed(child) and not _holds_whole(child, parent):
        logged(parent)
    shared = shared_contents(parent, child) if isinstance(plan, tuple) and plan[0] != "items" else None
    cycle = isinstance(plan, tuple) and _where_held(child, parent) is not None  # (`child` holds `parent` again; not
    # where it holds only `parent`'s items, or is one: `o = todo[0]`, `zip(order, order[1:])`)
    stale = cycle and not fresh and _written_beside(parent, child)
    if plan is None and inside is None and not isinstance(child, dict) and not _written_by_update(parent):
        mt.passed_through((parent,), len(current().log))  # (not held there, nor written: left as it was)

    def back(dy):
        if dy is None or plan is None and inside is None:
            return (dy, None, None)
        if inside is not None:
            rest, dchild = _place(inside, child, dy, where)
            return (rest, None, dchild)
        rest, dchild = _split(plan, parent, dy, where)
        if shared is not None and rest is not None:  # (what `child` holds, held elsewhere in `parent` too)
            rest, dchild = split_shared(shared, parent, rest, dchild)
        if cycle and (stale and _carries(rest) or _reaches(rest, parent, child)):
            raise _cycle_error(where)
        return (rest, None, dchild)
    if isinstance(child, dict):  # `v = vals(d)`, `[d.values()]`
        return parent, through_views(parent, child, back, 2, where)
    return parent, back


def _carries(d):
    """Does the cotangent `d` (a structure's, perhaps) hold anything but None?"""
    if isinstance(d, StructGrad):
        d = dict(d)
    if isinstance(d, dict):
        return any(_carries(v) for v in d.values())
    if type(d) in (list, tuple):
        return any(_carries(v) for v in d)
    return d is not None


def _reaches(d, obj, child, depth=0):
    """Does the cotangent `d` of `obj` carry anything at a path that reaches `child` inside `obj` (around a cycle:
    `[1].parent.layers[0]` of a list whose item 0 is `child`)? `_split` routes `child`'s own places, not those."""
    if d is None or depth > SEARCH_DEPTH:
        return False
    if obj is child:
        return _carries(d)
    if isinstance(d, (StructGrad, dict)) and not _is_array(obj):
        for k, v in dict(d).items():
            try:
                inner = getattr(obj, k) if isinstance(d, StructGrad) and not isinstance(obj, dict) else obj[k]
            except (AttributeError, KeyError, IndexError, TypeError):
                continue
            if _reaches(v, inner, child, depth + 1):
                return True
    elif type(d) in (list, tuple) and isinstance(obj, (list, tuple)):
        return any(_reaches(v, inner, child, depth + 1) for v, inner in zip(d, obj))
    return False


def _cycle_error(where):
    """`parent` holds `child`, which holds `parent` again (a parent pointer: `layer.parent = net` beside
    `net.layers` holding the layer), and the update wrote into `parent` itself through that cycle
    (`a.parent.layers[1].W *= 2` where `b` is `net.layers[1]`). The cotangents of `parent`'s other fields would go
    to the version before the update, which the cycle makes the wrong one: refused, as silently wrong otherwise."""
    file, line, name, _ = where
    what = f"'{name}'" if not name.startswith("_") else "an object"  # (`_iter`: the sequence a loop walks)
    return ZygoteError(f"{file}:{line}: zygotepy cannot differentiate this update in place: it writes into {what} "
                       f"through a cycle of references (it holds an object that holds it again: a parent pointer), "
                       f"and reads it after; update the object through a name of its own, or keep the back "
                       f"reference out of it (the parent's index or name instead)")


def _holds_whole(child, parent):
    """Is `parent` an array, list, dict or object that `child` holds itself as a field or an item (`super().__init__(w)`
    storing `self.w = w`, or `self.params = params`)? Then an update of `child` (`self.c = c`) is none of `parent`'s:
    one through that field (`self.w[0] = v`, `self.params["a"] = v`) is a write into `parent` itself, which its rule
    logs."""
    if type(parent) is not np.ndarray and type(parent) not in (list, dict) and not hasattr(parent, "__dict__") \
            and not getattr(type(parent), "__zygote_number__", False):  # (hessian's dual array, as an array)
        return False
    return _holds_as_is(child, parent, 3)



def _holds_as_is(obj, target, depth):
    """Does `obj` hold `target` itself, as a field or an item, or in a field or dict entry of those, `depth` levels
    down (`self.params = {"W": w}`)? (Not in a list's items: a long list would be walked at every link.)"""
    held = vars(obj).values() if hasattr(obj, "__dict__") and not isinstance(obj, type) else \
        obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
    return any(v is target or depth > 1 and (type(v) is dict or hasattr(v, "__dict__") and type(v) is not np.ndarray
                                            and not isinstance(v, type)) and _holds_as_is(v, target, depth - 1)
               for v in held)


@adjoint(mt.refresh_held, updates=True, need=True)
def refresh_held(child, parent, where):
    """`child` may sit somewhere in `parent`, which was updated in place: `child`'s cotangent is `parent`'s there. Or
    `child` holds `parent`'s items (`boxes = [Box(a) for a in W]`, then `W[0] *= 2`): its cotangents where they sit
    are `parent`'s cotangents of those items."""
    link_begins(where[2] if type(where) is tuple else None)
    if mt.is_number(child):  # a number sitting in `parent` keeps its value whatever `parent`'s update did
        return child, _to_first
    if mt.is_number(parent):  # a number (a maybe holder refreshed) changed in nothing's update: it links nothing,
        mt.passed_through((child,), len(current().log))  # and `child` was left as it was
        return child, _to_first
    plan = _where(parent, child)
    cut = plan is not None and id(parent) in current().cuts  # (`y = t.detach(); y[0] = 5.0`)
    inside = _where_items(child, parent) if plan is None else None
    # or `parent` sits in `child`: a call handed back part of an object (`p = box.get()`, `getattr(o, "w")`), then
    # updated in place: `child`'s cotangent at that place is `parent`'s
    holds = _where(child, parent) if plan is None and inside is None and child is not parent else None
    # `child` holds the updated object (`d.get(k).append(v)`: as its item, or deeper) or shares its memory
    # (`a.reshape(-1)[0] = v`): it was updated too, which the log tells the call checks (a helper's parameter updated
    # so is only maybe updated to the lowering: derived.py `_surely_updated`)
    holder = holds is not None or isinstance(plan, tuple) and plan[0] == "items"
    if child is not parent and (
            isinstance(plan, Overlap) and id(parent) in current().log  # (a view written: its rule logged it)
            or holder and mt.may_have_changed(parent) and _where_held(child, parent) is not None):
        logged(child)

    def back(dy, need=None):
        if dy is None:
            return (None, None, None)
        if cut or plan is not None and need is not None and not need[1]:  # (then `t` read: `_cut_error`)
            raise _cut_error(where)
        if inside is not None:
            rest, dparent = _split(inside, child, dy, where)
            return (rest, dparent, None)
        if holds is not None:
            rest, dparent = _split(holds, child, dy, where)
            return (rest, dparent, None)
        if plan is None:
            return (dy, None, None)
        rest, dparent = _place(plan, parent, dy, where)
        return (rest, dparent, None)
    routed = through_views(child, parent, back, 1, where) if isinstance(parent, dict) else back  # `d, v = make()`
    if plan is None and inside is None and holds is None and routed is back:  # not held there: `parent`'s update
        mt.passed_through((child,), len(current().log))  # left it as it was: its holders need not assume it changed
    return child, routed


def _cut_error(where):
    """`child`, which carries a gradient, sits in (or is) `parent`, which carries none: made by a call that cuts
    gradients and returns what it was given (`y = dropgrad(s)`, `torch`'s `.detach()`), then updated in place. The
    update changed `child` too; whether its gradient should pass through that change is not defined (finite
    differences, PyTorch and a stop-gradient reading give three answers), so it is refused."""
    file, line, name, made = where
    made = f" made at line {made}" if made is not None else ""
    return ZygoteError(f"{file}:{line}: zygotepy cannot differentiate this update in place: it changes '{name}', "
                       f"which carries a gradient and is read after it, through a value{made} that carries none "
                       f"(dropgrad({name}), {name}.detach(), or something holding it); update '{name}' itself, or "
                       f"cut the gradient from a copy (dropgrad({name}.copy()))")


_IMMUTABLE = (int, float, complex, bool, str, bytes, tuple, frozenset, type(None), np.generic)


def _slot_of(parent, kind, key, child):
    """When the mutable object `child` is still `parent[key]` / `parent.key` (a list, dict or plain object holding
    it): the function giving `parent`'s cotangent from a cotangent of that slot; else None."""
    if isinstance(child, _IMMUTABLE) or isinstance(parent, np.ndarray) or not _holds(parent, kind, key, child):
        return None
    if kind == "attr":
        if not hasattr(parent, "__dict__") or vars(parent).get(key) is not child:
            return None
        return lambda dy: StructGrad({key: dy})
    if isinstance(parent, dict):  # (an OrderedDict, a defaultdict: a dict cotangent too)
        return lambda dy: {key: dy}
    if type(parent) in (list, tuple) and type(key) is int:
        def place(dy):
            dp = [None] * len(parent)
            dp[key] = dy
            return type(parent)(dp)
        return place
    return None


@adjoint(mt.refresh, updates=True)
def refresh(child, parent, kind, key):
    """A NumPy view is `parent[key]` again after the parent's update (its elements the parent's, matched by address:
    `W.T`, `y.real`); a mutable object still in the slot it was read from (`a = lst[0]`, then `lst[0] *= 2` updates
    that array) has the slot's value, so its cotangent goes to the slot; anything else is unchanged by it."""
    if key is mt.UNKNOWN_SLOT or computed_slot(parent, kind, key):  # (`v = g.interior`, then `g.u *= 2`:
        # computed.py; a slot one arm of an `if` linked, on the other's path: lower/region_links.py)
        value, back = refresh_held(child, parent, where_unknown(parent, key))
        return value, lambda dy: (*back(dy), None)
    link_begins()
    if kind == "attr" and getattr(child, "__self__", None) is parent:  # `m = o.f`: reads `o` as it is when called
        return child, lambda dy: (None, dy, None, None)  # (a bound method's cotangent is its object's)
    plan = "self" if child is parent else overlap(parent, child) if _is_array(child) or unseen_pair(
        parent, child) and id(parent) in current().log else None  # (a device's array: refused where it was updated)
    if plan == "opaque":
        raise ZygoteError(f"zygotepy cannot differentiate reading the view .{key} of an array after the array was "
                          f"updated in place (its elements do not line up with the array's); take the view after "
                          f"the update, or copy it")
    direct = kind == "item" and isinstance(plan, Overlap) and _is_slot(parent, key, child)
    slot = plan is None and _slot_of(parent, kind, key, child)
    if plan is None and not slot:  # `out = W[:]`: the items of the copy that the parent holds are the parent's there
        plan = _where_items(parent, child)

    def back(dy):
        if dy is None:
            return (None, None, None, None)
        if slot:  # still the very object in `parent`'s slot (`a = lst[0]`, then `lst[0] *= 2` on an array or list):
            return (None, slot(dy), None, None)  # its later value is the slot's, so its cotangent is the slot's
        if plan is None:
            return (dy, None, None, None)
        if direct:  # `row = m[0]`: the whole view is the slot
            dp = _zeros_like(parent)
            dp[key] = dy
            return (None, dp, None, None)
        rest, dp = _place(plan, parent, dy, None)
        return (rest, dp, None, None)
    return child, back

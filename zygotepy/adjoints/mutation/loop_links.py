"""Rules for the links between a `for` loop's variable and what the loop walks (ast_adjoint/lower/loops.py): an update
in place of the variable is an update of that container's item (`put_iter`), and an update of the container reaches
the variable (`refresh_iter`). The item is found at run time: an array's row by its address (`for r in Y` gives views
`Y[k]`), a 1-d array's number and a list's item by the iteration's position, anything else by identity at any depth
(as `put_held` does). A part of an array that is not one of its rows raises a ZygoteError naming the update, never a
wrong gradient.
"""
import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...errors import ZygoteError
from ...runtime.context import current
from ..registry import adjoint, nondifferentiable
from ..structures.indexing import scatter_array
from .held import _place, _split, _where_held
from .shared import shared_contents, split_shared
from .links import _to_first, link_begins, logged
from .operators import immutable_array


def _row(parent, child):
    """k if `child` is the view `parent[k]`, else None."""
    if not (isinstance(parent, np.ndarray) and isinstance(child, np.ndarray)) or parent.ndim == 0 \
            or child.shape != parent.shape[1:] or child.strides != parent.strides[1:] or child.dtype != parent.dtype:
        return None
    step = parent.strides[0]
    offset = child.__array_interface__["data"][0] - parent.__array_interface__["data"][0]
    if step == 0 or offset % step:
        return None
    k = offset // step
    return k if 0 <= k < parent.shape[0] else None


def _plan(parent, child):
    """("row", k), a `_where_held` plan, "part" (shares an array's data otherwise), or None (not in `parent`)."""
    if parent is child:
        return "self"
    if isinstance(parent, np.ndarray):
        k = _row(parent, child)
        if k is not None:
            return ("row", k)
        return "part" if isinstance(child, np.ndarray) and np.may_share_memory(parent, child) else None
    return _where_held(parent, child)


def _foreign_vector(x):
    """A 1-d array of another library (torch, array-API), seen through its memory."""
    if isinstance(x, np.ndarray):
        return False
    memory = mt.host_memory(x)
    return memory is not x and isinstance(memory, np.ndarray) and memory.ndim == 1


def _refused(where):
    file, line, other, made = where
    made = f" (taken at line {made})" if made is not None else ""
    return ZygoteError(
        f"{file}:{line}: zygotepy cannot differentiate this update in place: it changes a view of part of "
        f"'{other}'{made} that is not one of its rows, and the gradient cannot be routed through that; update "
        f"'{other}' itself by index (for i in range(len({other})): {other}[i] ..., or {other}[k:] *= ...), or copy "
        f"the part first")


def _mutable(x):
    return isinstance(x, (np.ndarray, list, dict, set)) or hasattr(x, "__dict__") and not isinstance(x, type)


def _unseen(where, parent):
    file, line, other, made = where
    return ZygoteError(
        f"{file}:{line}: zygotepy cannot differentiate this update in place: the loop at line {made} took the updated "
        f"object from a {type(parent).__name__} object, where zygotepy cannot see where it came from; loop over the "
        f"container itself (a list, tuple, array or a dict's .values()/.items()), or by index "
        f"(for i in range(len(items)): items[i] ...)")


def held_elsewhere(holder, item, via):
    """Is `item` (a mutable object) inside `holder`, or an array sharing memory with it, other than through `via` (the
    container a loop walks, when it is itself inside `holder`: `for w in out["w"]`)?"""
    return _mutable(item) and _outside(_where_held(holder, item), via)


def _outside(plan, via):
    """Does a `_where_held` plan reach its object by some path that does not pass through the object `via`?"""
    if plan is None:
        return False
    if not isinstance(plan, tuple) or plan[0] not in ("seq", "dict", "obj"):
        return True  # the object itself, an array view, or an opaque holder
    return any(v is not via and _outside(sub, via) for _, v, sub in plan[1])


def copied_error(where, container, holder):
    file, line, name, _ = where
    return ZygoteError(
        f"{file}:{line}: zygotepy cannot differentiate updating the loop variable '{name}' in place: the items the "
        f"loop walks are also held in '{holder}' outside the {type(container).__name__} it walks (that "
        f"{type(container).__name__} is a copy made by reversed(), sorted(), list(), a slice or another call, or "
        f"'{holder}' holds the items a second time), and the gradient cannot be routed from there back to "
        f"'{holder}'; index the container instead (for i in range(len({holder})): {holder}[i] ..., or "
        f"for i in reversed(range(len({holder}))): ...)")


nondifferentiable(mt.loop_copied, rt.watch_lazy, rt.lazy_unchanged, rt.bounded_generator)


@adjoint(mt.put_iter)
def put_iter(parent, where, child):
    """`child` (a loop's item of `parent`) was updated in place: the cotangents at its place in `parent` are its."""
    link_begins(where[2] if type(where) is tuple else None)
    if child is mt.NOT_IN_PLACE or immutable_array(parent) and immutable_array(child):
        return parent, _to_first  # `x += v` made a new object, or no update in place is possible: `parent` unchanged
    plan = _plan(parent, child)
    changed = mt.may_have_changed(child)
    if plan is not None and changed:
        logged(parent)
    elif plan is not None and id(parent) not in current().log:  # (the item a call left as it was, in a container
        mt.passed_through((parent,), len(current().log))  # nothing updated: its holders need not assume it changed,
        # `for m in self.mods: x = m(x)` with `m` a module that keeps nothing)
    elif changed and not isinstance(parent, (list, tuple, np.ndarray)) and _mutable(child):
        raise _unseen(where, parent)  # (an item a call surely left as it was, `out.append(v)`, is no update)
    shared = shared_contents(parent, child, where) if isinstance(plan, tuple) and plan[0] != "row" and changed else None

    def back(dy):
        if dy is None or plan is None:
            return (dy, None, None)
        if plan == "part":
            raise _refused(where)
        if isinstance(plan, tuple) and plan[0] == "row":
            dual = getattr(type(dy), "__zygote_number__", False)  # (hessian's dual arrays: np.array drops tangents)
            rest = dy.copy() if dual else np.array(dy, copy=True)
            dchild = rest[plan[1]].copy()
            rest[plan[1]] = 0
            return (rest, None, dchild)
        rest, dchild = _split(plan, parent, dy, where)
        if shared is not None and rest is not None:  # (what `child` holds, held elsewhere in `parent` too)
            rest, dchild = split_shared(shared, parent, rest, dchild)
        return (rest, None, dchild)
    return parent, back


@adjoint(mt.refresh_iter, optional=True)
def refresh_iter(child, parent, where, position=None):
    """`parent` was updated in place: `child`'s cotangent is `parent`'s at its place, if it is still there. A 1-d
    NumPy array's items are numbers, read when the loop reaches them (after the body's earlier updates): the loop's
    refresh gives the iteration's `position`, and the item is `parent[position]` of the version the loop has then
    (Python's iteration over the array reads it then too); a later update of the array leaves the number as it was (no
    position: passed through)."""
    link_begins(where[2] if type(where) is tuple else None)
    place = mt.read_by_position(parent, child, position)
    if place is not None:
        key, child = place  # (the same item, or the one an update of an earlier iteration put there)
        plan = ("row", key) if type(parent) is np.ndarray or mt.dual_vector(parent) else (
            "seq" if type(parent) is list else "dict", [(key, child, "self")])
    elif (type(parent) is np.ndarray and parent.ndim == 1 or mt.dual_vector(parent)) and \
            not isinstance(child, np.ndarray) and getattr(child, "ndim", 0) == 0:
        plan = None  # (a later update of the array leaves the number the loop read as it was)
    elif immutable_array(parent):
        plan = None  # (JAX's arrays: no update in place changed the vector, nor the item the loop read)
    elif _foreign_vector(parent) and getattr(child, "ndim", 0) == 0:
        # torch's items are 0-d views of the vector, which see later updates too: which version an item came from is
        # not recorded, so its gradient would go to the wrong one
        file, line, name, _ = where
        raise ZygoteError(
            f"{file}:{line}: zygotepy cannot differentiate a loop over the array that its body updates in place (the "
            f"loop variable '{name}' takes numbers read as the loop goes); loop by index instead "
            f"(for i in range(len(a)): {name} = a[i] ...)")
    else:
        plan = _plan(parent, child)

    def back(dy):
        if dy is None:
            return (None, None, None, None)
        if plan is None:
            return (dy, None, None, None)
        if plan == "part":
            raise _refused(where)
        if isinstance(plan, tuple) and plan[0] == "row":
            return (None, scatter_array(parent, plan[1], dy), None, None)
        rest, dparent = _place(plan, parent, dy, where)  # (another library's array: an Overlap, by its memory)
        return (rest, dparent, None, None)
    return child, back


mt.LOOP_COPIES[:] = [held_elsewhere, copied_error]  # (the runtime's loop_copied asks these)

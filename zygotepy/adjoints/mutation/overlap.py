"""Arrays that share memory (a view, a view of a view, `W.T`, `W.reshape(3)[0]`, however it was made), matched element
by element by address at run time (`Overlap`), so a cotangent reaches exactly the elements an update through either of
them changed. The links' rules (links.py, held.py, loop_links.py) route cotangents between such arrays with these.
A view whose own positions share memory (`overlaps_itself`: a broadcast view, overlapping `as_strided` windows) can be
read, but a write through it is refused (`refuse_overlapping_write`): the store rules follow one position per element.
"""
import numpy as np

from ...ast_adjoint import mutate as mt
from ...ast_adjoint.call_checks import call_site
from ...backends import is_array_type, namespace, on as device_of
from ...errors import ZygoteError
from ...runtime.context import current


def shares_memory(a, b):
    """Do the NumPy arrays `a` and `b` share an element? Exactly, where NumPy can tell with little work (interleaved
    views `a[::2]` and `a[1::2]` share none), else by their memory bounds (then they may)."""
    try:
        return np.shares_memory(a, b, max_work=1000)
    except np.exceptions.TooHardError:
        return True


def _is_view_of(child, parent):
    return isinstance(child, np.ndarray) and isinstance(parent, np.ndarray) and child.base is not None \
        and mt.base_of(child) is mt.base_of(parent)


def _device_view(x):
    """An array of another library that no NumPy view can show (on a GPU) and that is a view itself."""
    return type(x) is not np.ndarray and is_array_type(type(x)) and (
        getattr(x, "_base", None) is not None or getattr(x, "base", None) is not None)


def unseen_pair(parent, child):
    """Two arrays of another library whose elements NumPy cannot show (on another device), of a kind that cannot tell
    whether it is a view (no `base`: array_api_strict's on a non-default device; JAX's are never updated in place):
    an update through one of them, or a read of one after the other's, cannot be followed (links.py refuses it)."""
    return all(type(x) is not np.ndarray and is_array_type(type(x)) and not hasattr(x, "base") and
               not hasattr(x, "_base") and not type(x).__module__.startswith("jax") and
               not isinstance(mt.host_memory(x), np.ndarray) for x in (parent, child))


def _is_array(x):
    return isinstance(x, np.ndarray) or isinstance(mt.host_memory(x), np.ndarray)


def _by_parts(method):
    """An `Overlap` method applied to a dual cotangent part by part (its primal and tangent share its positions), and
    to another library's array (in host memory: `overlap` refuses views on a device) through NumPy, its results made
    in that library again."""
    def on(self, dy):
        if getattr(type(dy), "__zygote_number__", False) and hasattr(dy, "tangent"):
            (a, b), (c, d) = on(self, dy.primal), on(self, dy.tangent)
            return type(dy)(dy.tag, a, c), type(dy)(dy.tag, b, d)
        if type(dy) is not np.ndarray and is_array_type(type(dy)):
            xp = namespace(dy)
            return tuple(xp.asarray(part, dtype=dy.dtype, **device_of(dy)) for part in method(self, np.asarray(dy)))
        return method(self, dy)
    on.__doc__ = method.__doc__
    return on


class Overlap:
    """The elements of two arrays that share memory: flat positions `p` in the parent and `c` in the child of the same
    addresses `a`, one triple per pair of positions (found now, from data pointers and strides; a view made any way at
    all is matched). A broadcast view (`np.broadcast_to(x[:, None], ...)`, `meshgrid(copy=False)`) shows one element
    at several positions: a cotangent handed across is the sum over one side's positions of an element, given to one
    position of the other side, so that it is counted once."""
    __slots__ = ("a", "c", "child_shape", "p", "parent_shape")

    def __init__(self, parent, child, p, c, a):
        self.parent_shape, self.child_shape, self.p, self.c, self.a = parent.shape, child.shape, p, c, a

    def _across(self, dy, src, dst, shape):
        """dy at the positions `src` (with repeats) summed per element into one of `dst`'s positions of it."""
        addresses, first = np.unique(self.a, return_index=True)
        one = dst[first]  # (each element's position on the receiving side)
        mine, at = np.unique(src, return_index=True)  # (each sending position once)
        out = np.zeros(int(np.prod(shape)), dtype=dy.dtype)
        np.add.at(out, one[np.searchsorted(addresses, self.a[at])], dy.reshape(-1)[mine])
        rest = dy.copy()
        rest.reshape(-1)[mine] = 0
        return rest, out.reshape(shape)

    @_by_parts
    def split(self, dy):
        """The parent's cotangent -> (the part not at the shared elements, the child's cotangent from them)."""
        return self._across(np.asarray(dy), self.p, self.c, self.child_shape)

    @_by_parts
    def place(self, dy):
        """The child's cotangent -> (the part not at the shared elements, the parent's cotangent from them)."""
        return self._across(np.asarray(dy), self.c, self.p, self.parent_shape)


def _addresses(a):
    off = np.zeros(a.shape, dtype=np.intp)
    for k, (n, stride) in enumerate(zip(a.shape, a.strides, strict=True)):
        off = off + (np.arange(n, dtype=np.intp) * stride).reshape((1,) * k + (n,) + (1,) * (a.ndim - k - 1))
    return a.__array_interface__["data"][0] + off.reshape(-1)


_EXACT_SIZE = 1 << 20  # (a bigger view whose strides do not nest is taken to overlap itself: its writes are refused)


def overlaps_itself(x):
    """Do two positions of the NumPy array `x` share memory: a zero stride on an axis longer than 1
    (`np.broadcast_arrays`' views), windows `as_strided(y, (3, 2), (8, 8))` (`w[i, j]` is `y[i + j]`)? Strides that
    nest (each axis's at least the span of the axes with smaller ones, as every view slicing makes) say no at once;
    otherwise the addresses of a view of up to 2**20 elements are compared, and a bigger one is taken to."""
    if not isinstance(x, np.ndarray) or x.size < 2 or x.flags.c_contiguous or x.flags.f_contiguous:
        return False
    span = x.itemsize
    for stride, n in sorted((abs(st), n) for st, n in zip(x.strides, x.shape, strict=True) if n > 1):
        if stride < span:
            break
        span += stride * (n - 1)
    else:
        return False
    if x.size > _EXACT_SIZE:
        return True
    return bool((np.diff(np.sort(_addresses(x))) < x.itemsize).any())


def refuse_overlapping_write(x):
    """Refuse an update in place of the real or complex NumPy array `x` whose positions share memory. A store's rule
    takes each position for an element of its own: it would hand the written value the cotangent of the position
    written only (the element's others read the value too), and keep the old value's cotangent at those others; and
    which of several values written to one element stays is NumPy's order of writing. Data (ints, bools) carries no
    gradient: written as NumPy does."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc" and x.flags.writeable and overlaps_itself(x):  # (NumPy
        # refuses a write into a read-only view, `np.broadcast_to`'s, itself)
        raise ZygoteError(f"{call_site() or 'an update in place'}: zygotepy cannot differentiate writes through a view "
                          f"whose elements share memory (an as_strided or broadcast view): copy it first, or write "
                          f"into the base array")


def _written_now(x):
    """Did the update whose links are running write into `x`: a loop's item stores into it, or its own writes in the
    log (`update_writes`, links.py `link_begins`)? Those are set again at a link when the log grew since the last one,
    which every journal entry makes it do; with no entry yet in this forward (a loop's item stores alone), they may be
    a previous call's, with nothing to say of this one's log."""
    ctx = current()
    if id(x) in ctx.item_arrays:
        return True
    start, end = ctx.update_writes
    return bool(ctx.entries) and id(x) in ctx.log[start:end]


def overlap(parent, child):
    """An `Overlap` of two arrays sharing memory, None if they share none, "opaque" if their elements do not line up
    (a `.view(dtype)`, `.real` of a complex array). Where the update these links follow wrote into one of them and its
    positions share memory (`np.add(w, v, out=w)`, `w += v`, a loop's `w[i] = v`), it is refused: the update's rule
    followed one position per element."""
    parent, child = mt.host_memory(parent), mt.host_memory(child)
    for side in (parent, child):
        if isinstance(side, np.ndarray) and side.dtype.kind in "fc" and _written_now(side) and overlaps_itself(side):
            refuse_overlapping_write(side)
    if _device_view(parent) or _device_view(child) or unseen_pair(parent, child):
        raise ZygoteError(f"zygotepy cannot follow an update in place through a view of a {type(parent).__name__} on "
                          f"a device (where its elements live cannot be read); copy the view before updating it, or "
                          f"update out of place")
    if not (isinstance(parent, np.ndarray) and isinstance(child, np.ndarray)) or parent.size == 0 or \
            child.size == 0 or not np.may_share_memory(parent, child):
        return None
    if parent.dtype != child.dtype:
        return "opaque"
    pa, ca = _addresses(parent), _addresses(child)
    order = np.argsort(pa, kind="stable")
    ps = pa[order]
    lo, hi = np.searchsorted(ps, ca, "left"), np.searchsorted(ps, ca, "right")
    counts = hi - lo
    inside = (ca >= ps[0]) & (ca < ps[-1] + parent.itemsize)
    if ((ca[inside] - ps[0]) % parent.itemsize).any():  # elements offset by part of one: bytes reinterpreted
        return "opaque"
    if not counts.any():
        return None
    c = np.repeat(np.arange(ca.size), counts)
    within = np.arange(c.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return Overlap(parent, child, order[np.repeat(lo, counts) + within], c, ca[c])


def _is_slot(parent, key, child):
    """Is the array `child` exactly the memory of `parent[key]` (`row = m[0]`), not just some view of it? Not where
    `parent`'s positions share memory (`a[:, 0]` of a broadcast `a`): its other positions of those elements are read
    too, so the cotangents go by address (`Overlap`), summed over them."""
    try:
        slot = parent[key]
    except (IndexError, TypeError, ValueError):
        return False
    return isinstance(slot, np.ndarray) and slot.base is not None and slot.shape == child.shape and \
        slot.strides == child.strides and slot.__array_interface__["data"][0] == child.__array_interface__["data"][0] \
        and not any(n > 1 and st == 0 for n, st in zip(slot.shape, slot.strides, strict=True)) \
        and not overlaps_itself(parent)

"""What the item fast paths of generated code call: reads `x[i]` and stores `out[i] = v` in a loop, where `x` and
`out` are 1-d float64 NumPy arrays, `i` a Python int and `v` a Python or NumPy float (the adjoint pass guards them,
optimize/item_paths.py; anything else takes the general path, through the rules of adjoints/).

A read records only its index. When the loop leaves the array variable alone, the backward adds the read's
cotangent into a buffer it alone holds (`dx_items[i] += g`, a list made by `item_grads` on the first read it meets)
and adds that buffer to the array's cotangent after the loop; otherwise into the array's running cotangent, in place
when nothing else holds it (`add_item`, `runtime.owned`). Either way a loop of reads builds one array, not one per
read.

A store keeps the value it overwrites on the loop's tape, and its backward (`item_back`) puts it back; the `ItemRun`
of the loop (one per execution of the loop and array, not one closure and one journal entry per store) is the
journal entry that replays the loop's stores when the backward is done (see ItemRun).
"""
import operator
import sys

import numpy as np

from ..adjoints.registry import find_rule
from ..options import OPTIONS
from . import runtime as rt
from ..runtime.context import current

F64 = np.dtype(np.float64)
REALS = frozenset((float, np.float64))  # the values a store on the item path writes (an int written is data)


def is_vector(x):
    """May `x[i]` take the item fast path: a 1-d float64 NumPy array (no subclass)?"""
    return type(x) is np.ndarray and x.dtype is F64 and x.ndim == 1


def is_int(i):
    return type(i) is int


def is_real(v):
    return type(v) in REALS


def store(x, i, v):
    """Generated code's `x[i] = v` (emitted as that statement)."""
    x[i] = v


def add_at(a, i, g):
    """Generated code's `a[i] += g` (emitted as that statement)."""
    a[i] += g


def add_item(dx, x, i, g):
    """`dx` plus the cotangent of `x[i]` (dy `g` at `i`, zeros elsewhere): in place when `dx` is a float64 array
    nothing but the caller's variable holds, made on the first read the backward meets."""
    if type(g) is float or type(g) is np.float64:
        if dx is None:
            dx = np.zeros(x.shape)
            dx[i] = g
            return dx
        if type(dx) is np.ndarray and dx.dtype is F64 and dx.shape == x.shape and OPTIONS.acc_in_place and rt.owned(dx):
            dx[i] += g
            return dx
    _, back = find_rule(operator.getitem)(x, i)  # (the rule's cotangent for x: zeros with g at i)
    return rt.acc(dx, back(g)[0])


def item_grads(buffer, dx, x, i, g):
    """`(buffer, dx)` after a read `x[i]` with cotangent `g`, where the generated code's own test (the buffer exists
    and g is a real number) failed. The buffer, a list of Python floats as long as `x` (items add faster there than in
    an array), is made on the first real `g`; any other `g` (complex, forward mode's duals) goes to the array's
    cotangent `dx`, so the buffer only ever holds real numbers."""
    if type(g) in rt.SCALARS:
        if buffer is None:
            buffer = [0.0] * len(x)
        buffer[i] += g
        return buffer, dx
    return buffer, add_item(dx, x, i, g)


def buffer_grads(dx, buffer):
    """`dx` plus the reads' cotangents a loop gathered in `buffer` (None: no read got one)."""
    if buffer is None:
        return dx
    return rt.acc_var(dx, np.array(buffer, dtype=np.float64))


class ItemRun:
    """The item stores of one execution of a loop into one array (fixed by the first store), as one journal entry.

    A store's old value goes to the loop's tape (the backward puts it back, `item_back`); the run only notes the
    indices, and when the loop is over (`close`) records what the array then holds there and joins the journal,
    after every entry made inside the loop: a `redo` replays those first, then this one, so the array ends as the loop
    left it whatever the order of the stores among them. The record is the whole array when the stores were many, the
    stored items when they were few (a loop storing twice into a long array keeps two values, not a copy).

    The log of updated objects hears of the array at its first `put` and when the loop is over: what the checks of a call's arguments
    after the call look for (is the id there). `may_have_changed`, which asks whether the id came after a mark, hears
    of it at every `put` while a container method's argument is watched (`passed_through`), and from `item_arrays` for
    the stores that only `note` their index."""
    __slots__ = ("x", "xid", "indices", "after", "count", "left", "grad", "note", "ctx", "start", "alone")

    def __init__(self, x=None):
        """`x`: the array, when the loop stores into one object throughout (the generated code then stores itself,
        guarded once before the loop, and notes each index with `note`); else the first store fixes it (`put`)."""
        self.x = self.xid = self.after = None
        self.grad = None  # the cotangent array the backward last returned, while stores are left to undo
        self.indices = []
        self.note = self.indices.append
        self.count = self.left = 0  # the stores, and how many of them are in effect (the backward undoes them)
        self.ctx = ctx = current()  # (this thread's journal and log)
        self.start = len(ctx.entries)  # (were other updates journaled during the loop? see `close`)
        self.alone = False
        if x is not None and is_vector(x):
            self.x, self.xid = x, id(x)
            ctx.item_arrays[self.xid] = self  # (the stores that `note` their index tell the log only at the end)

    def put(self, x, i, v):
        """`x[i] = v`, returning the value overwritten, or None (nothing done) when the fast path does not apply."""
        if x is not self.x:
            if self.x is not None or not is_vector(x):
                return None
            self.x, self.xid = x, id(x)
        if type(i) is not int or (type(v) is not float and type(v) is not np.float64):
            return None
        old = x[i]
        x[i] = v
        indices = self.indices
        if not indices or self.ctx.passed_through:  # (see below)
            self.ctx.log.append(self.xid)
        indices.append(i)
        return old

    def close(self):
        """The loop is over: record the stored items' values and join the journal."""
        x = self.x
        if not self.indices:
            return
        self.ctx.log.append(self.xid)
        self.count = self.left = len(self.indices)
        # no other update journaled during the loop: the backward's first undo records the stored items' values
        # instead (`capture`), as Entry.undo does, so that an update after the loop the backward never undoes (its
        # cotangent was None) stays in them; otherwise those updates' undos, which come before the run's in the
        # journal, may have reached these items, and the values at the loop's end are what a redo puts back
        self.alone = len(self.ctx.entries) == self.start
        if self.count * 4 >= x.size:
            self.indices, self.after = Ellipsis, x.copy()
        else:
            self.indices = np.array(self.indices, dtype=np.intp)
            self.after = x[self.indices]  # (an index stored twice gathers the same final value twice)
        self.ctx.entries.append(self)

    @property
    def undone(self):
        return self.left < self.count

    def capture(self):
        """The backward's first undo of the run: what the stored items hold now (see `close`)."""
        if self.alone:
            self.after = self.x.copy() if self.indices is Ellipsis else self.x[self.indices]

    def redo(self):
        self.x[self.indices] = self.after
        self.left = self.count


def item_back(dy, run, i, old, dx, dv):
    """The backward of a store `x[i] = v` the run took: put the old value back, then `(dx, dv)` plus the cotangents
    of the array before the store (dy with the slot zeroed: what was there is overwritten) and of the value written
    (dy at the slot)."""
    if run.left == run.count:
        run.capture()
    run.x[i] = old
    left = run.left = run.left - 1
    if dy is None:
        return dx, dv
    if dy is run.grad:  # what the previous store's backward returned: a float64 array of x's shape, its own memory
        if _refcount(dy) > _HOLDERS + 1 or not OPTIONS.acc_in_place:  # (+1: run.grad)
            dy = dy.copy()
    elif type(dy) is np.ndarray and dy.dtype is F64 and dy.shape == run.x.shape:
        # dy is the caller's dead cotangent: reuse it when its one variable alone holds it (runtime.owned)
        if not (dy.base is None and _refcount(dy) <= _HOLDERS and dy.flags.writeable and OPTIONS.acc_in_place):
            dy = dy.copy()
    else:
        grads = rt.item_cotangents(dy, i, old)  # another kind of cotangent (complex, forward mode's duals)
        return rt.acc(dx, grads[0]), rt.acc(dv, grads[2])
    g = dy.item(i)  # (a Python float: the backward's scalar arithmetic is faster on those)
    dy[i] = 0.0
    run.grad = dy if left else None  # (the last store let go: the run lives on the tape)
    if dx is None and dv is None:
        return dy, g
    return rt.acc(dx, dy), rt.acc(dv, g)


def _holder_count():
    """What `sys.getrefcount(dy)` gives inside `item_back` for an array only the caller's variable holds, measured in
    the call shape generated code uses (as runtime._sole_holder_count does for the rules' backs)."""
    def probe(dy, run, i, old, dx, dv):
        return sys.getrefcount(dy), None

    def generated_code():
        dout = np.empty(2)
        n, _ = probe(dout, None, 0, None, None, None)
        return n
    if not hasattr(sys, "getrefcount") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return 0  # no reference counts to trust: never in place
    return generated_code()


_HOLDERS = _holder_count()
_refcount = getattr(sys, "getrefcount", lambda a: 1 << 30)

"""Rules for `collections.deque`: its constructor, `copy`, and the methods that update it in place (declared in
adjoints/in_place.py, as methods.py declares a list's).

A deque is a list that grows and shrinks cheaply at both ends, so it is differentiated as one: its cotangent is a
list with one cotangent per position (None where no gradient flows, None as a whole where none does), and a deque
passed to the differentiated function gets such a list as its gradient, as a list argument gets a list
(docs/api.md: "a gradient has its argument's structure", and a deque's structure is its positions). Reading,
storing, deleting, iterating and handing a deque to NumPy go through the rules lists take (structures/, stores.py,
backends' `sequence_cotangent`), which know deques for this reason.

What a list lacks is `maxlen`: a bounded deque silently drops items at the far end as it grows (`append` drops
from the left, `appendleft` and `extendleft` from the right, the constructor keeps the last `maxlen`). An item
pushed out of a sliding window must get no gradient from the window's later reads, so every rule here works out
which position each item lands in, or that it fell off, as `source`: for each position after the update, the old
position (an int >= 0) or the new item (`~j`, the j-th item the call adds) it holds. Each back then routes the
cotangent the same way, whatever the method did, and a cotangent of the wrong length (an update zygotepy did not
see) raises instead of being routed by guesswork. Each back first undoes its update (the journal, ast_adjoint/
mutate.py); an append or a pop of an unbounded deque journals only the end it changed, so a queue costs no copy of
itself per update.
"""
import collections

from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...errors import ZygoteError
from ..in_place import updates_in_place, updates_without_rule
from ..registry import adjoint, keyword_rule, nondifferentiable
from ..structures.attributes import ATTRIBUTES
from ..structures.common import like
from ..structures.iteration import iterate, python_iter

deque = collections.deque

nondifferentiable(deque.index, deque.count)  # positions and counts: integers
updates_without_rule(deque, "__setitem__", "__delitem__", "__iadd__", "__imul__", "__init__")  # (taken from the class)
ATTRIBUTES[(deque, "maxlen")] = lambda q, dy: None  # data (an int in arithmetic would give the deque a field)


def _items(dq, n, what):
    """The cotangent `dq` of a deque of `n` items as a list of theirs (None: none); anything else is refused."""
    if dq is None or type(dq) is list and len(dq) == n:
        return dq
    if isinstance(dq, (list, tuple)) and len(dq) == n or getattr(dq, "shape", ())[:1] == (n,):
        return list(dq)  # (an array cotangent of a deque of rows: its rows)
    got = f"{len(dq)} items" if isinstance(dq, (list, tuple)) else f"a {type(dq).__name__}"
    raise ZygoteError(f"zygotepy cannot route the gradient of a collections.deque through {what}: the deque holds {n} "
                      f"items, and its cotangent is {got}, not one per item (an update of it went unseen, or a "
                      f"function took it as one value); call its methods on the deque itself, and pass list(q) or "
                      f"np.asarray(q) to functions that take a sequence")


def _walk(seq):
    """The items of what a deque takes in, and the map from their cotangents (a list) to `seq`'s: a user class's
    `__iter__` is differentiated, as `list(obj)` does; an array's rows are stacked back (`like`)."""
    if python_iter(seq) is not None or type(seq).__name__.endswith("iterator"):
        items, back = iterate(seq)
        return list(items), lambda grads: back(grads)[0]
    return list(seq), lambda grads: like(seq, grads)


def _journal(q, keep=None, right=True):
    """Journal an update of `q`, and what `undo` reads now. With `keep`: the update changes only what lies past the
    first `keep` items from the other end (an append or pop of an unbounded deque), so only that part is kept."""
    if keep is None:
        return mt.journal_whole(q), lambda: list(q)

    def part():
        n = len(q)
        return [q[k] for k in range(keep, n)] if right else [q[k] for k in range(n - keep)]

    def restore(items):
        while len(q) > keep:
            q.pop() if right else q.popleft()
        q.extend(items) if right else q.extendleft(reversed(items))
    return mt.Entry(restore, part(), q), part


def _update(q, run, m, source, what, keep=None, right=True):
    """Run `run()`, the update of `q` that adds `m` items, journaled: `(result, back)`, where `back(dq)` undoes it and
    gives `(d_before, d_added)` (lists, or None) from `dq`, the cotangent after; `source()` lists where each position
    after the update came from (see the module docstring), worked out only when a cotangent needs it."""
    n = len(q)
    entry, now = _journal(q, keep, right)
    result = run()
    after = len(q)

    def back(dq):
        entry.undo(now)
        dq = _items(dq, after, what)
        if dq is None:
            return None, None
        old, new = [None] * n, [None] * m
        for g, k in zip(dq, source(), strict=True):
            if g is not None:
                if k >= 0:
                    old[k] = rt.acc(old[k], g)
                else:
                    new[~k] = rt.acc(new[~k], g)
        return (old if any(g is not None for g in old) else None), (new if any(g is not None for g in new) else None)
    return result, back


def _grown(q, m, right):
    """`source` for `m` items added at one end of `q` (`~j`: the j-th added), the far end cut to `q.maxlen`, and
    whether anything falls off (then the whole deque is journaled)."""
    n, cap = len(q), q.maxlen

    def source():
        if right:
            placed = list(range(n)) + [~j for j in range(m)]
            return placed if cap is None else placed[max(len(placed) - cap, 0):]
        placed = [~j for j in reversed(range(m))] + list(range(n))  # (each goes to the left in turn: reversed)
        return placed if cap is None else placed[:cap]
    return source, cap is not None and n + m > cap


@updates_in_place(deque, "append")
def _append(q, v):
    source, drops = _grown(q, 1, True)
    _, back = _update(q, lambda: q.append(v), 1, source, "append", None if drops else len(q))
    return None, lambda dr, dq: _one_added(back(dq))


@updates_in_place(deque, "appendleft")
def _appendleft(q, v):
    source, drops = _grown(q, 1, False)
    _, back = _update(q, lambda: q.appendleft(v), 1, source, "appendleft", None if drops else len(q), False)
    return None, lambda dr, dq: _one_added(back(dq))


def _one_added(grads):
    old, new = grads
    return old, None if new is None else new[0]


def _extending(name, right):
    def rule(q, seq):
        items, to_seq = _walk(seq)
        source, drops = _grown(q, len(items), right)
        run = (lambda: q.extend(items)) if right else (lambda: q.extendleft(items))
        _, back = _update(q, run, len(items), source, name, None if drops else len(q), right)

        def extend_back(dr, dq):
            old, new = back(dq)
            return old, None if new is None else to_seq(new)
        return None, extend_back
    rule.__qualname__ = f"deque_{name}"
    return updates_in_place(deque, name)(rule)


_extend, _extendleft = _extending("extend", True), _extending("extendleft", False)


def _taken(q, k, run, what, keep=None, right=True):
    """`run()` takes the item at position `k` out of `q` (returning it, or None): its cotangent `dr` goes there."""
    n = len(q)
    r, back = _update(q, run, 0, lambda: [i for i in range(n) if i != k], what, keep, right)

    def taken_back(dr, dq):
        old = back(dq)[0]
        if dr is None:
            return (old,)
        old = old or [None] * n
        old[k] = rt.acc(old[k], dr)
        return (old,)
    return r, taken_back


@updates_in_place(deque, "pop")
def _pop(q):
    if not q:
        q.pop()  # (IndexError, as Python's)
    return _taken(q, len(q) - 1, q.pop, "pop", len(q) - 1)


@updates_in_place(deque, "popleft")
def _popleft(q):
    if not q:
        q.popleft()
    return _taken(q, 0, q.popleft, "popleft", len(q) - 1, False)


@updates_in_place(deque, "remove")
def _remove(q, v):
    k = q.index(v)  # (ValueError, as Python's) found by comparing: `v` itself gets no cotangent
    _, back = _taken(q, k, lambda: q.remove(v), "remove")
    return None, lambda dr, dq: (back(None, dq)[0], None)


@updates_in_place(deque, "insert")
def _insert(q, i, v):
    n = len(q)
    if q.maxlen is not None and n >= q.maxlen:
        q.insert(i, v)  # (IndexError, as Python's: a full bounded deque takes no insert)
    pos = min(max(i + n if i < 0 else i, 0), n)
    _, back = _update(q, lambda: q.insert(i, v), 1, lambda: [*range(pos), ~0, *range(pos, n)], "insert")
    return None, lambda dr, dq: (lambda old, new: (old, None, None if new is None else new[0]))(*back(dq))


@updates_in_place(deque, "rotate")
def _rotate(q, n=1):
    size = len(q)
    _, back = _update(q, lambda: q.rotate(n), 0, lambda: [(k - n) % size for k in range(size)], "rotate")
    return None, lambda dr, dq: (back(dq)[0], None)


@updates_in_place(deque, "reverse")
def _reverse(q):
    size = len(q)
    _, back = _update(q, q.reverse, 0, lambda: list(reversed(range(size))), "reverse")
    return None, lambda dr, dq: (back(dq)[0],)


@updates_in_place(deque, "clear")
def _clear(q):
    _, back = _update(q, q.clear, 0, list, "clear")
    return None, lambda dr, dq: (back(dq)[0],)


@keyword_rule
@adjoint(deque)
def deque_(*args, **kwargs):
    """`deque(iterable, maxlen)`: the items it keeps (the last `maxlen` of them) pass their cotangents back to the
    iterable, the others get none; `maxlen` is data."""
    seq = args[0] if args else kwargs.get("iterable", ())
    items, to_seq = _walk(seq)
    q = deque(items, *args[1:], **{k: v for k, v in kwargs.items() if k != "iterable"})
    skipped = len(items) - len(q)

    def back(dy):
        dy = _items(dy, len(q), "deque()")
        dseq = None if dy is None or all(g is None for g in dy) else to_seq([None] * skipped + dy)
        grads = (dseq, *(None for _ in args[1:])) if args else ()
        return (*grads, {k: dseq if k == "iterable" else None for k in kwargs}) if kwargs else grads
    return q, back


@adjoint(deque.copy)
def deque_copy(q):
    """`q.copy()`: a new deque of the same items and `maxlen`."""
    n = len(q)
    return q.copy(), lambda dy: (_items(dy, n, "copy"),)

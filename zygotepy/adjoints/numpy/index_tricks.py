"""`np.r_[...]` and `np.c_[...]`: concatenation written as indexing (issue case 6: they ran as constants, so
`np.r_[x, 1.0, x]` passed no gradient to x).

`np.r_` and `np.c_` are instances of NumPy's `AxisConcatenator`, a Python class of an array library, so `obj[key]`
reaches the `getitem` rule (structures/indexing.py), which hands the call to `concatenator_getitem` here. The forward
pass is the real `obj[key]`: every form NumPy accepts (arrays, scalars, lists, slices such as `0:3`, string directives
such as `'0,2'`, np.c_'s columns) computes what NumPy computes.

The backward pass needs, for each output entry, the input entry it came from. Rather than re-implement NumPy's rules
(scalar promotion, `ndmin`, where 1-d pieces go, c_'s transposition), it asks NumPy: the concatenator runs twice more
on labels, each differentiable piece replaced by the 1-based numbers of its entries, `+id` in one run and `-id` in the
other, everything else (slices, ints, directives) kept. An output entry from a piece reads `(+id - -id) / 2 = id`; an
entry of a constant reads the same in both runs, so 0. The cotangent of each piece is dy gathered at its ids.

Pieces of another library (JAX, torch, CuPy arrays) raise a ZygoteError: NumPy would copy them to host memory, and
their gradients must stay in their library (use the namespace's `concat`/`stack`).
"""
import numpy as np

from ...backends import is_foreign
from ...errors import ZygoteError
from ..handover import added
from .common import arrayed


CONCATENATORS = frozenset((type(np.r_), type(np.c_), type(np.r_).__base__))


def _piece(item):
    """(shape, kind) of a key item that may carry a gradient: kind "number" (a float or complex scalar), "array" (a
    float or complex NumPy array), "list" (a list of numbers); None for data (ints, bools, slices, strings)."""
    t = type(item)
    if t is float or t is complex or isinstance(item, (np.floating, np.complexfloating)):
        return (), "number"
    if t is np.ndarray:
        return (item.shape, "array") if item.dtype.kind in "fc" else None
    if t is list or t is tuple:
        arr = np.asarray(item)
        return (arr.shape, "list") if arr.dtype.kind in "fc" else None
    if is_foreign(item):
        raise ZygoteError(f"np.r_ / np.c_ of a {t.__name__}: NumPy would copy it to a NumPy array, and its gradient "
                          f"must stay in its library; use its namespace's concat or stack")
    return None


def _spans(pieces):
    """Each differentiable piece's `(start, size)` in one flat numbering of their entries (None for data), and the
    total."""
    spans, start = [], 0
    for piece in pieces:
        size = None if piece is None else int(np.prod(piece[0]))
        spans.append(None if piece is None else (start, size))
        start += size or 0
    return spans, start


def _labelled(obj, items, pieces, spans, sign):
    """obj[items] with each piece replaced by sign * its entries' 1-based numbers (a scalar by a scalar)."""
    key = []
    for item, piece, span in zip(items, pieces, spans, strict=True):
        if piece is None:
            key.append(item)
            continue
        labels = sign * np.arange(span[0] + 1, span[0] + span[1] + 1, dtype=np.float64).reshape(piece[0])
        key.append(float(labels) if piece[1] == "number" else labels)
    return np.asarray(obj[tuple(key)])


def concatenator_getitem(obj, key):
    """The rule of `np.r_[key]` / `np.c_[key]`: `(y, back)` with `back(dy) -> (None, dkey)`, dkey of key's form (a
    tuple of the pieces' cotangents; the one piece's when key is not a tuple). The back takes what the getitem rule's
    declares (`need`, the running cotangents)."""
    y = obj[key]
    items = key if type(key) is tuple else (key,)
    pieces = [_piece(item) for item in items]
    if all(p is None for p in pieces):
        return y, lambda dy, need=None, *into: into or (None, None)
    spans, total = _spans(pieces)

    def back(dy, need=None, *into):
        if dy is None:
            return into or (None, None)
        ids = (_labelled(obj, items, pieces, spans, 1.0) - _labelled(obj, items, pieces, spans, -1.0)) / 2
        ids = np.rint(ids).astype(np.int64).reshape(-1)
        d = arrayed(dy).reshape(-1)
        taken = ids > 0
        flat = np.zeros(total, dtype=np.result_type(d.dtype, np.float64))
        np.add.at(flat, ids[taken] - 1, d[taken])
        grads = [None if piece is None else _like(item, piece[1], flat[span[0]:span[0] + span[1]].reshape(piece[0]))
                 for item, piece, span in zip(items, pieces, spans, strict=True)]
        return added(into, (None, tuple(grads) if type(key) is tuple else grads[0]))
    return y, back


def _like(item, kind, g):
    """A piece's cotangent in its form: a number for a number, a list for a list, an array of its dtype; real for a
    real piece."""
    real = not (isinstance(item, (complex, np.complexfloating))
                or kind != "number" and np.asarray(item).dtype.kind == "c")
    if real and g.dtype.kind == "c":
        g = g.real
    if kind == "number":
        return float(g) if real else complex(g)
    if kind == "list":  # entry by entry: an array entry gets an array, a number a number, a list a list
        return type(item)(gi if isinstance(v, np.ndarray) else gi.tolist() for v, gi in zip(item, g, strict=True))
    return g.astype(item.dtype, copy=False)

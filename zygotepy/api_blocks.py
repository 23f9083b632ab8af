"""`jacobian` and `hessian` over several arguments and nested structures, and `argnums`.

api_modes computes them for real numbers and real arrays; here each argument may be a tree (`zygotepy.trees`: tuples,
lists, dicts, namedtuples, dataclasses, objects) of them. The blocks follow the structures: `hessian(f, a, b)[i][j]`
has shape `args[i].shape + args[j].shape`; for one dict argument `H["w"]["b"]` is the block between its entries `w`
and `b`. Both are built from the same passes as the plain case: a Hessian column is one reverse pass on dual numbers,
with one leaf of one argument perturbed along one entry (the other leaves stay plain: their tangents are zero).
"""
import copy
import functools
from typing import Any, Callable

import numpy as np

from . import api_modes
from .api import inner_pullback, select
from .errors import ZygoteError
from .forward.dual import Dual, new_tag, strip
from .forward.levels import tangent_of
from .trees import _fields, leaves, matched, unflatten

__all__ = ["jacobian", "hessian", "select"]


def _picked(argnums, n):
    single = isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool)
    picked = range(n) if argnums is None else (argnums,) if single else tuple(argnums) \
        if isinstance(argnums, (tuple, list, range)) else None  # (`argnums=1.0`, `argnums=True`: refused as gradient's)
    if picked is None or any(not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not -n <= k < n
                             for k in picked):
        raise ZygoteError(f"argnums={argnums!r} does not name positional arguments of a call with {n} of them")
    return picked


def _is_leaf_array(x):
    """A real number or a real array (what api_modes differentiates), as opposed to data (ints, bools, None)."""
    return not api_modes._is_data(x)


def _plain(args):
    return all(_fields(a) is None for a in args)


def _real(leaf, where):
    if isinstance(leaf, complex) or np.iscomplexobj(leaf):
        raise ZygoteError(f"jacobian/hessian take real numbers and real arrays; {where} is complex")
    return leaf


# --- Hessians ----------------------------------------------------------------------------------------------------------
def hessian(f: Callable[..., Any], /, *args: Any, argnums: Any = None) -> Any:
    """The Hessian of the real scalar `f(*args)` by forward-over-reverse; of real numbers and arrays (not trees), by
    reverse-over-reverse where dual numbers cannot pass (a NumPy function with no tangent rule).

    With one real number or array argument: an array of shape `x.shape + x.shape`. With several arguments (or
    `argnums` a tuple): `H[i][j]`, the block of shape `args[i].shape + args[j].shape`. An argument that is a tree of
    arrays (a dict of parameters) gives nested blocks in its structure: `H["w"]["b"]`.

    >>> hessian(lambda x, y: x * x * y, 1.0, 2.0)
    ((4.0, 2.0), (2.0, 0.0))

    Called with `f` alone, it returns the function of the point, as `jax.hessian(f)` does: `hessian(f)(x)`.
    """
    if not args:
        return functools.partial(hessian, f, argnums=argnums)
    n = len(args)
    picked = list(_picked(argnums, n))
    if n == 1 and picked == [0] and _plain(args) and not isinstance(argnums, (tuple, list)):
        return api_modes.hessian(f, args[0])  # (`argnums=(0,)` asks for the blocks: `((H,),)`)
    # the differentiable leaves of the picked arguments: (argument, position among its leaves, the leaf)
    real_ints = arithmetic_ints(f, args, picked)
    spots = {i: [(j, _real(leaf, f"argument {i}")) for j, leaf in enumerate(leaves(args[i]))
                 if _is_leaf_array(leaf) or i in real_ints]
             for i in picked}
    try:
        passes = api_modes.Passes(args, f)
        try:
            columns = _columns(f, passes, picked, spots)
        except api_modes.ForwardModeError:
            if sum(len(spots[i]) for i in picked) < 2:
                raise
            # every picked leaf a dual number, the others' tangents zero: an array made from one of them holds a
            # tangent when another's is stored into it (`W = V.copy(); W[1] = V[1] * lam`, lam's column)
            columns = _columns(f, passes, picked, spots, every_leaf=True)
        passes.done()
    except api_modes.ForwardModeError as err:
        live = [i for i in picked if spots[i]]  # (data arguments, an int index array, have no blocks: None)
        if not (_plain(args) and live):
            raise
        try:
            out = _blocks_by_reverse_over_reverse(f, passes.again(), live)
            out = tuple(tuple(out[live.index(i)][live.index(i2)] if i in live and i2 in live else None
                              for i2 in picked) for i in picked)
        except ZygoteError as second:
            err.add_note(f"reverse-over-reverse, tried next, failed too: {type(second).__name__}: "
                         f"{str(second).splitlines()[0]}")
            raise err from None
        return out[0][0] if isinstance(argnums, (int, np.integer)) or argnums is None and n == 1 else out

    def block(p, q, leaf_p, leaf_q):
        shape_p, shape_q = np.shape(leaf_p), np.shape(leaf_q)
        rows = [column[q] for column in columns[p]]
        out = np.stack(rows).reshape(shape_p + shape_q) if rows else np.zeros(shape_p + shape_q)
        return _number_or_array(out.astype(api_modes._precision(leaf_p, leaf_q), copy=False))

    def per_argument(i, i2):
        """H[i][i2]: the tree of argument i, each differentiable leaf holding the tree of argument i2 of blocks."""
        inner = {j: leaf for j, leaf in spots[i]}
        inner2 = {j: leaf for j, leaf in spots[i2]}

        def row(j):
            if j not in inner:
                return None
            return _shaped(args[i2], [block((i, j), (i2, j2), inner[j], inner2[j2])
                                      if j2 in inner2 else None for j2 in range(len(leaves(args[i2])))])
        return _shaped(args[i], [row(j) for j in range(len(leaves(args[i])))])
    out = tuple(tuple(per_argument(i, i2) for i2 in picked) for i in picked)
    return out[0][0] if isinstance(argnums, (int, np.integer)) or argnums is None and n == 1 else out


def arithmetic_ints(f, args, positions):
    """The int arguments among `positions` that `f` computes with as real numbers (`hessian(f, 1, 2.0)`), as gradient
    tells them from those it uses as data (`range(n)`, `x[:n]`), which get None: one reverse pass on copies of the
    arguments, where there are any ints."""
    if not any(type(args[i]) is int for i in positions):
        return set()
    try:
        copies = copy.deepcopy(args)
    except Exception:  # (what cannot be copied: the ints stay data)
        return set()
    grads = api_modes.gradient(f, *copies)
    return {i for i in positions if type(args[i]) is int and grads[i] is not None}


def _columns(f, passes, picked, spots, every_leaf=False):
    """{(i, j): per entry of leaf j of argument i, {(i2, j2): the tangent of the gradient at leaf j2 of argument i2}}:
    one reverse pass on dual numbers per entry; `every_leaf`: the other picked leaves dual numbers too, with zero
    tangents."""
    columns = {}
    args = passes.args
    for i in picked:
        for j, leaf in spots[i]:
            shape = np.shape(leaf)
            per_entry = []
            for k in range(int(np.prod(shape))):
                tag = new_tag()
                moved = list(passes.next())
                for i2 in picked if every_leaf else (i,):
                    flat = leaves(moved[i2])
                    taken = {j2 for j2, _ in spots[i2]} if every_leaf else {j}
                    moved[i2] = unflatten(moved[i2], [_perturbed(v, tag, k if (i2, m) == (i, j) else None)
                                                      if m in taken else v for m, v in enumerate(flat)])
                per_entry.append(_hessian_column(f, moved, args, picked, spots, tag))
                passes.settle(moved)
            columns[(i, j)] = per_entry
    return columns


def _perturbed(leaf, tag, k):
    """`leaf` as a dual number at `tag`, moved along its entry `k` (None: a zero tangent). An int is perturbed as the
    real number it is in arithmetic."""
    shape = np.shape(leaf)
    if shape:
        e = np.zeros(shape, dtype=np.asarray(leaf).dtype)
        if k is not None:
            e.flat[k] = 1.0
        return Dual(tag, leaf, e)
    return Dual(tag, float(leaf) if type(leaf) is int else leaf, 0.0 if k is None else 1.0)


def _blocks_by_reverse_over_reverse(f, args, picked):
    """hessian's blocks `H[i][i2]` of plain arguments where dual numbers cannot pass (a NumPy function with no tangent
    rule): the reverse-mode Jacobian of each picked argument's gradient."""
    rows = []
    for i in picked:
        def slope(*xs, i=i):
            g = api_modes.gradient(f, *xs, argnums=i)
            return np.zeros(np.shape(xs[i])) if g is None else g
        with api_modes.transform_route_only():
            blocks = jacobian(slope, *args, mode="reverse", argnums=tuple(picked))
        if any(b is None for b in blocks):  # (`x[k] * k`: an int both an index and a number, which no pass can move)
            raise ZygoteError("hessian: an int argument is used both as data (an index, a count) and as a number; "
                              "pass it as a float, or leave it out with argnums")
        rows.append(tuple(_number_or_array(np.asarray(b, dtype=float).reshape(np.shape(args[i]) + np.shape(args[i2]))
                                           .astype(api_modes._precision(args[i], args[i2]), copy=False))
                          for b, i2 in zip(blocks, picked, strict=True)))
    return tuple(rows)


def _number_or_array(block):
    """A block between two numbers is a number, as `gradient` gives a float argument a float."""
    return float(block) if block.ndim == 0 else block


def _shaped(tree, values):
    """`values` in `tree`'s structure; a plain leaf's is the value itself."""
    return values[0] if _fields(tree) is None else unflatten(tree, values)


def _hessian_column(f, moved, args, picked, spots, tag):
    """One reverse pass on the perturbed arguments: {(i, j): the tangent of the gradient at leaf j of argument i}."""
    try:
        y, back = inner_pullback(f, *moved)
        if np.ndim(strip(y)) != 0:
            raise ZygoteError(f"hessian needs f to return a real scalar; it returned shape {np.shape(strip(y))}")
        grads = back(1.0)
    except api_modes.ForwardModeError as e:
        err = api_modes.ForwardModeError(f"hessian (forward-over-reverse): {api_modes._rule_frame(e)} cannot take "
                                         f"dual numbers: {e}{api_modes._user_frame(e)}")
        for note in getattr(e, "__notes__", ()):
            err.add_note(note)
        raise err from e
    out = {}
    for i in picked:
        found = matched(args[i], grads[i])
        for j, leaf in spots[i]:
            g = found[j]
            t = None if g is None else tangent_of(g, tag)
            out[(i, j)] = np.zeros(np.shape(leaf)) if t is None else np.asarray(t, dtype=float).reshape(np.shape(leaf))
    return out


# --- Jacobians ---------------------------------------------------------------------------------------------------------
def jacobian(f: Callable[..., Any], /, *args: Any, mode: str | None = None, argnums: Any = None) -> Any:
    """One Jacobian per positional argument, each of shape `y.shape + x.shape` (None for data arguments: ints, bools).

    Args:
        f: a function of real numbers/arrays, or trees of them, returning a real number or array, or a tree of them.
        *args: the point.
        mode: "reverse" (one pullback per output entry), "forward" (one pushforward per input entry), or None to pick
            forward mode exactly when the inputs have fewer entries than the output (plain arrays only).
        argnums: the positional arguments to differentiate (an int: that Jacobian alone; a tuple: a tuple).
    Returns:
        a tuple of arrays; where an argument is a tree, its Jacobian is that tree of blocks `y.shape + leaf.shape`;
        where the result is a tree, the tuple stands at each of its leaves.

    >>> jacobian(lambda x: x ** 2, np.array([1.0, 2.0]))[0]
    array([[2., 0.],
           [0., 4.]])

    Called with `f` alone, it returns the function of the point, as `jax.jacobian(f)` does: `jacobian(f)(x)`.
    """
    if not args:
        return functools.partial(jacobian, f, mode=mode, argnums=argnums)
    n = len(args)
    if mode not in (None, "forward", "reverse"):
        raise ZygoteError(f"jacobian: mode must be 'forward', 'reverse' or None, not {mode!r}")
    if _plain(args) and mode == "forward":
        return select(api_modes.jacobian(f, *args, mode=mode), argnums, n)
    if mode == "forward":
        raise ZygoteError("jacobian: mode='forward' takes real numbers and real arrays, not containers of them")
    if _plain(args):
        for i, a in enumerate(args):
            api_modes._check_input(a, i)
    passes = api_modes.Passes(args, f)
    y, back = inner_pullback(f, *passes.next())
    if _plain(args) and _fields(y) is None:
        return select(api_modes.jacobian_at(f, args, y, back, mode, passes), argnums, n)
    outs = leaves(y)
    for leaf in outs:
        api_modes._check_output(leaf)
    rows = []  # per output leaf, per entry: the pullback's gradients
    for o, leaf in enumerate(outs):
        shape = np.shape(leaf)
        per_entry = []
        for k in range(int(np.prod(shape))):
            e = np.zeros(shape)
            e.flat[k] = 1.0
            dy = unflatten(y, [(e if shape else 1.0) if m == o else np.zeros(np.shape(v)) if np.shape(v) else 0.0
                               for m, v in enumerate(outs)])
            per_entry.append(back(dy))
        rows.append(per_entry)

    def for_output(o, leaf):
        shape = np.shape(leaf)

        def for_argument(i):
            arg = args[i]
            flat = leaves(arg)
            blocks = []
            for j, x in enumerate(flat):
                if not _is_leaf_array(x):
                    blocks.append(None)
                    continue
                _real(x, f"argument {i}")
                entries = []
                for grads in rows[o]:
                    g = matched(arg, grads[i])[j]
                    entries.append(np.zeros(np.shape(x)) if g is None else np.asarray(g, dtype=float))
                out = np.stack(entries).reshape(shape + np.shape(x)) if entries else np.zeros(shape + np.shape(x))
                blocks.append(_number_or_array(out.astype(api_modes._precision(x, leaf), copy=False)))
            return _shaped(arg, blocks)
        return select(tuple(for_argument(i) for i in range(n)), argnums, n)
    per_leaf = [for_output(o, leaf) for o, leaf in enumerate(outs)]
    return _shaped(y, per_leaf)


for _entry in (jacobian, hessian):
    api_modes.refused_inside_reverse_mode(_entry)

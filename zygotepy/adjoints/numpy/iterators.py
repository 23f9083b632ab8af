"""NumPy's iterator objects: `np.ndindex` yields index tuples (data), `np.ndenumerate(a)` is differentiated as the
comprehension it means (`[(i, a[i]) for i in np.ndindex(a.shape)]`), and `np.nditer` is refused where it would write
into an operand that carries a gradient: its elements are views that zygotepy cannot follow (a write through one,
`e[...] = e * e`, went unseen: a silently wrong gradient), and its rule runs even where the call looks inactive; a
loop over one whose result carries a gradient is refused by the iteration rule (structures/iteration.py)."""
import numpy as np

from ...ast_adjoint.call_checks import call_site
from ...ast_adjoint.dispatch import J
from ...errors import ZygoteError
from ..registry import adjoint, nondifferentiable
from ...ast_adjoint.guards_runtime import differentiable

nondifferentiable(np.ndindex)


def ndenumerate_list(a):
    """`np.ndenumerate(a)` as a list of `(index, a[index])` pairs."""
    return [(index, a[index]) for index in np.ndindex(np.shape(a))]


@adjoint(np.ndenumerate)
def _ndenumerate(a):
    pairs, pb = J(ndenumerate_list, a)
    return pairs, lambda dy: pb(dy)[1:]


@adjoint(np.nditer)
def _nditer(op, *args, **kwargs):
    operands = op if isinstance(op, (list, tuple)) else (op,)
    where = call_site()
    if _writes(args, kwargs) and any(differentiable(o) for o in operands):
        raise nditer_refused(where)  # (such a call looks inactive: its rule runs even so, `__zygote_always__`)
    it = np.nditer(op, *args, **kwargs)

    def back(dy):  # (a loop whose result carries a gradient over it is refused: structures/iteration.py)
        if dy is not None:
            raise nditer_refused(where)
        return (None,) * (1 + len(args))
    return it, back


_nditer.__zygote_always__ = True


def _writes(args, kwargs):
    flags = kwargs.get("op_flags", args[1] if len(args) > 1 else None)
    return flags is not None and any("write" in str(f) for f in np.ravel(np.asarray(flags, dtype=object)))


def nditer_refused(where):
    return ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate np.nditer over arrays that "
                       f"carry gradients (its elements are views it cannot follow); loop over indices "
                       f"(`for i in np.ndindex(x.shape)`) or over `x.ravel()`, and write results with `y[i] = ...`")

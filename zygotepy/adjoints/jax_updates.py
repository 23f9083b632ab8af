"""JAX's indexed updates, `x.at[index].set(v)` and its siblings (`add`, `subtract`, `multiply`/`mul`, `divide`,
`power`, `min`, `max`, `get`): JAX arrays are immutable, so this is how JAX code writes `x[index] = v`.

Why this module: `x.at` is JAX's helper object, whose methods run JAX's scatter through internals the transform cannot
read (a `jnp.asarray` with no namespace-generic rule), so every such call raised. Under differentiation, reading `x.at`
of a JAX array gives an `IndexUpdates` of this module instead (`index_updates`, called by the `getattr` rule): plain
classes the transform follows as it follows a user's, whose methods call one primitive, `indexed_update`. Its rule runs
JAX's own update and takes the pullback from `jax.vjp`, so the gradient follows JAX's semantics exactly, including the
ones a hand-written back would have to re-derive: which of several updates of one index wins (`set`), ties of
`min`/`max`, `mode="drop"`/`"fill"`. JAX takes `fill_value` as a static constant: one that carries a gradient raises.

`x.at[index].apply(f)` is refused: JAX would differentiate `f` itself and miss gradients of values `f` captures from
the differentiated code. Importing this module never imports JAX.
"""
import sys

from ..errors import ZygoteError
from ..structgrad import StructGrad
from . import registry
from .registry import adjoint
from .jax_nn import _like

def index_updates(obj):
    """`obj.at` as differentiated code reads it: an `IndexUpdates` of `obj` where it is a JAX array, else None."""
    jax = sys.modules.get("jax")
    if jax is None or not isinstance(obj, jax.Array):
        return None
    return IndexUpdates(obj)


class IndexUpdates:
    """`x.at` of a JAX array `x`: indexing it names the entries an update changes."""

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return IndexUpdate(self.array, index)


class IndexUpdate:
    """`x.at[index]`: each method returns a new array, `x` with the entries at `index` updated (`get` reads them)."""

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self, **options):
        return indexed_update("get", self.array, self.index, None, options)

    def set(self, values, **options):
        return indexed_update("set", self.array, self.index, values, options)

    def add(self, values, **options):
        return indexed_update("add", self.array, self.index, values, options)

    def subtract(self, values, **options):
        return indexed_update("subtract", self.array, self.index, values, options)

    def multiply(self, values, **options):
        return indexed_update("multiply", self.array, self.index, values, options)

    def mul(self, values, **options):
        return indexed_update("mul", self.array, self.index, values, options)

    def divide(self, values, **options):
        return indexed_update("divide", self.array, self.index, values, options)

    def power(self, values, **options):
        return indexed_update("power", self.array, self.index, values, options)

    def min(self, values, **options):
        return indexed_update("min", self.array, self.index, values, options)

    def max(self, values, **options):
        return indexed_update("max", self.array, self.index, values, options)

    def apply(self, func, **options):
        raise ZygoteError("zygotepy cannot differentiate x.at[index].apply(f): JAX would differentiate f alone, and "
                          "miss the gradients of what f captures; write the update with .set(f(x[index]))")


def indexed_update(mode, array, index, values, options):
    """JAX's `array.at[index].<mode>(values, **options)` (`get` takes no values)."""
    ref = array.at[index]
    return ref.get(**options) if mode == "get" else getattr(ref, mode)(values, **options)


@adjoint(IndexUpdate.get)
def _get_rule(ref, **options):
    """`x.at[index].get(...)`: a rule of the method itself, so that its keywords are the user's call's: JAX takes
    `fill_value` as a static constant, and one that carries a gradient raises (DroppedKeyword) where a constant runs."""
    y, back = _indexed_update_rule("get", ref.array, ref.index, None, options)
    return y, lambda dy: (None if dy is None else StructGrad(array=back(dy)[1]),)


@adjoint(indexed_update)
def _indexed_update_rule(mode, array, index, values, options):
    import jax
    import jax.numpy as jnp
    if values is None:
        y, vjp = jax.vjp(lambda a: indexed_update(mode, a, index, None, options), array)
    else:
        y, vjp = jax.vjp(lambda a, v: indexed_update(mode, a, index, v, options), array,
                         values if isinstance(values, jax.Array) else jnp.asarray(values))

    def back(dy):
        if dy is None:
            return (None,) * 5
        grads = vjp(jnp.broadcast_to(jnp.asarray(dy, dtype=y.dtype), y.shape))
        return None, _like(array, grads[0]), None, None if values is None else _like(values, grads[1]), None
    return y, back


_MODES = ("set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max")


def _own_ref_rule(mode):
    """`x.at[index].<mode>(values)` where `x.at` was JAX's own helper (an array that carries no gradient, read plainly:
    `jnp.zeros(3).at[1].set(x[0])`, the way JAX builds an array from pieces): the same update's rule."""
    def rule(ref, values, **options):
        y, back = _indexed_update_rule(mode, ref.array, ref.index, values, options)

        def ref_back(dy):
            if dy is None:
                return (None, None)
            grads = back(dy)
            return (None if grads[1] is None else StructGrad(array=grads[1]), grads[3])
        return y, ref_back
    rule.__qualname__ = f"jax_at_{mode}"
    return rule


def register():
    """Register the rules on the methods of JAX's own `x.at[index]` (once)."""
    ref_type = getattr(sys.modules.get("jax._src.numpy.array_methods"), "_IndexUpdateRef", None)
    if ref_type is None or _registered[0]:  # (another JAX layout: `.at` on a constant keeps JAX's code)
        return
    _registered[0] = True
    for mode in _MODES:
        adjoint(getattr(ref_type, mode))(_own_ref_rule(mode))


_registered = [False]
registry.on_import("jax", register)

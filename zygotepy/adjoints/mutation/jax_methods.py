"""JAX's arrays, which cannot change: the NumPy methods that update their array in place (`sort`, `fill`, `put`,
`partition`, `resize`, `itemset`), written as updates, are refused.

Why: NumPy's functions of a JAX array compute in JAX here (the rules compute in their inputs' namespace), where
NumPy's own would return a NumPy array: `y = np.exp(x); y.sort()` then called JAX's `sort`, which returns a sorted
copy and leaves `y` as it was (a silently different program: value 7.04 for 9.65). The names are declared for JAX's
array class when JAX has been imported (zygotepy never imports it)."""
import sys

from ...ast_adjoint.call_checks import call_site
from ...errors import ZygoteError
from ..in_place import updates_in_place
from ..registry import on_import

_NAMES = ("sort", "fill", "put", "partition", "resize", "itemset")


def _immutable(name):
    def rule(x, *args, **kwargs):
        raise ZygoteError(f"{call_site() or 'a call'}: `x.{name}(...)` on a JAX array leaves it as it is (JAX arrays "
                          f"cannot change; NumPy's functions of JAX arrays give JAX arrays here, where NumPy's own "
                          f"give a NumPy array): " + (f"write `x = jnp.{name}(x)`" if name == "sort" else
                                                      "compute a new array instead"))
    rule.__qualname__ = f"jax_array_{name}_rule"
    return rule


def register():
    array = getattr(sys.modules.get("jax._src.array"), "ArrayImpl", None)
    if array is not None:
        for name in _NAMES:
            updates_in_place(array, name)(_immutable(name))


on_import("jax", register)

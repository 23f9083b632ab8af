"""What the structure rules share: `like`, which puts a sequence's item cotangents in the structure of the sequence
(a tuple's in a tuple, a namedtuple's in a StructGrad, an array's rows stacked), the `Items` iterator that `iter`
hands generated code, and the helpers of generated code that carry no gradient (declared constants here)."""
import collections
import types

import numpy as np

from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import call_site
from ...backends import asarray, namespace, on, on_any, zeros as zeros_on
from ...errors import ZygoteError
from ...structgrad import StructGrad
from ..registry import nondifferentiable
from .dicts import keys_read

KEYS_VIEW = type({}.keys())  # a dict's keys view: a set of the keys, whose cotangent (dict_keys') is a list of theirs

nondifferentiable(on, on_any, zeros_on)  # device keywords and fresh zeros: constants (an outer level runs the rules' code)
nondifferentiable(rt.flat_index, rt.unreachable, rt.none_set, rt.any_set, rt.new_cell, rt.set_cell, rt.contained_in, rt.not_contained_in,
                  rt.raise_, rt.raise_from, rt.assertion_failed, rt.format_value, rt.join_str, rt.is_scalar, rt.is_same,
                  rt.is_none, rt.is_not_none, rt.all_true, rt.import_name, range, slice)


def like(template, items):
    """`items` (a list of cotangents) in the structure of the sequence `template`."""
    if all(i is None for i in items):
        return None
    if type(template) is Items:  # the items it had left when walked: the last ones
        return StructGrad({"items": [None] * (len(template.items) - len(items)) + list(items)})
    if isinstance(template, dict):  # its keys (`list(d)`, `sorted(d)`): they pass nothing back into the dict
        return keys_read(list(template), items)
    if type(template) is KEYS_VIEW:  # `d.keys()`: a list of its keys' cotangents, which its rule files for them
        return list(items)
    if isinstance(template, (set, frozenset)):  # items in the set's iteration order, keyed by element
        return {e: g for e, g in zip(template, items) if g is not None}
    if hasattr(type(template), "_fields") and isinstance(template, tuple):  # a namedtuple: a structural gradient
        return StructGrad((k, g) for k, g in zip(template._fields, items) if g is not None)
    if isinstance(template, collections.deque):  # a list-like container: its cotangent is a list
        return list(items)
    if isinstance(template, (tuple, list)):
        return type(template)(items) if type(template) in (tuple, list) else tuple(items)
    xp = namespace(template)
    if hasattr(template, "shape"):
        rows = [xp.zeros_like(template[k, ...], dtype=_float_dtype(template)) if g is None
                else g if getattr(type(g), "__zygote_number__", False)  # (hessian's dual numbers: stacked as they are)
                else asarray(xp, g, template) for k, g in enumerate(items)]  # (on template's device)
        return xp.stack(rows)
    if (hasattr(template, "__dict__") or hasattr(type(template), "__slots__")) \
            and not isinstance(template, (types.GeneratorType, types.FunctionType, type)) \
            and not type(template).__name__.endswith("iterator"):
        # a user object walked natively (sum(obj), max(obj), a, b = obj): its items' cotangents have no way back
        raise ZygoteError(f"zygotepy cannot route the gradient of the items of a {type(template).__name__} object "
                          f"walked here; iterate it in a for loop, or with list(obj), which zygotepy follows "
                          f"through its __iter__ or __getitem__")
    return tuple(items)


def _float_dtype(x):
    kind = getattr(x.dtype, "kind", "f")
    return x.dtype if kind in "fc" else np.float64


class Items:
    """What `iter(seq)` gives generated code: an iterator over a list of the items that knows how far it has got, so
    that `next(it)` and a later walk of what is left (a for loop, list(it), sum(it)) give their items' cotangents at the
    right positions. Its cotangent is a structural gradient whose `items` is a list of one cotangent per item, as for
    any object (an outer level of nesting differentiates this class like a user's). A plain class, not slots:
    `differentiable` looks into its items."""

    def __init__(self, items, watch=None):
        self.items, self.at, self.watch = items, 0, watch

    def __iter__(self):
        return self

    def __next__(self):
        if self.watch is not None and rt.lazy_changed(self.watch) is not None:
            raise ZygoteError(f"{call_site() or 'a call'}: zygotepy cannot differentiate taking an item of an "
                              f"iterator (iter, zip, map, filter, enumerate, reversed, a generator) after what it "
                              f"walks was updated in place: zygotepy takes its items when the iterator is made, "
                              f"Python when they are taken; make the iterator after the update, or index the sequence")
        at = self.at
        if at == len(self.items):
            raise StopIteration
        self.at = at + 1
        return self.items[at]

    def __length_hint__(self):
        return len(self.items) - self.at

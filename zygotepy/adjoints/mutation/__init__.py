"""Rules for updates in place: item and attribute stores, `del`, list/dict/array methods that mutate, calls that may
update their arguments, `out=`, augmented assignment, and the links that carry an update between objects.

Each primitive maps an old version of an object to its new version (the same object, see ast_adjoint/lower/mutation.py). Its `back`
gets the new version's cotangent and returns the old version's: the slot written receives nothing from before, its
cotangent goes to the value written. Every `back` first undoes its update (mutate.Journal), so the backward of anything
that ran earlier sees the values it saw; these rules are in `registry.MUTATING`, so the adjoint pass calls their `back`
even when no cotangent reached the new version.

- stores.py: `x[i] = v`, `obj.a = v`, `del x[i]`, `del obj.a`;
- calls.py: calls that may update their arguments (`mutcall`, `valuecall`), `out=`, `np.copyto`, `np.add.at`;
- methods.py: the methods of lists, dicts and arrays that update their object (`lst.append(v)`, ...);
- operators.py: the in-place operators (`a += b`, ...), the aliases after them, `|` and `|=`; torch_methods.py: torch's
  in-place tensor methods (`x.add_(y)`, ...), which are those operators' rules; jax_methods.py: NumPy's in-place
  methods on JAX's arrays, which cannot change (refused);
- links.py: an update carried from a child to the objects holding it and back (`put_item`, `refresh`, ...), by where
  the child sits (held.py) and which elements arrays share (overlap.py);
- loop_links.py: the links between a `for` loop's variable and what the loop walks.

Importing the package registers them all (adjoints/__init__.py imports it last: its in-place operator rules override
the plain ones).
"""
from ...ast_adjoint import mutate as mt
from ...ast_adjoint.call_checks import captured_unchanged
from ...ast_adjoint.guards_runtime import compared, eager_items, eager_items_done, isscalar, \
    kept_iterator_taken_in_part, kept_lookup
from ..registry import nondifferentiable
from . import links, loop_links  # noqa: F401 (registers the links' rules, then the loop variables')

nondifferentiable(mt.global_method, mt.global_read, kept_lookup, compared, captured_unchanged,
                  kept_iterator_taken_in_part, eager_items, eager_items_done, isscalar)

from . import stores, calls, operators, torch_methods, jax_methods  # noqa: E402, F401 (registers their rules)
from . import deques  # noqa: E402, F401 (registers collections.deque's rules)

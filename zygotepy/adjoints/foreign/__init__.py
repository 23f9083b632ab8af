"""Other libraries' code inside differentiated functions: torch and JAX functions wrapped whole, and the methods and
functions of other libraries' arrays.

- wrappers.py: `torch_function(fn)`, `jax_function(fn)` and `foreign(fn)` (exported here and by `zygotepy`): a torch
  or JAX function of NumPy arrays whose rule is the other library's own reverse mode.
- array_methods.py: `x.sum()`, `x.reshape(...)`, `x.T` on JAX arrays, torch tensors, array-API and CuPy arrays, mapped
  to namespace-generic rules (`index`, `attribute`: read by the registry and the `getattr` rule).
- torch_functions.py: `torch.sum(x, dim=1)` and the other torch functions whose keywords or meanings are not NumPy's
  (`torch_function(fn, name, rule)`, read by the registry).
- arguments.py: what those two share (torch's keyword names, positional axes, casts).
"""
from . import array_methods, torch_functions  # noqa: F401 (they give the registry its foreign lookups)
from .wrappers import foreign, jax_function, torch_function

__all__ = ["foreign", "jax_function", "torch_function"]

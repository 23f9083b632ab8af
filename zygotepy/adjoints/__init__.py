"""The rule registry and the built-in rule tables (importing this package registers them)."""
import importlib

from . import contexts, control, numpy, objects, registry, structures  # noqa: F401

# complex before the NumPy tables: where both register a rule (np.real, np.angle, ...), numpy/complex_parts.py's wins;
# the NumPy tables in numpy.TABLES' order (numpy/__init__.py); mutation last: its in-place operator rules (which really
# update arrays and lists) override the plain ones; scipy_special and scipy_stats register nothing where SciPy is not
# installed (an optional dependency: the module guards its import)
for _table in ("scalar", "matmul", "math_gamma", "builtins", "complex", *(f"numpy.{t}" for t in numpy.TABLES), "scipy_special",
               "scipy_stats", "functional", "nesting", "jax_nn", "torch_nn", "mutation"):
    try:
        importlib.import_module(f"{__name__}.{_table}")
    except ModuleNotFoundError as e:  # tables still being written
        if e.name != f"{__name__}.{_table}":
            raise

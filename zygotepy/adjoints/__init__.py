"""The rule registry and the built-in rule tables (importing this package registers them)."""
import importlib

from . import contexts, control, objects, registry, structures  # noqa: F401

# complex before the numpy_* tables: where both register a rule (np.real, np.angle, ...), numpy_elementwise's wins;
# mutation last: its in-place operator rules (which really update arrays and lists) override the plain ones;
# scipy_special and scipy_stats register nothing where SciPy is not installed (an optional dependency: the module guards its import)
for _table in ("scalar", "math_gamma", "builtins", "numpy", "complex", "numpy_elementwise", "scipy_special", "scipy_stats",
               "numpy_reductions", "numpy_shapes", "numpy_linalg", "numpy_decompositions", "numpy_fills", "numpy_sets",
               "numpy_select", "array_inline", "functional", "nesting", "jax_nn", "torch_nn", "mutation"):
    try:
        importlib.import_module(f"{__name__}.{_table}")
    except ModuleNotFoundError as e:  # tables still being written
        if e.name != f"{__name__}.{_table}":
            raise

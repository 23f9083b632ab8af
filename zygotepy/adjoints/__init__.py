"""The rule registry and the built-in rule tables (importing this package registers them)."""
import importlib

from . import contexts, control, numpy, objects, registry, structures  # noqa: F401

# No two tables register a rule for the same function (tests/adjoints/test_registry.py), so the order matters only
# where a table reads another's rules as it loads: the NumPy tables in numpy.TABLES' order (numpy/__init__.py), and
# mutation last (`x += y` takes `+`'s rule). scipy_special and scipy_stats register nothing where SciPy is not
# installed (an optional dependency: each guards its import); scipy_linalg and scipy_fft register when scipy.linalg and
# scipy.fft are imported.
for _table in ("scalar", "operators", "piecewise", "matmul", "math_gamma", "builtins", "complex", *(f"numpy.{t}" for t in numpy.TABLES),
               "scipy_special", "scipy_stats", "scipy_stats_refusals", "scipy_linalg", "scipy_linalg_more", "scipy_fft", "scipy_sparse", "scipy_integrate", "scipy_signal", "functional", "itertools_picks", "stdlib_statistics", "nesting", "jax_nn", "jax_linalg", "jax_updates", "torch_nn", "torch_conversions", "torch_autograd", "jax_autograd", "mutation"):
    importlib.import_module(f"{__name__}.{_table}")

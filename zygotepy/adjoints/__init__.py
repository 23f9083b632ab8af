"""The rule registry and the built-in rule tables (importing this package registers them)."""
import importlib

from . import registry, structures  # noqa: F401

for _table in ("scalar", "builtins", "numpy", "numpy_elementwise", "numpy_reductions", "numpy_shapes",
               "numpy_linalg", "numpy_decompositions"):
    try:
        importlib.import_module(f"{__name__}.{_table}")
    except ModuleNotFoundError as e:  # tables still being written
        if e.name != f"{__name__}.{_table}":
            raise

"""The rule registry and the built-in rule tables (importing this package registers them)."""
import importlib

from . import control, objects, registry, structures  # noqa: F401

for _table in ("scalar", "builtins", "numpy", "complex", "nesting", "mutation"):
    try:
        importlib.import_module(f"{__name__}.{_table}")
    except ModuleNotFoundError as e:  # tables still being written
        if e.name != f"{__name__}.{_table}":
            raise

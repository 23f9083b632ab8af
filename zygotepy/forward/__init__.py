"""Forward mode: dual numbers (dual.py, their arithmetic operators in operators.py), their tangent rules (rules.py and
the other `*_rules.py`) and the call-routing transform (transform.py).

Importing the package gives the dual numbers only: the rule registry (below the rule tables) reads them, so the package
must not load the tables, which register into it. `zygotepy.api_modes` imports the tables. The public entry points live
in `zygotepy.api_modes`.
"""
from . import operators  # noqa: F401  (installs the dual numbers' arithmetic operators)
from .dual import Dual, new_tag, tangent_rule

__all__ = ["Dual", "new_tag", "tangent_rule"]

"""Forward mode: dual numbers (dual.py), their tangent rules (rules.py) and the call-routing transform (transform.py).

Importing the package registers the rule table. The public entry points live in `zygotepy.api_modes`.
"""
from . import linalg_rules, numpy_rules, rules, scipy_rules  # noqa: F401  (register the tangent rules)
from .dual import Dual, new_tag, tangent_rule
from .transform import forward_version

__all__ = ["Dual", "new_tag", "tangent_rule", "forward_version"]

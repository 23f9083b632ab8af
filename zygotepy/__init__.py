"""zygotepy: source-to-source reverse-mode automatic differentiation for ordinary Python."""
from . import adjoints as _adjoints  # noqa: F401  (registers the built-in rule tables)
from .adjoints.control import checkpoint, dropgrad, hook
from .adjoints.foreign import foreign, jax_function, torch_function
from .adjoints.registry import adjoint
from .api import gradient, pullback, value_and_gradient
from .api_blocks import hessian, jacobian
from .api_modes import derivative, forwarddiff, pushforward
from .ast_adjoint.source import SourceUnavailable, register_source
from .errors import (ForwardModeError, MissingAdjoint, MissingTangentRule, RecursionTooDeep, UnsupportedSyntax,
                     ZygoteError)
from .inspection import optimizations, show_adjoint
from .structgrad import StructGrad
from .transforms import grad, hvp, jvp, tree_map, value_and_grad, vjp

__all__ = ["gradient", "value_and_gradient", "pullback", "jacobian", "hessian", "pushforward", "derivative",
           "grad", "value_and_grad", "vjp", "jvp", "hvp", "tree_map",
           "forwarddiff", "adjoint", "checkpoint", "hook", "dropgrad", "show_adjoint", "optimizations", "register_source",
           "StructGrad",
           "torch_function", "jax_function", "foreign",
           "ZygoteError", "UnsupportedSyntax", "MissingAdjoint", "SourceUnavailable", "RecursionTooDeep",
           "ForwardModeError", "MissingTangentRule"]

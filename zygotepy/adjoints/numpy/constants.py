"""NumPy functions and ndarray methods that never carry a gradient: shapes and sizes, fresh arrays of zeros and ones,
rounding, comparisons and predicates, arg-reductions and searches, integer and bit operations, dtype queries and
random draws of integers and uniforms. They run as constants; the ndarray methods among them (`x.argmax()`) also carry
a rule that returns no cotangents, since a method call looks for a rule.
"""
import numpy as np

from ..registry import adjoint, nondifferentiable


# --- no gradient: shapes, fresh arrays, rounding, comparisons, arg-reductions -----------------------------------------
nondifferentiable(np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim, np.size, np.argmax,
                  np.argmin, np.argsort, np.floor, np.ceil, np.round, np.around, np.rint, np.isnan, np.isfinite,
                  np.isinf, np.zeros, np.ones, np.empty, np.eye, np.identity,
                  np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, np.logical_and,
                  np.logical_or, np.logical_not, np.all, np.any, np.ndarray.argmax, np.ndarray.argmin,
                  np.ndarray.argsort, np.ndarray.nonzero, np.nonzero, np.count_nonzero, np.allclose, np.isclose)


# --- no gradient: rounding, predicates, integer and bit operations, random draws --------------------------------------
nondifferentiable(
    np.trunc, np.fix, np.signbit, np.isreal, np.iscomplex, np.isrealobj, np.iscomplexobj, np.isneginf,
    np.isposinf, np.isnat, np.isscalar, np.floor_divide, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
    np.left_shift, np.right_shift, np.gcd, np.lcm, np.logical_xor, np.spacing, np.array_equal,
    np.array_equiv, np.searchsorted, np.digitize, np.nonzero, np.flatnonzero,
    np.argwhere, np.nanargmax, np.nanargmin, np.argpartition, np.lexsort, np.result_type, np.can_cast, np.promote_types,
    np.broadcast_shapes, np.ndarray.round, np.ndarray.all, np.ndarray.any,
    np.tri, np.indices, np.diag_indices, np.diag_indices_from, np.tril_indices, np.tril_indices_from, np.triu_indices,
    np.triu_indices_from, np.linalg.matrix_rank, np.random.rand, np.random.randn, np.random.randint, np.random.random,
    np.random.shuffle, np.random.seed, np.random.default_rng,
    np.random.Generator.random, np.random.Generator.integers, np.random.Generator.standard_normal)

CONSTANT_METHODS = (np.ndarray.argmax, np.ndarray.argmin, np.ndarray.argsort, np.ndarray.argpartition,
                    np.ndarray.nonzero, np.ndarray.round, np.ndarray.all, np.ndarray.any, np.ndarray.searchsorted) + (
                    # the array-API idiom `xp = x.__array_namespace__()` (NumPy 2): a module, no gradient
                    (np.ndarray.__array_namespace__,) if hasattr(np.ndarray, "__array_namespace__") else ())


def _constant_method(method):
    """`x.argmax()` and friends: a method call looks for a rule, not for the non-differentiable set (see
    ast_adjoint/dispatch.py `_method_kind`), so these carry a rule that returns no cotangents, and stay declared."""
    def rule(*args, **kwargs):
        def back(dy):
            return tuple(None for _ in args)
        # (the object's own method: a NumPy scalar's `np.float64(x).round(1)` is not ndarray's)
        return getattr(args[0], method.__name__)(*args[1:], **kwargs), back
    rule.__qualname__ = f"{method.__name__}_constant"
    return rule


for _method in CONSTANT_METHODS:
    adjoint(_method)(_constant_method(_method))
nondifferentiable(*CONSTANT_METHODS)

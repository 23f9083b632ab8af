"""The rule table: one row per rule registered by `zygotepy/adjoints/{scalar,builtins,functional}.py`, the item reads of
structures.py and the NumPy rules of `zygotepy/adjoints/numpy/` (their rows: tests/adjoints/numpy/rows_*.py).

A row names the target, its arguments and the shapes to try. An argument is either a `Kind` (a random real number or
array drawn from a domain where the function is smooth), a `Seq` of them (a list or tuple argument), or a constant
(an int exponent, an axis, a shape), which is passed as it is and never perturbed. `shapes` lists the cases: for each
case one shape per random argument, in order: `None` for a Python float, `()` for a 0-d array, a tuple of shapes for a
`Seq` (one per element).
"""
import functools
import heapq
import itertools
import math
import operator
import os
import statistics
import sys

import numpy as np
import rows_keywords
from table_base import (  # noqa: F401
    ANY,
    COND,
    CPLX,
    GT1,
    HIGH,
    IN_PLACE,
    LOW,
    MATMUL,
    NZ,
    POS,
    S1,
    S2,
    UNIT,
    B,
    Kind,
    Row,
    Seq,
    U,
    label,
    row,
)

import zygotepy.adjoints  # noqa: F401  (registers the tables)
from zygotepy.adjoints import registry

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy"))
import rows_calculus  # noqa: E402
import rows_elementwise  # noqa: E402
import rows_fft  # noqa: E402
import rows_fills  # noqa: E402
import rows_linalg  # noqa: E402
import rows_moments  # noqa: E402
import rows_reductions  # noqa: E402
import rows_select  # noqa: E402
import rows_sets  # noqa: E402
import rows_shapes  # noqa: E402
import rows_starter  # noqa: E402

# --- scalar.py: operators -----------------------------------------------------------------------------------------------
OPERATOR_ROWS = [
    row(operator.add, ANY, ANY, shapes=B),
    row(operator.add, Seq(ANY), Seq(ANY), shapes=[((None, None), (None,))], label="operator.add[list]"),
    row(operator.add, Seq(ANY, tuple), Seq(ANY, tuple), shapes=[(((2,), None), (None,))], label="operator.add[tuple]"),
    row(operator.sub, ANY, ANY, shapes=B),
    row(operator.mul, ANY, ANY, shapes=B),
    row(operator.mul, Seq(ANY), 3, shapes=[((None, None),)], none=(1,), label="operator.mul[list*3]"),
    row(operator.truediv, ANY, NZ, shapes=B),
    row(operator.mod, ANY, POS, shapes=B),
    row(operator.floordiv, ANY, POS, shapes=B),  # (piecewise constant: adjoints/piecewise.py)
    row(operator.pow, POS, ANY, shapes=B),
    row(operator.pow, ANY, 3, shapes=[(None,), ((2, 3),)], label="operator.pow[int exponent]"),
    row(operator.matmul, ANY, ANY, shapes=MATMUL),
    row(operator.neg, ANY, shapes=U),
    row(operator.pos, ANY, shapes=U),
    row(operator.abs, NZ, shapes=U),
    row(operator.iadd, ANY, ANY, shapes=IN_PLACE),
    row(operator.isub, ANY, ANY, shapes=IN_PLACE),
    row(operator.imul, ANY, ANY, shapes=IN_PLACE),
    row(operator.itruediv, ANY, NZ, shapes=IN_PLACE),
    row(operator.imod, ANY, POS, shapes=IN_PLACE),
    row(operator.ipow, POS, ANY, shapes=IN_PLACE),
    row(operator.imatmul, ANY, ANY, shapes=[((2, 2), (2, 2)), ((3, 2, 2), (2, 2))]),
]

# --- scalar.py: math ----------------------------------------------------------------------------------------------------
MATH_ROWS = [
    row(math.sin, ANY, shapes=S1), row(math.cos, ANY, shapes=S1), row(math.tan, UNIT, shapes=S1),
    row(math.asin, UNIT, shapes=S1), row(math.acos, UNIT, shapes=S1), row(math.atan, ANY, shapes=S1),
    row(math.atan2, NZ, NZ, shapes=S2), row(math.degrees, ANY, shapes=S1), row(math.radians, ANY, shapes=S1),
    row(math.sinh, ANY, shapes=S1), row(math.cosh, ANY, shapes=S1), row(math.tanh, ANY, shapes=S1),
    row(math.asinh, ANY, shapes=S1), row(math.acosh, GT1, shapes=S1), row(math.atanh, UNIT, shapes=S1),
    row(math.exp, ANY, shapes=S1), row(math.expm1, ANY, shapes=S1), row(math.log, POS, shapes=S1),
    row(math.log, POS, GT1, shapes=S2, label="math.log[base]"), row(math.log1p, UNIT, shapes=S1),
    row(math.log2, POS, shapes=S1), row(math.log10, POS, shapes=S1), row(math.sqrt, POS, shapes=S1),
    row(math.pow, POS, ANY, shapes=S2), row(math.pow, ANY, 2, shapes=S1, label="math.pow[int exponent]"),
    row(math.hypot, NZ, NZ, shapes=S2), row(math.hypot, NZ, NZ, NZ, shapes=[(None,) * 3], label="math.hypot[3]"),
    row(math.erf, ANY, shapes=S1), row(math.erfc, ANY, shapes=S1), row(math.fabs, NZ, shapes=S1),
    row(math.copysign, NZ, NZ, shapes=S2, none=(1,)), row(math.fmod, ANY, NZ, shapes=S2),
    row(math.remainder, ANY, NZ, shapes=S2),
    row(math.ldexp, ANY, 3, shapes=S1, none=(1,)),
    row(math.frexp, NZ, shapes=S1), row(math.modf, ANY, shapes=S1),
]
if hasattr(math, "exp2"):
    MATH_ROWS.append(row(math.exp2, ANY, shapes=S1))
if hasattr(math, "cbrt"):
    MATH_ROWS.append(row(math.cbrt, NZ, shapes=S1))

# --- builtins.py ----------------------------------------------------------------------------------------------------------
BUILTIN_ROWS = [
    row(abs, NZ, shapes=[(None,), ((3,),)]),
    row(float, ANY, shapes=S1),
    row(pow, POS, ANY, shapes=S2),
    row(sum, Seq(ANY), shapes=[((None,) * 4,), (((3,), (3,), (1,)),)]),
    row(sum, Seq(ANY, tuple), ANY, shapes=[((None,) * 3, None), (((2,), (2,)), (2,))], label="builtins.sum[start]"),
    row(sum, ANY, shapes=[((4, 3),), ((5,),)], label="builtins.sum[array]"),
    row(min, Seq(ANY), shapes=[((None,) * 5,)]),
    row(min, ANY, ANY, ANY, shapes=[(None,) * 3], label="builtins.min[args]"),
    row(min, ANY, shapes=[((5,),)], label="builtins.min[array]"),
    row(max, Seq(ANY, tuple), shapes=[((None,) * 5,)]),
    row(max, ANY, ANY, shapes=[(None,) * 2], label="builtins.max[args]"),
    row(max, ANY, shapes=[((5,),)], label="builtins.max[array]"),
    row(max, Seq(ANY), shapes=[((None,) * 4,)], kw={"key": abs}, label="builtins.max[key]"),
    row(sorted, Seq(ANY), shapes=[((None,) * 5,)]),
    row(sorted, Seq(ANY, tuple), shapes=[((None,) * 5,)], kw={"reverse": True}, label="builtins.sorted[reverse]"),
    row(reversed, Seq(ANY), shapes=[((None,) * 3,)], f=lambda s: list(reversed(s))),
    row(map, math.sin, Seq(ANY), shapes=[((None,) * 3,)], f=lambda fn, s: list(map(fn, s))),
    row(map, operator.mul, Seq(ANY), Seq(ANY, tuple), shapes=[((None,) * 3, (None,) * 2)],
        f=lambda fn, a, b: list(map(fn, a, b)), label="builtins.map[two sequences]"),
    row(filter, None, Seq(ANY), shapes=[((None,) * 4,)], f=lambda fn, s: list(filter(fn, s))),
    row(itertools.filterfalse, None, Seq(ANY), shapes=[((None,) * 4,)],
        f=lambda fn, s: list(itertools.filterfalse(fn, s))),
    # functools / itertools, through their Python twins (adjoints/functional.py)
    row(functools.reduce, operator.mul, Seq(ANY), shapes=[((None,) * 3,)]),
    row(functools.reduce, lambda a, b: a * b + a, Seq(ANY, tuple), ANY, shapes=[((None,) * 3, None)],
        label="functools.reduce[initial]"),
    row(heapq.nsmallest, 2, Seq(ANY), shapes=[((None,) * 5,)], none=(0,)),
    row(heapq.nlargest, 3, Seq(ANY), shapes=[((None,) * 5,)], none=(0,)),
    row(heapq.nsmallest, 2, Seq(ANY), shapes=[((None,) * 5,)], kw={"key": lambda v: (v - 0.3) ** 2},
        none=(0,), label="heapq.nsmallest[key]"),
    row(itertools.accumulate, Seq(ANY), shapes=[((None,) * 4,)], f=lambda s: list(itertools.accumulate(s))),
    row(itertools.accumulate, Seq(ANY), operator.mul, shapes=[((None,) * 4,)],
        f=lambda s, fn: list(itertools.accumulate(s, fn)), label="itertools.accumulate[mul]"),
    row(itertools.chain, Seq(ANY), Seq(ANY, tuple), shapes=[((None,) * 2, (None, (2,), None))],
        f=lambda a, b: list(itertools.chain(a, b))),
    row(itertools.chain.from_iterable, Seq(Seq(ANY)), shapes=[(((None,) * 2, (None,)),)],
        f=lambda s: list(itertools.chain.from_iterable(s))),
    row(itertools.starmap, operator.mul, Seq(Seq(ANY, tuple)), shapes=[(((None, None), (None, (2,))),)],
        f=lambda fn, s: list(itertools.starmap(fn, s))),
    row(itertools.product, Seq(ANY), Seq(ANY, tuple), shapes=[((None,) * 2, (None,) * 3)],
        f=lambda a, b: list(itertools.product(a, b))),
    row(itertools.product, Seq(ANY), shapes=[((None,) * 3,)], kw={"repeat": 2},
        f=lambda a, repeat: list(itertools.product(a, repeat=repeat)), label="itertools.product[repeat]"),
    # the itertools that pick and pair items, by positions (adjoints/itertools_picks.py)
    row(itertools.pairwise, Seq(ANY), shapes=[((None, (2,), None, None),)], f=lambda s: list(itertools.pairwise(s))),
    row(itertools.combinations, Seq(ANY), 2, shapes=[((None,) * 4,)], f=lambda s, r: list(itertools.combinations(s, r))),
    row(itertools.combinations_with_replacement, Seq(ANY, tuple), 2, shapes=[((None, (2,), None),)],
        f=lambda s, r: list(itertools.combinations_with_replacement(s, r))),
    row(itertools.permutations, Seq(ANY), shapes=[((None,) * 3,)], f=lambda s: list(itertools.permutations(s))),
    row(itertools.permutations, Seq(ANY), 2, shapes=[((None,) * 3,)], f=lambda s, r: list(itertools.permutations(s, r)),
        label="itertools.permutations[r]"),
    row(itertools.islice, Seq(ANY), 1, None, 2, shapes=[((None,) * 5,)], f=lambda s, *b: list(itertools.islice(s, *b))),
    row(itertools.islice, Seq(ANY), 2, shapes=[((None, (3,), None),)], f=lambda s, b: list(itertools.islice(s, b)),
        label="itertools.islice[stop]"),
    row(itertools.compress, Seq(ANY), [1, 0, 1, 1], shapes=[((None,) * 4,)],
        f=lambda s, k: list(itertools.compress(s, k))),
    row(itertools.zip_longest, Seq(ANY), Seq(ANY, tuple), shapes=[((None,) * 3, (None,)), ((None,), (None,) * 2)],
        kw={"fillvalue": 2.5}, f=lambda a, b, fillvalue: list(itertools.zip_longest(a, b, fillvalue=fillvalue)),
        label="itertools.zip_longest[fillvalue]"),
    row(itertools.takewhile, lambda t: abs(t) < 10.0, Seq(ANY), shapes=[((None,) * 3,)],
        f=lambda p, s: list(itertools.takewhile(p, s))),
    row(itertools.dropwhile, lambda t: abs(t) > 10.0, Seq(ANY), shapes=[((None,) * 3,)],
        f=lambda p, s: list(itertools.dropwhile(p, s))),
    row(itertools.repeat, ANY, 3, shapes=[((2,),)], f=lambda v, n: list(itertools.repeat(v, n))),
    row(itertools.tee, Seq(ANY), 3, shapes=[((None,) * 2,)], f=lambda s, n: [list(t) for t in itertools.tee(s, n)]),
    row(operator.itemgetter.__call__, operator.itemgetter(2, 0), Seq(ANY), shapes=[((None, (2,), None),)],
        f=lambda get, s: get(s), label="operator.itemgetter()"),
    row(operator.attrgetter.__call__, operator.attrgetter("T.real", "real"), ANY, shapes=[((2, 3),)],
        f=lambda get, a: get(a), label="operator.attrgetter()"),
    row(operator.methodcaller.__call__, operator.methodcaller("sum", 1), ANY, shapes=[((2, 3),)],
        f=lambda call, a: call(a), label="operator.methodcaller()"),
    # the statistics module, through float twins (adjoints/stdlib_statistics.py)
    row(statistics.mean, Seq(ANY), shapes=[((None,) * 4,)]),
    row(statistics.fmean, Seq(ANY), shapes=[((None,) * 4,)]),
    row(statistics.fmean, Seq(ANY), Seq(POS), shapes=[((None,) * 3, (None,) * 3)], label="statistics.fmean[weights]"),
    row(statistics.variance, Seq(ANY), shapes=[((None,) * 4,)]),
    row(statistics.variance, Seq(ANY), ANY, shapes=[((None,) * 4, None)], label="statistics.variance[xbar]"),
    row(statistics.pvariance, Seq(ANY), shapes=[((None,) * 4,)]),
    row(statistics.geometric_mean, Seq(POS), shapes=[((None,) * 4,)]),
    row(statistics.harmonic_mean, Seq(POS), shapes=[((None,) * 4,)]),
    row(statistics.harmonic_mean, Seq(POS), Seq(POS), shapes=[((None,) * 3, (None,) * 3)],
        label="statistics.harmonic_mean[weights]"),
    row(statistics.stdev, Seq(ANY), shapes=[((None,) * 4,)]),
    row(statistics.pstdev, Seq(ANY), ANY, shapes=[((None,) * 4, None)], label="statistics.pstdev[mu]"),
    row(statistics.correlation, Seq(ANY), Seq(ANY), shapes=[((None,) * 4, (None,) * 4)]),
    row(statistics.linear_regression, Seq(ANY), Seq(ANY), shapes=[((None,) * 4, (None,) * 4)]),
    row(list, Seq(ANY, tuple), shapes=[((None,) * 3,)]),
    row(tuple, Seq(ANY), shapes=[((None, (2,)),)]),
    row(complex, ANY, ANY, shapes=[(None, None)]),
    row(complex, ANY, shapes=[(None,)], label="complex[one argument]"),  # (raised: two cotangents for one argument)
    row(complex, CPLX, CPLX, shapes=[(None, None)], label="complex[complex parts]"),
    row(divmod, ANY, POS, shapes=[(None, None)]),
    # piecewise constant (adjoints/piecewise.py): no cotangent on numbers
    row(round, ANY, shapes=[(None,)]),
    row(round, ANY, 2, shapes=[(None,)], label="builtins.round[ndigits]"),
    row(math.floor, ANY, shapes=S1),
    row(math.ceil, ANY, shapes=S1),
    row(math.trunc, ANY, shapes=[(None,)]),
    row(math.fsum, Seq(ANY), shapes=[((None,) * 4,)]),
    row(math.prod, Seq(ANY), shapes=[((None,) * 4,), ((None,),)]),  # (raised MissingAdjoint)
    row(math.prod, Seq(ANY, tuple), shapes=[((None,) * 3,)], kw={"start": 2.5}, label="math.prod[start=]"),
    row(math.dist, Seq(ANY), Seq(ANY), shapes=[((None,) * 3, (None,) * 3)]),  # (raised MissingAdjoint)
]

# --- structures.py: array indexing, operator.getitem ---------------------------------------------------------------------
MASK = np.array([[True, False, True], [False, False, True]])
INDEXES = {
    "int": 1, "negative int": -1, "slice": slice(0, 2), "step": slice(None, None, 2), "negative step": slice(None, None, -1),
    "row, column": (1, 2), "ellipsis": (Ellipsis, 1), "None": (None, 0), "mask": MASK, "mask rows": np.array([True, False]),
    "fancy": np.array([0, 1, 0, 0]), "fancy pairs": (np.array([0, 1, 1]), np.array([2, 2, 2])),
    "list": [1, 1, 0], "mixed": (slice(None), [2, 0, 2]),
}
INDEX_ROWS = [row(operator.getitem, ANY, index, shapes=[((2, 3),)], none=(1,), label=f"operator.getitem[{name}]")
              for name, index in INDEXES.items()]
INDEX_ROWS.append(row(operator.getitem, ANY, (), shapes=[((),)], none=(1,), label="operator.getitem[0-d, ()]"))


# --- adjoints/numpy/: their rows are in tests/adjoints/numpy/rows_*.py, checked in tests/adjoints/numpy/test_<module>.py --
ELEMENTWISE_DOMAINS = {**rows_starter.ELEMENTWISE_DOMAINS, **rows_elementwise.ELEMENTWISE_DOMAINS}
FLOAT32_BINARY = list(rows_elementwise.BINARY_DOMAINS)
FLOAT32_REDUCTIONS = rows_reductions.FLOAT32_REDUCTIONS

ROWS = (OPERATOR_ROWS + MATH_ROWS + BUILTIN_ROWS + rows_starter.NUMPY_ROWS + rows_elementwise.ELEMENTWISE_ROWS
        + rows_elementwise.CONSTANT_METHOD_ROWS + rows_reductions.REDUCTION_ROWS + rows_shapes.SHAPE_ROWS + INDEX_ROWS
        + rows_linalg.LINALG_ROWS + rows_fills.FILL_ROWS + rows_sets.UNIQUE_ROWS + rows_select.SELECT_ROWS
        + rows_keywords.KEYWORD_ROWS + rows_fft.FFT_ROWS + rows_calculus.CALCULUS_ROWS + rows_moments.MOMENTS_ROWS)


def rule_module(r):
    """The module of zygotepy whose rule the row `r` checks (a rule that a factory of adjoints/numpy/common.py made is
    numpy/elementwise.py's, the table that registers it)."""
    module = registry.find_rule(r.op).__module__
    return "zygotepy.adjoints.numpy.elementwise" if module == "zygotepy.adjoints.numpy.common" else module


def rows_of(module):
    """The rows of the rules of `zygotepy/adjoints/numpy/<module>.py` (tests/adjoints/numpy/test_<module>.py checks
    them; tests/adjoints/test_rules.py the rows of the rules outside adjoints/numpy/)."""
    return [r for r in ROWS if rule_module(r) == f"zygotepy.adjoints.numpy.{module}"]


# Targets that must be registered as non-differentiable (they run as constants).
NONDIFF = [
    math.ulp,
    np.diag_indices, np.diag_indices_from, np.tril_indices, np.tril_indices_from, np.triu_indices, np.triu_indices_from,
    np.linalg.matrix_rank,
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.not_, operator.truth,
    operator.is_, operator.is_not, operator.contains, operator.ifloordiv, math.isnan, math.isinf, math.isfinite,
    len, isinstance, issubclass, type, id, hash, print, repr, str, int, bool, range, callable, hasattr, any,
    all, chr, ord, format,
    np.zeros_like, np.ones_like, np.empty_like, np.shape, np.argmax, np.argmin, np.argsort, np.floor,
    np.ceil, np.round, np.around, np.isnan, np.isfinite, np.zeros, np.ones, np.empty, np.eye,
    np.trunc, np.fix, np.signbit, np.floor_divide, np.bitwise_and, np.gcd, np.searchsorted, np.nonzero,
    np.random.rand, np.random.randn, np.random.Generator.integers, np.ndarray.argmax, np.ndarray.round,
]

# --- rules written for NumPy arrays and Python numbers only (all others are namespace-generic: they serve JAX, torch,
# CuPy and array-API arrays too, and tests/backends/test_array_api_table.py runs their rows on array_api_strict arrays)
_PARTS_NUMPY_ONLY = (MATH_ROWS + BUILTIN_ROWS + rows_elementwise.ELEMENTWISE_ROWS
                     + rows_fills.FILL_ROWS + rows_sets.UNIQUE_ROWS + rows_select.SELECT_ROWS
                     + rows_elementwise.CONSTANT_METHOD_ROWS + rows_linalg.LINALG_ROWS + rows_fft.FFT_ROWS
                     + rows_calculus.CALCULUS_ROWS + rows_moments.MOMENTS_ROWS)
NUMPY_ONLY = {r.op for r in _PARTS_NUMPY_ONLY if r.op is not abs} | {  # abs(x) is the operator rule
    # the starter rules (rows_starter.py): casts, ndarray methods, products beyond matmul/dot
    np.array, np.asarray, np.outer, np.inner, np.ndarray.sum, np.ndarray.mean, np.ndarray.max, np.ndarray.min,
    np.ndarray.dot, np.ndarray.ravel, np.ndarray.squeeze, np.ndarray.reshape, np.ndarray.copy, np.ndarray.astype,
    np.ndarray.transpose, np.ndarray.view, np.ndarray.__copy__, np.ndarray.__deepcopy__,
    # rows_reductions.py and rows_shapes.py: all of them but those of GENERIC_BEYOND_STARTER
    *(r.op for r in rows_reductions.REDUCTION_ROWS + rows_shapes.SHAPE_ROWS),
}
# the rules beyond the starter set (rows_reductions.py, rows_shapes.py, rows_linalg.py) that are
# namespace-generic: the array API has their functions (prod, var/std, cumulative_sum, flip, tril, linalg.inv, ...)
GENERIC_BEYOND_STARTER = {
    np.prod, np.var, np.std, np.cumsum, np.cumprod,
    np.roll, np.moveaxis, np.swapaxes, np.matrix_transpose, np.flip, np.fliplr, np.flipud, np.tril, np.triu,
    np.broadcast_to, np.broadcast_arrays,
    np.linalg.inv, np.linalg.solve, np.linalg.det, np.linalg.slogdet, np.linalg.matrix_power, np.linalg.norm,
    np.linalg.vector_norm, np.linalg.matrix_norm, np.linalg.cholesky,
    *((np.cumulative_sum, np.cumulative_prod) if hasattr(np, "cumulative_sum") else ()),
    np.einsum, np.tensordot, np.linalg.tensordot, np.trace, np.linalg.trace, np.diff, np.sort, np.take,
    np.take_along_axis, np.pad, np.median, np.nansum, np.nanmean, np.nanmax, np.nanmin,
    np.linalg.qr, np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.svdvals, np.linalg.pinv, np.linalg.lstsq,
    # numpy/elementwise.py and complex_parts.py: composed from array-API functions where a namespace lacks one (backends/composed.py)
    np.arcsinh, np.arccosh, np.arctanh, np.cbrt, np.exp2, np.deg2rad, np.rad2deg, np.degrees, np.radians, np.fabs,
    np.copysign, np.fmax, np.fmin, np.fmod, np.remainder, np.logaddexp, np.logaddexp2, np.float_power, np.sinc, np.heaviside,
    np.real, np.imag, np.conjugate, np.angle, np.nan_to_num,
    # numpy/gathering.py, diagonals.py, stacking.py, conversions.py: gathered through NumPy's run on the flat indices, or assembled with concat and slices
    np.tile, np.repeat, np.rot90, np.delete, np.resize, np.diagonal, np.diag, np.diagflat, np.hstack, np.vstack,
    np.dstack, np.column_stack, np.append, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.atleast_1d,
    np.atleast_2d, np.atleast_3d, *((np.unstack,) if hasattr(np, "unstack") else ()),
    # products: composed from matmul, tensordot, broadcast products and sums where the namespace has no function
    np.outer, np.linalg.outer, np.inner, np.vdot, np.kron, np.cross, np.linalg.cross, np.vecdot, np.linalg.vecdot,
    np.matvec, np.vecmat, np.linalg.multi_dot, np.linalg.matmul, np.linalg.matrix_transpose,
    # numpy/statistics.py: max - min, and weighted sums
    np.ptp, np.average,
    # generic5: the grid, the diagonal of the last two axes, selections by a NumPy condition
    np.meshgrid, np.linalg.diagonal, np.compress, np.extract, np.ldexp, np.interp,
    np.polyval, np.convolve, np.correlate,
}
NUMPY_ONLY -= GENERIC_BEYOND_STARTER

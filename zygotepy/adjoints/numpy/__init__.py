"""The NumPy rule tables: one module per family of functions, all registered by `import zygotepy`.

- common.py: helpers the modules share (arguments as arrays, cotangents in the argument's form, the rule factories of
  elementwise functions, a reduction's axes); registers nothing.
- elementwise.py, complex_parts.py, select.py (where, clip, select, choose), interp.py; constants.py: the functions and
  ndarray methods that carry no gradient.
- reductions.py (sum, mean, max/min, prod, var/std, trace), statistics.py (ptp, median, average, the nan-ignoring
  reductions), scans.py (cumsum, cumprod, diff), ufunc_methods.py (the `reduce` and `accumulate` methods of add,
  multiply, maximum, minimum, logaddexp and logaddexp2), segments.py (`reduceat` of add, multiply, maximum and
  minimum), moments.py (cov, corrcoef, the quantiles and percentiles).
- calculus.py (trapezoid, gradient, ediff1d, and the polynomials: polyfit, polyder, polyint, vander).
- reshaping.py (reshape, transpose, flips, broadcasting), gathering.py (tile, repeat, pad, roll, sort, take),
  diagonals.py, stacking.py (concatenate, stack, split), conversions.py (np.array, casts, atleast_nd, item, tolist).
- products.py (dot, matmul, einsum, tensordot, ...), convolutions.py (convolve, correlate, polyval), linalg.py (inverses,
  solves, determinants, the np.linalg names), decompositions.py (norms, cholesky, qr, eigh, svd, lstsq), spectral.py
  (eigvals and cond, composed from decompositions.py's rules), fft.py (the
  np.fft transforms and shifts: linear maps, whose backs are their adjoints).
- fills.py (full, linspace, arange, random draws), sets.py (unique, bincount, histogram), index_tricks.py (`np.r_`,
  `np.c_`: the getitem rule of structures.py calls it; registers nothing), vectorize.py (`np.vectorize(f)(x)`),
  iterators.py (ndindex, ndenumerate, nditer).
- methods.py: the ndarray methods whose rules are the functions' (`x.sum()`), and the array attributes (`.T`, `.real`).
- dispatchers.py: NumPy's Python functions without a rule here (`np.piecewise`), differentiated through their source.
- array_inline.py: the array fast path's derivatives, which the compiler pastes into generated code (ast_adjoint/
  optimize/array_paths.py).

This module imports none of them: structures.py imports index_tricks.py while zygotepy/adjoints/__init__.py is still
registering the tables, and methods.py needs structures.py in return. Any import of this package runs
`zygotepy/__init__.py` first, whose `adjoints/__init__.py` imports every module of TABLES, in that order (after
complex.py: where both register a rule, complex_parts.py's wins).
"""
TABLES = ("common", "elementwise", "complex_parts", "select", "interp", "constants", "reductions", "statistics", "scans",
          "ufunc_methods", "segments", "moments", "calculus", "reshaping", "gathering", "diagonals", "stacking",
          "conversions", "products", "convolutions", "linalg", "decompositions", "spectral", "fft", "fills", "sets",
          "index_tricks", "vectorize", "iterators", "methods", "array_inline", "dispatchers")

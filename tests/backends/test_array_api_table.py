"""The rule table on `array_api_strict` arrays: every row whose rule is namespace-generic, against central finite
differences of the NumPy function; results and cotangents must be arrays of the strict namespace, of the input's dtype.

A NumPy function resolves to the strict namespace's function of the same name (its array-API name where they differ),
so this also checks the registry's foreign lookup; operators run on strict arrays directly.
"""
import copy
import operator
import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "adjoints"))
from rule_table import NUMPY_ONLY, ROWS, Seq  # noqa: E402
from test_rules import _draw, _draw_keywords, _fmt, _inner, _like, _moved, split_keywords  # noqa: E402

from zygotepy import ZygoteError  # noqa: E402
from zygotepy.adjoints import registry  # noqa: E402
from zygotepy.backends import _ARRAY_API_NAMES  # noqa: E402

xps = pytest.importorskip("array_api_strict")
Strict = type(xps.asarray(0.0))
EPS = 1e-6


def _strict_target(op):
    """The strict namespace's function for a NumPy function (the NumPy function itself when the strict namespace has
    none: its namespace-generic rule must still compute in the strict namespace); operators stay themselves."""
    name = getattr(op, "__name__", "")
    if getattr(np.linalg, name, None) is op:
        return getattr(xps.linalg, name, None) or op
    if not isinstance(op, np.ufunc) and getattr(np, name, None) is not op:
        return op
    return getattr(xps, name, None) or getattr(xps, _ARRAY_API_NAMES.get(name, name), None) \
        or getattr(xps, {"transpose": "permute_dims", "concatenate": "concat"}.get(name, name), None) or op


def _to_strict(a):
    if isinstance(a, np.ndarray):
        return xps.asarray(a)
    if isinstance(a, (list, tuple)):
        return type(a)(_to_strict(v) for v in a)
    return a


def _rebuild(like, items):
    """A list or tuple of like's type (a namedtuple too) holding items."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def _to_numpy(g):
    if isinstance(g, (list, tuple)):
        return _rebuild(g, [_to_numpy(v) for v in g])
    return np.asarray(g) if isinstance(g, Strict) else g


def _assert_strict(g, a, where):
    """A cotangent of a strict array is a strict array of its shape and dtype."""
    if g is None:
        return
    if isinstance(a, (list, tuple)):
        for k, (gi, ai) in enumerate(zip(g, a, strict=True)):
            _assert_strict(gi, ai, f"{where}[{k}]")
        return
    if isinstance(a, Strict):
        assert isinstance(g, Strict), f"{where}: a {type(g).__name__} cotangent for a strict array"
        assert g.shape == a.shape and g.dtype == a.dtype, f"{where}: {g.shape} {g.dtype} for {a.shape} {a.dtype}"


GENERIC = [r for r in ROWS if registry.is_generic(r.op)]
CASES = [(r, case) for r in GENERIC for case in r.shapes]
IDS = [f"{r.name}:{','.join(_fmt(s) for s in case)}" for r, case in CASES]


@pytest.mark.parametrize("r, case", CASES, ids=IDS)
def test_generic_rule_on_strict_arrays(r, case):
    seed = zlib.crc32(f"{r.name}{case}".encode())
    rng = np.random.default_rng(seed)
    args, random = _draw(r.args, case, rng)
    target = _strict_target(r.op)
    rule = registry.find_rule(target)
    twin = registry.twin_of(target) or target
    assert registry.is_generic(twin) and rule is registry.find_rule(twin), f"{target} resolves to {rule}"
    if any(isinstance(a, Seq) for a in r.args) and r.op not in (np.concatenate, np.stack, np.hstack, np.vstack,
                                                                 np.dstack, np.column_stack, np.linalg.multi_dot):
        pytest.skip("a list of numbers or arrays is NumPy's array-like convention")
    if _draw_keywords(r.kwargs, rng)[1]:
        pytest.skip("keyword cotangents are checked on NumPy arrays (the array API has no initial=, prepend=, ...)")
    if r.name.endswith("[several]"):
        pytest.skip("several arrays lifted at once give NumPy's sequence of results, whose cotangents this table "
                    "draws as NumPy arrays (the one-array rows check the rule on these arrays)")
    if r.op is np.linalg.eigh and "U" in args[1:]:
        pytest.skip("the array API's eigh reads the lower triangle: the rule gives it the mirrored upper one, whose "
                    "eigenvectors LAPACK may return with other signs than NumPy's UPLO='U' (both are right)")
    strict_args = [_to_strict(a) for a in args]
    try:
        y, back = rule(*copy.deepcopy(strict_args), **r.kwargs)
    except IndexError as e:  # NumPy's indexing beyond the array API (a list index, a partial index of an n-d array)
        if r.op is operator.getitem:
            pytest.skip(f"array_api_strict refuses this index: {e}")
        raise
    except ZygoteError as e:  # documented: np.dot with a second argument of more than 2 axes
        if r.op is np.dot and "no namespace-generic rule" in str(e):
            pytest.skip(str(e))
        if r.op is np.linalg.lstsq and "has no lstsq" in str(e):  # the array API defines none
            pytest.skip(str(e))
        if r.op is np.interp and "period= is not supported" in str(e):  # documented: NumPy arrays only
            pytest.skip(str(e))
        if r.op is np.pad and "reflect_type" in str(e):  # documented: NumPy arrays only
            pytest.skip(str(e))
        raise
    f = r.f or r.op
    expected = f(*copy.deepcopy(args), **r.kwargs)
    if isinstance(expected, np.ndarray) and any(isinstance(a, Strict) for a in strict_args):
        assert isinstance(y, Strict), f"result {type(y).__name__}, not a strict array"
    if isinstance(expected, (tuple, list)):  # a decomposition's factors, a split's pieces have different shapes
        assert type(y) is not Strict and len(y) == len(expected)
        for k, (v, e) in enumerate(zip(_to_numpy(y), expected, strict=True)):
            np.testing.assert_allclose(v, e, rtol=1e-12, atol=1e-12, err_msg=f"result entry {k}")
    else:
        np.testing.assert_allclose(_to_numpy(y), expected, rtol=1e-12, atol=1e-12)
    dy_np = _like(expected if isinstance(expected, (list, tuple)) else np.asarray(_to_numpy(y)) if np.ndim(expected)
                  else expected, rng)
    dy = dy_np
    if isinstance(y, Strict):
        dy = xps.asarray(np.asarray(dy_np, dtype=np.asarray(y).dtype))
    elif isinstance(y, (list, tuple)) and y and all(isinstance(v, Strict) for v in y):  # broadcast_arrays, unstack
        dy = _rebuild(y, [xps.asarray(np.asarray(d, dtype=np.asarray(v).dtype)) for d, v in zip(dy_np, y, strict=True)])
    try:
        grads, _ = split_keywords(rule, back(dy), r.kwargs)
    except ZygoteError as e:  # documented: integer-array indices of a (non-JAX) foreign array raise
        if r.op is operator.getitem and "index array" in str(e):
            pytest.skip(str(e))
        raise
    assert type(grads) is tuple and len(grads) == len(args)
    for i in r.none:
        assert grads[i] is None
    for i, (a, is_random) in enumerate(zip(args, random, strict=True)):
        if not is_random:
            continue
        _assert_strict(grads[i], strict_args[i], f"argument {i}")
        v = _like(a, rng)

        def pairing(value):
            moved = copy.deepcopy(args)
            moved[i] = value
            return _inner(dy_np, f(*moved, **r.kwargs))
        numeric = (pairing(_moved(a, v, EPS)) - pairing(_moved(a, v, -EPS))) / (2 * EPS)
        assert _inner(_to_numpy(grads[i]), v) == pytest.approx(numeric, rel=r.rtol, abs=1e-6)


def test_the_table_marks_every_numpy_only_rule():
    """A row's rule is namespace-generic exactly when the table does not mark it NumPy-only."""
    wrong = sorted({r.name for r in ROWS if registry.is_generic(r.op) == (r.op in NUMPY_ONLY)})
    assert not wrong, f"rows whose NUMPY_ONLY mark disagrees with the registry: {wrong}"


def test_the_generic_set_covers_the_common_families():
    families = {
        "elementwise": [np.exp, np.log, np.tanh, np.sin, np.sqrt, np.abs, np.add, np.multiply, np.divide, np.power],
        "reductions": [np.sum, np.mean, np.max, np.min],
        "products": [np.matmul, np.dot, operator.matmul],
        "shapes": [np.reshape, np.transpose],
        "indexing": [operator.getitem],
        "selection": [np.where, np.maximum, np.minimum, np.clip],
        "operators": [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.neg],
    }
    missing = {k: [getattr(t, "__name__", t) for t in ts if not registry.is_generic(t)] for k, ts in families.items()}
    assert not any(missing.values()), missing

"""The rule table on JAX arrays (float64, eager) and torch tensors (float64, CPU): every row whose rule is
namespace-generic, as tests/backends/test_array_api_table.py runs them on `array_api_strict` arrays. Results must equal
the NumPy function's; gradients must equal central finite differences of the NumPy function (computed on NumPy
copies of the inputs); cotangents must be arrays of the input's library, shape and dtype.

A NumPy function resolves to the foreign library's function of the same name (its array-API or torch name where they
differ) when that function means what NumPy's does for the row's call (it runs on the foreign arrays and gives NumPy's
result); otherwise the NumPy function's own namespace-generic rule runs on the foreign arrays (the registry maps it,
as it does for `np.<name>(foreign_array)` in user code). Operators run on the foreign arrays directly.
"""
import copy
import operator
import os
import sys
import warnings
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "adjoints"))
from rule_table import ROWS, Seq
from test_rules import _draw, _draw_keywords, _fmt, _inner, _like, _moved, split_keywords

from zygotepy import ZygoteError
from zygotepy.adjoints import registry
from zygotepy.backends import _ARRAY_API_NAMES

EPS = 1e-6
# the rows and cases of test_array_api_table.py (built here too: that module skips itself without array_api_strict)
GENERIC = [r for r in ROWS if registry.is_generic(r.op)]
CASES = [(r, case) for r in GENERIC for case in r.shapes]
IDS = [f"{r.name}:{','.join(_fmt(s) for s in case)}" for r, case in CASES]
_TORCH_NAMES = {"concatenate": "cat", "transpose": "permute", "moveaxis": "movedim", "swapaxes": "swapdims"}
_SEQ_OPS = (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack, np.linalg.multi_dot)

# decompositions whose factors are defined up to the signs of their vectors
_SIGNED = (np.linalg.eigh, np.linalg.svd)

# Known failures of zygotepy on a backend: (backend, test id) -> reason. Strict xfails: they must be fixed, not hidden.
KNOWN_WRONG = {}


def _rebuild(like, items):
    """A list or tuple of like's type (a namedtuple too) holding items."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


class Backend:
    def __init__(self, name, xp, linalg, array_type, to_foreign):
        self.name, self.xp, self.linalg, self.array_type, self.to_foreign = name, xp, linalg, array_type, to_foreign

    def target(self, op):
        """The library's function for a NumPy function, or None; operators and non-NumPy callables stay themselves."""
        name = getattr(op, "__name__", "")
        if getattr(np.linalg, name, None) is op:
            spaces = (self.linalg,)
        elif not isinstance(op, np.ufunc) and getattr(np, name, None) is not op:
            return op
        else:
            spaces = (self.xp,)
        names = [name, _ARRAY_API_NAMES.get(name, name), {"transpose": "permute_dims", "concatenate": "concat"}.get(
            name, name)]
        if self.name == "torch":
            names.append(_TORCH_NAMES.get(name, name))
        for space in spaces:
            for n in names:
                fn = getattr(space, n, None)
                if fn is not None and callable(fn) and registry.twin_of(fn) is not None:
                    return fn
        return None

    def convert(self, a):
        if isinstance(a, np.ndarray):
            return self.to_foreign(a)
        if isinstance(a, (list, tuple)):
            return type(a)(self.convert(v) for v in a)
        return a

    def to_numpy(self, g):
        if isinstance(g, (list, tuple)):
            return _rebuild(g, [self.to_numpy(v) for v in g])
        return np.asarray(g) if isinstance(g, self.array_type) else g

    def check_cotangent(self, g, a, where):
        """A cotangent of a foreign array is an array of its library, shape and dtype."""
        if g is None:
            return
        if isinstance(a, (list, tuple)):
            for k, (gi, ai) in enumerate(zip(g, a, strict=True)):
                self.check_cotangent(gi, ai, f"{where}[{k}]")
            return
        if isinstance(a, self.array_type):
            assert isinstance(g, self.array_type), f"{where}: a {type(g).__name__} cotangent for a {self.name} array"
            assert tuple(g.shape) == tuple(a.shape) and g.dtype == a.dtype, \
                f"{where}: {tuple(g.shape)} {g.dtype} for {tuple(a.shape)} {a.dtype}"


@pytest.fixture(scope="module")
def jax_backend():
    jax = pytest.importorskip("jax", reason="jax is not installed")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        jnp = jax.numpy
        yield Backend("jax", jnp, jnp.linalg, jax.Array, jnp.asarray)
    finally:
        jax.config.update("jax_enable_x64", before)


@pytest.fixture(scope="module")
def torch_backend():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    yield Backend("torch", torch, torch.linalg, torch.Tensor, lambda a: torch.from_numpy(np.array(a)))


def _agrees(y, expected, to_numpy):
    """Whether a result equals NumPy's (same structure, same values)."""
    try:
        if isinstance(expected, (tuple, list)):
            if not isinstance(y, (tuple, list)) or len(y) != len(expected):
                return False
            return all(_agrees(v, e, to_numpy) for v, e in zip(y, expected, strict=True))
        v = np.asarray(to_numpy(y))
        return v.shape == np.shape(expected) and np.allclose(v, expected, rtol=1e-9, atol=1e-9)
    except Exception:  # noqa: BLE001 (a result NumPy cannot read is no agreement)
        return False


# JAX's factorizations of a symmetric matrix symmetrize their input where NumPy's read one triangle: they agree on a
# symmetric matrix, but their gradients differ (adjoints/jax_linalg.py); here NumPy's rule is run on JAX's arrays
_SYMMETRIZED = (np.linalg.cholesky, np.linalg.eigh, np.linalg.eigvalsh)


def _run(be, r, case):
    seed = zlib.crc32(f"{r.name}{case}".encode())
    rng = np.random.default_rng(seed)
    args, random = _draw(r.args, case, rng)
    if any(isinstance(a, Seq) for a in r.args) and r.op not in _SEQ_OPS:
        pytest.skip("a list of numbers or arrays is NumPy's array-like convention")
    if r.name.endswith("[several]"):
        pytest.skip("several arrays lifted at once give NumPy's sequence of results, whose cotangents this table "
                    "draws as NumPy arrays (the one-array rows check the rule on these arrays)")
    if r.op is np.linalg.eigh and "U" in args[1:]:
        pytest.skip("eigenvectors of UPLO='U' may come with other signs than NumPy's LAPACK call (both are right)")
    if _draw_keywords(r.kwargs, rng)[1]:
        pytest.skip("keyword cotangents are checked on NumPy arrays (the array API has no initial=, prepend=, ...)")
    f = r.f or r.op
    expected = f(*copy.deepcopy(args), **r.kwargs)
    foreign_args = [be.convert(a) for a in args]
    target = be.target(r.op)
    # the library's function, when it means NumPy's for this call; else the NumPy function's rule on foreign arrays
    same_meaning = target is r.op
    if target is not None and target is not r.op:
        try:
            with warnings.catch_warnings():  # torch's deprecations of the probe's call (torch.cross without dim)
                warnings.simplefilter("ignore")
                same_meaning = _agrees(target(*copy.deepcopy(foreign_args), **r.kwargs), expected, be.to_numpy)
        except Exception:  # noqa: BLE001 (a refused call: the library's function takes other arguments)
            same_meaning = False
    if be.name == "jax" and r.op in _SYMMETRIZED:  # (JAX's function means another one: tests/adjoints/test_jax_linalg.py)
        same_meaning = False
    if target is r.op and not isinstance(r.op, np.ufunc) and getattr(np, getattr(r.op, "__name__", ""), None) \
            is not r.op:  # an operator (or builtin): the library must take the call itself
        try:
            r.op(*copy.deepcopy(foreign_args), **r.kwargs)
        except Exception as e:  # noqa: BLE001
            pytest.skip(f"{be.name} itself refuses this call: {type(e).__name__}: {e}")
    if same_meaning:
        rule = registry.find_rule(target)
        if target is not r.op:
            assert registry.twin_of(target) is not None and rule is not None, f"{target} has no rule"
    else:
        target = r.op
        rule = registry.find_rule(r.op)
    assert rule is not None and registry.is_generic(registry.twin_of(target) or target), f"{target}: {rule}"
    try:
        try:
            y, back = rule(*copy.deepcopy(foreign_args), **r.kwargs)
        except ZygoteError:
            if target is r.op:
                raise
            # zygotepy refuses the library's function whose meaning differs from NumPy's (torch.split, torch.cross),
            # though it agrees with it on this call: the NumPy function's rule on the foreign arrays must serve
            target, rule = r.op, registry.find_rule(r.op)
            y, back = rule(*copy.deepcopy(foreign_args), **r.kwargs)
    except ZygoteError as e:
        if r.op is np.dot and "no namespace-generic rule" in str(e):  # documented: a second argument of > 2 axes
            pytest.skip(str(e))
        if r.op is np.interp and "period= is not supported" in str(e):  # documented: NumPy arrays only
            pytest.skip(str(e))
        if r.op is np.pad and "reflect_type" in str(e):  # documented: NumPy arrays only
            pytest.skip(str(e))
        raise
    if isinstance(expected, np.ndarray) and any(isinstance(a, be.array_type) for a in foreign_args):
        assert isinstance(y, be.array_type), f"result {type(y).__name__}, not a {be.name} array"
    if r.op in _SIGNED and not _agrees(y, expected, be.to_numpy) and _agrees(
            [np.abs(be.to_numpy(v)) for v in y], [np.abs(e) for e in expected], lambda v: v):
        pytest.skip(f"{be.name}'s LAPACK driver gives its vectors other signs than NumPy's here (both are right; the "
                    f"finite differences of NumPy's factors would pair them with the wrong signs)")
    if isinstance(expected, (tuple, list)):
        assert type(y) is not be.array_type and len(y) == len(expected)
        for k, (v, e) in enumerate(zip(be.to_numpy(y), expected, strict=True)):
            np.testing.assert_allclose(v, e, rtol=1e-10, atol=1e-10, err_msg=f"result entry {k}")
    else:
        np.testing.assert_allclose(be.to_numpy(y), expected, rtol=1e-10, atol=1e-10)
    dy_np = _like(expected if isinstance(expected, (list, tuple)) else np.asarray(be.to_numpy(y)) if np.ndim(expected)
                  else expected, rng)
    dy = dy_np
    if isinstance(y, be.array_type):
        dy = be.to_foreign(np.asarray(dy_np, dtype=np.asarray(y).dtype))
    elif isinstance(y, (list, tuple)) and y and all(isinstance(v, be.array_type) for v in y):
        dy = _rebuild(y, [be.to_foreign(np.asarray(d, dtype=np.asarray(v).dtype)) for d, v in zip(dy_np, y,
                                                                                                    strict=True)])
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
        be.check_cotangent(grads[i], foreign_args[i], f"argument {i}")
        v = _like(a, rng)

        def pairing(value, i=i):
            moved = copy.deepcopy(args)
            moved[i] = value
            return _inner(dy_np, f(*moved, **r.kwargs))
        numeric = (pairing(_moved(a, v, EPS)) - pairing(_moved(a, v, -EPS))) / (2 * EPS)
        assert _inner(be.to_numpy(grads[i]), v) == pytest.approx(numeric, rel=r.rtol, abs=1e-6), f"argument {i}"


def _sample():
    """Eager JAX compiles each operation for each new shape (the whole table takes over two minutes): every
    target's first case and a deterministic eighth of the others (all of them with ZYGOTEPY_FULL_TABLE=1)."""
    if os.environ.get("ZYGOTEPY_FULL_TABLE") == "1":
        return set(IDS)
    seen, keep = set(), set()
    for (r, case), id_ in zip(CASES, IDS, strict=True):
        runs = not (any(isinstance(a, Seq) for a in r.args) and r.op not in _SEQ_OPS)  # else skipped: see _run
        if runs and r.op not in seen or zlib.crc32(id_.encode()) % 8 == 0:
            keep.add(id_)
        if runs:
            seen.add(r.op)
    for (r, case), id_ in zip(CASES, IDS, strict=True):  # a target whose every row is skipped: its first states why
        if r.op not in seen:
            keep.add(id_)
            seen.add(r.op)
    return keep


def _params(backend, sample=None):
    out = []
    for (r, case), id_ in zip(CASES, IDS, strict=True):
        if sample is not None and id_ not in sample:
            continue
        reason = KNOWN_WRONG.get((backend, id_))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(r, case, id=id_, marks=marks))
    return out


@pytest.mark.parametrize("r, case", _params("jax", _sample()))
def test_generic_rule_on_jax_arrays(jax_backend, r, case):
    _run(jax_backend, r, case)


@pytest.mark.parametrize("r, case", _params("torch"))
def test_generic_rule_on_torch_tensors(torch_backend, r, case):
    _run(torch_backend, r, case)

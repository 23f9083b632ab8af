"""Other libraries' functions resolve to the NumPy functions they mean (adjoints/foreign_names.py), through the
registry, which tells it which NumPy functions have rules: the library's own names, the array API's and torch's other
names, and the names that only look alike."""
import numpy as np
import pytest

import zygotepy  # noqa: F401  (registers the built-in rules)
from zygotepy.adjoints import foreign_names, registry


def test_array_api_strict_names_resolve_to_their_numpy_twins():
    xp = pytest.importorskip("array_api_strict")
    assert registry.twin_of(xp.tanh) is np.tanh and registry.twin_of(xp.sum) is np.sum
    assert registry.twin_of(xp.concat) is np.concatenate and registry.twin_of(xp.permute_dims) is np.transpose
    assert registry.find_rule(xp.tanh) is registry.find_rule(np.tanh)  # (namespace-generic: the same rule)


def test_torch_names_and_the_names_that_only_look_alike():
    torch = pytest.importorskip("torch")
    assert registry.twin_of(torch.cat) is np.concatenate and registry.twin_of(torch.tanh) is np.tanh
    assert registry.twin_of(torch.select) is None  # indexing, not np.select
    assert registry.find_rule(torch.tanh) is not None


@pytest.mark.parametrize("name,twin", [("det", np.linalg.det), ("slogdet", np.linalg.slogdet),
                                       ("inverse", np.linalg.inv), ("pinverse", np.linalg.pinv),
                                       ("matrix_power", np.linalg.matrix_power)])
def test_torch_linear_algebra_in_its_own_namespace(name, twin):
    """torch.det (and its siblings in torch's top namespace) are np.linalg's: the gradient equals torch's own
    (MissingAdjoint before)."""
    torch = pytest.importorskip("torch")
    fn = getattr(torch, name)
    assert registry.twin_of(fn) is twin
    m = torch.tensor([[0.3, -0.8, 0.2], [1.2, 0.5, -0.4], [0.7, 0.1, 0.9]], dtype=torch.float64)

    def f(m):
        a = m.T @ m + torch.eye(3, dtype=torch.float64)
        y = fn(a, 3) if name == "matrix_power" else fn(a)
        return y[1] if name == "slogdet" else y.sum()
    (got,) = zygotepy.gradient(f, m)
    leaf = m.clone().requires_grad_(True)
    f(leaf).backward()
    torch.testing.assert_close(got, leaf.grad, rtol=1e-10, atol=1e-12)


def test_a_numpy_function_is_no_twin_and_a_stranger_has_none():
    assert registry.twin_of(np.tanh) is None and registry.twin_of(len) is None and registry.twin_of([]) is None


def test_a_numpy_only_rule_refuses_other_arrays_and_runs_constants():
    xp = pytest.importorskip("array_api_strict")
    rule = foreign_names.numpy_only(np.abs, xp.abs, lambda *a: None)
    y, back = rule(xp.asarray([1, -2]))  # integers carry no gradient: a constant, computed by the library itself
    assert np.array_equal(np.asarray(y), [1, 2]) and back(None) == (None,)
    with pytest.raises(zygotepy.ZygoteError, match="resolves to the rule of np.abs"):
        rule(xp.asarray([0.5]))

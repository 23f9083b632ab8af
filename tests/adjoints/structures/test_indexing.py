"""Indexing (adjoints/structures/indexing.py): fields of structured (record) arrays are refused, naming the line (they
crashed in the backward)."""
import numpy as np
import pytest

from zygotepy import ZygoteError, gradient


def writes_a_field(x):
    r = np.zeros(3, dtype=[("a", "f8"), ("b", "f8")])
    r["a"] = x
    return np.sum(r["a"] ** 2)


def reads_fields(r):
    return np.sum(r["a"] * r["b"])


def test_structured_arrays_are_refused():
    with pytest.raises(ZygoteError, match=r"test_indexing.py:\d+: zygotepy does not differentiate structured"):
        gradient(writes_a_field, np.array([1.0, 2.0, 3.0]))
    rec = np.zeros(3, dtype=[("a", "f8"), ("b", "f8")])
    rec["a"], rec["b"] = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]
    with pytest.raises(ZygoteError, match=r"test_indexing.py:\d+: zygotepy does not differentiate structured"):
        gradient(reads_fields, rec)


def test_a_torch_tensor_indexed_with_index_tensors_or_lists_matches_torch(mode):
    """`x[torch.tensor([0, 2, 2])]`, `x[torch.argmax(x)]`, `x[[0, 2]]` on a tensor were refused ("no namespace-generic
    gradient"): torch's scatter-add (`index_put_(..., accumulate=True)`) adds repeated positions up."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, -2.0, 4.0, 0.5], dtype=torch.float64)
    for f in (lambda x: torch.sum(x[torch.tensor([0, 2, 2])] ** 2), lambda x: x[torch.argmax(x)] * 3,
              lambda x: torch.sum(x[[0, 2]] * x[[1, 1]]), lambda x: torch.sum(x[x > 0] ** 2)):
        g, = gradient(f, x)
        reference = x.clone().requires_grad_(True)
        f(reference).backward()
        assert torch.allclose(g, reference.grad)

"""`v op= c` on another library's mutable array (a torch tensor, an array-API array) held in a list updates it in
place, as that library does: zygotepy made a new value and left the list unchanged, a silently wrong gradient
(torch: (3, 3) where autograd gives (1.8, 7.2)). JAX's arrays are immutable, and there `+=` rebinds."""
import numpy as np
import pytest

from zygotepy import gradient


def _scaled_items(x):
    vs = [x * 1.0, x * 2.0]
    for v in vs:
        v *= x
    w = vs[1]
    w += 1.0  # an alias of an item
    r = vs[0] + vs[1] * vs[1]
    return r[0] + r[1]  # (array-API arrays have no .sum method)


def _numpy_reference(x):
    (g,) = gradient(_scaled_items, np.array(x, dtype=np.float64))
    return g


def test_torch_tensors_in_a_list_are_updated_in_place():
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.3, 1.2], dtype=torch.float64)
    (g,) = gradient(_scaled_items, x)
    xt = x.clone().requires_grad_()
    _scaled_items(xt).backward()
    assert isinstance(g, torch.Tensor)
    assert torch.allclose(g, xt.grad)
    assert np.allclose(g.numpy(), _numpy_reference([0.3, 1.2]))


def test_array_api_arrays_in_a_list_are_updated_in_place():
    xp = pytest.importorskip("array_api_strict")
    x = xp.asarray([0.3, 1.2], dtype=xp.float64)
    (g,) = gradient(_scaled_items, x)
    assert np.allclose(np.asarray(g), _numpy_reference([0.3, 1.2]))

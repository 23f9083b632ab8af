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


def _fill_head(v, s, out=None):
    out[:2] = v[:2] * s


def _over_reversed_items(a, x):
    y = x[::2]
    b = 0.2
    for e in list(reversed(y)):  # (a torch tensor's reversed(): a reversed copy, whose items no update reaches)
        for w in [y]:
            _fill_head(y * 0.5, e * 0.3 + a, out=w)
        b = 0.5 * b + 0.3 * (y * y).sum()
    return b


def test_the_items_of_a_reversed_torch_tensor_are_not_views_of_it():
    """(the program generator's seed 503, program 4220, torch stage) `reversed(t)` was taken as `list(t)[::-1]`,
    whose items are views of `t`: the overwrite of `t` changed them, and d/da came out 0.99798e-2 for 1.00389e-2."""
    torch = pytest.importorskip("torch")
    x0 = torch.tensor([0.47, 0.84, -0.16, -0.11, -0.17, -0.95], dtype=torch.float64)
    (g,) = gradient(_over_reversed_items, 0.3, x0.clone())[:1]
    h = 1e-6
    fd = (_over_reversed_items(0.3 + h, x0.clone()) - _over_reversed_items(0.3 - h, x0.clone())) / (2 * h)
    assert abs(float(g) - float(fd)) < 1e-8
    assert abs(float(g) - float(gradient(_over_reversed_items, 0.3, x0.numpy().copy())[0])) < 1e-12

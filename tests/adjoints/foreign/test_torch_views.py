"""torch's view functions keep their views (adjoints/foreign/torch_views.py): an update in place through
`torch.diagonal(z)`, `z.to(its dtype)`, `z.unsqueeze(0)`, `z.narrow(...)` reaches `z`, as in torch, and the gradient
is that of the function so computed (the twin's copy left `z` as it was: value 60 for 180, gradient 4x for 12x)."""
import numpy as np
import pytest

from plain_checks import central
from zygotepy import value_and_gradient

torch = pytest.importorskip("torch")


def through_to(x):
    z = x * 2.0
    w = z.to(torch.float64)
    w *= 3.0
    return (z * x).sum()


def through_diagonal(x):
    z = x * 2.0
    d = torch.diagonal(z)
    d.mul_(3.0)
    return (z * x).sum()


def through_unsqueeze(x):
    z = x * 2.0
    w = z.unsqueeze(0)
    w += x[0, 0]
    return (z * z).sum()


def through_narrow(x):
    z = torch.tanh(x)
    w = torch.narrow(z, 1, 0, 1)
    w *= x[1, 1]
    return (z * x).sum()


def through_double_and_squeeze(x):
    z = (x * 1.5).double()
    w = torch.squeeze(z[:1], 0)
    w -= 1.0
    return (z ** 2).sum()


@pytest.mark.parametrize("f", [through_to, through_diagonal, through_unsqueeze, through_narrow,
                               through_double_and_squeeze], ids=lambda f: f.__name__)
def test_an_update_through_a_torch_view_reaches_its_tensor(mode, f):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    value, (g,) = value_and_gradient(f, x.clone())
    assert float(value) == pytest.approx(float(f(x.clone())))
    want = central(lambda a: float(f(torch.from_numpy(a))), [x.numpy().copy()], 0)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-6)


def test_a_copy_stays_a_copy():
    """`z.to(torch.float32)` and `z.reshape` of a transposed (non-contiguous) tensor copy in torch: the update of the
    copy leaves z alone."""
    def f(x):
        z = x * 2.0
        w = z.T.reshape(4)
        w *= 3.0
        return (z * x).sum() + w.sum()
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    value, (g,) = value_and_gradient(f, x.clone())
    assert float(value) == pytest.approx(float(f(x.clone())))
    np.testing.assert_allclose(g.numpy(), 4 * x.numpy() + 6.0)

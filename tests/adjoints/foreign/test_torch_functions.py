"""torch's functions with torch's keywords (`torch.stack(xs, dim=1)`, `torch.amin(x, dim=0, keepdim=True)`,
`torch.max(x, y)`) through the NumPy twins' rules (adjoints/foreign/torch_functions.py): against torch.autograd."""
import numpy as np
import pytest

import zygotepy


def test_torch_functions_with_dim_keywords_match_autograd():
    torch = pytest.importorskip("torch")

    def f(x):
        a = torch.stack([x, x * 2.0], dim=1).sum(dim=(0, 2)).pow(2).sum()
        b = torch.concatenate([x, torch.tanh(x)], dim=1).mean(dim=0).sum()
        c = torch.squeeze(x.reshape(1, 2, 3), dim=0).amax(1).sum() + torch.amin(x, dim=0, keepdim=True).sum()
        return a + b + c + torch.maximum(x, x * x).sum() + torch.max(x, x.T.T * 0.5).sum()
    x = torch.linspace(-1.0, 1.3, 6, dtype=torch.float64).reshape(2, 3)
    (g,) = zygotepy.gradient(f, x)
    xt = x.clone().requires_grad_()
    f(xt).backward()
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spelling", ["torch.add", "Tensor.add", "torch.subtract", "Tensor.sub", "torch.sub"])
def test_torch_add_and_subtract_with_alpha(mode, spelling):
    """`torch.add(x, y, alpha=a)` and `x.add(y, alpha=a)` raised TypeError: NumPy's add rule takes no alpha."""
    torch = pytest.importorskip("torch")
    f = {"torch.add": lambda t, u: (torch.add(t, u, alpha=3.0) ** 2).sum(),
         "Tensor.add": lambda t, u: (t.add(u, alpha=3.0) ** 2).sum(),
         "torch.subtract": lambda t, u: (torch.subtract(t, u, alpha=-3.0) ** 2).sum(),
         "Tensor.sub": lambda t, u: (t.sub(u, alpha=-3.0) ** 2).sum(),
         "torch.sub": lambda t, u: (torch.sub(t, u, alpha=-3.0) ** 2).sum()}[spelling]
    t, u = torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([3.0, 5.0], dtype=torch.float64)
    s = t + 3.0 * u
    dt, du = zygotepy.gradient(f, t, u)
    torch.testing.assert_close(dt, 2 * s)
    torch.testing.assert_close(du, 6 * s)

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

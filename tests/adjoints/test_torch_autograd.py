"""torch's functions and tensor methods without a rule of zygotepy's are differentiated by torch's autograd
(adjoints/torch_autograd.py): each row against central finite differences in float64, with every optimisation on and
off, on a first and a cached call; a function that updates in place is still refused, and nesting through one is
refused, not silently wrong."""
import pytest

from zygotepy import ZygoteError, gradient

torch = pytest.importorskip("torch")
F = torch.nn.functional

W = torch.tensor([0.3, -0.7, 1.1, 0.4], dtype=torch.float64)

ROWS = {  # each a function of a 3x4 float64 tensor with entries in (0.2, 1.2)
    "torch.cdist": lambda x: torch.cdist(x, x + 0.3).sum(),
    "torch.cdist of one tensor twice (a kernel matrix)": lambda x: torch.exp(-torch.cdist(x, x) ** 2).sum(),
    "torch.norm (torch.functional's Python wrapper)": lambda x: torch.norm(x * x, dim=1).sum(),
    "torch.broadcast_tensors": lambda x: torch.broadcast_tensors(x, x[:, :1])[1].pow(2).sum(),
    "F.layer_norm, keyword weight": lambda x: F.layer_norm(x, (4,), weight=W * x[0], bias=W).pow(3).sum(),
    "Tensor.clamp_min": lambda x: x.clamp_min(0.5).pow(2).sum(),
    "torch.rsqrt": lambda x: torch.rsqrt(x).sum(),
    "torch.cat of a list": lambda x: torch.cat([x, x * 2], dim=0).pow(2).sum(),
    "torch.stack of a tuple": lambda x: torch.stack((x, x.sin())).prod(),
    "torch.topk(...).values": lambda x: torch.topk(x, 2, dim=1).values.pow(2).sum(),
    "torch.cummax(...)[0]": lambda x: torch.cummax(x, dim=1)[0].sum(),
    "torch.logcumsumexp": lambda x: torch.logcumsumexp(x, dim=0).sum(),
    "torch.special.erfinv": lambda x: torch.special.erfinv(x * 0.5).sum(),
    "torch.xlogy": lambda x: torch.xlogy(x, x + 1).sum(),
    "torch.unbind": lambda x: torch.unbind(x, 0)[1].pow(2).sum(),
    "torch.atan2": lambda x: torch.atan2(x, x.flip(0)).sum(),
    "F.pdist": lambda x: F.pdist(x).sum(),
    "F.cosine_similarity": lambda x: F.cosine_similarity(x, x.flip(1)).sum(),
    "F.hardtanh": lambda x: F.hardtanh(x * 3 - 1).sum(),
    "F.mish": lambda x: F.mish(x).sum(),
    "F.kl_div": lambda x: F.kl_div(x.log(), W.abs().expand(3, 4), reduction="sum"),
    "torch.linalg.det": lambda x: torch.linalg.det(x[:, :3]),
    "torch.fft.rfft": lambda x: torch.fft.rfft(x).abs().sum(),
    "torch.addcmul, keyword value": lambda x: torch.addcmul(x, x, x, value=0.5).sum(),
    "torch.lerp": lambda x: torch.lerp(x, x * x, 0.3).sum(),
    "a float32 argument": lambda x: torch.rsqrt(x.float()).double().sum(),
}


def _central(f, x, eps=1e-6):
    g = torch.zeros_like(x)
    for i in range(x.numel()):
        up, down = x.clone(), x.clone()
        up.view(-1)[i] += eps
        down.view(-1)[i] -= eps
        g.view(-1)[i] = (f(up) - f(down)) / (2 * eps)
    return g


@pytest.mark.parametrize("name", ROWS)
def test_torch_function_without_a_rule_matches_finite_differences(mode, name):
    f = ROWS[name]
    x = torch.linspace(0.2, 1.2, 12, dtype=torch.float64).reshape(3, 4).flip(1)
    want = _central(f, x, 1e-4 if name == "a float32 argument" else 1e-6)
    for _ in range(2):  # a first and a cached call
        got, = gradient(f, x)
        assert got.dtype == torch.float64
        torch.testing.assert_close(got, want, rtol=1e-2 if name == "a float32 argument" else 1e-6, atol=1e-8)


def test_float32_stays_float32():
    got, = gradient(lambda x: torch.rsqrt(x).sum(), torch.tensor([0.5, 2.0], dtype=torch.float32))
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, -0.5 * torch.tensor([0.5, 2.0]) ** -1.5)


def test_an_update_in_place_is_still_refused():
    def f(x):
        y = x * 2
        torch.exp_(y)
        return y.sum()
    with pytest.raises(ZygoteError, match=r"test_torch_autograd\.py:\d+"):
        gradient(f, torch.ones(3, dtype=torch.float64))


@pytest.mark.dual_route
def test_nesting_through_torch_is_refused():
    def inner(y):
        return torch.rsqrt(y).sum()

    def outer(x):
        return gradient(inner, x)[0].sum()
    with pytest.raises(ZygoteError, match="cannot perturb a Tensor"):
        gradient(outer, torch.tensor([0.5, 1.5], dtype=torch.float64))


def test_a_tensors_data_is_its_value_without_a_gradient(mode):
    """`x * x.data` raised MissingAdjoint ("the array attribute .data has no rule"); it is `x.detach()`, as in torch."""
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    g, = gradient(lambda x: torch.sum(x * x.data), x)
    assert torch.equal(g, x)


def test_a_python_float_given_positionally_to_torch_gets_its_gradient(mode):
    """`x.mul(a)`, `torch.div(x, a)`, `torch.lerp(x, y, a)`: torch's autograd fallback lifted tensors only, and a
    float given by position got no gradient, silently (None for 39.75; found by a probe of torch code). It goes in as
    a 0-d tensor now; a function that takes a Python number only gets it as given (a constant)."""
    torch = pytest.importorskip("torch")
    from zygotepy import gradient
    x = torch.tensor([0.5, 2.0, 3.0], dtype=torch.float64)
    assert gradient(lambda a: x.mul(a).pow(2).sum(), 1.5)[0] == pytest.approx(2 * 1.5 * float((x * x).sum()))
    assert gradient(lambda a: torch.div(x, a).sum(), 2.0)[0] == pytest.approx(-float(x.sum()) / 4.0)
    y = torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)
    assert gradient(lambda a: torch.lerp(x, y, a).sum(), 0.25)[0] == pytest.approx(float((y - x).sum()))
    g, = gradient(lambda v: v.div(v.norm().item()).pow(3).sum(), x.clone())
    t = x.clone().requires_grad_(True)
    (t / t.norm()).pow(3).sum().backward()
    torch.testing.assert_close(g, t.grad)

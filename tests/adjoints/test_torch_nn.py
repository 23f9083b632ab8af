"""torch's activations, losses and Module calls (zygotepy/adjoints/torch_nn.py) differentiated inside user functions:
every row against central finite differences in float64 and against torch.autograd; gradients stay tensors of the
input's dtype; parameters (bounds, slopes, targets, weights) get their gradients; what has no rule refuses."""
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import zygotepy  # noqa: E402
from zygotepy.adjoints import registry, torch_nn  # noqa: E402
from zygotepy.errors import ZygoteError  # noqa: E402

torch_nn.register()  # (idempotent: where the registry runs it on torch's import, it already has)

X = [[0.3, -1.2, 2.0], [-0.4, 0.7, 1.1]]      # no entry at a kink (0, the clamp bounds)
W = [[1.0, -2.0, 0.5], [0.3, 0.9, -1.5]]
W_ROWS = [0.7, -1.3]
W_COLS = [0.4, -0.6, 1.2]
T = [[0.1, 0.2, -0.3], [1.0, -1.0, 0.5]]
LABELS = [2, 0]
PROBS = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]


def t(v, dtype=torch.float64):
    return torch.tensor(v, dtype=dtype)


# constants made outside the differentiated functions (torch.tensor of floats inside one would be differentiated)
TT, PROBS_T, CLASS_W, LABELS_T = t(T), t(PROBS), t([0.5, 1.0, 2.0]), torch.tensor(LABELS)
LOW, HIGH = t([-0.5, 0.0, 0.5]), t(1.5)
W32, W64, W2, W4 = t(W, torch.float32), t(W), t([[1.0, -2.0], [0.5, 0.3]]), t([1.0, 2.0, 3.0, 4.0])

# (id, the function of x, its result's weight): the user's function is sum(fn(x) * weight)
ROWS = [
    ("torch.relu", torch.relu, W),
    ("torch.sigmoid", torch.sigmoid, W),
    ("torch.clamp", lambda x: torch.clamp(x, -0.5, 1.0), W),
    ("torch.clamp_min_keyword", lambda x: torch.clamp(x, min=0.0), W),
    ("torch.clamp_max_keyword", lambda x: torch.clamp(x, max=0.5), W),
    ("torch.clamp_tensor_bounds", lambda x: torch.clamp(x, LOW, HIGH), W),
    ("torch.clip", lambda x: torch.clip(x, -0.5, 1.0), W),
    ("torch.logsumexp_dim1", lambda x: torch.logsumexp(x, 1), W_ROWS),
    ("torch.logsumexp_keepdim", lambda x: torch.logsumexp(x, dim=0, keepdim=True), [W_COLS]),
    ("torch.logsumexp_all_dims", lambda x: torch.logsumexp(x, (0, 1)), 1.0),
    ("torch.softmax", lambda x: torch.softmax(x, 1), W),
    ("torch.softmax_dim0", lambda x: torch.softmax(x, dim=0), W),
    ("torch.log_softmax", lambda x: torch.log_softmax(x, dim=1), W),
    ("torch.tanh", torch.tanh, W),
    ("method_relu", lambda x: x.relu(), W),
    ("method_sigmoid", lambda x: x.sigmoid(), W),
    ("method_softmax", lambda x: x.softmax(1), W),
    ("method_log_softmax", lambda x: x.log_softmax(dim=0), W),
    ("method_logsumexp", lambda x: x.logsumexp(1), W_ROWS),
    ("method_clamp", lambda x: x.clamp(min=-0.5), W),
    ("F.relu", F.relu, W),
    ("F.sigmoid", F.sigmoid, W),
    ("F.softmax", lambda x: F.softmax(x, dim=1), W),
    ("F.softmax_dim0", lambda x: F.softmax(x, 0), W),
    ("F.log_softmax", lambda x: F.log_softmax(x, dim=1), W),
    ("F.gelu", F.gelu, W),
    ("F.gelu_none", lambda x: F.gelu(x, approximate="none"), W),
    ("F.gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), W),
    ("F.silu", F.silu, W),
    ("F.softplus", F.softplus, W),
    ("F.softplus_beta_threshold", lambda x: F.softplus(x, beta=2.0, threshold=1.0), W),
    ("F.tanh", F.tanh, W),
    ("F.leaky_relu", F.leaky_relu, W),
    ("F.leaky_relu_slope", lambda x: F.leaky_relu(x, 0.2), W),
    ("F.elu", F.elu, W),
    ("F.elu_alpha", lambda x: F.elu(x, alpha=1.5), W),
    ("F.mse_loss", lambda x: F.mse_loss(x, TT), 1.0),
    ("F.mse_loss_sum", lambda x: F.mse_loss(x, TT, reduction="sum"), 1.0),
    ("F.mse_loss_none", lambda x: F.mse_loss(x, TT, reduction="none"), W),
    ("F.mse_loss_weight", lambda x: F.mse_loss(x, TT, weight=PROBS_T), 1.0),
    ("F.cross_entropy", lambda x: F.cross_entropy(x, LABELS_T), 1.0),
    ("F.cross_entropy_weight_smoothing", lambda x: F.cross_entropy(
        x, LABELS_T, weight=CLASS_W, label_smoothing=0.1), 1.0),
    ("F.cross_entropy_sum_ignore", lambda x: F.cross_entropy(
        x, torch.tensor([2, 1]), ignore_index=1, reduction="sum"), 1.0),
    ("F.cross_entropy_none", lambda x: F.cross_entropy(x, LABELS_T, reduction="none"), W_ROWS),
    ("F.cross_entropy_probabilities", lambda x: F.cross_entropy(x, PROBS_T), 1.0),
    ("chain", lambda x: F.log_softmax(F.gelu(x) * 2.0 + torch.sigmoid(x), dim=1), W),
]


def _weigher(weight):
    """sum(y * weight), the weight made here: a list of floats turned into a tensor inside the differentiated function
    would be differentiated too (torch.tensor has no rule)."""
    if isinstance(weight, float):
        return lambda y: y * weight
    w = t(weight)
    return lambda y: torch.sum(y * w)


def _fd(f, x0, eps=1e-6):
    """Central differences of f at x0 (a list: a float64 tensor; a float: a float)."""
    if isinstance(x0, float):
        return (float(f(x0 + eps)) - float(f(x0 - eps))) / (2 * eps)
    x = np.asarray(x0, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (float(f(torch.from_numpy(up))) - float(f(torch.from_numpy(down)))) / (2 * eps)
    return g


def _autograd(f, *args):
    leaves = [a.clone().requires_grad_(True) for a in args]
    return torch.autograd.grad(f(*leaves), leaves)


@pytest.mark.parametrize("fn,weight", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_row_matches_finite_differences_and_autograd(fn, weight):
    weigh = _weigher(weight)

    def f(x):
        return weigh(fn(x))
    x = t(X)
    (g,) = zygotepy.gradient(f, x)
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64 and g.shape == x.shape
    np.testing.assert_allclose(g.numpy(), _fd(f, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g.numpy(), _autograd(f, x)[0].numpy(), rtol=1e-12, atol=1e-13)


# (id, the function of x and the parameter p, the parameter's value, its result's weight)
PARAM_ROWS = [
    ("clamp_min_tensor", lambda x, p: torch.clamp(x, p), [0.0, -0.5, 0.5], W),
    ("clamp_max_keyword_tensor", lambda x, p: torch.clamp(x, min=-HIGH, max=p), [[0.5], [0.8]], W),
    ("clamp_min_number", lambda x, p: torch.clamp(x, min=p), 0.1, W),
    ("leaky_relu_slope", lambda x, p: F.leaky_relu(x, p), 0.2, W),
    ("leaky_relu_slope_keyword", lambda x, p: F.leaky_relu(x, negative_slope=p), 0.2, W),
    ("elu_alpha", lambda x, p: F.elu(x, p), 1.5, W),
    ("elu_alpha_keyword", lambda x, p: F.elu(x, alpha=p), 1.5, W),
    ("softplus_beta", lambda x, p: F.softplus(x, p), 1.7, W),
    ("softplus_beta_keyword_threshold", lambda x, p: F.softplus(x, beta=p, threshold=2.0), 1.7, W),
    ("mse_loss_target", lambda x, p: F.mse_loss(x, p), T, 1.0),
    ("mse_loss_target_broadcast", lambda x, p: F.mse_loss(x, p, reduction="sum"), [[0.1, 0.4, -0.2]], 1.0),
    ("mse_loss_weight_mean", lambda x, p: F.mse_loss(x, TT, weight=p), PROBS, 1.0),
    ("mse_loss_weight_none", lambda x, p: F.mse_loss(x, TT, reduction="none", weight=p), PROBS, W),
    ("cross_entropy_probability_target", lambda x, p: F.cross_entropy(x, p), PROBS, 1.0),
    ("cross_entropy_weight", lambda x, p: F.cross_entropy(x, LABELS_T, p), [0.5, 1.0, 2.0], 1.0),
    ("cross_entropy_weight_keyword", lambda x, p: F.cross_entropy(x, LABELS_T, weight=p),
     [0.5, 1.0, 2.0], 1.0),
    ("cross_entropy_label_smoothing", lambda x, p: F.cross_entropy(
        x, LABELS_T, weight=CLASS_W, label_smoothing=p), 0.2, 1.0),
]


@pytest.mark.parametrize("fn,p0,weight", [r[1:] for r in PARAM_ROWS], ids=[r[0] for r in PARAM_ROWS])
def test_parameters_get_their_gradients(fn, p0, weight):
    weigh = _weigher(weight)

    def f(x, p):
        return weigh(fn(x, p))
    x = t(X)
    p = p0 if isinstance(p0, float) else t(p0)
    gx, gp = zygotepy.gradient(f, x, p)
    np.testing.assert_allclose(gx.numpy(), _fd(lambda a: f(a, p), X), rtol=1e-6, atol=1e-8)
    expected = _fd(lambda b: f(x, b), p0)
    if isinstance(p0, float):
        assert isinstance(gp, (float, torch.Tensor)) and float(gp) != 0.0
    else:
        assert isinstance(gp, torch.Tensor) and gp.dtype == torch.float64 and gp.shape == p.shape
    np.testing.assert_allclose(np.asarray(gp, dtype=np.float64), expected, rtol=1e-6, atol=1e-8)


def test_float32_stays_float32_and_matches_autograd():
    def f(x):
        return torch.sum(F.log_softmax(F.gelu(x), dim=1) * W32) + torch.sum(torch.relu(x)) \
            + F.cross_entropy(x, LABELS_T)
    x = t(X, torch.float32)
    (g,) = zygotepy.gradient(f, x)
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), _autograd(f, x)[0].numpy(), rtol=1e-5, atol=1e-6)


def test_softmax_with_dtype_gives_the_inputs_dtype():
    def f(x):
        return torch.sum(torch.softmax(x, 1, dtype=torch.float64) * W64)
    x = t(X, torch.float32)
    (g,) = zygotepy.gradient(f, x)
    assert g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), _autograd(f, x)[0].numpy(), rtol=1e-5, atol=1e-6)


def test_kinks_follow_torch():
    """relu'(0) = 0, leaky_relu'(0) = slope, elu'(0) = alpha, clamp at its bounds: torch.autograd's numbers."""
    x = t([0.0, 0.0, 1.0, -0.5])
    for fn in (torch.relu, lambda x: F.leaky_relu(x, 0.3), lambda x: F.elu(x, 0.5),
               lambda x: torch.clamp(x, -0.5, 0.0)):
        def f(x, fn=fn):
            return torch.sum(fn(x) * W4)
        np.testing.assert_array_equal(zygotepy.gradient(f, x)[0].numpy(), _autograd(f, x)[0].numpy())


@pytest.mark.parametrize("call", [
    lambda x: F.relu(x, inplace=True), lambda x: F.elu(x, 1.0, True), lambda x: F.silu(x, inplace=True)],
    ids=["relu", "elu", "silu"])
def test_inplace_refuses(call):
    with pytest.raises(ZygoteError, match="inplace=True"):
        zygotepy.gradient(lambda x: torch.sum(call(x.clone())), t(X))


# --- Module calls -------------------------------------------------------------------------------------------------------
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
        self.scale = torch.nn.Parameter(torch.tensor([1.5, -0.5]))

    def forward(self, x):
        return self.body(x) * self.scale, x.sum()


def _net():
    torch.manual_seed(0)
    return Net().double()


def test_module_call_gradient_of_its_input():
    lin = torch.nn.Linear(3, 2).double()

    def f(x):
        return torch.sum(torch.tanh(lin(x)) * W2)
    (g,) = zygotepy.gradient(f, t(X))
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64
    np.testing.assert_allclose(g.numpy(), _fd(f, X), rtol=1e-6, atol=1e-8)


def test_module_call_gradients_of_its_parameters_and_a_tuple_output():
    net = _net()

    def f(m, x):
        out, total = m(x)
        return torch.sum(out ** 2) + total * 0.5 + torch.sum(m.scale ** 2)  # m.scale also read as an attribute
    gm, gx = zygotepy.gradient(f, net, t(X))
    leaves = [t(X).requires_grad_(True)]
    loss = f(net, leaves[0])
    params = dict(net.named_parameters())
    expected = torch.autograd.grad(loss, [leaves[0], *params.values()])
    np.testing.assert_allclose(gx.numpy(), expected[0].numpy(), rtol=1e-12)
    by_name = dict(zip(params, expected[1:], strict=True))
    # (detach: the attribute read's cotangent computes with the Parameter, which requires grad in torch)
    np.testing.assert_allclose(gm._parameters["scale"].detach().numpy(), by_name["scale"].numpy(), rtol=1e-12)
    for name in ("0.weight", "0.bias", "2.weight", "2.bias"):
        index, leaf = name.split(".")
        got = gm._modules["body"]._modules[index]._parameters[leaf]
        assert got.dtype == torch.float64
        np.testing.assert_allclose(got.numpy(), by_name[f"body.{name}"].numpy(), rtol=1e-12)


def test_module_call_with_a_keyword_tensor():
    class Gate(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x, *, gate):
            return torch.sigmoid(self.lin(x)) * gate
    torch.manual_seed(1)
    module = Gate().double()

    def f(x, g):
        return torch.sum(module(x, gate=g) * W64)
    gx, gg = zygotepy.gradient(f, t(X), t(W_COLS))
    ex, eg = _autograd(f, t(X), t(W_COLS))
    assert gg.dtype == torch.float64
    np.testing.assert_allclose(gx.numpy(), ex.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), eg.numpy(), rtol=1e-12)


def test_module_called_with_a_python_float_refuses_naming_the_call():
    class Scaled(torch.nn.Module):
        def forward(self, x, s):
            return x * s
    module = Scaled()

    def f(x):
        return torch.sum(module(x, 0.5))
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(ZygoteError) as info:
        zygotepy.gradient(f, t(X))
    message = str(info.value)
    assert f"{__file__}:{line}" in message and "Scaled" in message
    assert "zygotepy.torch_function(module)" in message and "parameters" in message


def test_torch_function_of_a_module_on_numpy_arrays():
    """The wrapping the refusal names: gradients with respect to the (NumPy) inputs; the parameters get none."""
    lin = torch.nn.Linear(3, 2).double()
    wrapped = zygotepy.torch_function(lin)

    def f(x):
        return float(np.sum(np.tanh(wrapped(x)) * np.asarray([[1.0, -2.0], [0.5, 0.3]])))
    (g,) = zygotepy.gradient(f, np.asarray(X))
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, _fd(lambda a: f(a.numpy()), X), rtol=1e-6, atol=1e-8)


def test_torch_function_of_a_module_on_tensors():
    lin = torch.nn.Linear(3, 2).double()
    wrapped = zygotepy.torch_function(lin)
    (g,) = zygotepy.gradient(lambda x: float(np.sum(wrapped(x))), t(X))
    assert g is not None
    np.testing.assert_allclose(np.asarray(g), lin.weight.detach().numpy().sum(axis=0)[None].repeat(2, 0), rtol=1e-12)


def test_no_cotangent_gives_none():
    x = t(X)
    calls = [(torch.relu, (x,), {}), (torch.clamp, (x,), {"min": LOW}), (F.softplus, (x, 2.0), {}),
             (F.mse_loss, (x, TT), {"weight": PROBS_T}), (F.cross_entropy, (x, LABELS_T), {"label_smoothing": 0.1}),
             (torch.nn.Module.__call__, (torch.nn.Linear(3, 2).double(), x), {})]
    for target, args, kwargs in calls:
        rule = registry.find_rule(target)
        _, back = rule(*args, **kwargs)
        grads = back(None)
        assert all(g is None for g in grads[:len(args)]), target
        if kwargs and getattr(rule, "__zygote_keywords__", False):  # (then a last dict: the keywords' cotangents)
            assert len(grads) == len(args) + 1 and all(g is None for g in grads[-1].values()), target
        else:
            assert len(grads) == len(args), target


# --- registration -------------------------------------------------------------------------------------------------------
def test_importing_the_module_does_not_import_torch():
    code = "import sys, zygotepy, zygotepy.adjoints.torch_nn; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_rules_register_when_torch_is_imported_after_zygotepy():
    code = ("import zygotepy, zygotepy.adjoints.torch_nn, torch\n"
            "from zygotepy.adjoints import registry\n"
            "print(registry.find_rule(torch.relu) is not None, registry.find_rule(torch.nn.Module.__call__) is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]

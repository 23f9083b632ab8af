"""torch's in-place tensor methods (zygotepy/adjoints/mutation/torch_methods.py): `add_`, `sub_`, `mul_`, `div_`,
`zero_`, `fill_`, `copy_` inside user functions, on a tensor, a view of one, a tensor in a list and in a loop;
gradients against central finite differences in float64. Keywords the rules do not take raise. (Every call raised
MissingAdjoint before.)"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from zygotepy import ZygoteError, gradient  # noqa: E402


def _arithmetic(x):
    y = x * 2
    y.add_(x ** 2)
    y.mul_(x)
    y.sub_(x[0])
    y.div_(x[1:2] + 3.0)
    return (y * y).sum()


def _zero_a_view(x):
    y = x * 1.0
    y[1:3].zero_()
    return (y * x).sum()


def _fill_a_view_with_a_tensor(x):
    y = x * 1.0
    y[1:3].fill_(x[0] * 2)
    return (y ** 2).sum()


def _fill_with_a_number(x):
    y = x * 1.0
    y.fill_(0.5)
    return (y * x).sum()


def _copy_into_zeros(x):
    y = torch.zeros(4, dtype=torch.float64)
    y.copy_(x ** 2)
    return (y * x).sum()


def _copy_broadcast(x):
    y = torch.zeros((2, 4), dtype=torch.float64)
    y.copy_(x * 3.0)
    return (y * y.sum(dim=0)).sum()


def _result_used(x):
    y = x * 1.0
    out = y.add_(x)  # the method returns its tensor
    return (out * y).sum()


def _alias_in_a_list(x):
    y = x * 1.0
    held = [y, x * 2.0]
    held[0].mul_(x)  # y is held[0]: it sees the update
    return (y * held[1]).sum()


def _in_a_loop(x):
    acc = torch.zeros(4, dtype=torch.float64)
    for k in range(3):
        acc.mul_(x)
        acc.add_(x * k)
    return (acc ** 2).sum()


CASES = [_arithmetic, _zero_a_view, _fill_a_view_with_a_tensor, _fill_with_a_number, _copy_into_zeros,
         _copy_broadcast, _result_used, _alias_in_a_list, _in_a_loop]


def _central_differences(f, x, h=1e-6):
    flat = []
    for i in range(x.numel()):
        e = torch.zeros(x.numel(), dtype=x.dtype)
        e[i] = h
        e = e.reshape(x.shape)
        flat.append((f(x + e) - f(x - e)).item() / (2 * h))
    return np.array(flat).reshape(tuple(x.shape))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__[1:])
def test_in_place_method_matches_finite_differences(f):
    x = torch.tensor([0.3, -0.8, 1.2, 0.5], dtype=torch.float64)
    (g,) = gradient(f, x)
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64
    np.testing.assert_allclose(g.numpy(), _central_differences(f, x), rtol=1e-6, atol=1e-8)
    assert torch.equal(x, torch.tensor([0.3, -0.8, 1.2, 0.5], dtype=torch.float64))  # the argument is untouched


def test_keywords_the_rules_do_not_take_raise():
    def f(x):
        y = x * 1.0
        y.add_(x, alpha=2.0)
        return y.sum()
    with pytest.raises(ZygoteError, match="alpha="):
        gradient(f, torch.ones(3, dtype=torch.float64))


def _exp_function(x):
    y = x * 1
    torch.exp_(y)
    return y.sum()


def _relu_function(x):
    y = x * 1
    torch.relu_(y)
    return (y * x).sum()


def _exp_method_in_an_expression(x, flag=True):
    y = x * 1
    y.exp_() if flag else None
    return y.sum()


def _square_method_as_a_value(x):
    y = x * 1
    z = y.square_()
    return (z * y).sum()


@pytest.mark.parametrize("f", [_exp_function, _relu_function, _exp_method_in_an_expression, _square_method_as_a_value])
def test_an_update_without_a_rule_is_refused_wherever_it_is_called(f):
    # (the function forms and a method inside an expression ran unseen: gradients of 1 for exp(x))
    with pytest.raises(ZygoteError, match="exp_|relu_|square_"):
        gradient(f, torch.tensor([0.3, -1.2, 0.7], dtype=torch.float64))

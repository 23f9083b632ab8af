"""torch.tensor / as_tensor / asarray / from_numpy of a NumPy array, a float, a list or a tensor: the gradient reaches
the data in its own form (adjoints/torch_conversions.py), checked against central differences."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plain_checks import central  # noqa: E402

from zygotepy import gradient  # noqa: E402

torch = pytest.importorskip("torch")


def _times(convert):
    return lambda a, t: (t * convert(a) ** 2).sum()


CONVERSIONS = {
    "tensor": torch.tensor, "as_tensor": torch.as_tensor, "asarray": torch.asarray, "from_numpy": torch.from_numpy,
    "as_tensor_float32": lambda a: torch.as_tensor(a, dtype=torch.float32).double(),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_a_numpy_array_made_a_tensor_gets_its_gradient(mode, name):
    """`t * torch.from_numpy(a)` gave `a` no gradient (None): torch's autograd saw only the tensor arguments."""
    f = _times(CONVERSIONS[name])
    a, t = np.array([0.5, -1.5, 2.0]), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    got = gradient(f, a, t)
    assert type(got[0]) is np.ndarray and got[0].dtype == np.float64
    np.testing.assert_allclose(got[0], 2 * a * t.numpy(), rtol=1e-7)
    if "float32" not in name:  # (central differences through float32 are not that accurate)
        np.testing.assert_allclose(got[0], central(lambda v: float(f(v, t)), [a], 0), rtol=1e-7)
    torch.testing.assert_close(got[1], torch.from_numpy(a ** 2))


def test_a_float_and_a_list_of_floats_made_a_tensor(mode):
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    got = gradient(lambda s, t: (t * torch.tensor(s) ** 3).sum(), 1.5, t)
    assert type(got[0]) is float and got[0] == pytest.approx(3 * 1.5 ** 2 * 3.0)
    got = gradient(lambda p, q: (torch.tensor([p, q, 2.0], dtype=torch.float64) ** 2).sum(), 1.5, -0.5)
    assert got == pytest.approx((3.0, -1.0))


def test_integer_data_made_a_tensor_has_no_gradient(mode):
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    assert gradient(lambda i, t: (t * torch.as_tensor(i)).sum(), np.array([3, 4]), t)[0] is None


def test_a_tensor_given_to_np_asarray_gets_a_tensor_gradient(mode):
    """The projection cast NumPy's gradient to the tensor's dtype with `.astype(torch.float64)`: TypeError."""
    for dtype in (torch.float64, torch.float32):
        t = torch.tensor([1.0, -2.0], dtype=dtype)
        got = gradient(lambda v: np.sum(np.asarray(v) ** 2), t)[0]
        assert type(got) is torch.Tensor and got.dtype == dtype
        torch.testing.assert_close(got, 2 * t)


def test_a_tensor_made_a_numpy_array():
    """`t.detach().numpy()` (a constant: a scale, a log line) was refused, with torch's message telling the user to
    write what they wrote; `t.numpy()` carries the gradient through (as `np.asarray(t)` does). A Python float's
    cotangent from an operator with a tensor is a float (it was a 0-d tensor, which NumPy's rules then met)."""
    xt = torch.tensor([0.3, -0.7], dtype=torch.float64)

    def scaled(t):
        return torch.sum(t) * float(np.max(np.abs(t.detach().numpy())))
    (g,) = gradient(scaled, xt)
    torch.testing.assert_close(g, torch.full((2,), 0.7, dtype=torch.float64))

    def through(t):
        return float(np.sum(t.numpy() ** 2)) + 0.0 * torch.sum(t)
    (g,) = gradient(through, xt)
    torch.testing.assert_close(g, 2 * xt)

    (_, ds) = gradient(lambda t, s: torch.sum(t) * s, xt, 2.0)
    assert type(ds) is float and ds == pytest.approx(-0.4)


@pytest.mark.dual_route
def test_a_gradient_of_a_gradient_through_a_conversion_says_why():
    """It crashed with torch's TypeError on a dual number (`len()` of one); the limitation is said as forward mode's
    error (docs/limitations.md), and the wrapped function's second derivative is torch's."""
    from zygotepy import ForwardModeError, torch_function
    x = np.array([0.3, -0.7])
    f = lambda v: float(torch.sum(torch.sin(torch.as_tensor(v)) ** 2))  # noqa: E731
    with pytest.raises(ForwardModeError, match="cannot pass a dual number into a torch tensor"):
        gradient(lambda v: np.sum(gradient(f, v)[0]), x)
    wrapped = torch_function(lambda t: torch.sum(torch.sin(t) ** 2))
    np.testing.assert_allclose(gradient(lambda v: np.sum(gradient(wrapped, v)[0]), x)[0], 2 * np.cos(2 * x))

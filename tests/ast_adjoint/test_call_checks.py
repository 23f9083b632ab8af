"""The checks of a derived function's updates of its arguments (ast_adjoint/call_checks.py): a parameter the code may
update (`np.multiply(a, a, out=out)`) in a branch that did not run, left at its default (`out=None`), is no update:
the call site takes back the final versions of the others, whose cotangents the callee then passes through once."""
import numpy as np
import pytest

import zygotepy
from zygotepy import gradient, hessian
from zygotepy.errors import UnsupportedSyntax, ZygoteError


def _squares(a, p=True, out=None):
    # (the shape of torch.norm's Python code: gradients of `a`'s later uses counted twice, 2a + 2 for 2a + 1)
    if p:
        if out is None:
            return np.sum(a * a)
        return np.multiply(a, a, out=out)
    if out is None:
        return np.sum(a)
    return np.multiply(a, a, out=out)


def _one_branch(a, out=None):
    if out is None:
        return np.sum(a * a)
    return np.multiply(a, a, out=out)


def later_use(x):
    return _squares(x) + np.sum(x)


def later_use_other_branch(x):
    return _squares(x, False) + np.sum(x * x)


def later_use_one_branch(x):
    return _one_branch(x) + np.sum(x)


def written_into(x):
    buf = np.zeros_like(x)
    _squares(x, True, buf)  # (the branch that writes into `out` runs: `buf` is taken back)
    return np.sum(buf * x)


@pytest.mark.parametrize("f, want", [
    (later_use, lambda x: 2 * x + 1), (later_use_other_branch, lambda x: 1 + 2 * x),
    (later_use_one_branch, lambda x: 2 * x + 1), (written_into, lambda x: 3 * x * x)])
@pytest.mark.parametrize("optimized", [True, False])
def test_a_parameter_left_at_its_default_is_not_taken_back(f, want, optimized):
    x = np.array([1.0, 2.0, -0.5])
    with zygotepy.optimizations(optimized):
        for _ in range(2):  # (first and cached call)
            np.testing.assert_allclose(gradient(f, x)[0], want(x), rtol=1e-12)


def test_hessian_through_it():
    np.testing.assert_allclose(hessian(later_use, np.array([1.0, 2.0])), 2 * np.eye(2), rtol=1e-12)


def test_a_number_left_to_its_default_is_no_update():
    # torch's Python functions hand their numeric parameters to calls that may update their arguments
    # (`handle_torch_function(..., p=p, eps=eps)`): a number is no object an update in place can change, so the
    # refusal "normalize updates its parameter 'p' in place" was false (their C functions are differentiated by
    # torch's autograd now: adjoints/torch_autograd.py)
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    for f in (lambda x: (F.normalize(x, dim=0) * torch.arange(3.0, dtype=torch.float64)).sum(),
              lambda x: F.smooth_l1_loss(x, x * 2.0)):
        t = x.clone().requires_grad_(True)
        want, = torch.autograd.grad(f(t), t)
        torch.testing.assert_close(gradient(f, x)[0], want)


def _late_bound_counter(x):
    fs = []
    for k in range(3):
        fs.append(lambda t: t * k)
    return sum(f(x) for f in fs)


def _late_bound_float(x):
    fs = []
    for k in (1.0, 2.0):
        fs.append(lambda t: t * k * x)
    return sum(f(x) for f in fs)


def test_a_closure_over_a_loop_counter_reads_its_last_value(mode):
    """A lambda made in a loop reads the counter's last value when called (Python's late binding): an int has no
    gradient to misroute, so that is differentiated (it was refused as "assigned a new value"); a float still is."""
    assert gradient(_late_bound_counter, 1.5) == (6.0,)
    with pytest.raises(UnsupportedSyntax, match="assigned a new value"):
        gradient(_late_bound_float, 1.5)


def _apply_boundary(u, left, right):
    u[0] = left
    u[-1] = right


def test_a_refused_update_names_only_the_parameters_it_updates():
    """`u[0] = left` links the number `left` to `u`; the refusal of the call through `*args` names `u` alone."""
    def f(u0, bcs):
        u = u0 * 1.0
        _apply_boundary(u, *bcs)
        return np.sum(u * u)
    with pytest.raises(ZygoteError, match=r"_apply_boundary updates its argument 'u' in place"):
        gradient(f, np.array([0.0, 1.0, 2.0]), (0.5, 0.1))

"""A smoke test of one install of zygotepy: `python .ci/smoke.py EXTRA` checks what that extra promises, in a virtual
environment that has zygotepy with that extra alone (see .ci/extras). It exits non-zero on any failure."""
import math
import pathlib
import subprocess
import sys

import numpy as np

import zygotepy
from zygotepy import gradient, show_adjoint

ROOT = pathlib.Path(__file__).resolve().parent.parent


def pow(x, n):
    r = 1
    while n > 0:
        n -= 1
        r *= x
    return r


def core():
    assert gradient(pow, 5, 3) == (75.0, None)
    check_library(np, np.asarray, np.asarray, lambda w, X: gradient(loss, w, X)[0])
    g = gradient(lambda x: np.sum(np.sin(x) ** 2, axis=0), np.array([0.3, -1.2]))[0]
    assert np.allclose(g, np.sin(2 * np.array([0.3, -1.2])))
    assert "def pow_back" in str(show_adjoint(pow))
    assert (pathlib.Path(zygotepy.__file__).parent / "py.typed").exists()


xp = np  # the array namespace the loss is written against (each library's own, as its users write it)


def loss(w, X):
    # reductions with axis, in-place updates: what each array library's namespace has to serve
    h = xp.tanh(X @ w)
    h = h * 0.5
    return xp.sum(xp.mean(h * h, axis=0))


def check_library(namespace, to_lib, to_numpy, grad_by_library):
    global xp
    xp = namespace
    try:
        _check_library(to_lib, to_numpy, grad_by_library)
    finally:
        xp = np


def _check_library(to_lib, to_numpy, grad_by_library):
    X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    w = np.array([0.3, -0.2, 0.5])
    expected = 0.5 * X.T @ (2 * 0.5 * np.tanh(X @ w) * (1 - np.tanh(X @ w) ** 2)) / X.shape[0]
    g = gradient(loss, to_lib(w), to_lib(X))[0]
    assert type(g).__module__.split(".")[0] == type(to_lib(w)).__module__.split(".")[0], type(g)
    assert np.allclose(to_numpy(g), expected, rtol=1e-10), (g, expected)
    assert np.allclose(grad_by_library(w, X), expected, rtol=1e-10)


def jax_extra():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def by_jax(w, X):
        return np.asarray(jax.grad(lambda w: jnp.sum(jnp.mean((0.5 * jnp.tanh(X @ w)) ** 2, axis=0)))(w))
    check_library(jnp, jnp.asarray, np.asarray, by_jax)


def torch_extra():
    import torch
    from array_api_compat import torch as torch_xp  # the extra brings it: torch's array namespace

    def by_torch(w, X):
        wt = torch.tensor(w, requires_grad=True)
        out = torch.sum(torch.mean((0.5 * torch.tanh(torch.tensor(X) @ wt)) ** 2, dim=0))
        out.backward()
        return wt.grad.numpy()
    check_library(torch_xp, lambda a: torch.tensor(a, dtype=torch.float64), lambda t: t.numpy(), by_torch)


def notebook_extra():
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import math\nfrom zygotepy import gradient\n"
                                          "def f(x):\n    return math.sin(x) * x\n"
                                          "print(gradient(f, 0.5)[0])")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    out = nb.cells[0].outputs[0]["text"]
    assert abs(float(out) - (math.cos(0.5) * 0.5 + math.sin(0.5))) < 1e-12, out


def examples_extra():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "digits_mlp.py"), "--quick"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def bench_extra():
    import autograd
    import autograd.numpy as anp
    g = autograd.grad(lambda x: anp.sum(anp.sin(x)))(np.array([0.1, 0.2]))
    assert np.allclose(g, gradient(lambda x: np.sum(np.sin(x)), np.array([0.1, 0.2]))[0])
    import tangent  # noqa: F401


def test_extra():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" /
                           "test_devices.py")], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


CHECKS = {"core": core, "jax": jax_extra, "torch": torch_extra, "notebook": notebook_extra,
          "examples": examples_extra, "bench": bench_extra, "test": test_extra}

if __name__ == "__main__":
    core()
    for name in sys.argv[1:]:
        CHECKS[name]()
    print("smoke test passed:", " ".join(["core", *sys.argv[1:]]))

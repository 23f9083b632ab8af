"""The examples run as a newcomer runs them (a fresh interpreter), and print what their comments say; the scripts
with a `--quick` flag run at their reduced size, and the notebooks run in a real Jupyter kernel."""
import importlib.util
import pathlib
import subprocess
import sys
import time

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run(name, *args):
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_runs():
    assert "gradient(pow, 5, 3) = (75.0, None)" in run("quickstart.py")  # (75.0 == 75: the seed's (75, None))


@pytest.mark.dual_route  # (runs in a subprocess: the guard in conftest.py does not reach it)
def test_nesting_example_prints_the_seeds_levels_and_deep_derivatives():
    out = run("nesting.py").splitlines()
    assert out[:3] == ["0 levels of nesting", "1 levels of nesting", "2 levels of nesting"]
    assert [line.split(" = ")[0] for line in out[4:]] == [f"d^{k}/dx^{k} x^8 at 0.7" for k in (1, 2, 3, 4, 6, 8)]


# --- the examples with a --quick flag, at their reduced size -------------------------------------------------------------

TESTED_SCRIPTS = {"quickstart.py", "nesting.py", "custom_rule.py", "checkpointing.py", "hessian_vector_product.py",
                  "jax_and_torch.py", "digits_mlp.py", "lotka_volterra.py", "option_greeks.py", "data_parallel.py"}


def test_every_example_script_has_a_test():
    assert {p.name for p in EXAMPLES.glob("*.py")} <= TESTED_SCRIPTS


def test_custom_rule_example():
    out = run("custom_rule.py", "--quick")
    assert "1. softplus with a stable rule" in out
    assert "nan" in next(line for line in out.splitlines() if line.split()[:1] == ["800"])  # the derived derivative
    assert out.count("relative error against central differences") >= 2  # softplus, Kepler (and j0 where libm loads)
    assert "2. Kepler's equation" in out and "3. j0 from the C math library" in out


def test_checkpointing_example():
    out = run("checkpointing.py", "--quick")
    assert "peak memory traced during one gradient (tracemalloc):" in out
    assert "x less memory" in out and "checkpoint, blocks of" in out


def test_hessian_vector_product_example():
    out = run("hessian_vector_product.py", "--quick")
    assert out.count("forward over reverse") == 2 and out.count("reverse over reverse") == 2
    assert "relative difference from hessian @ v" in out


def test_jax_and_torch_example():
    """Runs without JAX or torch too: the script skips a missing library's part with a note."""
    out = run("jax_and_torch.py", "--quick")
    assert "NumPy: loss" in out
    if importlib.util.find_spec("jax") is None:
        assert "JAX is not installed" in out
    else:
        assert "max |zygotepy on JAX - jax.grad|" in out and "max |jax.jit(zygotepy gradient) - jax.grad|" in out
    if importlib.util.find_spec("torch") is None:
        assert "torch is not installed" in out
    else:
        assert "max |zygotepy on torch - torch autograd|" in out


def written_since(path, start):
    return path.is_file() and path.stat().st_mtime >= start - 1  # (1 s of slack for coarse file-system clocks)


def test_digits_mlp_example():
    for library in ("sklearn", "matplotlib", "tqdm"):
        pytest.importorskip(library)
    start = time.time()
    out = run("digits_mlp.py", "--quick")
    assert "gradient check" in out and "test accuracy" in out
    assert written_since(EXAMPLES / "output" / "digits_mlp.png", start)


def test_lotka_volterra_example():
    pytest.importorskip("matplotlib")
    start = time.time()
    out = run("lotka_volterra.py", "--quick")
    assert "gradient check" in out and "final loss" in out
    assert written_since(EXAMPLES / "output" / "lotka_volterra.png", start)


def test_option_greeks_example():
    pytest.importorskip("matplotlib")
    start = time.time()
    out = run("option_greeks.py", "--quick")
    assert "delta" in out and "vega" in out and "Black-Scholes" in out
    assert written_since(EXAMPLES / "output" / "option_greeks.png", start)


# --- the notebooks, in a real Jupyter kernel ----------------------------------------------------------------------------

@pytest.mark.parametrize("notebook", sorted(EXAMPLES.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_executes_without_error(notebook):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"]
    assert not errors


def test_data_parallel_example():
    """Runs without JAX too (a note); with it, on 4 simulated CPU devices (the script sets XLA_FLAGS itself)."""
    pytest.importorskip("sklearn")
    try:
        out = run("data_parallel.py", "--quick")
    except AssertionError as e:
        # XLA aborts a collective whose simulated devices (threads) did not all arrive within its timeout, which an
        # overloaded machine makes happen (4 devices on 2 busy cores): run once more then, and fail on anything else
        if "Expected 4 threads to join the rendezvous" not in str(e):
            raise
        out = run("data_parallel.py", "--quick")
    if importlib.util.find_spec("jax") is None:
        assert "JAX is not installed" in out
    else:
        assert "gradient check (one batch)" in out and "replicated" in out and "all-reduce" in out
        assert "test accuracy" in out

"""Functions defined in notebook cells: a real IPython shell runs the cells, as Jupyter's kernel does."""
import pytest

InteractiveShell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell


@pytest.fixture(scope="module")
def shell():
    sh = InteractiveShell.instance()
    yield sh
    InteractiveShell.clear_instance()


def run(shell, cell):
    result = shell.run_cell(cell, store_history=True)  # store_history: cells get <ipython-input-N-...> names
    result.raise_error()
    return result.result


def test_cells_define_and_differentiate(shell):
    run(shell, "import math\nimport numpy as np\nfrom zygotepy import gradient, show_adjoint")
    run(shell, "def helper(x):\n    return math.sin(x) * x\n")
    run(shell, "def f(x, n):\n    s = 0.0\n    for i in range(n):\n        s = s + helper(x + i)\n    return s\n")
    got = run(shell, "gradient(f, 0.3, 4)")
    x = 0.3
    want = sum(__import__("math").cos(x + i) * (x + i) + __import__("math").sin(x + i) for i in range(4))
    assert got[0] == pytest.approx(want, rel=1e-12) and got[1] is None
    text = run(shell, "show_adjoint(f)")
    assert "def f_forward" in text and "# line" in text


def test_redefining_a_cell_function_is_picked_up(shell):
    run(shell, "from zygotepy import gradient")
    run(shell, "def g(x):\n    return x * x\n")
    assert run(shell, "gradient(g, 3.0)") == (6.0,)
    run(shell, "def g(x):\n    return x * x * x\n")
    assert run(shell, "gradient(g, 3.0)") == (27.0,)


def test_lambda_and_numpy_in_a_cell(shell):
    run(shell, "import numpy as np\nfrom zygotepy import gradient")
    got = run(shell, "gradient(lambda w: np.sum(np.tanh(w) ** 2), np.array([0.1, -0.4]))")
    import numpy as np
    w = np.array([0.1, -0.4])
    assert np.allclose(got[0], 2 * np.tanh(w) * (1 - np.tanh(w) ** 2), rtol=1e-12)


def test_errors_name_the_notebook_cell(shell):
    from zygotepy import UnsupportedSyntax
    run(shell, "from zygotepy import gradient")
    run(shell, "def uses_try(x):\n    try:\n        return x * 2.0\n    finally:\n        print('done')\n")
    cell = shell.execution_count - 1  # the cell that defined it
    with pytest.raises(UnsupportedSyntax, match=rf"Cell In\[{cell}\], line 2 \(.*:2\): zygotepy cannot differentiate"):
        run(shell, "gradient(uses_try, 1.0)")


def test_a_try_in_a_cell(shell):
    """The body of a `try` is compiled from the cell's own lines (lower/tries.py): the gradient on both paths."""
    run(shell, "import numpy as np\nfrom zygotepy import gradient")
    run(shell, "def safe_log(x):\n    try:\n        if x <= 0:\n            raise ValueError(x)\n        return np.log(x)\n"
               "    except ValueError:\n        return x * 0.5\n")
    assert run(shell, "gradient(safe_log, 2.0), gradient(safe_log, -1.0)") == ((0.5,), (0.5,))


def test_an_error_inside_generated_code_notes_the_cell(shell):
    run(shell, "import numpy as np\nfrom zygotepy import gradient")
    run(shell, "def bad_shapes(x):\n    y = x * 2.0\n    return np.sum(y @ np.ones(3))\n")
    cell = shell.execution_count - 1
    with pytest.raises(ValueError) as info:
        run(shell, "gradient(bad_shapes, np.ones(2))")
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"from Cell In[{cell}], line 3" in notes

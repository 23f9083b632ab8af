"""The examples run as a newcomer runs them (a fresh interpreter), and print what their comments say."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run(name):
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_runs():
    assert "gradient(pow, 5, 3) = (75.0, None)" in run("quickstart.py")  # (75.0 == 75: the seed's (75, None))


@pytest.mark.dual_route  # (runs in a subprocess: the guard in conftest.py does not reach it)
def test_nesting_example_prints_the_seeds_levels_and_deep_derivatives():
    out = run("nesting.py").splitlines()
    assert out[:3] == ["0 levels of nesting", "1 levels of nesting", "2 levels of nesting"]
    assert [line.split(" = ")[0] for line in out[4:]] == [f"d^{k}/dx^{k} x^8 at 0.7" for k in (1, 2, 3, 4, 6, 8)]

"""What CI checks of the package itself: the code is ruff-clean, the package ships its type marker, and the public API
carries type hints (what an editor shows a user)."""
import inspect
import pathlib
import shutil
import subprocess
import sys

import pytest

import zygotepy

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ruff_check_is_clean():
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(pathlib.Path(sys.executable).parent))
    if ruff is None:
        pytest.skip("ruff is not installed (the test extra brings it)")
    done = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_package_is_typed():
    assert (pathlib.Path(zygotepy.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("name", ["gradient", "value_and_gradient", "pullback", "jacobian", "hessian", "pushforward",
                                  "derivative", "checkpoint", "show_adjoint", "register_source"])
def test_public_functions_have_type_hints(name):
    fn = getattr(zygotepy, name)
    sig = inspect.signature(fn)
    assert sig.return_annotation is not inspect.Signature.empty, f"{name} has no return annotation"
    assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()), \
        f"{name}{sig} has a parameter without a type hint"

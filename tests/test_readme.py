"""The README's tour runs as written, and the commands it gives are the ones CI runs."""
import pathlib
import re
import runpy

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _block_after(heading):
    section = README.split(heading, 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _run(src, tmp_path, name):
    path = tmp_path / f"{name}.py"  # (a file: zygotepy reads the functions' source)
    path.write_text(src)
    return runpy.run_path(str(path), run_name=name)


def test_the_first_example_gives_what_its_comment_says(tmp_path):
    ns = _run(_block_after("# zygotepy"), tmp_path, "readme_first")
    assert ns["gradient"](ns["pow"], 5, 3) == (75.0, None)


def test_the_tour_runs_and_its_comments_hold(tmp_path):
    ns = _run(_block_after("## A tour"), tmp_path, "readme_tour")
    from zygotepy import gradient
    assert gradient(lambda x: gradient(lambda t: t ** 3, x)[0], 2.0) == (12.0,)
    assert set(ns["g"]) == {"W", "b"} and ns["g"]["W"].shape == (3, 4)
    assert ns["params"]["W"].shape == (3, 4) and not np.allclose(ns["params"]["W"], 0.1)
    assert abs(gradient(ns["softplus"], 0.3)[0] - 1 / (1 + np.exp(-0.3))) < 1e-15


def test_the_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    command = re.search(r'pip install -e "(\.\[[a-z,]+\])" && python -m pytest', README).group(1)
    assert f'pip install -q -e "{command}"' in ci

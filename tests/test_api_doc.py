"""docs/api.md, the public contract, is true to the package: every name of `zygotepy.__all__` has an entry there,
each heading's signature is the one the code declares, and every runnable ```python block runs as written.

Which blocks run (the convention docs/api.md states at its top): every ```python block, except one whose first line
is `# not run`; one whose first line is `# needs: lib, lib` runs only where those libraries import. Each block runs as
a file of its own (zygotepy reads the source of the functions it differentiates) in a fresh namespace, so its
`assert`s are the checks.
"""
import inspect
import pathlib
import re
import runpy

import pytest

import zygotepy

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "api.md").read_text()
BLOCKS = [(DOC.count("\n", 0, m.start()) + 2, m.group(1))
          for m in re.finditer(r"^```python\n(.*?)^```", DOC, re.S | re.M)]  # (first line of the code, code)
_NAME = r"@?([A-Za-z_][A-Za-z0-9_]*)"


def _headings():
    """The backticked spans of the headings, e.g. `gradient(f, /, *args, argnums=None, **kwargs)`."""
    return [span for line in DOC.splitlines() if line.startswith("#") for span in re.findall(r"`([^`]+)`", line)]


def _entries():
    """The names that start a list item or a table row in backticks (`- \\`name...` or `| \\`name...`)."""
    return set(re.findall(r"^\s*[-|]\s*`" + _NAME, DOC, re.M))


def _plain_signature(obj):
    """`inspect.signature(obj)` without annotations, as the headings write it: `(f, /, *args, argnums=None)`."""
    sig = inspect.signature(obj)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def test_every_public_name_has_an_entry():
    documented = {re.match(_NAME, span).group(1) for span in _headings() if re.match(_NAME, span)} | _entries()
    missing = [name for name in zygotepy.__all__ if name not in documented]
    assert not missing, f"names of zygotepy.__all__ with no heading or entry in docs/api.md: {missing}"


def test_each_heading_gives_the_signature_of_the_code():
    checked, wrong = 0, []
    for span in _headings():
        m = re.fullmatch(_NAME + r"(\(.*\))", span)
        if m is None or m.group(1) not in zygotepy.__all__:
            continue
        actual = _plain_signature(getattr(zygotepy, m.group(1)))
        checked += 1
        if m.group(2) != actual:
            wrong.append(f"{span}: the code says {m.group(1)}{actual}")
    assert checked >= 20, f"only {checked} headings with a signature found"
    assert not wrong, "headings of docs/api.md whose signature is not the code's:\n" + "\n".join(wrong)


def test_the_blocks_are_found():
    assert len(BLOCKS) >= 10 and sum(1 for _, code in BLOCKS if not code.startswith("# not run")) >= 10


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_the_example_runs(line, code, tmp_path):
    first = code.split("\n", 1)[0].strip()
    if first == "# not run":
        pytest.skip("marked # not run")
    if first.startswith("# needs:"):
        for lib in first.removeprefix("# needs:").split(","):
            pytest.importorskip(lib.strip())
    path = tmp_path / f"api_doc_line{line}.py"  # (a file: zygotepy reads the functions' source)
    path.write_text(code)
    runpy.run_path(str(path), run_name=f"api_doc_line{line}")

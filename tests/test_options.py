"""The optimisation switches (zygotepy/options.py): `ZYGOTEPY_OPTIMIZATIONS=off` in the environment starts a process
with every one off, so that a script runs in the plain form unedited."""
import os
import subprocess
import sys

import pytest

SCRIPT = ("import zygotepy\nfrom zygotepy.options import OPTIONS\n"
          "print(sorted({getattr(OPTIONS, n) for n in OPTIONS.names()}))")


@pytest.mark.parametrize("value, expected", [("off", "[False]"), ("0", "[False]"), ("on", "[True]"), (None, "[True]")])
def test_the_environment_variable_switches_every_optimisation(value, expected):
    env = {k: v for k, v in os.environ.items() if k != "ZYGOTEPY_OPTIMIZATIONS"}
    if value is not None:
        env["ZYGOTEPY_OPTIMIZATIONS"] = value
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected


def test_optimizations_as_a_decorator_switches_during_each_call_only():
    """`@optimizations(False)` raised 'not callable' and left every optimisation off for the rest of the process."""
    import zygotepy
    from zygotepy.options import OPTIONS
    before = {name: getattr(OPTIONS, name) for name in OPTIONS.names()}

    @zygotepy.optimizations(False)
    def seen():
        return {name: getattr(OPTIONS, name) for name in OPTIONS.names()}
    assert {name: getattr(OPTIONS, name) for name in OPTIONS.names()} == before
    assert not any(seen().values())
    assert {name: getattr(OPTIONS, name) for name in OPTIONS.names()} == before

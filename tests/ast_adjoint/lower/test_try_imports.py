"""An import in a `try` body with a fallback import in its handler (`try: from numpy import sin` / `except
ImportError: from math import sin`), the idiom of libraries that support several backends: the name it binds is one
the body assigns (jumps.py `assigned_names`), bound once the import ran (tries.py), so it is defined after the try."""
import sys
from pathlib import Path

import numpy as np
import pytest

from zygotepy import gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plain_checks import central  # noqa: E402


def imported_in_a_try(x):
    try:
        from numpy import sin
    except ImportError:
        from math import sin
    return np.sum(sin(x) * x)


def a_module_imported_in_a_try(x):
    try:
        import numpy as xp
    except ImportError:
        xp = None
    return np.sum(xp.tanh(x) ** 2)


def the_fallback_taken(x):
    try:
        from numpy import no_such_function as act
    except ImportError:
        from numpy import cos as act
    return np.sum(act(x) * x)


@pytest.mark.parametrize("f", [imported_in_a_try, a_module_imported_in_a_try, the_fallback_taken],
                         ids=lambda f: f.__name__)
def test_names_an_import_in_a_try_binds(f, mode):
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(gradient(f, x)[0], central(f, (x,), 0), rtol=1e-6, atol=1e-8)
